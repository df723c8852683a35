#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# ssh_lost.sh hosts=N lost=I - the daemon of host I dies (SIGKILL) while a
# job runs on all N hosts (`sleep` everywhere, the list line's options):
# mpirun must end by itself, non-zero, within 60 s, and then no daemon and
# no process of the job may be left on any other host (the others learn of
# the end through the tree, or through their lifeline). With ob1x_radix and a
# small radix the dead daemon is an interior one, whose children the
# routes and broadcasts must go around.
set -u
. "$OB1X_SRCDIR/test/launch/launch_lib.sh"

lost=
for a in "$@"; do
    case $a in lost=*) lost=${a#lost=} ;; esac
done
[[ $lost =~ ^[0-9]+$ ]] && [ "$lost" -lt "$hosts" ] || fail "give lost=I, 0 <= I < $hosts"

# pids of COMMAND (exact name) in host I's namespace
pids_of() {
    local p
    for p in $(ip netns pids "$(host_name "$1")"); do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ] && echo "$p"
    done
}

job 100 "$tmp/out" -np "$hosts" --map-by node sleep 600 &
mpirun_pid=$!
# every host runs its sleep (60 s at most)
for ((t = 0; t < 600; t++)); do
    ready=0
    for ((i = 0; i < hosts; i++)); do
        [ -n "$(pids_of $i sleep)" ] && ready=$((ready + 1))
    done
    [ $ready -eq "$hosts" ] && break
    kill -0 $mpirun_pid 2>/dev/null || break
    sleep 0.1
done
[ $ready -eq "$hosts" ] || { kill $mpirun_pid; fail "only $ready of $hosts hosts started their process: $(tail -20 "$tmp/out")"; }

victim=$(pids_of "$lost" orted)
[ -n "$victim" ] || fail "no orted on host $lost"
start=$(date +%s)
kill -KILL $victim
wait $mpirun_pid
rc=$?
took=$(($(date +%s) - start))
cat "$tmp/out"
[ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "mpirun hung after daemon $lost died"
[ $rc -ne 0 ] || fail "mpirun succeeded although daemon $lost died"
[ $took -le 60 ] || fail "mpirun took ${took}s (> 60 s) to end"

# the other hosts clean up by themselves (10 s at most); the dead
# daemon's own process is an orphan nobody can reach (the helper removes it)
for ((t = 0; t < 100; t++)); do
    left=
    for ((i = 0; i < hosts; i++)); do
        [ $i -eq "$lost" ] && [ -z "$(pids_of $i orted)" ] && continue
        [ -n "$(pids_of $i orted)$(pids_of $i sleep)" ] && left="$left $(host_name $i)"
    done
    [ -z "$left" ] && break
    sleep 0.1
done
[ -z "$left" ] || fail "daemons or processes left on:$left"
echo "ssh_lost: mpirun ended with status $rc ${took}s after daemon $lost died; nothing left"
