#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# cuda.smipc: btl/smcuda's CUDA IPC end to end (smipc.c) under pml/ob1x
# with btl self,smcuda and the driver emulation, one job per case:
#   ok (device and host destination), realloc, evict (cache of 2),
#   split (4 pieces of 256 KiB), refused (two devices without peer access:
#   warning, verbose cause), notready, neverready, openfail (the PML falls
#   back; the driver's failure shown once).
# Every message's content is checked by the program.
. "$OB1X_SRCDIR/test/cuda/lib.sh"
[ -f "$OB1X_BUILDDIR/opal/mca/btl/smcuda/.libs/mca_btl_smcuda.so" ] || {
    echo "SKIP: btl/smcuda not built"
    exit 77
}
build_prog smipc emu
path=LD_LIBRARY_PATH="$emu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
btls="self,smcuda"
base=(-x "$path" -x OB1X_CUEMU_LAZY=1 --mca pml ob1x --mca btl "$btls")

smipc() { # CASE [mpirun options ...]: both ranks alike
    local c=$1
    shift
    job -np 2 "${base[@]}" "$@" "$tmp/smipc" "$c" || fail "case $c"
    grep -q "^FAIL" "$tmp/out" && fail "case $c"
    expect_output "PASS: smipc"
}

smipc ok
smipc ok -x OB1X_CUEMU_EVENT_POLLS=5
job -np 2 "${base[@]}" "$tmp/smipc" ok host-dst || fail "ok host-dst"
expect_output "PASS: smipc"
smipc realloc
smipc evict --mca btl_smcuda_cuda_ipc_cache_size 2
expect_output "rank 1: 8 handles opened and closed"
job -np 2 "${base[@]}" --mca btl_smcuda_cuda_copy_piece 262144 "$tmp/smipc" split pieces=4 ||
    fail "split"
expect_output "PASS: smipc"

# two devices, rank 1 on the other one, no peer access: refused
job -np 1 "${base[@]}" -x OB1X_CUEMU_DEVICES=2 -x OB1X_CUEMU_NO_PEER=1 \
    --mca btl_base_verbose 1 "$tmp/smipc" refused : \
    -np 1 -x "$path" -x OB1X_CUEMU_DEVICES=2 -x OB1X_CUEMU_NO_PEER=1 -x OB1X_CUEMU_VISIBLE=1,0 \
    "$tmp/smipc" refused || fail "refused"
expect_output "PASS: smipc"
expect_output "CUDA IPC is not used between"
expect_output "the two devices have no peer access"
expect_output "staged through host memory"

smipc notready
smipc neverready --mca btl_base_verbose 1
expect_output "the peer never had CUDA initialised"

job -np 1 "${base[@]}" "$tmp/smipc" openfail : \
    -np 1 -x "$path" -x OB1X_CUEMU_FAIL=cuIpcOpenMemHandle "$tmp/smipc" openfail || fail "openfail"
expect_output "PASS: smipc"
expect_output "cuIpcOpenMemHandle"
echo "PASS: cuda/smipc"
