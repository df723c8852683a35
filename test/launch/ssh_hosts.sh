#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# ssh_hosts.sh hosts=N [radix=K|stock] [sizes=N1,N2,...] [mpi=M] - jobs started over
# real ssh on the first Ni of N namespace hosts, each host with its own sshd
# (test/common/ob1x-netns --sshd), with the list line's mpirun options (the
# routed component, tree spawn). One set of hosts serves every size (the
# default size list is N alone):
#  1. per size n, `mpirun -np n --host <first n> --map-by node hostname`:
#     every one of those hosts prints its name once; with radix=K, the same
#     job shows the tree: every daemon's parent, printed by
#     routed/ob1x_radix (routed_base_verbose 1), is the one of a K-ary tree
#     over vpids 0 (mpirun) .. n: parent(v) = (v - 1) / K; with radix=stock,
#     every daemon used stock routed/radix, not ob1x_radix (which the
#     build-tree component path holds);
#  2. on the first M hosts (default all N), test/launch/hosts (MPI): every
#     rank reports, rank r on host r, with the daemons detached as in users'
#     jobs.
# The helper removes the namespaces, sshds and keys afterwards.
set -u
. "$OB1X_SRCDIR/test/launch/launch_lib.sh"

radix=
sizes=$hosts
mpi=$hosts
for a in "$@"; do
    case $a in radix=*) radix=${a#radix=} ;; sizes=*) sizes=${a#sizes=} ;; mpi=*) mpi=${a#mpi=} ;; esac
done
for n in ${sizes//,/ } $mpi; do
    [[ $n =~ ^[1-9][0-9]*$ ]] && [ "$n" -le "$hosts" ] || fail "sizes=$sizes: each size 1..$hosts"
done
bin=$(build launch/hosts) || exit 1

# first N: the addresses of hosts 0..N-1, for --host
first() {
    local i l=
    for ((i = 0; i < $1; i++)); do l="$l${l:+,}$(host_addr $i)"; done
    echo "$l"
}

# check_tree N OUT: the N + 1 daemons' parents in the verbose output OUT
check_tree() {
    local n=$1 out=$2 v want line c
    if [ "$radix" = stock ]; then
        # ob1x_radix installed (in the component path) but not named: unused
        grep -q "routed:ob1x_radix: vpid" "$out" &&
            fail "routed/ob1x_radix was used without being named: $(grep -m3 "routed:ob1x_radix" "$out")"
        c=$(grep -o "\],[0-9]*\]: parent [-0-9]* num_children [0-9]*" "$out" | cut -d: -f1 | sort -u | wc -l)
        [ "$c" -eq $((n + 1)) ] || fail "$c of $((n + 1)) daemons printed stock radix's tree"
        echo "ssh_hosts: the $((n + 1)) daemons used stock routed/radix"
        return
    fi
    for ((v = 0; v <= n; v++)); do
        want=$(((v - 1) / radix))
        [ $v -eq 0 ] && want=none
        line=$(grep -o "routed:ob1x_radix: vpid $v parent [a-z0-9]* radix [0-9]* of [0-9]*" "$out" | sort -u)
        [ -n "$line" ] || fail "daemon $v did not report its parent; output: $(grep ob1x_radix "$out" | head)"
        [ "$(echo "$line" | wc -l)" = 1 ] || fail "daemon $v reported different trees: $line"
        [ "$line" = "routed:ob1x_radix: vpid $v parent $want radix $radix of $((n + 1))" ] ||
            fail "daemon $v: '$line', expected parent $want radix $radix of $((n + 1))"
    done
    echo "ssh_hosts: the $((n + 1)) daemons form a $radix-ary tree"
}

# --- 1. hostname, and the tree, per size ---------------------------------------------
# the daemons' verbose output comes back only with the session left attached
verbose=()
[ -z "$radix" ] || verbose=(--leave-session-attached --mca routed_base_verbose 1)
for n in ${sizes//,/ }; do
    start=$SECONDS
    job $((60 + n * 2)) "$tmp/out" -np "$n" --host "$(first "$n")" --map-by node "${verbose[@]}" hostname
    rc=$?
    [ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "hostname over $n hosts hung; output: $(tail -20 "$tmp/out")"
    [ $rc -eq 0 ] || fail "hostname over $n hosts: status $rc; output: $(tail -20 "$tmp/out")"
    check_every_host "$tmp/out" H "$n"
    c=$(grep -c "^$OB1X_NETNS_PREFIX-h" "$tmp/out")
    [ "$c" -eq "$n" ] || fail "$c hosts printed their names, not $n"
    echo "ssh_hosts: hostname ran on all $n hosts ($((SECONDS - start)) s)"
    [ -z "$radix" ] || check_tree "$n" "$tmp/out"
done

# --- 2. an MPI program on the first M hosts -------------------------------------------
job $((60 + mpi * 2)) "$tmp/out" -np "$mpi" --host "$(first "$mpi")" --map-by node "$bin"
rc=$?
[ $rc -eq 0 ] || fail "test/launch/hosts over $mpi hosts: status $rc; output: $(tail -20 "$tmp/out")"
grep -q "^hosts: $mpi ranks reported\$" "$tmp/out" || fail "not all ranks reported: $(tail -5 "$tmp/out")"
for ((r = 0; r < mpi; r++)); do
    grep -q "^hosts: rank $r host $(host_name $r)\$" "$tmp/out" ||
        fail "rank $r is not on $(host_name $r): $(grep "^hosts: rank $r " "$tmp/out")"
done
echo "ssh_hosts: $mpi ranks of an MPI job reported, rank r on host r"
