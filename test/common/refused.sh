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

# The lines (grep patterns) a refused job prints; empty: none expected.
refused_marks=()

# printed_all PATTERN...: $tmp/out has a line matching each PATTERN.
printed_all() {
    local pattern
    for pattern; do
        grep -q "$pattern" "$tmp/out" || return 1
    done
}

# job SECONDS MPIRUN-ARGS...: 2 processes, output in $tmp/out, killed after
# SECONDS; returns mpirun's status (124 or 137: it hung). mpirun itself
# (Open MPI's launcher, which loads none of the components tested here)
# has died of SIGSEGV while tearing down a job whose processes failed
# MPI_Init, on a loaded machine: that job is shown and run once more, so
# that the verdict is about the component. A crash of the MPI processes
# is reported by mpirun with status 1 and stays a failure (check_refused).
job() {
    local rc why=
    job_once "$@"
    rc=$?
    # Hung after printing every line in refused_marks (set by the caller
    # for a job that must be refused): the component had refused the value
    # and Open MPI's run time hung tearing the failed job down (seen once
    # on a loaded machine, mpirun killed after 60 s). A job hung before the
    # refusal fails at once (check_refused).
    if { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && [ ${#refused_marks[@]} -gt 0 ] &&
        printed_all "${refused_marks[@]}"; then
        why="the job was refused, then hung tearing down"
    elif [ $rc -gt 128 ] && [ $rc -ne 137 ]; then
        why="mpirun itself died of signal $((rc - 128))"
    fi
    if [ -n "$why" ]; then
        echo "$why; its output:"
        sed 's/^/    | /' "$tmp/out"
        echo "running the job once more"
        job_once "$@"
        rc=$?
    fi
    return $rc
}

# job_once SECONDS MPIRUN-ARGS...: one bounded run of the job (see job).
job_once() {
    timeout -k 5 "$1" "$MPIRUN" -np 2 --oversubscribe --mca btl_base_warn_component_unused 0 \
        "${@:2}" </dev/null >"$tmp/out" 2>&1
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
