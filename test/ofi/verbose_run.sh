#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# verbose_run.sh - runs a test program (prog=DIR/NAME, test/DIR/NAME.c)
# with the list line's np and mpirun options plus --mca btl_ofi_verbose 1,
# and checks what btl/ofi said: every expect=REGEX (extended, grep -E)
# must match a line of the job's output, no reject=REGEX may; the job must
# exit 0 (status=any: any status, the output decides). Arguments after
# `--` go to the program. skip_if=LIB: skip (77) where the shared library
# LIB is installed (a check that only means something without it).
# hosts=N [nics=K]: on N namespace hosts with K NICs each (ofi_lib.sh).
set -u

. "$OB1X_SRCDIR/test/ofi/ofi_lib.sh"

prog=
status=zero
expects=()
rejects=()
while [ $# -gt 0 ]; do
    case $1 in
    prog=*) prog=${1#prog=} ;;
    expect=*) expects+=("${1#expect=}") ;;
    reject=*) rejects+=("${1#reject=}") ;;
    status=any) status=any ;;
    hosts=* | nics=*) ;; # ofi_lib.sh: the namespace hosts
    skip_if=*)
        if ldconfig -p 2>/dev/null | grep -qF "${1#skip_if=} "; then
            echo "SKIP: ${1#skip_if=} is installed here"
            exit 77
        fi
        ;;
    --)
        shift
        break
        ;;
    *) fail "unknown argument $1" ;;
    esac
    shift
done
[ -n "$prog" ] || fail "prog= missing"
bin=$(build "$prog") || exit 1

"$mpirun" -np "${OB1X_TEST_NP:-2}" --oversubscribe --mca btl_base_warn_component_unused 0 \
    "${line_opts[@]}" --mca btl_ofi_verbose 1 "$bin" "$@" </dev/null >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ "$status" = any ] || [ $rc -eq 0 ] || fail "the job exited with status $rc"
for e in "${expects[@]}"; do
    grep -qE -- "$e" "$tmp/out" || fail "no line of the output matches '$e'"
done
for r in "${rejects[@]}"; do
    grep -qE -- "$r" "$tmp/out" && fail "a line of the output matches '$r'"
done
echo "PASS: verbose_run $prog"
