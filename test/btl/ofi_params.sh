#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# Every parameter and performance variable btl/ofi registers is documented
# in the btl/ofi section of docs/mca-params.md, and every name documented
# there exists; the stock parameter names (drop-in) and the counters the
# tests rely on are there, and ompi_info shows ours, not stock's.
set -u

fail() {
    echo "FAIL: $*"
    exit 1
}

doc="$OB1X_SRCDIR/docs/mca-params.md"
[ -r "$doc" ] || fail "cannot read $doc"
# Debian's system file excludes btl ofi: name it
info=$("$OMPI_INFO" --mca btl self,ofi --param btl ofi --level 9 --parsable) || fail "ompi_info failed"
version=$("$OMPI_INFO" --mca btl self,ofi --parsable | grep '^mca:btl:ofi:version:"component:' |
    sed 's/.*component:\([^"]*\)"/\1/')
[ "$version" = "$OB1X_VERSION" ] || fail "ompi_info shows btl/ofi version '$version', not ours ($OB1X_VERSION)"
registered=$(grep -oE '^mca:btl:ofi:(param|pvar):btl_ofi_[a-z0-9_]+' <<<"$info" |
    sed 's/.*://' | sort -u)
[ -n "$registered" ] || fail "ompi_info lists no btl_ofi_* variable (component not found?)"
section=$(sed -n '/^## btl\/ofi/,/^## /p' "$doc")
documented=$(grep -oE 'btl_ofi_[a-z0-9_]+' <<<"$section" | sort -u)

for v in $registered; do
    grep -qxF "$v" <<<"$documented" || fail "$v is registered but not documented in $doc"
done
for v in $documented; do
    grep -qxF "$v" <<<"$registered" || fail "$v is documented in $doc but not registered"
done
# stock's parameters, same names (drop-in replacement)
for p in mode num_cq_read progress_mode num_contexts_per_module disable_sep progress_threshold \
    rd_num provider_include provider_exclude verbose; do
    grep -qxF "btl_ofi_$p" <<<"$registered" || fail "stock parameter btl_ofi_$p missing"
done
for c in put get; do
    for k in ops bytes; do
        grep -qxF "btl_ofi_${c}_$k" <<<"$registered" || fail "counter btl_ofi_${c}_$k missing"
    done
done
for c in atomic_ops am_atomic_ops send_ops recv_ops cq_errors eagain_retries mr_endpoint_binds \
    hmem_regs; do
    grep -qxF "btl_ofi_$c" <<<"$registered" || fail "counter btl_ofi_$c missing"
done
grep -q '^mca:btl:ofi:param:btl_ofi_mode:value:2$' <<<"$info" ||
    fail "btl_ofi_mode does not default to 2 (one- and two-sided)"
grep -q '^mca:btl:ofi:param:btl_ofi_mr_force:enumerator:value:1:offset$' <<<"$info" ||
    fail "btl_ofi_mr_force does not offer offset"
grep -q '^mca:btl:ofi:param:btl_ofi_mr_force:enumerator:value:2:local$' <<<"$info" ||
    fail "btl_ofi_mr_force does not offer local"
grep -q '^mca:btl:ofi:param:btl_ofi_mr_force:enumerator:value:4:endpoint$' <<<"$info" ||
    fail "btl_ofi_mr_force does not offer endpoint"
echo "PASS: btl/ofi_params"
