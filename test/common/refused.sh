# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# refused.sh - sourced by the .sh tests that run small jobs with values a
# component must refuse (foundation/badparam.sh, pml/btl_limits.sh): fail,
# a scratch directory $tmp (removed on exit), a bounded mpirun whose output
# goes to $tmp/out, and the check that a job was refused the right way.

fail() {
    echo "FAIL: $*"
    exit 1
}

tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

# job SECONDS MPIRUN-ARGS...: 2 processes, output in $tmp/out, killed after
# SECONDS; returns mpirun's status (124 or 137: it hung). mpirun itself
# (Open MPI's launcher, which loads none of the components tested here)
# has died of SIGSEGV while tearing down a job whose processes failed
# MPI_Init, on a loaded machine: that job is shown and run once more, so
# that the verdict is about the component. A crash of the MPI processes
# is reported by mpirun with status 1 and stays a failure (check_refused).
job() {
    local rc
    timeout -k 5 "$1" "$MPIRUN" -np 2 --oversubscribe --mca btl_base_warn_component_unused 0 \
        "${@:2}" </dev/null >"$tmp/out" 2>&1
    rc=$?
    if [ $rc -gt 128 ] && [ $rc -ne 137 ]; then
        echo "mpirun itself died of signal $((rc - 128)); its output:"
        sed 's/^/    | /' "$tmp/out"
        echo "running the job once more"
        timeout -k 5 "$1" "$MPIRUN" -np 2 --oversubscribe --mca btl_base_warn_component_unused 0 \
            "${@:2}" </dev/null >"$tmp/out" 2>&1
        rc=$?
    fi
    return $rc
}

# check_refused RC LABEL WHAT PATTERN...: the job that ended with status RC
# (output in $tmp/out) must have failed by itself, neither hung nor
# crashed, and printed a line matching each PATTERN (grep), the help
# message naming WHAT.
check_refused() {
    local rc=$1 label=$2 what=$3 pattern
    shift 3
    [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || fail "$label: the job hung"
    [ "$rc" -ne 0 ] || fail "$label: the job succeeded; output: $(tail -5 "$tmp/out")"
    grep -q "Segmentation\|signal" "$tmp/out" &&
        fail "$label: a process crashed (status $rc); output: $(head -40 "$tmp/out")"
    for pattern; do
        grep -q "$pattern" "$tmp/out" ||
            fail "$label: no help message naming $what; output: $(head -15 "$tmp/out")"
    done
}
