#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# cuda.ipcstate: btl/smcuda's per-peer IPC handshake (btl_smcuda_ipc.c)
# driven by ipcstate.c without MPI (no mpirun: one plain process holding
# both sides), the device queries answered by the emulation with 2 devices:
#   1. peer access: every path (same device, two devices, both sides at
#      once, NOTREADY and retry, 5 attempts, failed sends, stray messages);
#   2. OB1X_CUEMU_NO_PEER=1: two devices end IPC_BAD on both sides, one
#      device still works.
. "$OB1X_SRCDIR/test/cuda/lib.sh"
smcuda=$OB1X_SRCDIR/opal/mca/btl/smcuda
# shellcheck disable=SC2086
"$MPICC" -g -O2 -Wall -Werror -I"$smcuda" -I"$OB1X_SRCDIR/opal/mca/common/ob1x_cuda" \
    -o "$tmp/ipcstate" "$src/cuda/ipcstate.c" "$smcuda/btl_smcuda_ipc.c" \
    -L"$cudalib" -Wl,-rpath,"$cudalib" -lmca_common_ob1x_cuda -lopen-pal ||
    fail "cannot build ipcstate"
run() { # [VAR=value ...] ARG
    timeout 60 env LD_LIBRARY_PATH="$emu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OB1X_CUEMU_DEVICES=2 \
        "$@" </dev/null >"$tmp/out" 2>&1
    local rc=$?
    sed 's/^/    /' "$tmp/out"
    return $rc
}
before=$(shm_leftovers)
run "$tmp/ipcstate" peer || fail "with peer access"
expect_output "PASS: ipcstate peer"
run OB1X_CUEMU_NO_PEER=1 "$tmp/ipcstate" nopeer || fail "without peer access"
expect_output "PASS: ipcstate nopeer"
expect_output "no peer access"
[ "$before" = "$(shm_leftovers)" ] || fail "emulation files left in /dev/shm"
echo "PASS: cuda/ipcstate"
