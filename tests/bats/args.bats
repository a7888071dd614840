#!/usr/bin/env bats
# args.bats: typed arguments on spans (spanstat_arg_*, the line protocol's A
# lines, spanstat.arg() in Python; issue 24): per node and key in the JSON
# (count, sum, min, max; the most frequent strings), the slice's arguments
# in Perfetto, --weight=arg:KEY, the same in the report of a record, and
# what threads aggregating in the target could not keep, said.

load helpers
load pfreplay
bats_require_minimum_version 1.5.0

setup_file() {
	export PF_MISSING=
	if ! command -v protoc >/dev/null 2>&1; then
		PF_MISSING="protoc not installed (Debian package protobuf-compiler)"
	fi
	SPAN_ARGS=$(build_workload span_args $(span_link_flags))
	export SPAN_ARGS
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# node_args FILE: "thread path key type count sum min max true top others"
# per argument of every node (the root's path is "-"), sorted
node_args() {
	jq -r '.spans.threads[] | (if .pid == .tid then "main" else .thread_name end) as $t
		| ({path: "-", args: .args}, (.nodes[] | {path: (.path | join(";")), args: .args}))
		| .path as $p | .args[]
		| [$t, $p, .key, .type, .count, .sum, .min, .max, .true,
		   (if .type == "string" then (.top | map("\(.value)=\(.count)") | join(",")) else null end),
		   .others] | map(. // "-") | join(" ")' "$1" | LC_ALL=C sort
}

span_args_expected="main - mode string 1 - - - - fast=1 0
main - setup u64 1 42 42 42 - - -
main parse delta i64 2 2 -5 7 - - -
main parse hit bool 2 - - - 1 - -
main parse method string 2 - - - - GET=1,POST=1 0
main parse ratio f64 2 2 0.5 1.5 - - -
main parse;inner bytes u64 1 1000 1000 1000 - - -
main parse;inner method string 1 - - - - GET=1 0
main read bytes u64 3 600 100 300 - - -
main route path string 6 - - - - /a=3,/b=2,/c=1 0
worker read bytes u64 2 100 50 50 - - -"

@test "args: every value per node and key in the JSON, streamed and with --span-args" {
	local opts
	for opts in --perfetto=s.pftrace --span-args; do
		run -0 timeout -k 5 120 "$SPANSTAT" -o sum.txt --json=s.json "$opts" -- "$SPAN_ARGS"
		run node_args s.json
		assert_output "$span_args_expected"
		assert_equal "$(jq '.spans.args, .spans.args_not_kept' s.json | xargs)" "23 0"
		# the merged tree sums the threads' nodes of one path
		assert_equal "$(jq -c '.spans.merged.nodes[] | select(.name == "read") | .args[0] | [.count, .sum]' s.json)" "[5,700]"
		run ! grep -q 'not kept' sum.txt
	done
}

@test "args: threads aggregating in the target cannot keep them, and say how many" {
	run -0 timeout -k 5 120 "$SPANSTAT" --spans -o sum.txt --json=a.json -- "$SPAN_ARGS"
	assert_equal "$(jq '.spans.args, .spans.args_not_kept' a.json | xargs)" "0 23"
	assert_equal "$(jq '[.spans.threads[].args_not_kept] | add' a.json)" 23
	grep -q '^ 23 span arguments not kept: threads aggregated their spans in the target (--span-args keeps them)$' sum.txt
}

@test "args: a slice's arguments in Perfetto, with its end, each of its type" {
	run -0 timeout -k 5 120 "$SPANSTAT" -o sum.txt --perfetto=t.pftrace -- "$SPAN_ARGS"
	pf_load t.pftrace
	# "value name" of every debug annotation but the on/off-CPU split's of
	# a span switched out (sorted: threads' sequences interleave in the file)
	run sh -c "awk '/debug_annotations \\{/ { on = 1; v = \"\"; next }
		on && /_value:/ { v = \$2 }
		on && /name:/ { n = \$2 }
		on && /^ *\\}/ { if (n !~ /cpu_ns/) print v, n; on = 0 }' t.pftrace.txt | LC_ALL=C sort"
	assert_output "$(LC_ALL=C sort <<'EX'
42 "setup"
"fast" "mode"
100 "bytes"
200 "bytes"
300 "bytes"
"GET" "method"
1000 "bytes"
-5 "delta"
0.5 "ratio"
true "hit"
"GET" "method"
7 "delta"
1.5 "ratio"
false "hit"
"POST" "method"
"/a" "path"
"/b" "path"
"/a" "path"
"/b" "path"
"/a" "path"
"/c" "path"
50 "bytes"
50 "bytes"
EX
)"
	# on the ends of the 14 slices that have some (setup, outside every
	# span: an instant of its own)
	run awk '/debug_annotations \{/ { on = 1; next }
		on && /name:/ && $2 !~ /cpu_ns/ { da = 1 }
		on && /^ *\}/ { on = 0 }
		/type: TYPE_/ { if (da) print $2; da = 0 }' t.pftrace.txt
	[ "$(grep -c TYPE_SLICE_END <<<"$output")" -eq 14 ]
	[ "$(grep -c TYPE_INSTANT <<<"$output")" -eq 2 ]
}

