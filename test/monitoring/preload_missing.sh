#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# libob1x_monitoring_prof.so preloaded where no component provides the
# monitoring MPI_T pvars (stock ob1, no monitoring component): the ring
# still runs and succeeds, the "no pvars" message appears exactly once
# (rank 0) and names the first pvar, and no matrix is written.
set -u
fail() {
    echo "FAIL: $*"
    exit 1
}
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
lib=$OB1X_BUILDDIR/tools/monitoring-preload/.libs/libob1x_monitoring_prof.so
[ -r "$lib" ] || fail "$lib not built"
"$MPICC" -o "$tmp/ring" "$OB1X_SRCDIR/test/monitoring/preload_app.c" || fail "cannot build the ring"
mkdir "$tmp/cwd"
# shellcheck disable=SC2086
(cd "$tmp/cwd" && "$MPIRUN" -np "$OB1X_TEST_NP" --oversubscribe \
    --mca btl_base_warn_component_unused 0 $OB1X_MPIRUN_OPTS -x LD_PRELOAD="$lib" \
    "$tmp/ring" 4 100 </dev/null >"$tmp/stdout" 2>"$tmp/stderr") || {
    cat "$tmp/stdout" "$tmp/stderr"
    fail "the job failed: the application must run on unmonitored"
}
n=$(grep -c 'none of the monitoring MPI_T performance' "$tmp/stdout" "$tmp/stderr" | awk -F: '{s += $2} END {print s}')
[ "$n" -eq 1 ] || { cat "$tmp/stderr"; fail "the missing-pvar message appeared $n times, expected once"; }
grep -q 'pml_monitoring_messages_count' "$tmp/stderr" || fail "the message does not name the pvar"
[ -z "$(ls "$tmp/cwd")" ] || fail "files written: $(ls "$tmp/cwd")"
grep -q 'matrix to' "$tmp/stdout" && fail "'writing' lines without pvars"
echo "no pvars: one message, no file, the application unharmed"
exit 0
