#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# Runs JOBS (default 100) consecutive 2-rank jobs of ofi_shortjob.c with the
# list line's mpirun options (the provider, its progress mode): every job
# must pass, none may die of a signal. btl/ofi closes endpoints, CQs, AV,
# registrations, domain, fabric in that order, with no sleep: a provider's
# progress thread (sockets with auto progress) never runs on freed memory.
# Arguments: jobs=N
set -u

fail() {
    echo "FAIL: $*"
    exit 1
}

jobs=100
for a in "$@"; do
    case $a in
        jobs=*) jobs=${a#jobs=} ;;
    esac
done
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
src=$OB1X_SRCDIR/test
"$MPICC" -I"$src/common" -I"$src/btl" -o "$tmp/fin" "$src/btl/ofi_shortjob.c" \
    "$src"/common/*.c || fail "cannot build ofi_shortjob"

read -r -a opts <<<"$OB1X_MPIRUN_OPTS"
for ((i = 1; i <= jobs; ++i)); do
    out=$(timeout -k 5 60 "$MPIRUN" -np 2 --oversubscribe --mca btl_base_warn_component_unused 0 \
        "${opts[@]}" "$tmp/fin" </dev/null 2>&1)
    rc=$?
    if [ $rc -ne 0 ] || ! grep -q "PASS: btl/ofi_shortjob" <<<"$out" ||
        grep -qi "signal\|segmentation" <<<"$out"; then
        echo "$out" | tail -20
        fail "job $i of $jobs failed (exit $rc)"
    fi
done
echo "PASS: btl/ofi_finalize ($jobs jobs)"
