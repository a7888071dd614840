#!/usr/bin/env bats
# diff.bats: spanstat diff through the installed binary.  Synthetic sessions
# whose true difference is known (in both directions, and none) check the
# tests, the threshold and the exit status; real runs check that every
# counter and span path is compared; the JSON, the differential folded
# stacks and flame graph are read by jq, a parser and xmllint.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export METRICS
	METRICS=$(build_workload span_metrics $(span_link_flags))
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# session FILE TASKCLOCK... : a spanstat JSON document with one run per value:
# task-clock (msec) that value, and a span path main;work whose self time is
# the value in ms and main whose own self time is 1 ms.
session() {
	local out=$1
	shift
	printf '%s\n' "$@" | jq -s '{
		schema_version: 1,
		runs: [to_entries[] | {run: .key, events: [{name: "task-clock", unit: "msec", value: .value}],
			rusage: {elapsed_ns: (.value * 1000000 + 5000000), user_ns: null}}],
		spans: {threads: [to_entries[] | {run: .key, nodes: [
			{id: 0, parent: null, depth: 0, name: "main", count: 1,
			 total_ns: (.value * 1000000 + 1000000), self_ns: 1000000},
			{id: 1, parent: 0, depth: 1, name: "work", count: 2,
			 total_ns: (.value * 1000000), self_ns: (.value * 1000000)}]}]}}' >"$out"
}

verdict() { # verdict FILE NAME FIELD: the verdict of one item of a --json comparison
	jq -r --arg n "$2" --arg f "$3" '.items[] | select(.name == $n and (.field // "") == $f) | .verdict' "$1"
}

@test "diff: a real slowdown is worse (exit 1), a speedup better (exit 0), noise the same" {
	session old.json 100 101 99 100.5 99.5
	session slow.json 120 121 119 120.5 119.5
	session fast.json 80 81 79 80.5 79.5
	session same.json 100.2 99.1 101.2 99.8 100.1
	run -1 "$SPANSTAT" diff --json=w.json old.json slow.json
	assert_output --regexp '\+20\.00%.* worse +task-clock'
	assert_output --partial 'main;work: self_ns'
	assert_equal "$(verdict w.json task-clock '')" worse
	assert_equal "$(verdict w.json main\;work self_ns)" worse
	assert_equal "$(verdict w.json main self_ns)" same
	assert_equal "$(jq .worse w.json)" true
	run -0 "$SPANSTAT" diff --json=b.json old.json fast.json
	assert_equal "$(verdict b.json task-clock '')" better
	assert_equal "$(verdict b.json elapsed_ns '')" better
	run -0 "$SPANSTAT" diff --json=s.json old.json same.json
	assert_equal "$(verdict s.json task-clock '')" same
	p=$(jq '.items[] | select(.name == "task-clock") | .welch_p' s.json)
	awk -v p="$p" 'BEGIN { exit !(p > 0.05) }'
	assert_output --partial '0 worse, 0 better'
}

@test "diff: --threshold ignores small significant changes; --alpha tightens the test" {
	session old.json 100 101 99 100.5 99.5
	session up3.json 103 104 102 103.5 102.5
	run -1 "$SPANSTAT" diff old.json up3.json
	run -0 "$SPANSTAT" diff --threshold=5 old.json up3.json
	assert_output --partial 'threshold 5%'
	# p of about 0.002: significant at 0.05, not at 0.0001
	run -0 "$SPANSTAT" diff --alpha=0.0001 old.json up3.json
	assert_output --regexp '\+3\.00%.* same +task-clock'
}

@test "diff: one run a side is no test; 8 runs a side add Mann-Whitney U" {
	session a1.json 100
	session b1.json 200
	run -0 "$SPANSTAT" diff --json=one.json a1.json b1.json
	assert_output --partial 'No test was possible: each side needs 2 or more runs'
	assert_equal "$(verdict one.json task-clock '')" 'no test'
	assert_equal "$(jq '.items[0].welch_p' one.json)" null
	session a8.json 100 101 99 100.2 102 98 100.4 101.3
	session b8.json 110 111 109 110.2 112 108 110.4 111.3
	run -1 "$SPANSTAT" diff --json=eight.json a8.json b8.json
	p=$(jq '.items[] | select(.name == "task-clock") | .mann_whitney_p' eight.json)
	echo "U's p: $p"
	# all 8 apart: U = 0, p = 0.00094 as the normal approximation gives it
	awk -v p="$p" 'BEGIN { exit !(p > 0.0009 && p < 0.001) }'
}

@test "diff of real runs: every counter and span path; the JSON says which run each thread ran in" {
	run -0 "$SPANSTAT" -r 3 --json=a.json --spans --span-events=page-faults -e task-clock,page-faults -- "$METRICS"
	run -0 "$SPANSTAT" -r 3 --json=b.json --spans --span-events=page-faults -e task-clock,page-faults -- "$METRICS"
	assert_equal "$(jq -c '[.spans.threads[].run] | unique' a.json)" '[0,1,2]'
	run "$SPANSTAT" diff --json=d.json a.json b.json
	[ "$status" -le 1 ]
	assert_output --partial 'page-faults'
	for path in touch sleep spin; do
		assert_output --partial "$path: self_ns"
		# per run, the JSON's count of the path: 3 runs, each once
		assert_equal "$(jq --arg p "$path" '.items[] | select(.name == $p and .field == "count") | [.old.mean, .old.runs] | @text' d.json)" '"[1,3]"'
	done
	assert_output --partial 'touch: page-faults'
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' d.json
}

