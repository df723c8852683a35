#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# Builds monitoring/api.c against the engine's header and the build tree's
# libmca_common_ob1x_monitoring (the instance pml/ob1x loads too) and runs it.
set -u
fail() {
    echo "FAIL: $*"
    exit 1
}
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
src=$OB1X_SRCDIR/test
lib=$OB1X_BUILDDIR/ompi/mca/common/ob1x_monitoring/.libs
[ -f "$lib/libmca_common_ob1x_monitoring.so" ] || fail "no engine library in $lib"
incs=""
for d in $("$MPICC" --showme:incdirs); do incs="$incs -I$d -I$d/openmpi"; done
# shellcheck disable=SC2086
"$MPICC" -I"$OB1X_SRCDIR/compat" $incs -I"$OB1X_SRCDIR/ompi/mca/common/ob1x_monitoring" \
    -I"$src/common" -I"$src/monitoring" -o "$tmp/api" "$src/monitoring/api.c" \
    "$src"/common/*.c -L"$lib" -Wl,-rpath,"$lib" -lmca_common_ob1x_monitoring \
    -lopen-rte -lopen-pal || fail "cannot build api"
mkdir "$tmp/out"
# shellcheck disable=SC2086
"$MPIRUN" -np "$OB1X_TEST_NP" --oversubscribe --mca btl_base_warn_component_unused 0 \
    $OB1X_MPIRUN_OPTS "$tmp/api" "$tmp/out" </dev/null || fail "the job failed"
echo "PASS: monitoring/api"
