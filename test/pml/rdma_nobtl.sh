#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# No RDMA BTL in common: the sender's vader offers get and put, the
# receiver's vader neither (its btl_vader_flags, given to its process
# alone). Every contiguous message above the eager size the sender starts
# as RGET (or RPUT) is refused by the receiver, counted once by
# pml_ob1x_rdma_fallback_no_btl, and arrives intact by send/recv
# (pml/rdma nobtl=1 checks each message).
set -u

. "$OB1X_SRCDIR/test/common/refused.sh"
src=$OB1X_SRCDIR/test
"$MPICC" -O2 -g -ftrivial-auto-var-init=pattern -I"$src/common" -o "$tmp/rdma" \
    "$src/pml/rdma.c" "$src"/common/*.c || fail "cannot build pml/rdma"

# run LABEL PROTO SENDER-FLAGS: rank 0 with SENDER-FLAGS, rank 1 without RDMA
run() {
    timeout -k 5 300 "$MPIRUN" --oversubscribe --mca btl_base_warn_component_unused 0 \
        --mca pml ob1x --mca btl self,vader --mca btl_vader_single_copy_mechanism cma \
        -np 1 -x OMPI_MCA_btl_vader_flags="$3" "$tmp/rdma" nobtl=1 big="$2" max=4194304 : \
        -np 1 -x OMPI_MCA_btl_vader_flags=send,inplace "$tmp/rdma" nobtl=1 big="$2" max=4194304 \
        </dev/null >"$tmp/out" 2>&1
    local rc=$?
    [ $rc -eq 0 ] || fail "$1: exit status $rc; output: $(tail -15 "$tmp/out")"
    grep -q "^PASS" "$tmp/out" || fail "$1: no PASS line; output: $(tail -15 "$tmp/out")"
}

run rget rget send,put,get,inplace
run rput rput send,put,inplace
echo "PASS: pml/rdma_nobtl (RGET and RPUT refused by a receiver without RDMA)"