@test "diff --folded and --flamegraph: PATH OLD NEW; red grew, blue shrank" {
	require_cmd xmllint
	session old.json 100 101 99 100.5 99.5
	session new.json 150 151 149 150.5 149.5
	jq '.spans.threads[].nodes[0].self_ns = 500000' new.json >new2.json
	run -1 "$SPANSTAT" diff --folded=d.folded --flamegraph=d.svg old.json new2.json
	run -0 cat d.folded
	assert_line 'main 1000000 500000'
	assert_line 'main;work 100000000 150000000'
	run -0 xmllint --noout d.svg
	# work grew by half: red; main's own time halved but main in total grew: red too
	grep -q 'data-n="work" data-l="0"><title>work (old 100000000, new 150000000 ns, +50.00%)' d.svg
	fill=$(grep -o 'data-n="work".*' d.svg | grep -o 'fill="rgb([0-9]*,[0-9]*,[0-9]*)"' | head -1)
	assert_equal "$fill" 'fill="rgb(255,189,189)"'
	# a path that only shrank is blue
	jq '.spans.threads[].nodes[1].self_ns = 10000000 | .spans.threads[].nodes[1].total_ns = 10000000' \
		old.json >small.json
	run -0 "$SPANSTAT" diff --flamegraph=s.svg old.json small.json
	grep -o 'data-n="work".*' s.svg | grep -q 'fill="rgb([0-9]*,[0-9]*,255)"'
}

@test "diff: bad input gets one line and 125, and no file" {
	session ok.json 1 2
	echo '{"runs": [' >broken.json
	run -125 "$SPANSTAT" diff --json=out.json ok.json broken.json
	assert_output "spanstat: 'broken.json': not JSON (or not a whole document)"
	[ ! -e out.json ]
	echo '{"a": 1}' >other.json
	run -125 "$SPANSTAT" diff ok.json other.json
	assert_output "spanstat: 'other.json': not a spanstat JSON document with a run (spanstat --json)"
	run -125 "$SPANSTAT" diff ok.json missing.json
	assert_output "spanstat: cannot read 'missing.json': No such file or directory"
	run -125 "$SPANSTAT" diff ok.json
	assert_output "spanstat: diff takes two files, OLD and NEW (see 'spanstat diff --help')"
	run -125 "$SPANSTAT" diff --threshold=-1 ok.json ok.json
	assert_output "spanstat: invalid --threshold '-1': expected a percentage, 0 or more"
	run -125 "$SPANSTAT" diff --alpha=2 ok.json ok.json
	assert_output "spanstat: invalid --alpha '2': expected a significance level above 0 and at most 0.5"
	run -125 "$SPANSTAT" diff --bogus ok.json ok.json
	assert_output "spanstat: unknown option '--bogus' (see 'spanstat diff --help')"
	run -0 "$SPANSTAT" diff --help
	assert_output --partial 'Usage: spanstat diff [OPTIONS] OLD NEW'
	# spanstat -- diff runs the program
	run -1 "$SPANSTAT" -e task-clock -- diff ok.json broken.json
	assert_output --partial 'Performance counter stats'
}

@test "diff: p-values are adjusted for the number of quantities (Holm): a lone 0.04 is no regression" {
	session old.json 100 101 99 100.5 99.5
	# +1.2: Welch's p about 0.04 for task-clock and the quantities that follow it
	session new.json 101.2 102.2 100.2 101.7 100.7
	run -0 "$SPANSTAT" diff --json=h.json old.json new.json
	p=$(jq '.items[] | select(.name == "task-clock") | .welch_p' h.json)
	holm=$(jq '.items[] | select(.name == "task-clock") | .holm_p' h.json)
	m=$(jq '[.items[] | select(.p != null)] | length' h.json)
	echo "raw p $p, Holm $holm over $m tested"
	awk -v p="$p" 'BEGIN { exit !(p < 0.05) }'
	awk -v h="$holm" 'BEGIN { exit !(h >= 0.05 && h <= 1) }'
	assert_equal "$(verdict h.json task-clock '')" same
	assert_output --partial 'p adjusted (Holm)'
	# the adjusted p: never below the raw one
	assert_equal "$(jq '[.items[] | select(.p != null and .holm_p < .p)] | length' h.json)" 0
}

@test "diff: an output over an input, or two outputs in one file, are refused before anything is written" {
	session old.json 1 2 3
	session new.json 2 3 4
	cp old.json keep.json
	run -125 "$SPANSTAT" diff --json=old.json old.json new.json
	assert_output "spanstat: --json 'old.json' would overwrite the input 'old.json'"
	cmp old.json keep.json
	run -125 "$SPANSTAT" diff --json=x.out --folded=./x.out old.json new.json
	assert_output "spanstat: --json and --folded name one file ('x.out', './x.out')"
	[ ! -e x.out ]
}
