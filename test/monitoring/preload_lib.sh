# shellcheck shell=bash disable=SC2154
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# Sourced by the preload_*.sh tests: check_mats compares the twelve
# matrices libob1x_monitoring_prof.so wrote with the caller's
# "expect GROUP WHAT I J" (msg/size/avg of pml/coll/osc/all) and looks
# for their "writing" lines in $tmp/stdout. Needs np, tmp and fail.

check_mats() { # prefix [prefix as given to the library]
    local p=$1 given=${2:-$1} g w i row want
    for g in pml coll osc all; do
        for w in msg size avg; do
            local f=${p}_${g}_${w}.mat
            [ -f "$f" ] || fail "no $f"
            [ "$(wc -l <"$f")" -eq "$np" ] || fail "$f: $(wc -l <"$f") rows, expected $np"
            for i in $(seq 0 $((np - 1))); do
                want=""
                for j in $(seq 0 $((np - 1))); do want="$want$(expect "$g" "$w" "$i" "$j") "; done
                row=$(sed -n "$((i + 1))p" "$f")
                [ "$row" = "$want" ] || fail "$f row $i: '$row', expected '$want'"
            done
            grep -qxF "writing ${np}x${np} matrix to ${given}_${g}_${w}.mat" "$tmp/stdout" ||
                fail "no 'writing ${np}x${np} matrix to ${given}_${g}_${w}.mat' on stdout"
        done
    done
}

