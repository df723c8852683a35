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
t_start=$(now)
t_kill=
# over_since T S: more than S seconds since T
over_since() { awk -v a="$1" -v b="$(now)" -v d="$2" 'BEGIN { exit !(b - a > d) }'; }
# stop_job: mpirun is asked to end the job (TERM), then killed
stop_job() {
    kill -TERM "$job" 2>/dev/null
    for ((i = 0; i < 50; i++)); do
        kill -0 "$job" 2>/dev/null || return
        sleep 0.1
    done
    kill -KILL "$job" 2>/dev/null
}
# bounded here, before the harness's timeout, so that the output is shown
while kill -0 "$job" 2>/dev/null; do
    if [ -z "$t_kill" ] && grep -q '^worker: killing' "$tmp/out"; then
        t_kill=$(now)
    fi
    if [ -z "$t_kill" ] && over_since "$t_start" 60; then
        stop_job
        cat "$tmp/out"
        fail "the job did not reach the kill within 60 s (hang before it)"
    fi
    if [ -n "$t_kill" ] && over_since "$t_kill" $deadline; then
        stop_job
        cat "$tmp/out"
        fail "the job still runs $deadline s after the kill (hang)"
    fi
    sleep 0.1
done
wait "$job"
rc=$?
t_end=$(now)
# the job may end between two looks: its kill then came less than one
# look (0.1 s) before the end
if [ -z "$t_kill" ] && grep -q '^worker: killing' "$tmp/out"; then
    t_kill=$t_end
fi
cat "$tmp/out"
# The killed job's ranks never finalized: remove what libfabric's shm
# provider left in /dev/shm for them (a later process given the same pid
# would fail to open shm). Only files of pids that are gone.
for pid in $(sed -n 's/^worker: rank [0-9]* pid \([0-9]*\)$/\1/p' "$tmp/out"); do
    kill -0 "$pid" 2>/dev/null || rm -f /dev/shm/"$pid":*
done
[ -n "$t_kill" ] || fail "the job never reached the kill (status $rc)"
[ $rc -ne 0 ] || fail "the job exited 0 although a rank was killed"
echo "kill: the job ended with status $rc $(awk -v a="$t_kill" -v b="$t_end" 'BEGIN { printf "%.1f", b - a }') s after the kill"
echo "PASS: kill"
