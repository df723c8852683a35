#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# badparam.sh - routed/ob1x_radix refuses parameters it cannot use (a
# negative radix; limits out of order) with its help message naming the
# parameter and the host, and a local job still runs without it (no crash,
# no hang). Then valid values: no message.
set -u
. "$OB1X_SRCDIR/test/common/refused.sh"

check_refusal() {
    local label=$1 rc
    shift
    timeout -k 5 60 "$MPIRUN" -np 1 --mca routed ob1x_radix "$@" hostname </dev/null >"$tmp/out" 2>&1
    rc=$?
    [ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "$label: the job hung"
    grep -q "Segmentation\|signal" "$tmp/out" && fail "$label: a process crashed"
    grep -q "The routed/ob1x_radix component on host $(hostname) cannot use its parameters" "$tmp/out" ||
        fail "$label: no help message; output: $(head -15 "$tmp/out")"
    echo "badparam: $label refused"
}

check_refusal "radix -1" --mca routed_ob1x_radix_radix -1
grep -q "routed_ob1x_radix_radix: *-1" "$tmp/out" || fail "the message does not show radix -1"
check_refusal "limits out of order" --mca routed_ob1x_radix_medium_limit 100 --mca routed_ob1x_radix_large_limit 10

timeout -k 5 60 "$MPIRUN" -np 1 --mca routed ob1x_radix --mca routed_ob1x_radix_radix 3 hostname \
    </dev/null >"$tmp/out" 2>&1 || fail "a valid radix: the job failed: $(tail -5 "$tmp/out")"
grep -q "cannot use its parameters" "$tmp/out" && fail "a valid radix was refused"
echo "badparam: radix 3 accepted"
