#!/usr/bin/env bats
# textnames.bats: names given by text (spanstat_begin_text, SPANSTAT_SCOPE
# with a text, issue 24): 300 names formatted into one reused buffer stay 300
# names with their exact counts, aggregated (--folded, --json) and streamed
# (--perfetto), live and in the report of a record; a text and a literal with
# the same text are one name; texts that differ after a NUL are one name and
# len 0 is the empty name; a signal handler's names by text interrupting the
# thread's own stay whole; C++ scopes take std::string and string_view; and
# the Python module and bash helper, text already, keep formatted names apart.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export SPAN_TEXT SPAN_TEXTSIG
	SPAN_TEXT=$(build_workload span_text $(span_link_flags))
	SPAN_TEXTSIG=$(build_workload span_textsig $(span_link_flags))
	SPAN_MANY=$(build_workload span_many $(span_link_flags))
	export SPAN_MANY
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# nodes FILE: "depth name count" for every node of the merged tree, sorted
nodes() {
	jq -r '.spans.merged.nodes[] | "\(.depth) \(.name) \(.count)"' "$1" | LC_ALL=C sort
}

# by_name FILE: "name count" for every name of the merged tree, sorted
by_name() {
	jq -r '[.spans.merged.nodes[]] | group_by(.name)[] | "\(.[0].name) \(map(.count) | add)"' \
		"$1" | LC_ALL=C sort
}

# expected_nodes: what span_text records (see its header)
expected_nodes() {
	{
		for ((i = 0; i < 300; i++)); do echo "1 p$i $((i % 3 + 1))"; done
		printf '%s\n' "0 work 2" "0 nul 1" "0  1" "0 s0 2" "0 s1 2" "0 edge 1"
	} | LC_ALL=C sort
}

# folded_names FILE: the frames of every folded line, sorted
folded_names() {
	sed 's/ [0-9]*$//' "$1" | LC_ALL=C sort
}

expected_folded() {
	{
		for ((i = 0; i < 300; i++)); do echo "work;p$i"; done
		printf '%s\n' work nul %00 s0 s1 edge
	} | LC_ALL=C sort
}

@test "text names: 300 names formatted into one buffer, exact counts, aggregated and streamed" {
	local opts
	for opts in "" --perfetto=s.pftrace; do
		# shellcheck disable=SC2086 # opts is one option or none
		run -0 timeout -k 5 120 "$SPANSTAT" -e task-clock --json=s.json --folded=s.folded \
			$opts -- "$SPAN_TEXT"
		assert_equal "$(jq -c '[.spans.decode.unmatched, .spans.decode.unfinished]' s.json)" '[0,0]'
		run nodes s.json
		assert_output "$(expected_nodes)"
		run folded_names s.folded
		assert_output "$(expected_folded)"
	done
}

@test "text names: the report of a record has the same names and counts" {
	local how
	# spanstat record (aggregated in the target), and --record beside a
	# streamed output (every event through the pipe)
	for how in record "--record=r.rec --perfetto=r.pftrace"; do
		rm -f r.rec
		if [ "$how" = record ]; then
			run -0 timeout -k 5 120 "$SPANSTAT" record -o r.rec -e task-clock -- "$SPAN_TEXT"
		else
			# shellcheck disable=SC2086 # two options
			run -0 timeout -k 5 120 "$SPANSTAT" -e task-clock $how -- "$SPAN_TEXT"
		fi
		run -0 timeout -k 5 120 "$SPANSTAT" report --json=r.json --folded=r.folded r.rec
		run nodes r.json
		assert_output "$(expected_nodes)"
		run folded_names r.folded
		assert_output "$(expected_folded)"
	done
}

# many_expected N: span_many N's folded paths and counts, sorted
many_expected() {
	local p i
	for p in a b; do
		echo "$p 1"
		for ((i = 0; i < $1; i++)); do
			echo "$p;n$i 2"
			((i % 7)) || echo "$p;n$i;inner 2"
		done
	done | LC_ALL=C sort
}

# json_paths FILE: "path count" for every node of a JSON's merged tree, sorted
json_paths() {
	jq -r '.spans.merged.nodes[] | "\(.path | join(";")) \(.count)"' "$1" | LC_ALL=C sort
}

@test "text names: thousands of names under one parent keep their parents and counts, both modes" {
	# past a few siblings the aggregating tree finds children by a hash of
	# (parent, name): the same names under "a" and "b" must stay apart
	local opts
	for opts in "" --perfetto=m.pftrace; do
		# shellcheck disable=SC2086 # opts is one option or none
		run -0 timeout -k 5 120 "$SPANSTAT" -e task-clock --json=m.json $opts -- "$SPAN_MANY" 3000
		assert_equal "$(jq -c '[.spans.decode.unmatched, .spans.decode.unfinished, .spans.decode.untracked]' m.json)" '[0,0,0]'
		run json_paths m.json
		assert_output "$(many_expected 3000)"
	done
}

