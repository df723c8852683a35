#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# make install / make uninstall round trip, into a temporary prefix:
#  - after install, Open MPI (ompi_info) lists every component built in this
#    tree with our version, opened from the installed directory, through the
#    activation block in the MCA parameter file alone;
#  - installing twice changes nothing;
#  - after uninstall the parameter file is byte-identical to before, with the
#    same mode, owner and modification time (or gone again if install created
#    it), the prefix holds no file, and ompi_info prints exactly what it
#    printed before.
#
# Usage: install.sh [--scratch | --system]
#   --scratch  (default) activation edits a copy of Open MPI's system MCA
#              parameter file, and Open MPI is told to read that copy only.
#              Also runs once with no parameter file at all.
#   --system   the real thing, as root: edits the system file itself, and
#              restores it even if the test fails. Refused when the file
#              already holds an ob1x block (an earlier real install).
# Needs OB1X_BUILDDIR (set by test/run-tests, or by hand).
set -u

fail() {
    echo "FAIL: $*"
    exit 1
}

mode=scratch
case ${1:-} in
"" | --scratch) ;;
--system) mode=system ;;
*) fail "usage: install.sh [--scratch | --system]" ;;
esac

builddir=${OB1X_BUILDDIR:-}
[ -n "$builddir" ] && [ -f "$builddir/test/harness.env" ] ||
    fail "set OB1X_BUILDDIR to a configured ob1x build tree"
# shellcheck source=/dev/null
. "$builddir/test/harness.env"
OMPI_INFO=${OMPI_INFO:-$OB1X_OMPI_INFO}
system_file=$OB1X_OMPI_PARAMS_FILE

# Test as a user would: no build-tree path, no make state from a calling make.
unset OMPI_MCA_mca_base_component_path MAKEFLAGS MFLAGS MAKELEVEL
unset OMPI_MCA_mca_base_param_files OB1X_MCA_PARAMS_FILE

work=$(mktemp -d /tmp/ob1x-install-test.XXXXXX) || fail "mktemp"
saved=$work/saved-params
restore_system=no

cleanup() {
    if [ $restore_system = yes ]; then
        # Put the system file back however we got here.
        if [ -e "$saved" ]; then
            cmp -s "$saved" "$system_file" || cat "$saved" >"$system_file"
        else
            rm -f "$system_file"
        fi
    fi
    rm -rf "$work"
}
trap cleanup EXIT

