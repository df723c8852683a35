#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# One-sided counts in the .prof files MPI_Finalize writes
# (pml_monitoring_enable_output 3): monitoring/osc_counts, without MPI_T
# handles, and every process's S and R lines must hold, for each other
# rank p, exactly what osc_counts.c's calls count (3 epochs of put (3 + p
# ints), get (5), accumulate (2), get_accumulate, fetch_and_op,
# compare_and_swap; rput (2), rget (4), raccumulate, rget_accumulate in the
# lock epoch; ints of 4 bytes), and nothing for itself.
set -u
fail() {
    echo "FAIL: $*"
    exit 1
}
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
src=$OB1X_SRCDIR/test
np=$OB1X_TEST_NP
"$MPICC" -I"$src/common" -I"$src/monitoring" -o "$tmp/osc_counts" \
    "$src/monitoring/osc_counts.c" "$src"/common/*.c -lm || fail "cannot build osc_counts"
mkdir "$tmp/out"
# shellcheck disable=SC2086
"$MPIRUN" -np "$np" --oversubscribe --mca btl_base_warn_component_unused 0 \
    $OB1X_MPIRUN_OPTS --mca pml_monitoring_enable_output 3 \
    --mca pml_monitoring_filename "$tmp/out/prof" "$tmp/osc_counts" nopvars </dev/null \
    >"$tmp/stdout" 2>&1 || { cat "$tmp/stdout"; fail "job failed"; }

for r in $(seq 0 $((np - 1))); do
    f=$tmp/out/prof.$r.prof
    [ -f "$f" ] || fail "no $f"
    want=""
    for p in $(seq 0 $((np - 1))); do
        [ "$p" -eq "$r" ] && continue
        sent=$((3 * (4 * (3 + p) + 20) + 16))
        want+=$(printf 'S\t%d\t%d\t%d bytes\t22 msgs sent\nR\t%d\t%d\t116 bytes\t14 msgs sent\n' \
            "$r" "$p" "$sent" "$r" "$p")
        want+=$'\n'
    done
    got=$(grep -E '^[SR]'$'\t' "$f")
    [ "$got" == "${want%$'\n'}" ] || fail "rank $r: S/R lines
$got
want
${want%$'\n'}"
done
echo "PASS: S and R lines of $np processes"
