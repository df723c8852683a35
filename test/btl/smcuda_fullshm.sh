#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# A backing directory without room for the segments (a container's small
# /dev/shm): tmpfs accepts a sparse file of any size and only raises SIGBUS
# when a page is first touched, mid-transfer. btl/smcuda reserves its
# segment when it creates it, so here each process finds the 12 MiB tmpfs
# full at init, says so (a help message), and places its segment in the job
# session directory; the all-to-all flood (which touches every fragment)
# then passes, and nothing of ours stays in the small directory.
# Needs root to mount a tmpfs; skipped (77) where mounting is not allowed.
set -u

fail() {
    echo "FAIL: $*"
    exit 1
}

tmp=$(mktemp -d) || fail "mktemp"
dir=$tmp/shm
mkdir "$dir" || fail "mkdir"
if ! mount -t tmpfs -o size=12m,mode=1777 tmpfs "$dir" 2>/dev/null; then
    rm -rf "$tmp"
    echo "SKIP: cannot mount a tmpfs here"
    exit 77
fi
trap 'umount "$dir"; rm -rf "$tmp"' EXIT
src=$OB1X_SRCDIR/test
"$MPICC" -I"$src/common" -I"$src/btl" -o "$tmp/flood" "$src/btl/smcuda_flood.c" \
    "$src"/common/*.c || fail "cannot build smcuda_flood"

out=$("$MPIRUN" -np 4 --oversubscribe --mca btl_base_warn_component_unused 0 \
    --mca pml ob1 --mca btl self,smcuda --mca btl_smcuda_single_copy_mechanism none \
    --mca btl_smcuda_backing_directory "$dir" \
    "$tmp/flood" </dev/null 2>&1)
rc=$?
echo "$out" | tail -5
[ $rc -eq 0 ] || fail "the job failed (exit $rc)"
grep -q "PASS: btl/smcuda_flood" <<<"$out" || fail "the flood did not pass"
grep -q "Bus error\|signal" <<<"$out" && fail "a process was killed by a signal"
# the help message (help-btl-smcuda.txt, segment-moved), shown in full by
# the first process that reports it and counted for the others
grep -q "^ *Backing directory: *$dir\$" <<<"$out" &&
    grep -q "^ *Error: *No space left on device\$" <<<"$out" &&
    grep -q "^ *Placed in: " <<<"$out" || fail "no process reported the full directory"
more=$(sed -n 's/.* \([0-9]*\) more process.* help-btl-smcuda.txt \/ segment-moved/\1/p' <<<"$out" |
    head -n 1)
n=$((1 + ${more:-0}))
left=$(ls -A "$dir")
[ -z "$left" ] || fail "left in $dir: $left"
echo "PASS: btl/smcuda_fullshm ($n of 4 processes moved their segment)"
