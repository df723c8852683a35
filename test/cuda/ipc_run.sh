#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# cuda.ipc: ipc.c in three set-ups of the emulation (each rank its own
# environment, as CUDA_VISIBLE_DEVICES would give it):
#   1. both ranks on device 0: the handle opens, data goes both ways;
#   2. rank 1 sees physical device 1 as its device 0 (peer access on):
#      the UUIDs differ, the handle still opens;
#   3. the same without peer access: the open fails with the driver's
#      error, shown once as a help message naming the call.
. "$OB1X_SRCDIR/test/cuda/lib.sh"
build_prog ipc emu
path=LD_LIBRARY_PATH="$emu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
two=(-x "$path" -x OB1X_CUEMU_DEVICES=2)

job -np 2 "${two[@]}" "$tmp/ipc" same-device || fail "same device"
job -np 1 "${two[@]}" "$tmp/ipc" other-device : \
    -np 1 "${two[@]}" -x OB1X_CUEMU_VISIBLE=1,0 "$tmp/ipc" other-device ||
    fail "other device, peer access"
job -np 1 "${two[@]}" -x OB1X_CUEMU_NO_PEER=1 "$tmp/ipc" other-device refused : \
    -np 1 "${two[@]}" -x OB1X_CUEMU_NO_PEER=1 -x OB1X_CUEMU_VISIBLE=1,0 "$tmp/ipc" \
    other-device refused || fail "other device, no peer access"
expect_output "cuIpcOpenMemHandle"
expect_output "peer access is not supported"
echo "PASS: cuda/ipc"
