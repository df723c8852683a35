#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# kill.sh - a rank is SIGKILLed in the middle of two-sided and one-sided
# transfers over btl/ofi (ofi/kill_worker, the list line's np and mpirun
# options): the job must end with a non-zero status within 20 s of the
# kill, not hang. With hosts=N the ranks are on N namespace hosts (the
# victim, the last rank, on the last host).
set -u

. "$OB1X_SRCDIR/test/ofi/ofi_lib.sh"

deadline=20
bin=$(build ofi/kill_worker) || exit 1
now() { date +%s.%N; }

"$mpirun" -np "${OB1X_TEST_NP:-3}" --oversubscribe --mca btl_base_warn_component_unused 0 \
    "${line_opts[@]}" "$bin" </dev/null >"$tmp/out" 2>&1 &
job=$!
t_kill=
# the job's own bound: the harness's timeout is the last resort
for ((i = 0; i < 1200; i++)); do
    if [ -z "$t_kill" ] && grep -q '^worker: killing' "$tmp/out"; then
        t_kill=$(now)
    fi
    kill -0 "$job" 2>/dev/null || break
    if [ -n "$t_kill" ] && awk -v a="$t_kill" -v b="$(now)" -v d=$deadline 'BEGIN { exit !(b - a > d) }'; then
        kill -KILL "$job" 2>/dev/null
        cat "$tmp/out"
        fail "the job still runs $deadline s after the kill (hang)"
    fi
    sleep 0.1
done
wait "$job"
rc=$?
t_end=$(now)
cat "$tmp/out"
[ -n "$t_kill" ] || fail "the job never reached the kill (status $rc)"
[ $rc -ne 0 ] || fail "the job exited 0 although a rank was killed"
echo "kill: the job ended with status $rc $(awk -v a="$t_kill" -v b="$t_end" 'BEGIN { printf "%.1f", b - a }') s after the kill"
echo "PASS: kill"
