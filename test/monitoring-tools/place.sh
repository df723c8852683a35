#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# ob1x-monitoring place on synthetic hwloc topologies. A block-diagonal
# 8-rank matrix (two blocks of 4 talking 1000 bytes per pair, 1 byte across)
# on 2 packages x 4 cores: each block on one package, the exact costs
# (treematch 48128 bytes x hops, max 6016; round-robin 80096), lower than
# round-robin's. The same blocks with interleaved ranks ({0,2,4,6} and
# {1,3,5,7}): each block on one package again, cheaper than packed. The
# topology given three ways (hwloc's syntax, "2 packages x 4 cores", an
# lstopo XML file written by --save-topology) gives the same placement; two
# hosts of 4 cores put one block per host; 16 ranks on 8 cores two per core;
# 64 ranks in 8 scattered blocks on 8 packages x 8 cores: one package each.
set -u
. "$OB1X_SRCDIR/test/monitoring-tools/tool.sh"

# $1 file, $2 "same block" test on i and j (shell arithmetic)
write_blocks() {
    local i j line
    for ((i = 0; i < 8; i++)); do
        line=
        for ((j = 0; j < 8; j++)); do
            if [ $i = $j ]; then
                line+="0 "
            elif (($2)); then
                line+="1000 "
            else
                line+="1 "
            fi
        done
        echo "$line"
    done >"$1"
}
write_blocks "$work/blocks.mat" 'i / 4 == j / 4'
write_blocks "$work/interleaved.mat" 'i % 2 == j % 2'

# $1 output of place, $2 placement name: "total max"
cost_of() {
    awk -v p="$2" '$1 == p { print $2, $3 }' <<<"$1"
}
# $1 rankfile text, $2 rank: "host package" ("host -" when slots have no package)
where() {
    sed -n -e "s/^rank $2=\([^ ]*\) slot=\([0-9]*\):.*/\1 \2/p" \
        -e "s/^rank $2=\([^ ]*\) slot=[0-9]*$/\1 -/p" <<<"$1"
}
# $1 output, $2..: the ranks of each block, blocks separated by '/'
check_blocks() {
    local out=$1 first= r w
    shift
    for r in "$@"; do
        if [ "$r" = / ]; then
            first=
            continue
        fi
        w=$(where "$out" "$r")
        [ -n "$w" ] || fail "no rankfile line for rank $r:
$out"
        if [ -z "$first" ]; then
            first=$w
        else
            [ "$w" = "$first" ] || fail "rank $r on '$w', its block on '$first':
$out"
        fi
    done
}
lines_of() {
    grep -c '^rank ' <<<"$1"
}

out=$("$tool" place -t "package:2 core:4" "$work/blocks.mat") || fail "place blocks"
[ "$(lines_of "$out")" = 8 ] || fail "8 rankfile lines expected:
$out"
check_blocks "$out" 0 1 2 3 / 4 5 6 7
[ "$(where "$out" 0)" != "$(where "$out" 4)" ] || fail "both blocks on one package"
[ "$(cost_of "$out" treematch)" = "48128 6016" ] || fail "treematch cost: $(cost_of "$out" treematch)"
[ "$(cost_of "$out" round-robin)" = "80096 10012" ] ||
    fail "round-robin cost: $(cost_of "$out" round-robin)"
read -r tm _ <<<"$(cost_of "$out" treematch)"
read -r rr _ <<<"$(cost_of "$out" round-robin)"
((tm < rr)) || fail "treematch $tm not below round-robin $rr"

out2=$("$tool" place -t "2 packages x 4 cores" --save-topology "$work/t.xml" "$work/blocks.mat") ||
    fail "place with '2 packages x 4 cores'"
[ "$out2" = "$out" ] || fail "'2 packages x 4 cores' differs from package:2 core:4:
$out2"
out3=$("$tool" place -t "xml:$work/t.xml" "$work/blocks.mat") || fail "place with XML"
[ "$out3" = "$out" ] || fail "XML topology differs:
$out3"

out=$("$tool" place -t "package:2 core:4" "$work/interleaved.mat") || fail "place interleaved"
check_blocks "$out" 0 2 4 6 / 1 3 5 7
read -r tm _ <<<"$(cost_of "$out" treematch)"
read -r pk _ <<<"$(cost_of "$out" packed)"
((tm < pk)) || fail "interleaved: treematch $tm not below packed $pk"

"$tool" place -o "$work/rf" --hosts n1,n2 -t "core:4 pu:1" "$work/blocks.mat" >/dev/null ||
    fail "place on two hosts"
rf=$(cat "$work/rf")
check_blocks "$rf" 0 1 2 3 / 4 5 6 7
[ "$(where "$rf" 0)" != "$(where "$rf" 4)" ] || fail "both blocks on one host"

# 16 ranks on 8 cores: two per core, each core's pair from one block.
awk '{ printf "%s%s\n", $0, $0 }' "$work/blocks.mat" >"$work/half"
cat "$work/half" "$work/half" >"$work/sixteen.mat"
out=$("$tool" place -t "package:2 core:4" "$work/sixteen.mat") || fail "place 16 ranks"
[ "$(lines_of "$out")" = 16 ] || fail "16 rankfile lines expected"
[ "$(grep '^rank ' <<<"$out" | awk '{ print $3 }' | sort | uniq -c | awk '{ print $1 }' | sort -u)" = 2 ] ||
    fail "not two ranks per core:
$out"

# 64 ranks in 8 scattered blocks of 8 (block of r: (13 r mod 64) / 8) on
# 8 packages x 8 cores: every block on one package.
for ((i = 0; i < 64; i++)); do
    line=
    for ((j = 0; j < 64; j++)); do
        if [ $i = $j ]; then
            line+="0 "
        elif [ $((i * 13 % 64 / 8)) = $((j * 13 % 64 / 8)) ]; then
            line+="$((500 + i * j % 100)) "
        else
            line+="$(((i + j) % 3)) "
        fi
    done
    echo "$line"
done >"$work/scattered.mat"
out=$("$tool" place -t "package:8 core:8" "$work/scattered.mat") || fail "place scattered"
for ((b = 0; b < 8; b++)); do
    ranks=()
    for ((r = 0; r < 64; r++)); do
        [ $((r * 13 % 64 / 8)) = $b ] && ranks+=("$r")
    done
    check_blocks "$out" "${ranks[@]}"
done
read -r tm _ <<<"$(cost_of "$out" treematch)"
read -r pk _ <<<"$(cost_of "$out" packed)"
((tm < pk)) || fail "scattered: treematch $tm not below packed $pk"

"$tool" place -t "package:2 nonsense:4" "$work/blocks.mat" 2>/dev/null && fail "bad topology accepted"
echo "placements as expected"
exit 0
