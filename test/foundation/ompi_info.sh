#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# With the environment test/run-tests gives every job, ompi_info must list
# each component built in this tree with our version, and Open MPI must open
# it from the build tree. Without that environment (stock search path) none
# of them may carry our version: so what the other tests run really is ours.
set -u

fail() {
    echo "FAIL: $*"
    exit 1
}

components=()
for dso in "$OB1X_COMPONENT_DIR"/mca_*.so; do
    [ -e "$dso" ] || continue
    c=${dso##*/mca_}
    components+=("${c%.so}")
done
if [ ${#components[@]} -eq 0 ]; then
    echo "no component built yet"
    exit 77
fi

ours=$("$OMPI_INFO" --parsable) || fail "ompi_info failed"
# ompi_info reads the search path before its command line: use the environment.
stock=$(OMPI_MCA_mca_base_component_path=$OB1X_STOCK_COMPONENT_DIR "$OMPI_INFO" --parsable) ||
    fail "ompi_info (stock) failed"

for c in "${components[@]}"; do
    fw=${c%%_*}
    name=${c#*_}
    grep -qxF "mca:$fw:$name:version:\"component:$OB1X_VERSION\"" <<<"$ours" ||
        fail "ompi_info does not list $fw/$name with component version $OB1X_VERSION:
$(grep "^mca:$fw:$name:version" <<<"$ours")"
    if grep -qxF "mca:$fw:$name:version:\"component:$OB1X_VERSION\"" <<<"$stock"; then
        fail "$fw/$name v$OB1X_VERSION is visible without the build tree in the search path"
    fi

    # Where Open MPI opens it from (its repository reports the path).
    where=$(OMPI_MCA_mca_base_verbose=stdout,level:100 "$OMPI_INFO" --param "$fw" "$name" 2>&1 |
        sed -n "s/.*examining dynamic $fw MCA component \"$name\" at path \(.*\)/\1/p" | head -n 1)
    case $where in
    "$OB1X_COMPONENT_DIR"/*) ;;
    *) fail "Open MPI opens $fw/$name from '$where', not from the build tree ($OB1X_COMPONENT_DIR)" ;;
    esac
    echo "$fw/$name: version $OB1X_VERSION, opened from $where -> $(readlink -f "$where.so")"
done
