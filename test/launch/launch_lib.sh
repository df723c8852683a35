# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# launch_lib.sh - sourced by the test/launch/*.sh tests (ssh launches on
# namespace hosts, docs/launch.md): fail, a scratch directory $tmp (removed
# on exit), the build of a test program, and the jobs run over the hosts of
# an `ob1x-netns run --sshd` set.
#
# A test given hosts=N runs again, whole, under `ob1x-netns run --sshd -n N`
# (the helper removes the set, its sshds and keys afterwards, whatever
# happens); skips (77) where namespaces or sshd are not available.

fail() {
    echo "FAIL: $*"
    exit 1
}

netns=$OB1X_SRCDIR/test/common/ob1x-netns

hosts=
for a in "$@"; do
    case $a in hosts=*) hosts=${a#hosts=} ;; --) break ;; esac
done
[[ $hosts =~ ^[1-9][0-9]*$ ]] || fail "give hosts=N"
if [ -z "${OB1X_NETNS_MPIRUN:-}" ]; then
    "$netns" check --sshd || exit $?
    exec "$netns" run --sshd -n "$hosts" -- bash "$0" "$@"
fi
[ "${OB1X_NETNS_SSHD:-}" = yes ] || fail "not in an ob1x-netns --sshd set"
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

# build PROGRAM: test/PROGRAM.c built with mpicc into the build tree's
# test/bin/sh/ (again only when the source changed); prints the path
build() {
    local src=$OB1X_SRCDIR/test/$1.c bin=$OB1X_BUILDDIR/test/bin/sh/$1
    if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
        mkdir -p "$(dirname "$bin")"
        "$MPICC" -g -O2 -Wall -o "$bin.tmp.$$" "$src" >"$tmp/build.log" 2>&1 ||
            { cat "$tmp/build.log" >&2; echo "FAIL: cannot build test/$1.c" >&2; exit 1; }
        mv -f "$bin.tmp.$$" "$bin"
    fi
    echo "$bin"
}

# The mpirun options of the test's list line, as words.
read -r -a line_opts <<<"${OB1X_MPIRUN_OPTS:-}"

# Daemons started over ssh get only the MCA parameters of mpirun's command
# line, not those of its environment: the build tree's components must be
# named there for the daemons to find them.
comp_opts=()
[ -n "${OMPI_MCA_mca_base_component_path:-}" ] &&
    comp_opts=(--mca mca_base_component_path "$OMPI_MCA_mca_base_component_path")

# job SECONDS OUT MPIRUN-ARGS...: the set's mpirun with the component path
# and the line's options, output in OUT, killed after SECONDS; returns
# mpirun's status (124 or 137: it hung)
job() {
    local secs=$1 out=$2
    shift 2
    timeout -k 5 "$secs" "$OB1X_NETNS_MPIRUN" "${comp_opts[@]}" "${line_opts[@]}" "$@" \
        </dev/null >"$out" 2>&1
}

# Host I's name and address in the set.
host_name() { echo "$OB1X_NETNS_PREFIX-h$1"; }
host_addr() { echo "${OB1X_NETNS_SUBNET%.0/24}.$(($1 + 1))"; }

# check_every_host OUT PATTERN [N]: OUT holds one line per host of the
# first N (default: all), made by PATTERN (sed replacement of the host name
# 'H'), each exactly once.
check_every_host() {
    local out=$1 i h n
    for ((i = 0; i < ${3:-$hosts}; i++)); do
        h=$(host_name $i)
        n=$(grep -c "^${2//H/$h}\$" "$out")
        [ "$n" = 1 ] || fail "host $h reported $n times, not once; output: $(head -20 "$out")"
    done
}
