#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# netns_hosts.sh - the namespace helper (test/common/ob1x-netns) makes N
# hosts that mpirun really spreads a job over, and leaves nothing behind.
#
#  1. ofi/whereami on 4 namespaces (the list line's mpirun options, stock
#     btl tcp): rank r runs on host P-hr, in that namespace (inode of its
#     /proc/self/ns/net), not in ours, with address 10.231.0.(r+1); a ring
#     of 1 MiB messages arrives intact. Afterwards no namespace of the set
#     and no directory remain.
#  2. The helper's process group is sent SIGTERM, and again while the
#     helper removes its set (as timeout does: the child, then the group), while a process runs inside one of its
#     namespaces: it ends at once and removes everything (that process too).
#  3. The helper is SIGKILLed: its set stays; `ob1x-netns clean` (which
#     every later run does first) removes it and what runs in it.
#  4. Where namespaces cannot be made (here: in a user namespace, as its
#     root and as a plain user) the helper exits 77 with the reason.
# Skips (77) where namespaces cannot be made.
set -u

. "$OB1X_SRCDIR/test/ofi/ofi_lib.sh"

"$netns" check || exit $?
hosts=${1:-4}
bin=$(build ofi/whereami) || exit 1
root_ino=$(stat -L -c %i /proc/self/ns/net)

# --- 1. a job over the hosts ---------------------------------------------------------
# (the command runs with OB1X_NETNS_* set by the helper)
"$netns" run -n "$hosts" -- bash -c '
    out=$1; shift
    echo "$OB1X_NETNS_PREFIX" >"$out.prefix"
    for h in $OB1X_NETNS_HOSTS; do
        echo "$h $(stat -L -c %i "/var/run/netns/$h")"
    done >"$out.inodes"
    exec "$OB1X_NETNS_MPIRUN" "$@" >"$out" 2>&1' \
    job "$tmp/out" -np "$hosts" "${line_opts[@]}" "$bin"
rc=$?
cat "$tmp/out" 2>/dev/null
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || fail "the job over $hosts namespaces ended with status $rc"
prefix=$(cat "$tmp/out.prefix") || fail "the helper ran no command"
grep -q '^whereami: ring ok$' "$tmp/out" || fail "no ring ok"

for ((r = 0; r < hosts; r++)); do
    line=$(grep "^whereami: rank $r " "$tmp/out") || fail "rank $r did not report"
    read -r _ _ _ _ host _ ino _ addr more <<<"$line"
    [ "$host" = "$prefix-h$r" ] || fail "rank $r runs on '$host', not $prefix-h$r"
    want=$(awk -v h="$host" '$1 == h {print $2}' "$tmp/out.inodes")
    [ -n "$want" ] && [ "$ino" = "$want" ] ||
        fail "rank $r is in network namespace $ino, not in $host's (${want:-none})"
    [ "$ino" != "$root_ino" ] || fail "rank $r runs in the test's own namespace"
    [ "$addr" = "10.231.0.$((r + 1))" ] && [ -z "${more:-}" ] ||
        fail "rank $r has address(es) '$addr ${more:-}', not 10.231.0.$((r + 1))"
done
[ "$(awk '{print $2}' "$tmp/out.inodes" | sort -u | wc -l)" -eq "$hosts" ] ||
    fail "the hosts do not have $hosts distinct namespaces"
echo "netns_hosts: $hosts ranks on $hosts namespaces of $prefix"

# left_over PREFIX: what of the set remains (namespaces, directory)
left_over() {
    netns_sets | grep "^$1-"
    [ -e "/tmp/ob1x-netns.$1" ] && echo "/tmp/ob1x-netns.$1"
}
[ -z "$(left_over "$prefix")" ] || fail "left after the run: $(left_over "$prefix" | xargs)"
echo "netns_hosts: nothing left of $prefix after the job"

# --- 2, 3. the helper killed -------------------------------------------------------------
# start_set NAME: a 2-host set whose command runs a sleep inside P-h1 (as a
# daemon would) and waits; sets $helper, $prefix
start_set() {
    rm -f "$tmp/$1.prefix"
    setsid "$netns" run -n 2 -- bash -c 'echo "$OB1X_NETNS_PREFIX" >"$1"
        ip netns exec "$OB1X_NETNS_PREFIX-h1" sleep 300 &
        wait' inner "$tmp/$1.prefix" &
    helper=$!
    for ((i = 0; i < 100; i++)); do
        [ -s "$tmp/$1.prefix" ] && sleep 0.5 && break
        sleep 0.1
    done
    prefix=$(cat "$tmp/$1.prefix" 2>/dev/null) || fail "$1: the helper did not start its command"
    [ -n "$(ip netns pids "$prefix-h1" 2>/dev/null)" ] || fail "$1: nothing runs in $prefix-h1"
}

start_set term
kill -TERM -- "-$helper"
sleep 0.2 # the second one comes while the set is being removed
kill -TERM -- "-$helper" 2>/dev/null
start=$SECONDS
wait "$helper"
echo "netns_hosts: SIGTERM: the helper ended with status $? after $((SECONDS - start)) s"
[ -z "$(left_over "$prefix")" ] || fail "left after SIGTERM: $(left_over "$prefix" | xargs)"

start_set kill
pids=$(ip netns pids "$prefix-h1")
kill -KILL "$helper"
wait "$helper" 2>/dev/null
[ -n "$(left_over "$prefix")" ] || fail "SIGKILL: the set vanished by itself (the test proves nothing)"
"$netns" clean
[ -z "$(left_over "$prefix")" ] || fail "left after clean: $(left_over "$prefix" | xargs)"
for p in $pids; do
    ! kill -0 "$p" 2>/dev/null || fail "process $p of $prefix-h1 still runs after clean"
done
# the command's own bash (in our namespace) ends when its sleep is gone
echo "netns_hosts: SIGKILL: the set was left, and clean removed it"
# --- 4. the skip ----------------------------------------------------------------------------
for how in "-r" ""; do
    if ! unshare -U $how true 2>/dev/null; then
        echo "netns_hosts: no user namespaces here: the skip is not tried"
        break
    fi
    out=$(unshare -U $how "$netns" run -n 2 -- true 2>&1)
    rc=$?
    [ $rc -eq 77 ] && [[ $out == SKIP:*"cannot be made here: "?* ]] ||
        fail "in a user namespace (unshare -U $how) the helper ended with $rc: $out"
    echo "netns_hosts: unshare -U $how: $out"
done
echo "PASS: netns_hosts"
