#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# cuda.noload: noload.c (not linked with the driver) in its three modes;
# without any driver, one clear message naming libcuda.so.1, once.
. "$OB1X_SRCDIR/test/cuda/lib.sh"
build_prog noload
path=LD_LIBRARY_PATH="$emu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
job -np 1 -x "$path" "$tmp/noload" quiet || fail "quiet"
job -np 1 -x "$path" "$tmp/noload" required || fail "required"
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
    echo "a CUDA driver is installed on this machine: the 'missing' case is not run"
else
    job -np 1 "$tmp/noload" missing || fail "missing"
    expect_output "GPU buffers were asked for, but the CUDA driver library could not be"
    expect_output "libcuda.so.1: cannot open shared object file"
    [ "$(grep -c 'GPU buffers were asked for' "$tmp/out")" -eq 1 ] || fail "the message came twice"
fi
echo "PASS: cuda/noload"
