#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# ob1x-monitoring matrices on hand-written .prof files in the stock format
# (E lines with histograms, I lines with and without one, S/R/C lines, the
# D/O2A/A2O/A2A lines that are no matrix entries, a rank talking to itself,
# half values that print rounded to even): the .mat files must be byte for
# byte those of Open MPI's profile2mat.pl on the concatenated files, kept in
# fixtures/expected (and, when the host has /usr/bin/profile2mat, produced
# again by it here). Also: a run without E lines gives only the *_all
# matrices, as stock; --phases gives each phase's matrices; one .prof file;
# a job's output with the monitoring lines among others; the histograms.
set -u
. "$OB1X_SRCDIR/test/monitoring-tools/tool.sh"

# $1 set name, $2 directory with the tool's output: same files, same bytes.
compare_set() {
    local set=$1 dir=$2 want got
    want=$(cd "$fixtures/expected" && ls "${set}"_*.mat | LC_ALL=C sort)
    got=$(cd "$dir" && ls "${set}"_*.mat 2>/dev/null | LC_ALL=C sort)
    [ "$want" = "$got" ] || fail "$set: files written
$got
expected
$want"
    for f in $want; do
        cmp "$fixtures/expected/$f" "$dir/$f" ||
            fail "$set: $f differs: $(diff "$fixtures/expected/$f" "$dir/$f" | head -5)"
    done
}

mkdir "$work/out" "$work/in"
cp "$fixtures"/*.prof "$work/in/"

"$tool" matrices -q "$work/in/hand" -o "$work/out/hand" || fail "matrices hand"
compare_set hand "$work/out"

"$tool" matrices -q "$work/in/noext" -o "$work/out/noext" || fail "matrices noext"
compare_set noext "$work/out"
[ ! -e "$work/out/noext_size_osc.mat" ] || fail "noext: osc matrix without E lines"

"$tool" matrices -q --phases "$work/in/phase" -o "$work/out/phase" || fail "matrices --phases"
compare_set phase_1 "$work/out"
compare_set phase_2 "$work/out"

# Spot values worked out by hand (so that the fixtures cannot drift):
# (1000 + 501) / 2 = 750.5 prints 750, (3 + 2) / 2 = 2.5 prints 2,
# 750.5 / 2.5 = 300.2 prints 300, rank 1 to itself 10 bytes.
[ "$(sed -n 1p "$work/out/hand_size_external.mat")" = "0 750 4 0 " ] ||
    fail "hand_size_external row 0: $(sed -n 1p "$work/out/hand_size_external.mat")"
[ "$(sed -n 2p "$work/out/hand_msg_external.mat")" = "2 1 0 0 " ] ||
    fail "hand_msg_external row 1: $(sed -n 2p "$work/out/hand_msg_external.mat")"
[ "$(sed -n 2p "$work/out/hand_avg_external.mat")" = "300 10 0 0 " ] ||
    fail "hand_avg_external row 1: $(sed -n 2p "$work/out/hand_avg_external.mat")"

# One already concatenated file, named like profile2mat.pl's input.
cat "$work"/in/hand.*.prof >"$work/one.prof"
"$tool" matrices -q "$work/one.prof" || fail "matrices one.prof"
for f in "$fixtures"/expected/hand_*.mat; do
    b=${f##*/}
    cmp "$f" "$work/one_${b#hand_}" || fail "one.prof: ${b#hand_} differs"
done

# Monitoring printed on stdout (enable_output 1) among a program's output.
{
    echo "hello from the application"
    cat "$work"/in/hand.*.prof
    echo "E is not a matrix line without numbers"
} >"$work/job.out"
"$tool" matrices -q "$work/job.out" -o "$work/job" || fail "matrices job.out"
for f in "$fixtures"/expected/hand_*.mat; do
    b=${f##*/}
    cmp "$f" "$work/job_${b#hand_}" || fail "job.out: ${b#hand_} differs"
done

# The stock script itself, when the host has it.
if command -v profile2mat >/dev/null 2>&1; then
    mkdir "$work/stock"
    for set in hand noext phase_1 phase_2; do
        cat "$work"/in/"$set".*.prof >"$work/stock/$set.prof"
        (cd "$work/stock" && profile2mat "$set.prof" >/dev/null) || fail "profile2mat $set"
        rm "$work/stock/$set.prof"
    done
    [ "$(list_files "$work/stock")" = "$(cd "$fixtures/expected" && ls | LC_ALL=C sort)" ] ||
        fail "profile2mat writes other files than fixtures/expected holds"
    for f in "$work"/stock/*.mat; do
        cmp "$f" "$fixtures/expected/${f##*/}" || fail "profile2mat: ${f##*/} is not the fixture"
    done
    echo "profile2mat agrees with the fixtures"
fi

# The size histograms (E lines, and I lines of peers without E line), summed:
# worked out by hand from the fixtures' bins.
want=$(printf '%s\n' '# bin	from_bytes	to_bytes	messages' '0	0	0	1' '1	1	1	1' '2	2	3	1' \
    '3	4	7	1' '4	8	15	2' '8	128	255	2' '9	256	511	2' '10	512	1023	1' '# total	11')
got=$("$tool" histogram "$work/in/hand") || fail "histogram"
[ "$got" = "$want" ] || fail "histogram:
$got"
got=$("$tool" histogram --from 0 --to 3 "$work/in/hand") || fail "histogram 0 -> 3"
[ "$got" = "$(printf '%s\n' '# bin	from_bytes	to_bytes	messages' '0	0	0	1' '4	8	15	1' '# total	2')" ] ||
    fail "histogram 0 -> 3:
$got"

# Errors: no input, a matrix that is not square.
"$tool" matrices -q "$work/in/nothing" 2>/dev/null && fail "no .prof files: success"
printf '1 2\n3\n' >"$work/bad.mat"
"$tool" heatmap "$work/bad.mat" 2>/dev/null && fail "ragged matrix accepted"
echo "matrices: all as stock"
exit 0
