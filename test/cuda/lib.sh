# shellcheck shell=bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# Sourced by the cuda.* tests (test/list/cuda.list). Builds, in a
# temporary directory of the test:
#   $emu/libcuda.so.1   the CUDA driver emulation (test/cuda/emu/cuemu.c),
#                       found first through LD_LIBRARY_PATH;
#   $tmp/PROG           test/cuda/PROG.c with test/common, linked with the
#                       build tree's libmca_common_ob1x_cuda and, with
#                       build_prog PROG emu, with the emulation itself.
# Then `job ...` runs mpirun with those and checks that no device memory
# file of the emulation was left in /dev/shm by a job that ended well (a
# killed process cannot remove its files: job removes them, the test has
# failed anyway).
set -u
# The test programs' own assertions only (no pml_ob1x counters): local
# processes inherit mpirun's environment.
export OB1X_TEST_NO_PVARS=1
fail() {
    echo "FAIL: $*"
    exit 1
}
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=/dev/null
. "$OB1X_BUILDDIR/test/harness.env"
src=$OB1X_SRCDIR/test
cudalib=$OB1X_BUILDDIR/opal/mca/common/ob1x_cuda/.libs
if [ -z "${OB1X_CUDA_CPPFLAGS:-}" ] || [ ! -f "$cudalib/libmca_common_ob1x_cuda.so" ]; then
    echo "SKIP: built without the CUDA headers (configure --with-cuda)"
    exit 77
fi
# build_emu DIR [cc flags]: DIR/libcuda.so.1
build_emu() {
    local dir=$1
    shift
    mkdir -p "$dir"
    # shellcheck disable=SC2086
    cc -O2 -g -Wall -Werror -fPIC -shared -fvisibility=hidden $OB1X_CUDA_CPPFLAGS \
        -I"$OB1X_SRCDIR/opal/mca/common/ob1x_cuda" "$@" \
        -Wl,-soname,libcuda.so.1 -o "$dir/libcuda.so.1" "$src/cuda/emu/cuemu.c" -lpthread ||
        fail "cannot build the emulation library"
}
emu=$tmp/emu
build_emu "$emu"

build_prog() { # PROG [emu|-] [more link arguments ...]
    local incs="" d with=() prog=$1
    for d in $("$MPICC" --showme:incdirs); do incs="$incs -I$d -I$d/openmpi"; done
    [ "${2:-}" = emu ] && with=("$emu/libcuda.so.1")
    [ $# -ge 2 ] && shift 2 || shift $#
    with+=("$@")
    # shellcheck disable=SC2086
    "$MPICC" -g -O2 -Wall -I"$OB1X_SRCDIR/compat" $incs \
        -I"$OB1X_SRCDIR/opal/mca/common/ob1x_cuda" -I"$src/common" -I"$src/cuda/emu" \
        -o "$tmp/$prog" "$src/cuda/$prog.c" "$src"/common/*.c "${with[@]}" \
        -L"$cudalib" -Wl,-rpath,"$cudalib" -lmca_common_ob1x_cuda -lopen-rte -lopen-pal ||
        fail "cannot build $prog"
}

# This test's emulated device memory files carry its own tag, so that jobs
# of other tests running beside it are never mistaken for ours.
export OB1X_CUEMU_TAG=t$$
shm_leftovers() {
    find /dev/shm -maxdepth 1 -name "ob1x-cuemu.$OB1X_CUEMU_TAG.*" 2>/dev/null | sort
}

# job [mpirun arguments ...]: output in $tmp/out, status returned.
job() {
    local before after rc
    before=$(shm_leftovers)
    # shellcheck disable=SC2086
    "$MPIRUN" --oversubscribe --mca btl_base_warn_component_unused 0 $OB1X_MPIRUN_OPTS \
        "$@" </dev/null >"$tmp/out" 2>&1
    rc=$?
    sed 's/^/    /' "$tmp/out"
    left=$(comm -13 <(echo "$before") <(shm_leftovers) | tr '\n' ' ')
    if [ -n "${left// /}" ]; then
        # shellcheck disable=SC2086
        rm -f $left
        [ $rc -ne 0 ] || fail "device memory files left in /dev/shm: $left"
    fi
    return $rc
}

# expect_output TEXT: the last job printed TEXT.
expect_output() {
    grep -qF -- "$1" "$tmp/out" || fail "the job did not print '$1'"
}
