#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# Our .prof files against those of Open MPI 4.1's own monitoring
# (--mca pml ob1,monitoring, from the host's component directory) for the
# same program (monitoring/pattern.c without persistent sends, which stock
# does not count): the E and I lines (point-to-point, with the histogram)
# must be identical, byte for byte, and every line kind we write in those
# sections must be one stock writes. Skipped when the host has no stock
# monitoring components.
set -u
fail() {
    echo "FAIL: $*"
    exit 1
}
# the host's own directory (OB1X_STOCK_COMPONENT_DIR is a copy without
# the components this test's line hides)
# shellcheck source=/dev/null
. "$OB1X_BUILDDIR/test/harness.env"
stockdir=$OB1X_STOCK_COMPONENT_DIR
[ -f "$stockdir/mca_pml_monitoring.so" ] || { echo "SKIP: no stock pml/monitoring"; exit 77; }
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
src=$OB1X_SRCDIR/test
np=$OB1X_TEST_NP
"$MPICC" -I"$src/common" -I"$src/monitoring" -o "$tmp/pattern" "$src/monitoring/pattern.c" \
    "$src"/common/*.c || fail "cannot build pattern"
mkdir "$tmp/stock" "$tmp/ours"
common=(-np "$np" --oversubscribe --mca btl_base_warn_component_unused 0 --mca btl self,vader
    --mca pml_monitoring_enable 2 --mca pml_monitoring_enable_output 3)
# stock: only the host's components (coll default: tuned; stock crashes with coll basic)
OMPI_MCA_mca_base_component_path=$stockdir "$MPIRUN" "${common[@]}" --mca pml ob1,monitoring \
    --mca pml_monitoring_filename "$tmp/stock/p" "$tmp/pattern" nopersistent </dev/null ||
    fail "the stock job failed"
# shellcheck disable=SC2086
"$MPIRUN" "${common[@]}" $OB1X_MPIRUN_OPTS --mca pml_monitoring_filename "$tmp/ours/p" \
    "$tmp/pattern" nopersistent </dev/null || fail "our job failed"
for r in $(seq 0 $((np - 1))); do
    s=$tmp/stock/p.$r.prof o=$tmp/ours/p.$r.prof
    [ -f "$s" ] && [ -f "$o" ] || fail "rank $r: files missing: $(ls "$tmp"/*)"
    diff <(grep -P '^[EI]\t' "$s") <(grep -P '^[EI]\t' "$o") >"$tmp/diff" ||
        { cat "$tmp/diff"; fail "rank $r: E/I lines differ from stock's (< stock, > ours)"; }
    [ "$(grep -c '^E' "$o")" -ge 1 ] || fail "rank $r: no E line"
    diff <(grep -E '^#' "$s") <(grep -E '^# ' "$o") ||
        fail "rank $r: section headers differ"
done
echo "PASS: monitoring/stock"
