#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# cuda.gpu_checks_emu: test/gpu/run-gpu-checks, the real-GPU check script,
# run here against the driver emulation (--emulate, small sizes) on this
# build tree, so that the script and its program are proven before a GPU
# machine runs them:
#   1. every run (same-gpu, two-gpu, tcp): no check may fail; the data
#      checks must have passed (the IPC ones may SKIP while btl/smcuda
#      does not count IPC);
#   2. with --corrupt (rank 0 damages one byte of what it sends; the
#      same-gpu run, whose program the others share), the data checks must FAIL and the script must say so in its exit status;
#   3. no device memory file of the emulation left in /dev/shm.
set -u
fail() {
    echo "FAIL: $*"
    exit 1
}
# shellcheck source=/dev/null
. "$OB1X_BUILDDIR/test/harness.env"
if [ -z "${OB1X_CUDA_CPPFLAGS:-}" ]; then
    echo "SKIP: built without the CUDA headers (configure --with-cuda)"
    exit 77
fi
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
script=$OB1X_SRCDIR/test/gpu/run-gpu-checks
# our emulated device memory files carry this tag (tests beside us have theirs)
export OB1X_CUEMU_TAG=g$$
shm() { find /dev/shm -maxdepth 1 -name "ob1x-cuemu.$OB1X_CUEMU_TAG.*" 2>/dev/null | sort; }
before=$(shm)

"$script" --emulate --builddir "$OB1X_BUILDDIR" --work "$tmp/work" --out "$tmp/good" \
    >"$tmp/good.out" 2>&1
rc=$?
sed 's/^/    /' "$tmp/good.out"
sum=$tmp/good/summary.txt
[ $rc -eq 0 ] || fail "run-gpu-checks --emulate: exit status $rc"
! grep -q '^FAIL' "$sum" || fail "a check failed"
for want in "same-gpu  sweep" "same-gpu  mix" "same-gpu  noncontig" "same-gpu  realloc" \
    "same-gpu  ipc_setup" "same-gpu  ipc_cache" "two-gpu   ipc_cache" "two-gpu   sweep" "two-gpu   mix" "tcp       sweep" \
    "tcp       mix" "tcp       noncontig"; do
    grep -q "^PASS $want " "$sum" || fail "no 'PASS $want' in the summary"
done
grep -q '^BW same-gpu  *1048576 ' "$tmp/good/bandwidth.txt" || fail "no bandwidth line for 1 MiB"

# the run that passed must leave no device memory behind (the damaged run's
# failing jobs are aborted by mpirun, and a killed process keeps its file)
left=$(comm -13 <(echo "$before") <(shm) | tr '\n' ' ')
if [ -n "${left// /}" ]; then
    # shellcheck disable=SC2086
    rm -f $left
    fail "device memory files left in /dev/shm: $left"
fi

"$script" --emulate --builddir "$OB1X_BUILDDIR" --work "$tmp/work" --out "$tmp/bad" --runs same-gpu \
    --corrupt 4100 >"$tmp/bad.out" 2>&1
rc=$?
sed 's/^/    /' "$tmp/bad.out"
[ $rc -ne 0 ] || fail "run-gpu-checks --corrupt 4100 passed"
for want in "same-gpu  sweep" "same-gpu  mix" "same-gpu  noncontig" "same-gpu  ipc_setup"; do
    grep -q "^FAIL $want .*wrong" "$tmp/bad/summary.txt" ||
        fail "damaged data not seen: no 'FAIL $want ... wrong' in the summary"
done

# The sweep's IPC check can fail: with cuIpcGetMemHandle failing every
# device message is staged, and ipc=require must say so (data still right).
"$script" --emulate --builddir "$OB1X_BUILDDIR" --work "$tmp/work" --out "$tmp/noipc" --runs same-gpu \
    --ipc require --env OB1X_CUEMU_FAIL=cuIpcGetMemHandle --sizes 0,1,4097,1M,3M+1 \
    >"$tmp/noipc.out" 2>&1
rc=$?
sed 's/^/    /' "$tmp/noipc.out"
[ $rc -ne 0 ] || fail "run-gpu-checks --ipc require passed with CUDA IPC failing"
grep -q "^FAIL same-gpu  sweep .*not wholly by CUDA IPC" "$tmp/noipc/summary.txt" ||
    fail "staged messages not seen: no 'FAIL same-gpu sweep ... not wholly by CUDA IPC'"
! grep -q "wrong" "$tmp/noipc/summary.txt" || fail "data wrong with CUDA IPC failing"

# files of the damaged and the IPC-less runs' jobs: ours by their tag
left=$(comm -13 <(echo "$before") <(shm) | tr '\n' ' ')
# shellcheck disable=SC2086
[ -z "${left// /}" ] || rm -f $left
echo "PASS: gpu/run-gpu-checks --emulate"