@test "args: --weight=arg:KEY weighs the folded stacks by a key's sums; a key no span had a number of is refused" {
	run -0 timeout -k 5 120 "$SPANSTAT" --folded=w.folded --flamegraph=w.svg --weight=arg:bytes -- "$SPAN_ARGS"
	assert_equal "$(LC_ALL=C sort w.folded)" "parse;inner 1000
read 700"
	# the flame graph's frames carry the sums, not nanoseconds
	grep -q '<title>read (700 , ' w.svg
	run grep -c '<title>[^<]* ns[,)]' w.svg
	assert_output 0
	# no key at all; a string key and a boolean key (no numbers); a
	# span's name, a thread's name, a string value (texts the run knew,
	# but no argument's key)
	local k
	for k in nokey method hit read worker GET; do
		rm -f n.folded
		run -125 --separate-stderr timeout -k 5 120 "$SPANSTAT" -o sum.txt --folded=n.folded --weight=arg:$k -- "$SPAN_ARGS"
		assert_equal "$stderr" "spanstat: cannot write --folded 'n.folded': --weight=arg:$k: no span had a number argument '$k'"
		[ ! -e n.folded ]
	done
	run -125 --separate-stderr "$SPANSTAT" --folded=n.folded --weight=arg: -- "$SPAN_ARGS"
	assert_equal "$stderr" "spanstat: invalid --weight 'arg:': expected arg:KEY, a typed argument's key"
}

@test "args: live outputs and the report of their own record file are the same bytes" {
	run -0 timeout -k 5 120 "$SPANSTAT" --record=r.rec -o live.txt --spans --json=live.json \
		--perfetto=live.pftrace --folded=live.folded --weight=arg:bytes -- "$SPAN_ARGS"
	run -0 timeout -k 5 120 "$SPANSTAT" report -o rep.txt --json=rep.json \
		--perfetto=rep.pftrace --folded=rep.folded --weight=arg:bytes r.rec
	for x in txt json pftrace folded; do
		cmp "live.$x" "rep.$x"
	done
	run node_args rep.json
	assert_output "$span_args_expected"
}

@test "args: A lines of the line protocol, each type; bad ones are counted and make nothing" {
	cat >a.sh <<'SH'
exec 9>>"$SPANSTAT_LINES"
p=$$
{
	printf 'B %d - - read\n' "$p"
	printf 'A %d - - u bytes 100\n' "$p"
	printf 'A %d - - i delta -5\n' "$p"
	printf 'A %d - - f ratio 0.25\n' "$p"
	printf 'A %d - - b hit 1\n' "$p"
	printf 'A %d - - s method GET it\n' "$p"
	printf 'E %d - - read\n' "$p"
	printf 'A %d - - u bytes -1\n' "$p"
	printf 'A %d - - q bytes 1\n' "$p"
	printf 'A %d - - b hit 2\n' "$p"
	printf 'A %d - - f ratio x\n' "$p"
	printf 'A 777777 - - u nokey\n'
} >&9
SH
	run -0 timeout -k 5 120 "$SPANSTAT" --json=l.json -- bash a.sh
	run jq -r '.spans.threads[].nodes[] | select(.name == "read") | .args[]
		| "\(.key) \(.type) \(.count) \(.sum // .true // .top[0].value)"' l.json
	assert_output "bytes u64 1 100
delta i64 1 -5
hit bool 1 1
method string 1 GET it
ratio f64 1 0.25"
	assert_equal "$(jq .spans.decode.bad_lines l.json)" 5
	assert_equal "$(jq '[.spans.threads[] | select(.pid == 777777)] | length' l.json)" 0
}