components=()
shopt -s nullglob
for dso in "$builddir"/{ompi,opal}/mca/*/*/.libs/mca_*.so; do
    c=${dso##*/mca_}
    components+=("${c%.so}")
done
echo "components built: ${components[*]:-(none)}"

# Stock parameters whose reported default is not stable from one ompi_info
# run to the next, install or not: Debian's 4.1.4 pml/ucx reports its
# multi_send_nb default as true in some runs and false in others.
unstable_stock_values=':pml_ucx_multi_send_nb:value:'

ompi_view() {
    "$OMPI_INFO" --all --parsable 2>&1 | grep -vF -e "$unstable_stock_values"
}

# round_trip PARAMS_FILE: one install/uninstall cycle checked end to end.
round_trip() {
    local params=$1 prefix=$work/prefix
    local compdir=$prefix/lib/openmpi
    local existed=no
    [ -e "$params" ] && existed=yes && cp -p "$params" "$saved"
    [ $existed = yes ] || rm -f "$saved"

    local before
    before=$(ompi_view)

    echo "== make install prefix=$prefix (parameter file $params, existed: $existed)"
    make -C "$builddir" install prefix="$prefix" exec_prefix="$prefix" \
        libdir="$prefix/lib" bindir="$prefix/bin" >"$work/install.log" 2>&1 ||
        { cat "$work/install.log"; fail "make install failed"; }
    grep 'ob1x-activate' "$work/install.log"
    [ -f "$params" ] || fail "make install did not write $params"
    grep -q "^mca_base_component_path = $compdir:" "$params" ||
        fail "$params does not put $compdir first: $(grep component_path "$params")"
    [ -x "$prefix/bin/ob1x-activate" ] || fail "ob1x-activate not installed in $prefix/bin"
    # help files of the error messages, where the components look for them
    # (share/openmpi beside the lib directory they are loaded from)
    local help
    for help in "$OB1X_ABS_TOP_SRCDIR"/{ompi,opal}/mca/*/*/help-*.txt; do
        [ -f "$help" ] || continue
        cmp -s "$help" "$prefix/share/openmpi/${help##*/}" ||
            fail "${help##*/} not installed in $prefix/share/openmpi"
    done

    local after_install info c fw name where
    after_install=$(cat "$params")
    info=$("$OMPI_INFO" --parsable)
    for c in "${components[@]}"; do
        fw=${c%%_*}
        name=${c#*_}
        [ -f "$compdir/mca_$c.so" ] || fail "$compdir/mca_$c.so not installed"
        grep -qxF "mca:$fw:$name:version:\"component:$OB1X_VERSION\"" <<<"$info" ||
            fail "after install, ompi_info does not show $fw/$name version $OB1X_VERSION"
        where=$(OMPI_MCA_mca_base_verbose=stdout,level:100 "$OMPI_INFO" --param "$fw" "$name" |
            sed -n "s/.*examining dynamic $fw MCA component \"$name\" at path \(.*\)/\1/p" |
            head -n 1)
        [ "$where" = "$compdir/mca_$c" ] ||
            fail "Open MPI opens $fw/$name from '$where', not from $compdir"
        echo "installed and active: $fw/$name $OB1X_VERSION ($where.so)"
    done
    # the library the components share: installed in the lib directory and
    # found there by the installed components (their run path's $ORIGIN/..
    # comes before the build tree's copy); routed/ob1x_radix, loaded by
    # orted, which has no libmpi, does not link it
    local common=libmca_common_ob1x.so.0 dso found
    [ -f "$prefix/lib/$common" ] || fail "$common not installed in $prefix/lib"
    for dso in "$compdir"/mca_*.so; do
        [ "${dso##*/}" = mca_routed_ob1x_radix.so ] && continue
        found=$(ldd "$dso" | sed -n "s/^[[:space:]]*$common => \([^ ]*\) .*/\1/p")
        [ "$(readlink -f "$found")" = "$(readlink -f "$prefix/lib/$common")" ] ||
            fail "${dso##*/} finds $common at '$found', not in $prefix/lib"
    done
    echo "shared library: $common in $prefix/lib, found there by every component"
    # the monitoring engine: installed, marked nodelete (its MPI_T variables
    # must outlive a component that is dlclosed), found in $prefix/lib by
    # every component that links it
    local mon=libmca_common_ob1x_monitoring.so.0
    [ -f "$prefix/lib/$mon" ] || fail "$mon not installed in $prefix/lib"
    readelf -d "$prefix/lib/$mon" | grep -q 'Flags:.*NODELETE' || fail "$mon is not linked -z nodelete"
    for dso in "$compdir"/mca_*.so; do
        ldd "$dso" | grep -q "$mon" || continue
        found=$(ldd "$dso" | sed -n "s/^[[:space:]]*$mon => \([^ ]*\) .*/\1/p")
        [ "$(readlink -f "$found")" = "$(readlink -f "$prefix/lib/$mon")" ] ||
            fail "${dso##*/} finds $mon at '$found', not in $prefix/lib"
    done
    echo "shared library: $mon in $prefix/lib (nodelete), found there by its components"
    # the CUDA driver table (built with the CUDA headers): installed,
    # nodelete, and never linked with the driver (it is dlopen'ed)
    local cuda=libmca_common_ob1x_cuda.so.0
    if [ -f "$builddir/opal/mca/common/ob1x_cuda/.libs/$cuda" ]; then
        [ -f "$prefix/lib/$cuda" ] || fail "$cuda not installed in $prefix/lib"
        readelf -d "$prefix/lib/$cuda" | grep -q 'Flags:.*NODELETE' ||
            fail "$cuda is not linked -z nodelete"
        ! readelf -d "$prefix/lib/$cuda" | grep -q 'NEEDED.*libcuda' ||
            fail "$cuda is linked with the CUDA driver"
        echo "shared library: $cuda in $prefix/lib (nodelete, no libcuda dependency)"
    fi

    echo "== make install again (must change nothing)"
    make -C "$builddir" install prefix="$prefix" exec_prefix="$prefix" \
        libdir="$prefix/lib" bindir="$prefix/bin" >"$work/install2.log" 2>&1 ||
        { cat "$work/install2.log"; fail "second make install failed"; }
    [ "$(cat "$params")" = "$after_install" ] || fail "second install changed $params"

    echo "== make uninstall"
    make -C "$builddir" uninstall prefix="$prefix" exec_prefix="$prefix" \
        libdir="$prefix/lib" bindir="$prefix/bin" >"$work/uninstall.log" 2>&1 ||
        { cat "$work/uninstall.log"; fail "make uninstall failed"; }
    grep 'ob1x-activate' "$work/uninstall.log"
    if [ $existed = yes ]; then
        cmp "$saved" "$params" || fail "$params differs from before install"
        [ "$(stat -c '%a %u %g %.9Y' "$saved")" = "$(stat -c '%a %u %g %.9Y' "$params")" ] ||
            fail "mode, owner or modification time of $params changed"
    else
        [ ! -e "$params" ] || fail "$params was created by install and not removed"
    fi
    local left
    left=$(find "$prefix" -type f 2>/dev/null)
    [ -z "$left" ] || fail "files left after uninstall: $left"

    # Any other difference must hold in three views in a row before it
    # counts: what an install leaves behind does not come and go.
    local after tries=0
    after=$(ompi_view)
    while [ "$before" != "$after" ] && [ $tries -lt 2 ]; do
        tries=$((tries + 1))
        after=$(ompi_view)
    done
    if [ "$before" != "$after" ]; then
        diff <(echo "$before") <(echo "$after") | head -n 20
        fail "ompi_info output after uninstall differs from before install"
    fi

    make -C "$builddir" uninstall prefix="$prefix" exec_prefix="$prefix" \
        libdir="$prefix/lib" bindir="$prefix/bin" >/dev/null 2>&1 || fail "second uninstall failed"
    if [ $existed = yes ]; then
        cmp -s "$saved" "$params" || fail "second uninstall changed $params"
    fi
    echo "== restored: parameter file and ompi_info output identical to before"
}

if [ $mode = scratch ]; then
    params=$work/etc/openmpi-mca-params.conf
    mkdir -p "$work/etc"
    export OB1X_MCA_PARAMS_FILE=$params
    export OMPI_MCA_mca_base_param_files=$params
    # 1: a copy of the host's real file (Debian's has no final newline).
    [ -e "$system_file" ] && cp -p "$system_file" "$params"
    round_trip "$params"
    # 2: no file at all: install creates it, uninstall deletes it.
    rm -f "$params"
    round_trip "$params"
else
    [ "$(id -u)" = 0 ] || fail "--system needs root"
    if [ -e "$system_file" ] && grep -q '^# >>> ob1x >>>' "$system_file"; then
        fail "$system_file already activates ob1x (an earlier make install); not touching it"
    fi
    userfile=$HOME/.openmpi/mca-params.conf
    user_before=$( [ -e "$userfile" ] && sha256sum <"$userfile" || echo absent)
    [ -e "$system_file" ] && cp -p "$system_file" "$work/system-backup"
    restore_system=yes
    [ -e "$system_file" ] && cp -p "$system_file" "$saved"
    round_trip "$system_file"
    user_after=$( [ -e "$userfile" ] && sha256sum <"$userfile" || echo absent)
    [ "$user_before" = "$user_after" ] || fail "$userfile changed"
fi
echo "install round trip passed ($mode)"
