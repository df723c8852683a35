#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# netns_run.sh - runs a test program with the list line's np and mpirun
# options, across hosts made of network namespaces (ofi_lib.sh: skips
# where they cannot be made).
#
# Arguments: hosts=N [nics=K] prog=DIR/NAME [-- PROGRAM ARGS...]; the program is
# test/DIR/NAME.c, ranks are placed by slot (with np = N, one per host).
set -u

. "$OB1X_SRCDIR/test/ofi/ofi_lib.sh"

prog=
while [ $# -gt 0 ]; do
    case $1 in
    hosts=* | nics=*) ;;
    prog=*) prog=${1#prog=} ;;
    --) shift; break ;;
    *) fail "unknown argument '$1'" ;;
    esac
    shift
done
[ -n "$prog" ] || fail "give prog=DIR/NAME"
[ -n "${OB1X_NETNS_MPIRUN:-}" ] || fail "give hosts=N"
bin=$(build "$prog") || exit 1
echo "netns_run: $prog, ${OB1X_TEST_NP:-2} ranks on: $OB1X_NETNS_HOSTS"
"$mpirun" -np "${OB1X_TEST_NP:-2}" --mca btl_base_warn_component_unused 0 "${line_opts[@]}" \
    "$bin" "$@"
