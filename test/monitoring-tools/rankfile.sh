#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# A rankfile ob1x-monitoring place writes for this machine (live hwloc
# topology, localhost) is accepted by mpirun --rankfile: the job runs, and
# mpirun binds ranks given one slot to one place and ranks given different
# slots to different places (--report-bindings). Control: a rankfile naming
# a package the machine does not have is refused, so acceptance means
# something.
set -u
. "$OB1X_SRCDIR/test/monitoring-tools/tool.sh"

np=${OB1X_TEST_NP:-4}
for ((i = 0; i < np; i++)); do
    line=
    for ((j = 0; j < np; j++)); do
        if [ $(((i + 1) % np)) = $j ] || [ $(((j + 1) % np)) = $i ]; then
            line+="100 "
        else
            line+="0 "
        fi
    done
    echo "$line"
done >"$work/ring.mat"

"$tool" place -o "$work/rf" "$work/ring.mat" >"$work/cost" || fail "place (live topology)"
cat "$work/cost" "$work/rf"
[ "$(grep -c "^rank [0-9]*=localhost slot=" "$work/rf")" = "$np" ] || fail "$np rankfile lines expected"

"$MPIRUN" -np "$np" --oversubscribe --rankfile "$work/rf" --report-bindings true >"$work/out" 2>&1 ||
    fail "mpirun --rankfile refused it:
$(cat "$work/out")"
cat "$work/out"
declare -A mask_of_slot slot_of_mask
for ((r = 0; r < np; r++)); do
    slot=$(sed -n "s/^rank $r=localhost slot=//p" "$work/rf")
    mask=$(sed -n "s/.*MCW rank $r bound to .*: \(\[.*\]\)$/\1/p" "$work/out")
    [ -n "$mask" ] || fail "no binding reported for rank $r"
    if [ -n "${mask_of_slot[$slot]:-}" ]; then
        [ "${mask_of_slot[$slot]}" = "$mask" ] || fail "slot $slot bound to two places"
    fi
    if [ -n "${slot_of_mask[$mask]:-}" ]; then
        [ "${slot_of_mask[$mask]}" = "$slot" ] || fail "slots $slot and ${slot_of_mask[$mask]} bound alike"
    fi
    mask_of_slot[$slot]=$mask
    slot_of_mask[$mask]=$slot
done

sed 's/slot=[0-9]*:/slot=999:/' "$work/rf" >"$work/rf-bad"
"$MPIRUN" -np "$np" --oversubscribe --rankfile "$work/rf-bad" true >"$work/out-bad" 2>&1 &&
    fail "control: mpirun accepted package 999:
$(cat "$work/out-bad")"
echo "rankfile accepted and followed"
exit 0
