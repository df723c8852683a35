#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# finalize.sh - JOBS (default 100) consecutive 2-rank jobs of ofi/finalize_job
# with the list line's mpirun options (btl/ofi on one provider): every job
# must exit 0 with its data right, no crash, and no pause of 100 ms or more
# inside MPI_Finalize (the sleep a provider's progress thread once needed
# is replaced by closing things in order). Argument: jobs=N.
set -u

. "$OB1X_SRCDIR/test/ofi/ofi_lib.sh"

jobs=100
for a in "$@"; do
    case $a in jobs=*) jobs=${a#jobs=} ;; *) fail "unknown argument '$a'" ;; esac
done
bin=$(build ofi/finalize_job -rdynamic -ldl) || exit 1
start=$SECONDS
for ((j = 1; j <= jobs; j++)); do
    timeout -k 5 60 "$MPIRUN" -np 2 --oversubscribe --mca btl_base_warn_component_unused 0 \
        "${line_opts[@]}" "$bin" </dev/null >"$tmp/out" 2>&1
    rc=$?
    if [ $rc -ne 0 ] || ! grep -q '^finalize: ok$' "$tmp/out"; then
        cat "$tmp/out"
        fail "job $j of $jobs ended with status $rc (124/137: it hung)"
    fi
done
echo "finalize: $jobs jobs in $((SECONDS - start)) s, each exited 0, data right, no sleep in MPI_Finalize"
echo "PASS: finalize"
