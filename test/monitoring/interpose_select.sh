#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# pml/monitoring and coll/monitoring with every kind of PML selection:
#   - ompi_info lists both, with our version (they shadow the host's);
#   - pml_monitoring_enable 0: nothing interposes, the job runs, no message;
#   - "--mca pml ob1" with monitoring enabled: point-to-point cannot be
#     recorded (pml/monitoring was left out): the job runs and says why;
#   - "--mca pml monitoring" alone: nothing to monitor, MPI_Init fails
#     with a message that says what to do;
#   - one report per process at MPI_Finalize, also when pml/monitoring
#     stands aside for pml/ob1x.
# The program is monitoring/pattern.c (the known pattern, no MPI_T).
set -u
fail() {
    echo "FAIL: $*"
    exit 1
}
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
src=$OB1X_SRCDIR/test
np=$OB1X_TEST_NP
"$MPICC" -I"$src/common" -I"$src/monitoring" -o "$tmp/pattern" "$src/monitoring/pattern.c" \
    "$src"/common/*.c || fail "cannot build pattern"

info=$("$OMPI_INFO" 2>&1) || fail "ompi_info failed"
for fw in pml coll; do
    echo "$info" | grep -Eq "MCA $fw: monitoring \(MCA v2\.1\.0, API v2\.[0-9]+\.0, Component v$OB1X_VERSION\)" ||
        fail "ompi_info does not list our $fw/monitoring (v$OB1X_VERSION): $(echo "$info" | grep "MCA $fw: monitoring")"
done

run() { # name expected-status mpirun-args...
    local name=$1 want=$2 rc
    shift 2
    # shellcheck disable=SC2086
    "$MPIRUN" -np "$np" --oversubscribe --mca btl_base_warn_component_unused 0 \
        $OB1X_MPIRUN_OPTS "$@" "$tmp/pattern" </dev/null >"$tmp/$name.out" 2>&1
    rc=$?
    if [ "$want" = ok ] && [ $rc -ne 0 ]; then
        cat "$tmp/$name.out"
        fail "$name: job failed (status $rc)"
    fi
    if [ "$want" = fail ] && [ $rc -eq 0 ]; then
        cat "$tmp/$name.out"
        fail "$name: job succeeded"
    fi
}

not_recorded="are not recorded: the selected PML"

run off ok --mca pml ob1,monitoring --mca pml_monitoring_enable 0
grep -q "$not_recorded\|pml/monitoring" "$tmp/off.out" && { cat "$tmp/off.out"; fail "off: a monitoring message"; }

run ob1_only ok --mca pml ob1 --mca pml_monitoring_enable 1
grep -q "$not_recorded" "$tmp/ob1_only.out" || { cat "$tmp/ob1_only.out"; fail "ob1 only: no message saying point-to-point is not recorded"; }
grep -q -- "--mca pml ob1,monitoring" "$tmp/ob1_only.out" || fail "ob1 only: the message does not say what to run"

run interposed ok --mca pml ob1,monitoring --mca pml_monitoring_enable 1
grep -q "$not_recorded" "$tmp/interposed.out" && { cat "$tmp/interposed.out"; fail "ob1,monitoring: warned although interposed"; }

run alone fail --mca pml monitoring --mca pml_monitoring_enable 1
grep -q "No PML is left for pml/monitoring to monitor" "$tmp/alone.out" || { cat "$tmp/alone.out"; fail "monitoring alone: no message"; }
# One report per process at MPI_Finalize, whoever records: pml/monitoring
# standing aside for ob1x must not leave an empty one behind.
reports() { # name mpirun-args...
    local name=$1 n
    shift
    run "$name" ok "$@" --mca pml_monitoring_enable 1 --mca pml_monitoring_enable_output 1
    n=$(grep -c "^# POINT TO POINT" "$tmp/$name.out")
    [ "$n" -eq "$np" ] || { cat "$tmp/$name.out"; fail "$name: $n reports, expected $np"; }
}
reports report_ob1 --mca pml ob1,monitoring
if [ -f "$OB1X_COMPONENT_DIR/mca_pml_ob1x.so" ]; then
    reports report_ob1x --mca pml ob1x,monitoring
fi
echo "PASS: interpose_select"
