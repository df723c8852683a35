#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# valgrind.sh - no leaks of btl/ofi's under valgrind: ofi/finalize_job
# (two-sided eager and 1 MiB messages, a window with put, fetch-and-op and
# flush, then MPI_Finalize) on 2 ranks with the list line's mpirun options,
# each rank under valgrind --leak-check=full. Only "definitely lost"
# records are looked at, and of those only the ones with a frame in our
# component (a btl_ofi_*.c source line or mca_btl_ofi.so): Open MPI's and
# libfabric's own leaks (their caches, their one-time allocations) do not
# count, which is the suppression; valgrind.supp names libfabric leaks
# reached through our calls that are libfabric's to fix. Skips (77)
# without valgrind.
set -u

. "$OB1X_SRCDIR/test/ofi/ofi_lib.sh"

command -v valgrind >/dev/null 2>&1 || { echo "SKIP: valgrind not installed"; exit 77; }
bin=$(build ofi/finalize_job -rdynamic -ldl) || exit 1
supp=$OB1X_SRCDIR/test/ofi/valgrind.supp

"$mpirun" -np 2 --oversubscribe --mca btl_base_warn_component_unused 0 "${line_opts[@]}" \
    valgrind --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=none \
    --num-callers=40 --keep-debuginfo=yes --suppressions="$supp" --log-file="$tmp/vg.%p" "$bin" </dev/null \
    >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || fail "the job exited with status $rc"
grep -q '^finalize: ok$' "$tmp/out" || fail "the job did not report its data right"
logs=("$tmp"/vg.*)
[ ${#logs[@]} -eq 2 ] || fail "expected 2 valgrind logs, found ${#logs[@]}"
ours=0
for log in "${logs[@]}"; do
    grep -q 'LEAK SUMMARY\|All heap blocks were freed' "$log" ||
        fail "$(basename "$log"): valgrind reported no leak check (rank crashed?)"
    # a loss record: from its "definitely lost in loss record" line to the
    # next line that is only the pid prefix
    awk '/are definitely lost in loss record/ { rec = $0 "\n"; inrec = 1; next }
             inrec && /^==[0-9]+== *$/ { if (rec ~ /btl_ofi_[a-z_]*\.c:[0-9]|mca_btl_ofi\.so/) { printf "%s\n", rec; n++ } inrec = 0; next }
             inrec { rec = rec $0 "\n" }
             END { print n + 0 > "/dev/stderr" }' "$log" 2>"$tmp/count" >>"$tmp/ours"
    ours=$((ours + $(cat "$tmp/count")))
    echo "valgrind $(basename "$log"): $(grep -m1 'definitely lost:' "$log" | sed 's/^==[0-9]*== *//')"
done
if [ $ours -ne 0 ]; then
    cat "$tmp/ours"
    fail "$ours definitely-lost record(s) with a frame in btl/ofi"
fi
echo "PASS: valgrind (no definite leak through btl/ofi)"
