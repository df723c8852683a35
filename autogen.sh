#!/bin/sh
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# Generate configure and the Makefile.in files. Run again after adding a
# component directory (configure builds only components whose directory
# holds a Makefile.am when this script runs).
set -e
cd "$(dirname "$0")"
for tool in autoreconf aclocal automake libtoolize; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "autogen.sh: $tool not found; install autoconf, automake and libtool" \
             "(Debian: contrib/install-deps.sh)" >&2
        exit 1
    fi
done
mkdir -p config/m4
autoreconf --force --install --warnings=all,no-portability
