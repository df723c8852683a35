#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# model.sh - tools/ob1x-launch-model (docs/launch.md), no timing:
#  1. the default table is well formed: one row per N (8..16384), a number
#     per radix and flat, exactly one '*' per row, on the smallest value,
#     and the 'best' column names that column;
#  2. the best radix with the default (measured) costs is the one
#     docs/launch.md gives: 32 at 1024 hosts, 64 at 4096, 32 at 16384; and
#     with a session of 1 s (--ssh 1), 128 at 16384;
#  3. --fit recovers the costs of measurements made by the model itself;
#  4. bad input (a negative cost, a bad size list, a missing or malformed
#     measurement file) ends with status 2 and a message saying what is wrong.
set -u
model=$OB1X_SRCDIR/tools/ob1x-launch-model
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }

# --- 1. well formed ---------------------------------------------------------------
"$model" >"$tmp/t" 2>"$tmp/e" || fail "default run: status $?: $(cat "$tmp/e")"
check_table() {
    awk -v want="$2" '
        /^#/ { next }
        $1 == "N" { ncol = NF - 2; for (i = 2; i <= NF - 1; i++) name[i] = $i; next }
        {
            rows++
            if (NF != ncol + 2) { print "row " $1 ": " NF " fields"; bad = 1; next }
            if ($1 !~ /^[0-9]+$/) { print "row " $1 ": N not a number"; bad = 1 }
            stars = 0; min = -1
            for (i = 2; i <= NF - 1; i++) {
                v = $i; s = sub(/\*$/, "", v)
                if (v !~ /^[0-9]+\.[0-9]+$/) { print "row " $1 ": value " $i; bad = 1 }
                if (s) { stars++; starred = i; sv = v + 0 }
                if (min < 0 || v + 0 < min) min = v + 0
            }
            if (stars != 1) { print "row " $1 ": " stars " stars"; bad = 1; next }
            if (sv > min) { print "row " $1 ": starred " sv " is not the least " min; bad = 1 }
            if ("radix" $NF != name[starred] && $NF != name[starred]) {
                print "row " $1 ": best " $NF " is not the starred column " name[starred]; bad = 1
            }
        }
        END { if (rows != want) { print rows " rows, expected " want; bad = 1 }; exit bad }' "$1"
}
msg=$(check_table "$tmp/t" 12) || fail "malformed table: $msg; $(cat "$tmp/t")"
head -3 "$tmp/t" | grep -q "radix2 *radix8 *radix32 *radix64 *radix128 *flat *best" ||
    fail "header: $(head -3 "$tmp/t")"
echo "model: the default table is well formed (12 sizes, radix 2..128 and flat)"

# --- 2. the documented best radices ----------------------------------------------------
best() { awk -v n="$2" '$1 == n { print $NF }' "$1"; }
for nb in 1024:32 4096:64 16384:32; do
    got=$(best "$tmp/t" "${nb%:*}")
    [ "$got" = "${nb#*:}" ] || fail "best radix at ${nb%:*} hosts: $got, docs/launch.md says ${nb#*:}"
done
"$model" --ssh 1 --sizes 1024,4096,16384 >"$tmp/t1" || fail "--ssh 1: status $?"
[ "$(best "$tmp/t1" 16384)" = 128 ] || fail "--ssh 1: best at 16384 is $(best "$tmp/t1" 16384), not 128"
[ "$(best "$tmp/t1" 4096)" = 64 ] || fail "--ssh 1: best at 4096 is $(best "$tmp/t1" 4096), not 64"
echo "model: best radix 32/64/32 at 1K/4K/16K hosts, 128 at 16K with 1 s sessions"

# --- 3. --fit --------------------------------------------------------------------------
# measurements made by the model with base 1.5, ssh 0.8, child 0.05, one
# core (its columns: radix 2, 8, 32, flat)
"$model" --cores 1 --base 1.5 --ssh 0.8 --child 0.05 --sizes 4,8,16,32 --radices 2,8,32 |
    awk '$1 ~ /^[0-9]+$/ { gsub(/\*/, "")
        print "launch r2", $1, $2; print "launch r8", $1, $3
        print "launch r32", $1, $4; print "launch flat", $1, $5 }' >"$tmp/m"
[ "$(wc -l <"$tmp/m")" = 16 ] || fail "could not make measurements: $(cat "$tmp/m")"
echo "# a comment" >>"$tmp/m"
"$model" --cores 1 --fit "$tmp/m" --sizes 1024 >"$tmp/f" 2>"$tmp/e" || fail "--fit: status $?: $(cat "$tmp/e")"
read -r b s c < <(awk '/^# fitted:/ { print $4, $7, $12 }' "$tmp/f" | tr -d ',')
awk -v b="$b" -v s="$s" -v c="$c" 'BEGIN {
        ok = b > 1.3 && b < 1.7 && s > 0.7 && s < 0.9 && c > 0.043 && c < 0.058; exit !ok }' ||
    fail "--fit gave base '$b' ssh '$s' child '$c', not about 1.5, 0.8, 0.05: $(cat "$tmp/f")"
grep -q "^r8 *16 *1 " "$tmp/f" || fail "--fit: no measured/predicted row for r8 16: $(cat "$tmp/f")"
echo "model: --fit recovered base $b, ssh $s, child $c (made with 1.5, 0.8, 0.05)"

# --- 4. bad input ------------------------------------------------------------------------
refused() {
    local what=$1 pattern=$2 rc
    shift 2
    "$model" "$@" >"$tmp/o" 2>&1
    rc=$?
    [ $rc -eq 2 ] || fail "$what: status $rc, not 2: $(head -5 "$tmp/o")"
    grep -q "$pattern" "$tmp/o" || fail "$what: no message '$pattern': $(head -5 "$tmp/o")"
    grep -q "Traceback" "$tmp/o" && fail "$what: a Python traceback: $(cat "$tmp/o")"
    echo "model: $what refused"
}
refused "a negative cost" "ssh.*-1.*must be a finite number >= 0" --ssh -1
refused "a cost that is no number" "child.*'fast' is not a number" --child fast
refused "a zero concurrency" "concurrent.*'0' must be >= 1" --concurrent 0
refused "a bad size list" "sizes: 'x' is not a positive integer" --sizes 8,x
refused "a missing file" "cannot read $tmp/none" --fit "$tmp/none"
printf 'launch r8 16 1.0\nlaunch r8 sixteen 1.0\n' >"$tmp/bad"
refused "a bad host count" "$tmp/bad:2: host count 'sixteen'" --fit "$tmp/bad"
printf 'launch r8 16 -3\n' >"$tmp/bad"
refused "a negative time" "$tmp/bad:1: time '-3' must be" --fit "$tmp/bad"
printf 'launch binomial 16 1.0\n' >"$tmp/bad"
refused "an unknown configuration" "unknown configuration 'binomial'" --fit "$tmp/bad"
printf 'hello world\n' >"$tmp/bad"
refused "a line of another kind" "$tmp/bad:1: cannot read 'hello world'" --fit "$tmp/bad"
printf 'ssh1 0.3\n' >"$tmp/bad"
refused "no launch line" "no 'launch CONF N SECONDS' line" --fit "$tmp/bad"
