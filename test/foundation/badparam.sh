#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# Usage: badparam.sh pml|btl
#
# A parameter of pml/ob1x (pml) or btl/smcuda (btl) that cannot work stops
# the component with a help message (help-ob1x-common.txt, invalid-param)
# naming the parameter, its value and the accepted values ("MCA parameter:
# pml_ob1x_<name>"), and the job fails within seconds instead of
# running with a value the user did not mean or crashing: zero or negative
# depths and list sizes, negative byte counts (Open MPI reads "-1" for a
# size_t parameter as 2^64 - 1), fragments too large for the shared pool.
# Jobs with the defaults and with legal edge values pass, so the failures
# are the values'.
set -u

. "$OB1X_SRCDIR/test/common/refused.sh"
"$MPICC" -o "$tmp/hello" "$OB1X_SRCDIR/test/foundation/hello.c" || fail "cannot build hello"

case "${1:-}" in
pml)
    select=(--mca pml ob1x --mca btl self,vader)
    prefix=pml_ob1x_
    legal="sendi_max=0 unexpected_limit=0 rndv_eager_limit=1"
    bad="send_pipeline_depth=0 send_pipeline_depth=-3
        free_list_num=-1 free_list_inc=0 free_list_max=2 fault_every=1 fault_every=-1
        orphan_hold_ms=-2 rndv_eager_limit=-5 sendi_max=-1 unexpected_limit=-1"
    ;;
btl)
    # ob1 so that the BTL alone decides; smcuda is the only way to the peer
    select=(--mca pml ob1 --mca btl self,smcuda)
    prefix=btl_smcuda_
    legal="eager_limit=0 max_send_size=0 fifo_size=0 fbox_count=0 cma_min_size=0
        single_copy_busy_limit=0"
    bad="eager_limit=-1 eager_limit=100000000 max_send_size=-1 max_send_size=1000000000
        rndv_eager_limit=-1 cma_min_size=-1 single_copy_busy_limit=-1
        single_copy_split_min=-1 free_list_num=-1 free_list_inc=-1 free_list_max=-1
        max_frags=-1"
    ;;
*) fail "usage: badparam.sh pml|btl" ;;
esac

# run [VAR=value ...]: the job with those variables in its environment (a
# --mca value that starts with '-' would be taken by mpirun for an option,
# so values travel through OMPI_MCA_* variables)
run() {
    (
        [ $# -eq 0 ] || export "$@"
        job 60 "${select[@]}" "$tmp/hello"
    )
}

run || fail "the job with default values failed: $(tail -3 "$tmp/out")"
for kv in $legal; do
    run "OMPI_MCA_$prefix$kv" || fail "legal $prefix$kv failed: $(tail -3 "$tmp/out")"
done

checked=0
for kv in $bad; do
    name=${kv%%=*}
    start=$SECONDS
    refused_marks=("^ *MCA parameter: *$prefix$name\$" "^ *Value: *${kv#*=}\$" "^ *Accepted values: ")
    run "OMPI_MCA_$prefix$kv"
    check_refused $? "$prefix$kv" "the parameter, value and accepted values" "${refused_marks[@]}"
    refused_marks=()
    echo "rejected $prefix$kv in $((SECONDS - start)) s"
    checked=$((checked + 1))
done
echo "PASS: badparam $1 ($checked bad values rejected)"
