# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# ofi_lib.sh - sourced by the test/ofi/*.sh tests: fail, a scratch
# directory $tmp (removed on exit), the build of a test program, and the
# namespace helper (test/common/ob1x-netns).

fail() {
    echo "FAIL: $*"
    exit 1
}

netns=$OB1X_SRCDIR/test/common/ob1x-netns
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

# build PROGRAM: test/PROGRAM.c (+ test/common/*.c) built as run-tests
# builds it, into $tmp; prints the binary's path
# (test/common/*.c only for the programs that include its headers)
build() {
    local src=$OB1X_SRCDIR/test/$1.c bin=$tmp/bin/$1 common=()
    mkdir -p "$(dirname "$bin")"
    grep -q '^#include "t[a-z]*\.h"' "$src" && common=("$OB1X_SRCDIR"/test/common/*.c)
    "$MPICC" -g -O2 -Wall -Werror=uninitialized -I"$OB1X_SRCDIR/test/common" \
        -I"$OB1X_BUILDDIR" -o "$bin" "$src" "${common[@]}" -lm \
        >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "cannot build test/$1.c"; }
    echo "$bin"
}

# The mpirun options of the test's list line, as words.
read -r -a line_opts <<<"${OB1X_MPIRUN_OPTS:-}"

# Namespaces of ours that exist now (all sets), one per line.
netns_sets() {
    ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^ob1x-[0-9]+-(sw|h[0-9]+)$'
}
