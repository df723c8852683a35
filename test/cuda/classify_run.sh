#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# cuda.classify: classify.c against the emulation with 2 devices; the
# counts it wrote at exit agree (cuPointerGetAttributes only for the
# device and mmap'ed buffers, 8 of them in classify_again's checks).
. "$OB1X_SRCDIR/test/cuda/lib.sh"
build_prog classify emu
job -np 1 -x LD_LIBRARY_PATH="$emu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    -x OB1X_CUEMU_DEVICES=2 -x OB1X_CUEMU_COUNT="$tmp/count" "$tmp/classify" ||
    fail "classify failed"
counts=("$tmp"/count.*)
[ -f "${counts[0]}" ] || fail "the emulation wrote no call counts"
grep -qx 'cuPointerGetAttributes 13' "${counts[0]}" ||
    fail "cuPointerGetAttributes: $(grep cuPointerGetAttributes "${counts[0]}"), expected 13"
grep -qx 'cuInit 1' "${counts[0]}" || fail "cuInit: $(grep cuInit "${counts[0]}"), expected 1"
echo "PASS: cuda/classify"
