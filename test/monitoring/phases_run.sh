#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# monitoring/phases.c in a fresh directory, which must then hold exactly
# the two phases' files of every process (and nothing from MPI_Finalize:
# the flush pvar turns the final output off).
set -u
fail() {
    echo "FAIL: $*"
    exit 1
}
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
src=$OB1X_SRCDIR/test
"$MPICC" -I"$src/common" -I"$src/monitoring" -o "$tmp/phases" "$src/monitoring/phases.c" \
    "$src"/common/*.c || fail "cannot build phases"
mkdir "$tmp/out"
# shellcheck disable=SC2086
"$MPIRUN" -np "$OB1X_TEST_NP" --oversubscribe --mca btl_base_warn_component_unused 0 $OB1X_MPIRUN_OPTS --mca pml_monitoring_enable_output 3 \
    --mca pml_monitoring_filename "$tmp/out/final" "$tmp/phases" "$tmp/out" </dev/null ||
    fail "the job failed"
want=$(for p in 1 2; do for r in $(seq 0 $((OB1X_TEST_NP - 1))); do echo "phase$p.$r.prof"; done; done | sort)
got=$(ls "$tmp/out" | sort)
[ "$want" = "$got" ] || fail "files written: $(echo $got), expected: $(echo $want)"
echo "PASS: monitoring/phases"
