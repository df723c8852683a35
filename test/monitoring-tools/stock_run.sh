#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# A real run under Open MPI's own monitoring components (stock search path
# only: ob1 + pml/coll/osc monitoring, enable 2, files): ob1x-monitoring
# matrices must read its PREFIX.<rank>.prof files, give the ring's known
# external and one-sided matrices exactly, and (when the host has
# /usr/bin/profile2mat) write the very files profile2mat.pl writes from their
# concatenation. Skipped when the host Open MPI has no pml/monitoring.
set -u
. "$OB1X_SRCDIR/test/monitoring-tools/tool.sh"

np=${OB1X_TEST_NP:-4}
[ -e "$OB1X_STOCK_COMPONENT_DIR/mca_pml_monitoring.so" ] || {
    echo "the host Open MPI has no pml/monitoring"
    exit 77
}
"$MPICC" -o "$work/ring" "$OB1X_SRCDIR/test/monitoring-tools/ring.c" || fail "mpicc ring.c"
mkdir "$work/run" "$work/ours"
OMPI_MCA_mca_base_component_path=$OB1X_STOCK_COMPONENT_DIR \
    "$MPIRUN" -np "$np" --oversubscribe --mca btl self,vader --mca pml ob1,monitoring \
    --mca pml_monitoring_enable 2 --mca pml_monitoring_enable_output 3 \
    --mca pml_monitoring_filename "$work/run/prof" "$work/ring" || fail "stock monitoring run"
for ((r = 0; r < np; r++)); do
    [ -s "$work/run/prof.$r.prof" ] || fail "no $work/run/prof.$r.prof"
done

"$tool" matrices -q "$work/run/prof" -o "$work/ours/prof" || fail "matrices"

# rows of the ring's matrix: v between neighbours, 0 elsewhere
ring_matrix() {
    local v=$1 i j line
    for ((i = 0; i < np; i++)); do
        line=
        for ((j = 0; j < np; j++)); do
            if [ $(((i + 1) % np)) = $j ] || [ $(((j + 1) % np)) = $i ]; then
                line+="$v "
            else
                line+="0 "
            fi
        done
        echo "$line"
    done
}
# An edge carries 2400 bytes in 3 messages one way, nothing back: halved
# (stock's symmetric matrix) 1200 bytes and 1.5 messages (printed 2), 800
# bytes on average. With np = 2 both ways are edges: 2400 and 3.
if [ "$np" = 2 ]; then s=2400 m=3; else s=1200 m=2; fi
[ "$(cat "$work/ours/prof_size_external.mat")" = "$(ring_matrix $s)" ] ||
    fail "size_external:
$(cat "$work/ours/prof_size_external.mat")"
[ "$(cat "$work/ours/prof_msg_external.mat")" = "$(ring_matrix $m)" ] ||
    fail "msg_external:
$(cat "$work/ours/prof_msg_external.mat")"
[ "$(cat "$work/ours/prof_avg_external.mat")" = "$(ring_matrix 800)" ] ||
    fail "avg_external:
$(cat "$work/ours/prof_avg_external.mat")"
if [ -e "$OB1X_STOCK_COMPONENT_DIR/mca_osc_monitoring.so" ] && [ "$np" != 2 ]; then
    [ "$(cat "$work/ours/prof_size_osc.mat")" = "$(ring_matrix 10)" ] ||
        fail "size_osc:
$(cat "$work/ours/prof_size_osc.mat")"
fi
for c in all external internal coll; do
    [ -s "$work/ours/prof_size_$c.mat" ] || fail "no prof_size_$c.mat"
done

if command -v profile2mat >/dev/null 2>&1; then
    mkdir "$work/stock"
    cat "$work"/run/prof.*.prof >"$work/stock/prof.prof"
    (cd "$work/stock" && profile2mat prof.prof >/dev/null) || fail "profile2mat"
    rm "$work/stock/prof.prof"
    [ "$(list_files "$work/stock")" = "$(list_files "$work/ours")" ] ||
        fail "files: profile2mat $(list_files "$work/stock" | tr '\n' ' '), ours $(list_files "$work/ours" | tr '\n' ' ')"
    for f in "$work"/stock/*.mat; do
        cmp "$f" "$work/ours/${f##*/}" || fail "${f##*/} differs from profile2mat's"
    done
    echo "$(list_files "$work/ours" | wc -l) files identical to profile2mat's"
fi
exit 0
