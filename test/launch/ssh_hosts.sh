#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# ssh_hosts.sh hosts=N [radix=K] - a job started over real ssh on N
# namespace hosts, each with its own sshd (test/common/ob1x-netns --sshd),
# with the list line's mpirun options (the routed component, tree spawn):
#  1. `mpirun -np N --map-by node hostname`: every host prints its name once;
#     with radix=K, the same job shows the tree: every daemon's parent,
#     printed by routed/ob1x_radix (routed_base_verbose 1), is the one of a
#     K-ary tree over vpids 0 (mpirun) .. N: parent(v) = (v - 1) / K; with
#     radix=stock, every daemon used stock routed/radix, not ob1x_radix
#     (which the build-tree component path holds);
#  2. test/launch/hosts (MPI): every rank reports, rank r on host r, with
#     the daemons detached as in users' jobs.
# The helper removes the namespaces, sshds and keys afterwards.
set -u
. "$OB1X_SRCDIR/test/launch/launch_lib.sh"

radix=
for a in "$@"; do
    case $a in radix=*) radix=${a#radix=} ;; esac
done
bin=$(build launch/hosts) || exit 1
secs=$((60 + hosts * 2))

# --- 1. hostname, and the tree ------------------------------------------------------
# the daemons' verbose output comes back only with the session left attached
verbose=()
[ -z "$radix" ] || verbose=(--leave-session-attached --mca routed_base_verbose 1)
job $secs "$tmp/out" -np "$hosts" --map-by node "${verbose[@]}" hostname
rc=$?
[ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "hostname over $hosts hosts hung; output: $(tail -20 "$tmp/out")"
[ $rc -eq 0 ] || fail "hostname over $hosts hosts: status $rc; output: $(tail -20 "$tmp/out")"
check_every_host "$tmp/out" H
echo "ssh_hosts: hostname ran on all $hosts hosts"
cp "$tmp/out" "$tmp/tree"

# --- 2. an MPI program ----------------------------------------------------------
job $secs "$tmp/out" -np "$hosts" --map-by node "$bin"
rc=$?
[ $rc -eq 0 ] || fail "test/launch/hosts over $hosts hosts: status $rc; output: $(tail -20 "$tmp/out")"
grep -q "^hosts: $hosts ranks reported\$" "$tmp/out" || fail "not all ranks reported: $(tail -5 "$tmp/out")"
for ((r = 0; r < hosts; r++)); do
    grep -q "^hosts: rank $r host $(host_name $r)\$" "$tmp/out" ||
        fail "rank $r is not on $(host_name $r): $(grep "^hosts: rank $r " "$tmp/out")"
done
echo "ssh_hosts: $hosts ranks of an MPI job reported, rank r on host r"

# --- the tree, from job 1's verbose output -------------------------------------------
[ -n "$radix" ] || exit 0
mv "$tmp/tree" "$tmp/out"
if [ "$radix" = stock ]; then
    # ob1x_radix installed (in the component path) but not named: unused
    grep -q "routed:ob1x_radix: vpid" "$tmp/out" &&
        fail "routed/ob1x_radix was used without being named: $(grep -m3 "routed:ob1x_radix" "$tmp/out")"
    n=$(grep -o "\],[0-9]*\]: parent [-0-9]* num_children [0-9]*" "$tmp/out" | cut -d: -f1 | sort -u | wc -l)
    [ "$n" -eq $((hosts + 1)) ] || fail "$n of $((hosts + 1)) daemons printed stock radix's tree"
    echo "ssh_hosts: the $((hosts + 1)) daemons used stock routed/radix"
    exit 0
fi
for ((v = 0; v <= hosts; v++)); do
    want=$(((v - 1) / radix))
    [ $v -eq 0 ] && want=none
    line=$(grep -o "routed:ob1x_radix: vpid $v parent [a-z0-9]* radix [0-9]* of [0-9]*" "$tmp/out" | sort -u)
    [ -n "$line" ] || fail "daemon $v did not report its parent; output: $(grep ob1x_radix "$tmp/out" | head)"
    [ "$(echo "$line" | wc -l)" = 1 ] || fail "daemon $v reported different trees: $line"
    [ "$line" = "routed:ob1x_radix: vpid $v parent $want radix $radix of $((hosts + 1))" ] ||
        fail "daemon $v: '$line', expected parent $want radix $radix of $((hosts + 1))"
done
echo "ssh_hosts: the $((hosts + 1)) daemons form a $radix-ary tree"