@test "args: Python's spanstat.arg(), through the library and through lines" {
	require_cmd python3
	local pure
	for pure in 0 1; do
		run -0 --separate-stderr env SPANSTAT_PY_PURE=$pure timeout -k 5 120 "$SPANSTAT" \
			--span-args --json=p.json -- python3 "$WORKLOADS/args_py.py"
		assert_output "refused ValueError
refused OverflowError
refused ValueError"
		assert_equal "$(jq '.spans.decode.bad_lines' p.json)" 0
		# a text cut at 255 bytes, at a character's start: valid UTF-8
		assert_equal "$(jq -r '.spans.threads[].nodes[].args[] | select(.key == "long") | .top[0].value' p.json)" \
			"$(python3 -c 'print("\u00e9" * 127)')"
		run jq -r '.spans.threads[] | select(.pid == .tid) | (.args[], (.nodes[] | .args[]))
			| select(.key != "big" and .key != "long")
			| "\(.key) \(.type) \(.count) \(.sum // .true // .top[0].value) \(.min) \(.max)"' p.json
		assert_output "setup i64 1 -1 -1 -1
bytes i64 2 400 100 300
hit bool 2 2 null null
method string 2 GET null null
ratio f64 2 1 0.5 0.5"
		# past 2^63: a uint64, its sum exact beyond 64 bits (jq would round it)
		grep -q '"key":"big","type":"u64","count":2,"sum":18446744073709551616,"min":9223372036854775808,"max":9223372036854775808,"true":null' p.json
	done
}

@test "args: a --keep-last window leaves out the arguments of a span cut at its start" {
	local w
	w=$(build_workload span_args_window $(span_link_flags))
	run -0 timeout -k 5 120 "$SPANSTAT" record --keep-last=128K -o w.rec -- "$w" 200000
	run -0 --separate-stderr timeout -k 5 120 "$SPANSTAT" report -o rep.txt --json=w.json \
		--perfetto=w.pftrace w.rec
	# the window cut "outer": "early" was overwritten, "late" is left out
	# with its span, not the thread's; "next" keeps its own (a filler may
	# be cut too)
	[ "$(jq '.spans.window.cut' w.json)" -ge 1 ]
	run node_args w.json
	assert_output "main next own u64 1 3 3 3 - - -"
	assert_equal "$(jq '.spans.window.cut_args' w.json)" 1
	grep -Eq ", [0-9]+ cut at the window's start left out \\(with 1 of their arguments\\)" rep.txt
	# Perfetto: "own" on the end of "next", nothing on the end of "after"
	pf_load w.pftrace
	run sh -c "grep -c 'name: \"late\"' w.pftrace.txt"
	assert_output 0
	run sh -c "grep -c 'name: \"own\"' w.pftrace.txt"
	assert_output 1
}

@test "args: a record keeps an argument in a few bytes, among its block's events" {
	local m
	m=$(build_workload span_args_many $(span_link_flags))
	run -0 timeout -k 5 120 "$SPANSTAT" record -o a0.rec -- "$m" 50000 0
	run -0 timeout -k 5 120 "$SPANSTAT" record -o a1.rec -- "$m" 50000 1
	run -0 timeout -k 5 120 "$SPANSTAT" report -o /dev/null --json=a1.json a1.rec
	assert_equal "$(jq -c '[.spans.args, .spans.decode.dropped, .spans.decode.bad_records]' a1.json)" "[50000,0,0]"
	assert_equal "$(jq -c '.spans.threads[0].nodes[0].args[0] | [.count, .sum, .max]' a1.json)" "[50000,1249975000,49999]"
	# a separate record per argument, breaking the block, cost ~58 bytes
	local per=$(( ($(stat -c %s a1.rec) - $(stat -c %s a0.rec)) / 50000 ))
	echo "bytes per argument: $per"
	[ "$per" -le 16 ]
}
