#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# libob1x_monitoring_prof.so watching an unmodified one-sided program
# (preload_rma_app.c: every rank puts PUTS blocks of BYTES bytes into its right
# neighbour and gets GETS blocks from its left one). osc/monitoring counts
# a put as sent (its bytes) and a get as a sent request (0 bytes) and a
# received reply (its bytes), as Open MPI's does; the osc matrix sums sent
# and received over both directions and halves it. So for each pair
# (i, i+1): msg (PUTS + 2 GETS) / 2, size (PUTS + GETS) BYTES / 2,
# avg (PUTS + GETS) BYTES / (PUTS + 2 GETS); pml and coll empty (the
# window's collectives are internal messages, coll/monitoring is left out);
# all = osc.
set -u
fail() {
    echo "FAIL: $*"
    exit 1
}
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
np=$OB1X_TEST_NP
puts=4
gets=2
bytes=1000
lib=$OB1X_BUILDDIR/tools/monitoring-preload/.libs/libob1x_monitoring_prof.so
[ -r "$lib" ] || fail "$lib not built"
"$MPICC" -o "$tmp/rma" "$OB1X_SRCDIR/test/monitoring/preload_rma_app.c" || fail "cannot build the program"
# shellcheck source=preload_lib.sh
. "$OB1X_SRCDIR/test/monitoring/preload_lib.sh"

expect() { # group what i j
    local n=0
    [ "$1" = osc ] || [ "$1" = all ] || {
        echo 0
        return
    }
    { [ "$4" -eq $((($3 + 1) % np)) ] || [ "$3" -eq $((($4 + 1) % np)) ]; } && n=1
    case $2 in
    msg) echo $((n * (puts + 2 * gets) / 2)) ;;
    size) echo $((n * (puts + gets) * bytes / 2)) ;;
    avg) echo $((n * (puts + gets) * bytes / (puts + 2 * gets))) ;;
    esac
}

mkdir "$tmp/cwd"
# shellcheck disable=SC2086
(cd "$tmp/cwd" && "$MPIRUN" -np "$np" --oversubscribe --mca btl_base_warn_component_unused 0 \
    $OB1X_MPIRUN_OPTS -x LD_PRELOAD="$lib" "$tmp/rma" $puts $gets $bytes </dev/null \
    >"$tmp/stdout" 2>"$tmp/stderr") || {
    cat "$tmp/stderr"
    fail "the job failed"
}
check_mats "$tmp/cwd/monitoring" monitoring
echo "one-sided: 12 exact matrices"
exit 0
