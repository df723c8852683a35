# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# ofi_lib.sh - sourced by the test/ofi/*.sh tests: fail, a scratch
# directory $tmp (removed on exit), the build of a test program, and the
# namespace helper (test/common/ob1x-netns).
#
# A test given hosts=N runs again, whole, under `ob1x-netns run` with N
# hosts (as many slots each as the list line's np needs; nics=K: K NICs
# each, on K networks), and then runs
# its jobs with $mpirun, the set's mpirun; otherwise $mpirun is the
# harness's. Where namespaces cannot be made it skips (77).

fail() {
    echo "FAIL: $*"
    exit 1
}

netns=$OB1X_SRCDIR/test/common/ob1x-netns

hosts=
nics=1
for a in "$@"; do
    case $a in hosts=*) hosts=${a#hosts=} ;; nics=*) nics=${a#nics=} ;; --) break ;; esac
done
if [ -n "$hosts" ] && [ -z "${OB1X_NETNS_MPIRUN:-}" ]; then
    [[ $hosts =~ ^[1-9][0-9]*$ ]] || fail "hosts= takes a number"
    np=${OB1X_TEST_NP:-$hosts}
    exec "$netns" run -n "$hosts" -s $(((np + hosts - 1) / hosts)) --nics "$nics" -- \
        bash "$0" "$@"
fi
mpirun=${OB1X_NETNS_MPIRUN:-$MPIRUN}
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

# build PROGRAM [FLAG...]: test/PROGRAM.c (+ test/common/*.c for the
# programs that include its headers) built as run-tests builds it, with
# the FLAGs, into the build tree's test/bin/sh/ (again only when a source
# or the flags changed); prints the binary's path
build() {
    local src=$OB1X_SRCDIR/test/$1.c bin=$OB1X_BUILDDIR/test/bin/sh/$1 common=() f stale=no
    local flags="-g -O2 -Wall -Werror=uninitialized ${*:2}"
    grep -q '^#include "t[a-z]*\.h"' "$src" && common=("$OB1X_SRCDIR"/test/common/*.c)
    if [ ! -x "$bin" ] || [ "$(cat "$bin.flags" 2>/dev/null)" != "$flags" ]; then
        stale=yes
    else
        for f in "$src" "$(dirname "$src")"/*.h "$OB1X_SRCDIR"/test/btl/*.h "${common[@]}" \
            "$OB1X_SRCDIR"/test/common/*.h; do
            [ "$f" -nt "$bin" ] && stale=yes
        done
    fi
    if [ $stale = yes ]; then
        mkdir -p "$(dirname "$bin")"
        # shellcheck disable=SC2086 # flags are words
        "$MPICC" $flags -I"$OB1X_SRCDIR/test/common" -I"$OB1X_BUILDDIR" -o "$bin.tmp.$$" \
            "$src" "${common[@]}" -lm >"$tmp/build.log" 2>&1 ||
            { cat "$tmp/build.log" >&2; echo "FAIL: cannot build test/$1.c" >&2; exit 1; }
        mv -f "$bin.tmp.$$" "$bin"
        echo "$flags" >"$bin.flags"
    fi
    echo "$bin"
}

# The mpirun options of the test's list line, as words.
read -r -a line_opts <<<"${OB1X_MPIRUN_OPTS:-}"

# Namespaces of ours that exist now (all sets), one per line.
netns_sets() {
    ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^ob1x-[0-9]+-(sw|h[0-9]+)$'
}
