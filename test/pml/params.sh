#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# pml/ob1x and docs/mca-params.md agree: every parameter that
# `ompi_info --param pml ob1x --level 9` reports has a row in the pml/ob1x
# section with the same default, every performance variable is described
# there, and every pml_ob1x_* name anywhere in docs/mca-params.md exists.
# The names come from ompi_info, so parameters added or removed later are
# checked without changing this test. (btl/smcuda: btl/smcuda_params.sh.)
set -u

fail=0
problem() {
    echo "FAIL: $*"
    fail=1
}

doc="$OB1X_SRCDIR/docs/mca-params.md"
[ -r "$doc" ] || { echo "FAIL: cannot read $doc"; exit 1; }
info=$("$OMPI_INFO" --param pml ob1x --level 9 --parsable) ||
    { echo "FAIL: ompi_info failed"; exit 1; }

# name value, one per line ("...:NAME:enumerator:value:..." lines are not
# matched: NAME is followed by ":value:" directly only on the default line)
params=$(sed -nE 's/^mca:pml:ob1x:param:(pml_ob1x_[a-z0-9_]+):value:(.*)$/\1 \2/p' <<<"$info")
pvars=$(sed -nE 's/^mca:pml:ob1x:pvar:(pml_ob1x_[a-z0-9_]+):.*/\1/p' <<<"$info" | sort -u)
[ -n "$params" ] || { echo "FAIL: ompi_info lists no pml_ob1x_* parameter (component not found?)"; exit 1; }

section=$(sed -n '/^## pml\/ob1x/,/^## /p' "$doc")
[ -n "$section" ] || { echo "FAIL: no '## pml/ob1x' section in $doc"; exit 1; }

# Table rows "| `name` | default | meaning |": the documented default.
doc_default() {
    awk -F'|' -v n="\`$1\`" '{ gsub(/^ +| +$/, "", $2); gsub(/^ +| +$/, "", $3) }
        $2 == n { gsub(/`/, "", $3); print $3; exit }' <<<"$section"
}

while read -r name value; do
    documented=$(doc_default "$name")
    if [ -z "$documented" ]; then
        problem "parameter $name (default $value) has no row in the pml/ob1x table of $doc"
    elif [ "$documented" != "$value" ]; then
        problem "parameter $name: default $value, documented as $documented"
    fi
done <<<"$params"

# Performance variables: named in the section, or by its template row
# "`pml_ob1x_<protocol>_messages`, `pml_ob1x_<protocol>_bytes` | ...: `a`, `b`".
template_row=$(grep -F 'pml_ob1x_<protocol>_' <<<"$section")
protocols=$(sed 's/^[^|]*|[^|]*|//' <<<"$template_row" | grep -oE '`[a-z_]+`' | tr -d '`')
explicit=$(grep -oE 'pml_ob1x_[a-z0-9_]+' <<<"$section" | sort -u)
for v in $pvars; do
    grep -qxF "$v" <<<"$explicit" && continue
    found=no
    for p in $protocols; do
        [ "$v" = "pml_ob1x_${p}_messages" ] || [ "$v" = "pml_ob1x_${p}_bytes" ] && found=yes
    done
    [ $found = yes ] || problem "performance variable $v is not described in the pml/ob1x section of $doc"
done
for p in $protocols; do
    for k in messages bytes; do
        grep -qxF "pml_ob1x_${p}_$k" <<<"$pvars" ||
            problem "$doc describes pml_ob1x_${p}_$k (protocol $p), which ompi_info does not report"
    done
done

# Every pml_ob1x_* name in the whole file exists. pml_ob1x_bytes_<btl> are
# registered at MPI_Init, one per BTL in use, so ompi_info cannot list them.
known=$( (cut -d' ' -f1 <<<"$params"; echo "$pvars"; echo pml_ob1x_bytes_) | sort -u)
for n in $(grep -oE 'pml_ob1x_[a-z0-9_]+' "$doc" | sort -u); do
    grep -qxF "$n" <<<"$known" || problem "$doc names $n, which ompi_info does not report"
done

[ $fail -eq 0 ] || exit 1
echo "PASS: pml/params ($(wc -l <<<"$params") parameters, $(wc -w <<<"$pvars") performance variables)"
