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

# man_example PAGE WORDS: the shell commands of the example in PAGE's
# EXAMPLES section (the .EX block) whose paragraph begins with WORDS, as a
# reader copies them from the page: roff escapes undone.  The examples of a
# man page are tests, as jq's manual's are.
man_example() {
	awk -v want="$2" '
		function plain(s) {
			gsub(/\\-/, "-", s); gsub(/\\\(aq/, "\047", s); gsub(/\\\(dq/, "\"", s)
			gsub(/\\e/, "\\", s)
			return s
		}
		/^\.SH / { ex = ($0 ~ /^\.SH EXAMPLES/); next }
		!ex { next }
		/^\.EX/ { inblock = 1; keep = index(para, want) == 1; next }
		/^\.EE/ { inblock = 0; if (keep) found = 1; keep = 0; para = ""; next }
		inblock { if (keep) print plain($0); next }
		!/^\./ { para = para (para == "" ? "" : " ") plain($0) }
		END { if (!found) { print "no example beginning \"" want "\"" > "/dev/stderr"; exit 1 } }
	' "$1"
}

# ex_setup EXAMPLE, ex_query EXAMPLE: an example's commands before its
# first jq line (what makes the files), and from there on (what a test
# checks the output of).
ex_setup() {
	sed '/^jq /,$d' <<<"$1"
}
ex_query() {
	sed -n '/^jq /,$p' <<<"$1"
}

# pf_decode TRACE OUT: TRACE decoded by protoc into OUT, against the schema
# the tree keeps (tests/perfetto), and checked against the official one when
# it is at hand (tests/perfetto/pf-decode says when).  The caller checks for
# protoc (require_cmd protoc): a skip cannot leave $(...).
pf_decode() {
	"$SRCDIR/tests/perfetto/pf-decode" <"$1" >"$2"
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
# without_extra_fds CMD...: CMD with only fds 0-2 open, so that a target that
# writes to every fd, or leaves a daemon behind, cannot reach bats' own fds.
without_extra_fds() {
	(
		for fd in $(ls /proc/$BASHPID/fd); do
			[ "$fd" -gt 2 ] && eval "exec $fd>&-"
		done
		exec "$@"
	)
}

span_link_flags() {
	printf '%s\n' "-L$SPANSTAT_LIBDIR -Wl,-rpath,$SPANSTAT_LIBDIR -lspanstat"
}

# build_cxx_workload OUT SRC [FLAGS...]: compiles tests/workloads/SRC.cc with
# g++ -O1 -finstrument-functions and FLAGS into $BATS_FILE_TMPDIR/OUT, once
# per suite (OUT names the variant), and prints the path.  g++ is required
# (skip, or fail under CI, without it).
build_cxx_workload() {
	local out="$BATS_FILE_TMPDIR/$1" src=$2
	shift 2
	command -v "${CXX:-g++}" >/dev/null 2>&1 || { skip_or_fail "${CXX:-g++} not installed"; return 1; }
	if [ ! -e "$out" ]; then
		local inc=()
		[ -n "${SPANSTAT_INCLUDEDIR:-}" ] && inc=(-I"$SPANSTAT_INCLUDEDIR")
		mkdir -p "$(dirname "$out")"
		env -u CXXFLAGS -u LDFLAGS "${CXX:-g++}" -O1 -finstrument-functions "${inc[@]}" \
			"$WORKLOADS/$src.cc" -o "$out" "$@" >&2 || return 1
	fi
	printf '%s\n' "$out"
}

# chromium_dom SVG FRAGMENT: the DOM after the SVG's script ran; stderr
# (Chromium's log, console messages included) goes to chromium.log.
chromium_dom() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 \
		--user-data-dir="$BATS_TEST_TMPDIR/profile" --dump-dom "file://$PWD/$1$2" 2>chromium.log
}

# mode_spans MODE OUT.json -- CMD...: the run's JSON, with the target
# aggregating (MODE aggregate: --spans --json) or streaming (stream: record,
# then report --json of the record); the command's output in stdout,
# spanstat's summary in stderr (the report's in report.out)
mode_spans() {
	local mode=$1 out=$2
	shift 3
	if [ "$mode" = aggregate ]; then
		"$SPANSTAT" --spans --json="$out" -- "$@" >stdout 2>stderr
	else
		"$SPANSTAT" record -o run.rec -- "$@" >stdout 2>stderr &&
			"$SPANSTAT" report --json="$out" run.rec >report.out 2>>stderr
	fi
}

# span_paths FILE [unfinished]: "count path" per node of the merged tree,
# sorted by path; with `unfinished`, "count unfinished path" for the nodes
# that hold spans
span_paths() {
	jq -r --arg u "${2:-}" '.spans.merged.nodes as $n
		| def p($i): if $n[$i].parent == null then $n[$i].name
		             else p($n[$i].parent) + ";" + $n[$i].name end;
		$n | to_entries[]
		| if $u == "" then "\(.value.count) \(p(.key))"
		  elif .value.count > 0 then "\(.value.count) \(.value.unfinished) \(p(.key))"
		  else empty end' "$1" | sort -k"$([ -n "${2:-}" ] && echo 3 || echo 2)"
}

# span_sum NAME FILE: the merged count of spans named NAME over every path
span_sum() {
	jq "[.spans.merged.nodes[] | select(.name == \"$1\") | .count] | add // 0" "$2"
}
