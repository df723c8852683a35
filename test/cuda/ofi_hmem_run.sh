#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# cuda.ofi_hmem: btl/ofi in a process that loaded the CUDA driver before
# MPI_Init (the emulation, one device): it asks libfabric for FI_HMEM
# through libmca_common_ob1x_cuda, finds no provider offering it here,
# says so, and runs on the provider without it; the job's messages arrive.
# The same program with the driver not loaded (the default build of
# noload) is cuda.noload's and ofi.hmem_absent_shm's business.
. "$OB1X_SRCDIR/test/cuda/lib.sh"
[ -f "$OB1X_BUILDDIR/opal/mca/btl/ofi/.libs/mca_btl_ofi.so" ] || {
    echo "SKIP: btl/ofi not built"
    exit 77
}
build_prog ofi_hmem emu
path=LD_LIBRARY_PATH="$emu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
job -np 2 -x "$path" -x OB1X_CUEMU_DEVICES=1 --mca pml ob1 --mca btl self,ofi \
    --mca btl_ofi_provider_include shm --mca btl_ofi_verbose 1 "$tmp/ofi_hmem" ||
    fail "the job failed"
expect_output "CUDA present at run time: FI_HMEM requested"
expect_output "no provider offers FI_HMEM"
grep -q "FI_HMEM not requested" "$tmp/out" && fail "btl/ofi did not see the driver"
echo "PASS: cuda/ofi_hmem"
