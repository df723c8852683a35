#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# ssh_down.sh hosts=N down=I - host I's sshd is stopped before the job (its
# address refuses connections): `mpirun -np N --map-by node hostname` with
# the list line's options must end by itself, non-zero, within 60 s, and
# its output must name the host (its address or its name); nothing may
# have crashed. With tree spawn and a small radix (routed_ob1x_radix_radix)
# the refused ssh is an interior daemon's, not mpirun's.
set -u
. "$OB1X_SRCDIR/test/launch/launch_lib.sh"

down=
for a in "$@"; do
    case $a in down=*) down=${a#down=} ;; esac
done
[[ $down =~ ^[0-9]+$ ]] && [ "$down" -lt "$hosts" ] || fail "give down=I, 0 <= I < $hosts"

pidfile=$OB1X_NETNS_DIR/sshd/sshd.$down.pid
kill "$(cat "$pidfile")" || fail "cannot stop the sshd of host $down"
for ((t = 0; t < 50; t++)); do
    ip netns pids "$(host_name "$down")" | grep -q . || break
    sleep 0.1
done
# nothing listens there any more: a connection from the switch namespace
# (where mpirun runs; the subnet is not routed from here) is refused at once
ip netns exec "$OB1X_NETNS_PREFIX-sw" timeout 10 "$OB1X_NETNS_AGENT" "$(host_addr "$down")" true \
    >"$tmp/refused" 2>&1
rc=$?
[ $rc -ne 0 ] || fail "host $down still accepts ssh"
grep -q "refused" "$tmp/refused" ||
    fail "ssh to host $down failed (status $rc), but not refused: $(cat "$tmp/refused")"

start=$(date +%s)
job 90 "$tmp/out" -np "$hosts" --map-by node hostname
rc=$?
took=$(($(date +%s) - start))
cat "$tmp/out"
[ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "mpirun hung (killed after 90 s)"
[ $rc -ne 0 ] || fail "mpirun succeeded without host $down"
[ $took -le 60 ] || fail "mpirun took ${took}s (> 60 s) to give up"
grep -q "Segmentation\|core dumped" "$tmp/out" && fail "a process crashed"
grep -qF -e "$(host_addr "$down")" -e "$(host_name "$down")" "$tmp/out" ||
    fail "the output does not name host $down ($(host_addr "$down"))"
echo "ssh_down: mpirun ended with status $rc after ${took}s, naming $(host_addr "$down")"
