#!/bin/sh
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# Installs the Debian/Ubuntu packages listed in contrib/debian-packages.txt
# (apt-get update first, no questions asked). Uses sudo only when not root.
# Usage: contrib/install-deps.sh [--dry-run]
set -eu

here=$(cd "$(dirname "$0")" && pwd)
list=$here/debian-packages.txt

dry_run=no
case ${1:-} in
"") ;;
--dry-run) dry_run=yes ;;
-h | --help)
    echo "Usage: contrib/install-deps.sh [--dry-run]"
    echo "Installs the packages of $list with apt-get."
    exit 0
    ;;
*)
    echo "install-deps.sh: unknown argument '$1' (try --help)" >&2
    exit 1
    ;;
esac

[ -r "$list" ] || {
    echo "install-deps.sh: cannot read $list" >&2
    exit 1
}
packages=$(sed -e 's/#.*//' -e 's/[[:space:]]\{1,\}/\n/g' "$list" | grep -v '^$' | sort -u | tr '\n' ' ')

if [ $dry_run = yes ]; then
    echo "$packages"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps.sh: apt-get not found; this script is for Debian and Ubuntu." >&2
    echo "Install the equivalents of: $packages" >&2
    exit 1
fi

if [ "$(id -u)" = 0 ]; then
    as_root=
elif command -v sudo >/dev/null 2>&1; then
    as_root=sudo
else
    echo "install-deps.sh: not root and sudo is not installed; run me as root" >&2
    exit 1
fi

echo "install-deps.sh: installing $packages"
$as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
# shellcheck disable=SC2086 # one word per package
$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    $packages </dev/null
