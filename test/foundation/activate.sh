#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# Table of cases for tools/ob1x-activate on scratch files: each case sets up a
# parameter file (or none), installs, checks the block, installs again,
# uninstalls, and checks that the file is back byte for byte with its mode
# and modification time (or gone, with any directory the install created).
set -u

activate=${OB1X_SRCDIR:?run me from test/run-tests or set OB1X_SRCDIR}/tools/ob1x-activate
work=$(mktemp -d /tmp/ob1x-activate-test.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
failures=0

fail() {
    echo "FAIL: $case_name: $*"
    failures=$((failures + 1))
}

act() {
    sh "$activate" --quiet --system-file "$work/system.conf" "$@"
}

state_of() {
    if [ -e "$1" ]; then
        stat -c '%a %.9Y' "$1"
        sha256sum <"$1"
    else
        echo absent
    fi
}

# run_case NAME CONTENT|@absent EXPECTED_PATH_VALUE [SYSTEM_FILE_CONTENT]
run_case() {
    case_name=$1
    local content=$2 expect=$3 system=${4:-} file=$work/$1/etc/params.conf dir=/opt/ob1x/lib/openmpi
    rm -f "$work/system.conf"
    [ -z "$system" ] || printf '%b' "$system" >"$work/system.conf"
    if [ "$content" != @absent ]; then
        mkdir -p "$(dirname "$file")"
        printf '%b' "$content" >"$file"
        chmod 640 "$file"
        touch -d '2020-01-02 03:04:05.123456789' "$file"
    fi
    local before
    before=$(state_of "$file")

    act --install --file "$file" --component-dir "$dir/" || fail "install failed"
    [ "$(grep -c '^# >>> ob1x >>>' "$file")" = 1 ] || fail "not exactly one block"
    local value
    value=$(sed -n 's/^mca_base_component_path = //p' "$file" | tail -n 1)
    [ "$value" = "$expect" ] || fail "path is '$value', expected '$expect'"
    local once
    once=$(cat "$file")
    act --install --file "$file" --component-dir "$dir" || fail "second install failed"
    [ "$(cat "$file")" = "$once" ] || fail "second install changed the file"

    act --uninstall --file "$file" --component-dir /somewhere/else || fail "foreign uninstall failed"
    grep -q '^# >>> ob1x >>>' "$file" || fail "uninstall of another directory removed our block"

    act --uninstall --file "$file" || fail "uninstall failed"
    act --uninstall --file "$file" || fail "second uninstall failed"
    [ "$(state_of "$file")" = "$before" ] || fail "file not restored: $(state_of "$file") != $before"
    if [ "$content" = @absent ] && [ -d "$work/$1/etc" ]; then
        fail "directory created by install was left behind"
    fi
    echo "ok: $case_name"
}

run_case plain 'a = 1\nb = 2\n' '/opt/ob1x/lib/openmpi:SYSTEM_DEFAULT:USER_DEFAULT'
run_case no_final_newline 'a = 1\nb = 2' '/opt/ob1x/lib/openmpi:SYSTEM_DEFAULT:USER_DEFAULT'
run_case empty '' '/opt/ob1x/lib/openmpi:SYSTEM_DEFAULT:USER_DEFAULT'
run_case absent @absent '/opt/ob1x/lib/openmpi:SYSTEM_DEFAULT:USER_DEFAULT'
run_case own_path 'mca_base_component_path = /site/comps:SYSTEM_DEFAULT\n' \
    '/opt/ob1x/lib/openmpi:/site/comps:SYSTEM_DEFAULT'
run_case synonym_and_comment '# mca_base_component_path = /not/this\nmca_component_path=/x:/y  \n' \
    '/opt/ob1x/lib/openmpi:/x:/y'
run_case ours_already_listed 'mca_base_component_path = /opt/ob1x/lib/openmpi:/x\n' \
    '/opt/ob1x/lib/openmpi:/x'
run_case from_system_file 'a = 1\n' '/opt/ob1x/lib/openmpi:/sys/comps' \
    'mca_base_component_path = /sys/comps\n'
run_case crlf 'a = 1\r\nb = 2\r\n' '/opt/ob1x/lib/openmpi:SYSTEM_DEFAULT:USER_DEFAULT'

# Two prefixes, one after the other: the second block goes in front of the
# first, and uninstalling the second leaves the file as the first left it.
case_name=stacked
file=$work/stacked.conf
printf 'a = 1\n' >"$file"
touch -d '2020-01-02 03:04:05' "$file"
before=$(state_of "$file")
act --install --file "$file" --component-dir /opt/first/lib/openmpi || fail "first install failed"
first=$(state_of "$file")
sleep 0.01
act --install --file "$file" --component-dir /opt/second/lib/openmpi || fail "second install failed"
[ "$(grep -c '^# >>> ob1x >>>' "$file")" = 2 ] || fail "not two blocks"
value=$(sed -n 's/^mca_base_component_path = //p' "$file" | tail -n 1)
[ "$value" = /opt/second/lib/openmpi:/opt/first/lib/openmpi:SYSTEM_DEFAULT:USER_DEFAULT ] ||
    fail "stacked path is '$value'"
act --install --file "$file" --component-dir /opt/second/lib/openmpi || fail "reinstall failed"
[ "$(grep -c '^# >>> ob1x >>>' "$file")" = 2 ] || fail "reinstall added a block"
act --uninstall --file "$file" --component-dir /opt/second/lib/openmpi || fail "second uninstall failed"
[ "$(state_of "$file")" = "$first" ] || fail "uninstalling the second did not restore the first"
act --uninstall --file "$file" || fail "uninstall of the last block failed"
[ "$(state_of "$file")" = "$before" ] || fail "file not restored after both uninstalls"
echo "ok: $case_name"

# Bad input is refused with a message, and touches nothing.
case_name=bad_input
for args in "--install --file $work/x.conf" "--install --file $work/x.conf --component-dir rel/dir" \
    "--install --file $work/x.conf --component-dir /a:b" "--frobnicate"; do
    # shellcheck disable=SC2086 # split on purpose
    if out=$(act $args 2>&1); then
        fail "accepted: $args"
    elif [ -z "$out" ]; then
        fail "no message for: $args"
    fi
done
[ ! -e "$work/x.conf" ] || fail "refused install created a file"
echo "ok: $case_name"

[ $failures -eq 0 ] || exit 1
