#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# What MPI_Finalize writes (pml_monitoring_enable 2, coll basic: a linear
# barrier) for the known pattern of monitoring/pattern.c, in Open MPI
# 4.1's .prof format line for line:
#   enable_output 1: on stdout only; 2: on stderr only; 3: one file per
#   process, <filename>.<rank>.prof; recording stopped through MPI_T: no file.
# Every line must have one of the stock shapes (tab separated), and the E
# lines the exact counts, bytes and histogram.
set -u
fail() {
    echo "FAIL: $*"
    exit 1
}
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
src=$OB1X_SRCDIR/test
np=$OB1X_TEST_NP
"$MPICC" -I"$src/common" -I"$src/monitoring" -o "$tmp/pattern" "$src/monitoring/pattern.c" \
    "$src"/common/*.c || fail "cannot build pattern"

run() { # output-mode extra-args...
    local mode=$1
    shift
    # shellcheck disable=SC2086
    "$MPIRUN" -np "$np" --oversubscribe --mca btl_base_warn_component_unused 0 \
        $OB1X_MPIRUN_OPTS --mca pml_monitoring_enable_output "$mode" \
        --mca pml_monitoring_filename "$tmp/out/prof" "$tmp/pattern" "$@" </dev/null \
        >"$tmp/stdout" 2>"$tmp/stderr" || { cat "$tmp/stderr"; fail "job (output $mode) failed"; }
}

# The E line rank r must write: 1000, 600, 1000, 600 and 1000 B (all bin 10),
# 2 x 16 B and 1 empty to its right,
# histogram bin 0 = the empty one + the barrier's message to the right.
e_line() {
    local r=$1 right=$(((r + 1) % np)) b0=1 hist=""
    { [ $r -eq 0 ] || [ $right -eq 0 ]; } && b0=2
    for j in $(seq 0 65); do
        case $j in 0) v=$b0 ;; 5) v=2 ;; 10) v=5 ;; *) v=0 ;; esac
        hist=$hist${hist:+,}$v
    done
    printf 'E\t%d\t%d\t4232 bytes\t8 msgs sent\t%s\n' "$r" "$right" "$hist"
}

# Every line has a stock shape; every rank's E line is exact.
check_text() { # file what
    local bad
    bad=$(grep -vE $'^(# (POINT TO POINT|OSC|COLLECTIVES)|[EISRC]\t[0-9]+\t[0-9]+\t[0-9]+ bytes\t[0-9]+ msgs sent(\t[0-9]+(,[0-9]+){65})?|D\t[^\t]+\tprocs: [0-9,]*|(O2A|A2O|A2A)\t[0-9]+\t[0-9]+ bytes\t[0-9]+ msgs sent|#R[EI]\t.*|#X\t.*)$' "$1")
    [ -z "$bad" ] || fail "$2: lines not in the stock format: $bad"
    for r in $(seq 0 $((np - 1))); do
        grep -qxF "$(e_line $r)" "$1" || fail "$2: no exact E line of rank $r; expected $(e_line $r | cut -c1-60)...; got $(grep -P "^E\t$r\t" "$1" | cut -c1-60)"
    done
    [ "$(grep -c '^E' "$1")" -eq "$np" ] || fail "$2: $(grep -c '^E' "$1") E lines, expected $np"
}

mkdir "$tmp/out"
run 1
check_text "$tmp/stdout" "enable_output 1 (stdout)"
grep -q '^E' "$tmp/stderr" && fail "enable_output 1 wrote to stderr"
[ -z "$(ls "$tmp/out")" ] || fail "enable_output 1 wrote files"

run 2
grep -v '^E\|^I\|^#\|^[SRCD]\|^O2A\|^A2[OA]' "$tmp/stderr" >"$tmp/noise"
grep '^E\|^I\|^#\|^[SRCD]\t\|^O2A\|^A2[OA]' "$tmp/stderr" >"$tmp/err"
check_text "$tmp/err" "enable_output 2 (stderr)"
grep -q '^E' "$tmp/stdout" && fail "enable_output 2 wrote to stdout"

run 3
cat "$tmp"/out/prof.*.prof >"$tmp/all"
[ "$(ls "$tmp/out" | wc -l)" -eq "$np" ] || fail "enable_output 3: files $(ls "$tmp/out")"
check_text "$tmp/all" "enable_output 3 (files)"
grep -q '^E' "$tmp/stdout" "$tmp/stderr" && fail "enable_output 3 wrote E lines on a stream"

rm -f "$tmp"/out/*
run 3 stop
[ -z "$(ls "$tmp/out")" ] || fail "recording stopped through MPI_T, yet files were written: $(ls "$tmp/out")"
echo "PASS: monitoring/output"
