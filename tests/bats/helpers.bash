# helpers.bash: shared setup for the bats suites: assertion libraries, the
# binary under test ($SPANSTAT, a staged install), workloads built on demand,
# and the rule that a needed-but-missing tool fails under CI instead of skipping.

for lib in bats-support bats-assert bats-file; do
	load "/usr/lib/bats/$lib/load.bash"
done

: "${SRCDIR:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
: "${SPANSTAT:=$SRCDIR/cmd/spanstat}"
: "${CC:=cc}"
WORKLOADS="$SRCDIR/tests/workloads"

# Skips with a reason, except under CI (SPANSTAT_REQUIRE_ALL=1), where a
# check that cannot run is a failure.
skip_or_fail() {
	if [ -n "${SPANSTAT_REQUIRE_ALL:-}" ]; then
		echo "required but unavailable: $*" >&2
		return 1
	fi
	skip "$*"
}

require_cmd() {
	command -v "$1" >/dev/null 2>&1 || skip_or_fail "$1 not installed"
}

# build_workload NAME [CFLAGS...]: compiles tests/workloads/NAME.c once per
# suite into $BATS_FILE_TMPDIR and prints the binary's path.  The workloads
# are built plainly (never sanitized): they are targets, not spanstat.
build_workload() {
	local name=$1
	shift
	local tag
	tag=$(printf '%s' "$*" | cksum | cut -d' ' -f1)
	local out="$BATS_FILE_TMPDIR/$name-$tag"
	if [ ! -x "$out" ]; then
		local inc=()
		[ -n "${SPANSTAT_INCLUDEDIR:-}" ] && inc=(-I"$SPANSTAT_INCLUDEDIR")
		# shellcheck disable=SC2086
		env -u CFLAGS -u LDFLAGS ${CC%% *} -O2 -g -pthread "${inc[@]}" \
			"$WORKLOADS/$name.c" -o "$out" "$@" >&2 || return 1
	fi
	printf '%s\n' "$out"
}

# The span library as installed, for workloads that link it.
span_link_flags() {
	printf '%s\n' "-L$SPANSTAT_LIBDIR -Wl,-rpath,$SPANSTAT_LIBDIR -lspanstat"
}
