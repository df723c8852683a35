#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# Every parameter and performance variable btl/smcuda registers is
# documented in the btl/smcuda section of docs/mca-params.md, and every
# name documented there exists; the counters the tests rely on are there.
set -u

fail() {
    echo "FAIL: $*"
    exit 1
}

doc="$OB1X_SRCDIR/docs/mca-params.md"
[ -r "$doc" ] || fail "cannot read $doc"
info=$("$OMPI_INFO" --param btl smcuda --level 9 --parsable) || fail "ompi_info failed"
registered=$(grep -oE '^mca:btl:smcuda:(param|pvar):btl_smcuda_[a-z0-9_]+' <<<"$info" |
    sed 's/.*://' | sort -u)
[ -n "$registered" ] || fail "ompi_info lists no btl_smcuda_* variable (component not found?)"
section=$(sed -n '/^## btl\/smcuda/,/^## /p' "$doc")
documented=$(grep -oE 'btl_smcuda_[a-z0-9_]+' <<<"$section" | sort -u)

for v in $registered; do
    grep -qxF "$v" <<<"$documented" || fail "$v is registered but not documented in $doc"
done
for v in $documented; do
    grep -qxF "$v" <<<"$registered" || fail "$v is documented in $doc but not registered"
done
for c in fbox fifo sendi put get; do
    for k in messages bytes; do
        grep -qxF "btl_smcuda_${c}_$k" <<<"$registered" || fail "counter btl_smcuda_${c}_$k missing"
    done
done
grep -qxF btl_smcuda_flow_control_stalls <<<"$registered" || fail "stall counter missing"
grep -q '^mca:btl:smcuda:param:btl_smcuda_single_copy_mechanism:enumerator:value:1:cma$' <<<"$info" ||
    fail "single_copy_mechanism does not offer cma"
grep -q '^mca:btl:smcuda:param:btl_smcuda_single_copy_mechanism:enumerator:value:3:none$' <<<"$info" ||
    fail "single_copy_mechanism does not offer none"
echo "PASS: btl/smcuda_params"