@test "text names: more names than the aggregating tree holds are counted untracked, exactly" {
	# The tree holds RING_AGG_NODES (81920) nodes, the root and "a" among
	# them: 81918 for "a"'s names n0..n71677 and their 10240 "inner"s
	# (71678 + 10240 = 81918).  Untracked: n71678..n99999 twice (56644) and
	# their 4046 inners twice (8092); "b", its 200000 names' calls and their
	# 2 * 14286 inners (228573).  With a scan of the siblings this took
	# minutes; with the hash, well under a second.
	run -0 timeout -k 5 120 "$SPANSTAT" -e task-clock --json=f.json -- "$SPAN_MANY" 100000
	run jq -r '.spans.decode.untracked' f.json
	assert_output "$((56644 + 8092 + 228573))"
	run jq -r '[.spans.merged.nodes[] | select(.depth == 1)] | length' f.json
	assert_output 71678
}

@test "text names: a signal handler's names by text interrupting the thread's own, both modes" {
	local opts runs rounds
	for opts in "" --perfetto=g.pftrace; do
		# shellcheck disable=SC2086 # opts is one option or none
		run -0 timeout -k 5 120 "$SPANSTAT" -e task-clock --json=g.json $opts -- \
			"$SPAN_TEXTSIG" runs.txt
		read -r runs rounds <runs.txt
		run by_name g.json
		# every name is one the program gave, whole
		assert_equal "$(grep -cvE '^(h([0-9]|[1-4][0-9])|m([0-9]|[1-5][0-9]|6[0-3])) [0-9]+$' \
			<<<"$output")" 0
		assert_equal "$(jq '.spans.decode.unmatched' g.json)" 0
		# a streamed run on a busy machine may drop events (said, and its spans
		# then unfinished): the counts are exact when nothing was dropped
		[ "$(jq '.spans.decode.dropped' g.json)" = 0 ] || continue
		assert_equal "$(jq '.spans.decode.unfinished' g.json)" 0
		assert_equal "$(awk '$1 ~ /^h/ { n += $2 } END { print n }' <<<"$output")" "$runs"
		assert_equal "$(grep -c '^h' <<<"$output")" 50
		assert_equal "$(awk -v r="$rounds" '$1 ~ /^m/ && $2 == r' <<<"$output" | wc -l)" 64
	done
}

@test "text names: SPANSTAT_SCOPE in C++ takes a literal, a std::string, a string_view, a text and length" {
	require_cmd g++
	local bin=$BATS_TEST_TMPDIR/scope_text
	cat >scope_text.cc <<'CC'
#include <spanstat.h>
#include <cstdio>
#include <string>
#include <string_view>
int main()
{
	char buf[16];
	for (int i = 0; i < 6; i++) {
		SPANSTAT_SCOPE("outer");
		std::string s = "str" + std::to_string(i % 2);
		SPANSTAT_SCOPE(s);
		std::snprintf(buf, sizeof buf, "view%d", i % 3);
		SPANSTAT_SCOPE(std::string_view(buf));
		SPANSTAT_SCOPE(buf, 3); /* "vie" */
	}
	return 0;
}
CC
	env -u CXXFLAGS -u LDFLAGS g++ -std=c++17 -O2 -Wall -Wextra -Werror \
		-I"${SPANSTAT_INCLUDEDIR:-$SRCDIR/lib/span}" scope_text.cc -o "$bin" $(span_link_flags)
	run -0 timeout -k 5 60 "$SPANSTAT" -e task-clock --json=c.json -- "$bin"
	run by_name c.json
	assert_output "$(LC_ALL=C sort <<'EOF2'
outer 6
str0 3
str1 3
view0 2
view1 2
view2 2
vie 6
EOF2
)"
	# without spanstat the same program runs and records nothing
	run -0 env -u SPANSTAT_FD -u SPANSTAT_PIPE "$bin"
}

@test "text names: the Python module and the bash helper keep formatted names apart" {
	require_cmd python3
	cat >names.py <<'PY'
import spanstat
for i in range(300):
    name = "p%d" % i
    for k in range(i % 3 + 1):
        spanstat.begin(name)
        spanstat.end(name)
PY
	run -0 timeout -k 5 120 "$SPANSTAT" -e task-clock --json=p.json -- python3 names.py
	run nodes p.json
	assert_output "$(for ((i = 0; i < 300; i++)); do echo "0 p$i $((i % 3 + 1))"; done |
		LC_ALL=C sort)"
	cat >names.bash <<'SH'
. "${SPANSTAT_SH:?not under spanstat}"
for ((i = 0; i < 30; i++)); do
	for ((k = 0; k <= i % 3; k++)); do spanstat_begin "b$i"; spanstat_end "b$i"; done
done
SH
	run -0 timeout -k 5 120 "$SPANSTAT" -e task-clock --json=b.json -- bash names.bash
	run nodes b.json
	assert_output "$(for ((i = 0; i < 30; i++)); do echo "0 b$i $((i % 3 + 1))"; done |
		LC_ALL=C sort)"
}
