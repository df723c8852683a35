#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# libob1x_monitoring_prof.so (tools/monitoring-preload) watching an
# unmodified token ring (preload_app.c: LAPS messages of BYTES bytes from
# every rank to its right neighbour, nothing else):
#   1. preloaded, OB1X_MONITORING_PROF_PREFIX=out/ring: the 12 matrices
#      out/ring_{pml,coll,osc,all}_{msg,size,avg}.mat, exact (symmetric as
#      stock writes them: [i][j] = half of what i and j exchanged), one
#      "writing NxN matrix to FILE" line each on stdout, nothing elsewhere;
#   2. not preloaded: no file at all;
#   3. preloaded, no prefix: monitoring_*.mat in the working directory
#      (stock's names);
#   4. ob1x-monitoring (when built) draws one of them;
#   5. the same through the Fortran MPI_INIT/MPI_FINALIZE, mpif.h and
#      mpi_f08 (when mpifort builds the programs).
set -u
fail() {
    echo "FAIL: $*"
    exit 1
}
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
np=$OB1X_TEST_NP
laps=6
bytes=1000
lib=$OB1X_BUILDDIR/tools/monitoring-preload/.libs/libob1x_monitoring_prof.so
[ -r "$lib" ] || fail "$lib not built"
"$MPICC" -o "$tmp/ring" "$OB1X_SRCDIR/test/monitoring/preload_app.c" || fail "cannot build the ring"
nm "$tmp/ring" | grep -qi 'MPI_T_\|monitoring' && fail "the ring must not know about monitoring"

run() { # dir preload(yes/no) program [mpirun options...]
    local dir=$1 pre=$2 prog=$3
    shift 3
    local extra=()
    [ "$pre" = yes ] && extra=(-x LD_PRELOAD="$lib")
    mkdir -p "$dir"
    # shellcheck disable=SC2086
    (cd "$dir" && "$MPIRUN" -np "$np" --oversubscribe --mca btl_base_warn_component_unused 0 \
        $OB1X_MPIRUN_OPTS "${extra[@]}" "$@" "$prog" "$laps" "$bytes" </dev/null \
        >"$tmp/stdout" 2>"$tmp/stderr") || {
        cat "$tmp/stderr"
        fail "job in $dir (preload $pre) failed"
    }
}

# shellcheck source=preload_lib.sh
. "$OB1X_SRCDIR/test/monitoring/preload_lib.sh"

# Expected entry [i][j] of group's matrix what (msg, size or avg).
expect() { # group what i j
    local c=0
    [ "$1" = pml ] || [ "$1" = all ] || {
        echo 0
        return
    }
    [ "$4" -eq $((($3 + 1) % np)) ] && c=$((c + laps))
    [ "$3" -eq $((($4 + 1) % np)) ] && c=$((c + laps))
    case $2 in
    msg) echo $((c / 2)) ;;
    size) echo $((c * bytes / 2)) ;;
    avg) [ "$c" -eq 0 ] && echo 0 || echo "$bytes" ;;
    esac
}

# 1. preloaded, with a prefix
mkdir "$tmp/out"
run "$tmp/cwd1" yes "$tmp/ring" -x OB1X_MONITORING_PROF_PREFIX="$tmp/out/ring"
check_mats "$tmp/out/ring"
[ "$(ls "$tmp/out" | wc -l)" -eq 12 ] || fail "$(ls "$tmp/out" | wc -l) files in out/, expected 12"
[ -z "$(ls "$tmp/cwd1")" ] || fail "files written in the working directory: $(ls "$tmp/cwd1")"
grep -q 'libob1x_monitoring_prof' "$tmp/stderr" && fail "unexpected message: $(cat "$tmp/stderr")"
echo "preloaded: 12 exact matrices"

# 2. not preloaded
rm -rf "$tmp/out"
run "$tmp/cwd2" no "$tmp/ring" -x OB1X_MONITORING_PROF_PREFIX="$tmp/out/ring"
[ ! -e "$tmp/out" ] && [ -z "$(ls "$tmp/cwd2")" ] || fail "files written without the preload"
grep -q 'matrix to' "$tmp/stdout" && fail "'writing' lines without the preload"
echo "not preloaded: nothing written"

# 3. stock's default names in the working directory
run "$tmp/cwd3" yes "$tmp/ring"
check_mats "$tmp/cwd3/monitoring" monitoring
echo "default prefix: monitoring_*.mat in the working directory"

# 4. readable by ob1x-monitoring
tool=$OB1X_BUILDDIR/tools/monitoring/ob1x-monitoring
if [ -x "$tool" ]; then
    "$tool" heatmap --svg -o "$tmp/heat" "$tmp/cwd3/monitoring_all_size.mat" >"$tmp/tool.out" 2>&1 ||
        { cat "$tmp/tool.out"; fail "ob1x-monitoring heatmap cannot read the matrix"; }
    ls "$tmp"/heat*.svg >/dev/null 2>&1 || fail "ob1x-monitoring heatmap wrote no SVG"
    echo "ob1x-monitoring heatmap reads the matrix"
else
    echo "ob1x-monitoring not built: drawing not checked"
fi

# 5. Fortran entry points: mpif.h, then mpi_f08
for f in preload_app preload_app_f08; do
    if command -v "${MPIFORT:-mpifort}" >/dev/null 2>&1 &&
        "${MPIFORT:-mpifort}" -o "$tmp/$f" "$OB1X_SRCDIR/test/monitoring/$f.f90" \
            >"$tmp/fc.out" 2>&1; then
        run "$tmp/cwd_$f" yes "$tmp/$f"
        check_mats "$tmp/cwd_$f/monitoring" monitoring
        echo "Fortran ($f.f90): 12 exact matrices"
    else
        echo "no Fortran compiler (or no mpi_f08): $f.f90 not checked"
    fi
done
exit 0
