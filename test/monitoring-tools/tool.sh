# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# Sourced by the monitoring-tools tests: finds the built ob1x-monitoring
# (skip, 77, when configure did not build it), makes a scratch directory
# removed at exit, and gives fail().

fail() {
    echo "FAIL: $*"
    exit 1
}

tool=$OB1X_BUILDDIR/tools/monitoring/ob1x-monitoring
if [ ! -x "$tool" ]; then
    echo "ob1x-monitoring not built (configure needs hwloc and libpng)"
    exit 77
fi
fixtures=$OB1X_SRCDIR/test/monitoring-tools/fixtures
work=$(mktemp -d "${TMPDIR:-/tmp}/ob1x-montools.XXXXXX") || fail "mktemp"
trap 'rm -rf "$work"' EXIT

# The files a directory holds, sorted, one per line.
list_files() {
    (cd "$1" && ls | LC_ALL=C sort)
}
