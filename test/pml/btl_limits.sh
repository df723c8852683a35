#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# A BTL whose limits cannot hold pml/ob1x's headers is refused when the
# processes are added (MPI_Init fails with a help message naming the BTL's
# parameter, its value and its minimum) instead of underflowing the payload
# sizes derived from it: an eager limit below the 32-byte rendezvous header
# (below the 14-byte MATCH header every message would count as eager), a
# maximum send size that leaves no byte after the 24-byte FRAG header.
# Edge values that work (eager limit 32, a rendezvous eager limit below the
# RNDV header: header-only first fragments) run pml/edge, whose cases go at
# an eager size and at rendezvous sizes with their contents checked.
set -u

. "$OB1X_SRCDIR/test/common/refused.sh"
src=$OB1X_SRCDIR/test
"$MPICC" -I"$src/common" -I"$src/pml" -o "$tmp/edge" "$src/pml/edge.c" "$src"/common/*.c ||
    fail "cannot build pml/edge"

# run [--mca name value ...]: pml/edge over tcp (vader and smcuda left out:
# tcp is the BTL under test) with those parameters, bounded
run() {
    job 120 --mca pml ob1x --mca btl self,tcp "$@" "$tmp/edge"
}

# refused NAME VALUE LABEL MINIMUM
refused() {
    local start=$SECONDS
    refused_marks=("^ *MCA parameter name: *btl_tcp_$1\$" "^ *BTL $3 value: *$2\$"
        "^ *BTL $3 minimum: *$4\$")
    run --mca "btl_tcp_$1" "$2"
    check_refused $? "btl_tcp_$1=$2" "the parameter, value and minimum" "${refused_marks[@]}"
    refused_marks=()
    echo "refused btl_tcp_$1=$2 in $((SECONDS - start)) s"
}

refused eager_limit 8 "eager limit" 32
refused eager_limit 31 "eager limit" 32
refused max_send_size 20 "max send size" 25
refused max_send_size 24 "max send size" 25

for edge in "eager_limit 32" "rndv_eager_limit 8"; do
    set -- $edge
    run --mca "btl_tcp_$1" "${@:2}" || fail "legal btl_tcp_$edge failed: $(tail -5 "$tmp/out")"
    echo "legal btl_tcp_$edge: $(grep -m1 PASS "$tmp/out")"
done
echo "PASS: pml/btl_limits"
