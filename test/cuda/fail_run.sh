#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# cuda.fail: fail.c with cuInit, then cuIpcGetMemHandle, failing in the
# emulation, then with a driver that lacks a symbol: each time one message
# that names the call (or symbol) and the driver's error text.
. "$OB1X_SRCDIR/test/cuda/lib.sh"
build_prog fail emu
path=LD_LIBRARY_PATH="$emu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
job -np 1 -x "$path" -x OB1X_CUEMU_FAIL=cuInit "$tmp/fail" init || fail "init"
expect_output "initialising it failed"
expect_output "cuInit: error 999: unknown error (injected by OB1X_CUEMU_FAIL)"
[ "$(grep -c 'initialising it failed' "$tmp/out")" -eq 1 ] || fail "the message came twice"
job -np 1 -x "$path" -x OB1X_CUEMU_FAIL=cuIpcGetMemHandle "$tmp/fail" call || fail "call"
expect_output "Call:        cuIpcGetMemHandle"
expect_output "Error:       999 (unknown error (injected by OB1X_CUEMU_FAIL))"
[ "$(grep -c 'Call: ' "$tmp/out")" -eq 1 ] || fail "the message came twice"
# a driver without cuDeviceGetUuid_v2 (older than CUDA 11.4): the same
# path as a failing cuInit, with its own message naming the symbol
build_emu "$tmp/old" -DCUEMU_OLD_DRIVER
job -np 1 -x LD_LIBRARY_PATH="$tmp/old${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/fail" init ||
    fail "old driver"
expect_output "lacks a function ob1x"
expect_output "Missing:     cuDeviceGetUuid_v2"
echo "PASS: cuda/fail"
