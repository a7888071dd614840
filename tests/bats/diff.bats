#!/usr/bin/env bats
# diff.bats: spanstat diff through the installed binary.  Synthetic sessions
# whose true difference is known (in both directions, and none) check the
# verdict, the families, the threshold and the exit status; a session with
# thousands of span paths checks that a real change is not lost among them;
# sessions that collected different things are not comparable; a real pair
# (one workload built at -O0 and at -O2) must come out better; bad counts
# are refused.  The JSON, the differential folded stacks and flame graph
# are read by jq, a parser and xmllint.  The false alarm rate over 200 null
# comparisons is tests/unit/test_diff's.

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

# many_paths FILE SEED SPEED CALLS: 5 runs of a program with 2,000 span paths
# (as -finstrument-functions makes of an interpreter): task-clock about
# 1,000 ms times SPEED with 1% noise, every path's self time in proportion,
# and every path called CALLS times in every run (no variance).
many_paths() {
	python3 - "$@" <<'EOF'
import json, random, sys
out, seed, speed, calls = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
random.seed(seed)
runs, threads = [], []
for r in range(5):
    f = speed * random.gauss(1, 0.01)
    runs.append({"run": r, "events": [
        {"name": "task-clock", "unit": "msec", "value": 1000 * f},
        {"name": "page-faults", "unit": "", "value": 1500 + random.randint(0, 9)}],
        "rusage": {"elapsed_ns": int(1.01e9 * f), "user_ns": int(0.99e9 * f), "sys_ns": None,
                   "max_rss_kib": 4096}})
    nodes = [{"id": 0, "parent": None, "name": "main", "count": 1, "self_ns": 1000,
              "total_ns": int(1e9 * f)}]
    for p in range(1, 2001):
        self_ns = int(4e8 / p * f * random.gauss(1, 0.02))
        nodes.append({"id": p, "parent": 0, "name": "fn%d" % p, "count": calls,
                      "self_ns": self_ns, "total_ns": self_ns})
    threads.append({"run": r, "nodes": nodes})
json.dump({"schema_version": 2, "command": ["lua", "bench.lua"],
           "events": [{"name": "task-clock"}, {"name": "page-faults"}], "runs": runs,
           "spans": {"collected": True, "metrics": [], "threads": threads}}, open(out, "w"))
EOF
}

rows() { # the rows of items in $output
	grep -cE ' (primary|secondary) +(worse|better|same|no test|not comparable|not counted) ' <<<"$output"
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
	assert_line --index 0 'spanstat diff: worse: 3 of 4 primary quantities changed significantly (alpha 0.05, threshold 0%)'
	assert_output --regexp '100\.00 ms +120\.00 ms +\+20\.00% .* primary +worse +task-clock'
	assert_output --partial 'main;work: self_ns'
	assert_equal "$(verdict w.json task-clock '')" worse
	assert_equal "$(verdict w.json main\;work self_ns)" worse
	assert_equal "$(verdict w.json main self_ns)" same
	assert_equal "$(jq -c '[.worse, .verdict, .status]' w.json)" '[true,"worse",1]'
	run -0 "$SPANSTAT" diff --json=b.json old.json fast.json
	assert_line --index 0 --partial 'spanstat diff: better: '
	assert_equal "$(verdict b.json task-clock '')" better
	assert_equal "$(verdict b.json elapsed_ns '')" better
	run -0 "$SPANSTAT" diff --json=s.json old.json same.json
	assert_equal "$(verdict s.json task-clock '')" same
	p=$(jq '.items[] | select(.name == "task-clock") | .welch_p' s.json)
	awk -v p="$p" 'BEGIN { exit !(p > 0.05) }'
	assert_line --index 0 'spanstat diff: same: 0 of 4 primary quantities changed significantly (alpha 0.05, threshold 0%)'
	assert_output --partial 'No quantity changed significantly beyond the threshold.'
}

@test "diff: --threshold ignores small significant changes; --alpha tightens the test" {
	session old.json 100 101 99 100.5 99.5
	session up3.json 103 104 102 103.5 102.5
	run -1 "$SPANSTAT" diff old.json up3.json
	run -0 "$SPANSTAT" diff --threshold=5 old.json up3.json
	assert_line --index 0 --partial '(alpha 0.05, threshold 5%)'
	# p of about 0.002: significant at 0.05, not at 0.0001
	run -0 "$SPANSTAT" diff --all --alpha=0.0001 old.json up3.json
	assert_output --regexp '\+3\.00% .* primary +same +task-clock'
}

@test "diff: one run a side is no test (exit 2); 8 runs a side add Mann-Whitney U" {
	session a1.json 100
	session b1.json 200
	run -2 "$SPANSTAT" diff --json=one.json a1.json b1.json
	assert_line --index 0 'spanstat diff: no test: no primary quantity has 2 or more runs with a value on each side (OLD 1 run, NEW 1; spanstat -r N)'
	assert_equal "$(verdict one.json task-clock '')" 'no test'
	assert_equal "$(jq -c '[.verdict, .status, .items[0].welch_p]' one.json)" '["no test",2,null]'
	session a8.json 100 101 99 100.2 102 98 100.4 101.3
	session b8.json 110 111 109 110.2 112 108 110.4 111.3
	run -1 "$SPANSTAT" diff --json=eight.json a8.json b8.json
	p=$(jq '.items[] | select(.name == "task-clock") | .mann_whitney_p' eight.json)
	echo "U's p: $p"
	# all 8 apart: U = 0, p = 0.00094 as the normal approximation gives it
	awk -v p="$p" 'BEGIN { exit !(p > 0.0009 && p < 0.001) }'
	assert_equal "$(jq -r '.items[] | select(.name == "task-clock") | .test' eight.json)" welch+mann-whitney
}

@test "diff of real runs: every counter and span path; the JSON says which run each thread ran in" {
	run -0 "$SPANSTAT" -r 3 --json=a.json --spans --span-events=page-faults -e task-clock,page-faults -- "$METRICS"
	run -0 "$SPANSTAT" -r 3 --json=b.json --spans --span-events=page-faults -e task-clock,page-faults -- "$METRICS"
	assert_equal "$(jq -c '[.spans.threads[].run] | unique' a.json)" '[0,1,2]'
	run "$SPANSTAT" diff --all --json=d.json a.json b.json
	[ "$status" -le 1 ]
	assert_output --partial 'page-faults'
	for path in touch sleep spin; do
		assert_output --partial "$path: self_ns"
		# per run, the JSON's count of the path: 3 runs, each once
		assert_equal "$(jq --arg p "$path" '.items[] | select(.name == $p and .field == "count") | [.old.mean, .old.runs] | @text' d.json)" '"[1,3]"'
	done
	assert_output --partial 'touch: page-faults'
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' d.json
	# every item says its family, test, p, adjusted p and verdict
	jq -e '.items | length > 10 and all(has("family") and has("test") and has("p") and
		has("adjusted_p") and has("verdict") and has("presence"))' d.json
	jq -e '[.items[] | select(.family == "primary")] | map(.name) | index("task-clock") != null' d.json
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
	# on standard output, the stacks alone: flamegraph.pl reads no listing
	run --separate-stderr -1 "$SPANSTAT" diff --folded=- old.json new2.json
	assert_equal "$output" "$(cat d.folded)"
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
	mkdir adir
	run -125 "$SPANSTAT" diff ok.json adir
	assert_output "spanstat: cannot read 'adir': Is a directory"
	run -125 "$SPANSTAT" diff ok.json
	assert_output "spanstat: diff takes two files, OLD and NEW (see 'spanstat diff --help')"
	run -125 "$SPANSTAT" diff --threshold=-1 ok.json ok.json
	assert_output "spanstat: invalid --threshold '-1': expected a percentage, 0 or more"
	run -125 "$SPANSTAT" diff --alpha=2 ok.json ok.json
	assert_output "spanstat: invalid --alpha '2': expected a significance level above 0 and at most 0.5"
	run -125 "$SPANSTAT" diff --primary-paths=2.5 ok.json ok.json
	assert_output "spanstat: invalid --primary-paths '2.5': expected a whole number from 0 to 1000"
	run -125 "$SPANSTAT" diff --bogus ok.json ok.json
	assert_output "spanstat: unknown option '--bogus' (see 'spanstat diff --help')"
	run -0 "$SPANSTAT" diff --help
	assert_output --partial 'Usage: spanstat diff [OPTIONS] OLD NEW'
	# spanstat -- diff runs the program
	run -1 "$SPANSTAT" -e task-clock -- diff ok.json broken.json
	assert_output --partial 'Performance counter stats'
}

@test "diff: negative, non-finite and absurd counts are refused with one line and 125" {
	session ok.json 100 101 99
	jq '.runs[1].events[0].value = -5' ok.json >neg.json
	run -125 "$SPANSTAT" diff --json=out.json ok.json neg.json
	assert_output "spanstat: 'neg.json': run 1, event 'task-clock': a negative value (-5)"
	[ ! -e out.json ]
	sed 's/"value": *101/"value": 1e999/; s/"value":101/"value":1e999/' ok.json >inf.json
	grep -q 1e999 inf.json
	run -125 "$SPANSTAT" diff ok.json inf.json
	assert_output "spanstat: 'inf.json': run 1, event 'task-clock': a value that is not finite"
	jq '.spans.threads[2].nodes[1].count = 1e308' ok.json >huge.json
	run -125 "$SPANSTAT" diff huge.json ok.json
	assert_output "spanstat: 'huge.json': run 2, span path 'main;work', count: an absurd value, beyond 2^63 (1e+308)"
	jq '.spans.threads[0].run = 7' ok.json >run7.json
	run -125 "$SPANSTAT" diff ok.json run7.json
	assert_output "spanstat: 'run7.json': span thread 0: of run 7, but the document has 3 runs"
}

@test "diff: p-values are adjusted in the primary family (Holm): a lone 0.04 is no regression" {
	session old.json 100 101 99 100.5 99.5
	# +1.2: Welch's p about 0.04 for task-clock and the quantities that follow it
	session new.json 101.2 102.2 100.2 101.7 100.7
	run -0 "$SPANSTAT" diff --json=h.json old.json new.json
	p=$(jq '.items[] | select(.name == "task-clock") | .welch_p' h.json)
	holm=$(jq '.items[] | select(.name == "task-clock") | .holm_p' h.json)
	m=$(jq '[.items[] | select(.family == "primary" and .p != null)] | length' h.json)
	echo "raw p $p, Holm $holm over $m tested"
	awk -v p="$p" 'BEGIN { exit !(p < 0.05) }'
	awk -v h="$holm" 'BEGIN { exit !(h >= 0.05 && h <= 1) }'
	assert_equal "$(verdict h.json task-clock '')" same
	assert_output --partial "Welch's t-test, Holm over the primary family, Benjamini-Hochberg over the rest"
	# the adjusted p: never below the raw one; Holm's for the primary family, BH's for the rest
	assert_equal "$(jq '[.items[] | select(.p != null and .adjusted_p < .p)] | length' h.json)" 0
	assert_equal "$(jq -c '[.items[] | select(.p != null) | [.family, .adjustment]] | unique' h.json)" \
		'[["primary","holm"],["secondary","benjamini-hochberg"]]'
}

@test "diff: thousands of span paths: a 10% improvement is better, call counts one apart are exact and secondary" {
	many_paths old.json 1 1.0 103
	many_paths new.json 2 0.9 104
	run --separate-stderr -0 "$SPANSTAT" diff --json=m.json old.json new.json
	assert_line --index 0 --regexp '^spanstat diff: better: [1-9][0-9]* of 8 primary quantities changed significantly \(alpha 0.05, threshold 0%\)$'
	assert_equal "$(verdict m.json task-clock '')" better
	jq -e '.items[] | select(.name == "task-clock") | .adjusted_p < 0.01' m.json
	# the primary family: 2 counters, the elapsed time, the 5 hottest paths of OLD
	assert_equal "$(jq -c '[.items[] | select(.family == "primary") | .name] | sort' m.json)" \
		'["elapsed_ns","main;fn1","main;fn2","main;fn3","main;fn4","main;fn5","page-faults","task-clock"]'
	assert_equal "$(jq '[.items[]] | length' m.json)" 6009
	# 103 -> 104 calls in every run: exact, changed by 1, secondary, never the status
	jq -e '.items[] | select(.name == "main;fn7" and .field == "count") |
		.test == "exact" and .change == 1 and .family == "secondary" and .p == null and .verdict == "worse"' m.json
	assert_equal "$(jq '.secondary.worse' m.json)" 2000
	# the first 20 changes, primary first, each group by relative change, in human units
	assert_equal "$(rows)" 20
	assert_line --regexp '^ +(1\.0[0-9][0-9] s|99[0-9]\.[0-9][0-9] ms) +9[0-9][0-9]\.[0-9][0-9] ms +-[0-9.]+% .* primary +better +task-clock$'
	assert_line --regexp '^ \.\.\. and [0-9]+ more changed quantities \(--all lists every quantity\)$'
	awk '/ (primary|secondary) +(worse|better) / { fam = ($0 ~ / primary /) ? 0 : 1; ch = $0; sub(/%.*/, "", ch); n = split(ch, f, " "); c = f[n] + 0; if (c < 0) c = -c
		if (rows++ && (fam < lastfam || (fam == lastfam && c > lastc + 1e-9))) { print "out of order: " $0; bad = 1 }
		lastfam = fam; lastc = c } END { exit bad }' <<<"$output"
	run -0 "$SPANSTAT" diff --all old.json new.json
	assert_equal "$(rows)" 6009
	assert_line --regexp '^ +103 +104 +\+0\.97% +exact +secondary +worse +main;fn[0-9]+: count, changed by \+1$'
	assert_output --regexp ' not counted +sys_ns'
	# thousands grouped
	assert_output --regexp ' 4,096 KiB +4,096 KiB .* max_rss_kib'
	assert_output --regexp ' 1,50[0-9]\.[0-9] +1,50[0-9]\.[0-9] .* page-faults'
}

@test "diff: what one side did not collect is not comparable (exit 2), said on stderr and in the JSON" {
	session old.json 100 101 99 100.5 99.5
	session new.json 120 121 119 120.5 119.5
	jq 'del(.spans) | .spans = {collected: false, threads: []}' old.json >nospans.json
	run --separate-stderr -2 "$SPANSTAT" diff --json=n.json --folded=n.folded nospans.json new.json
	assert_line --index 0 --regexp '^spanstat diff: not comparable: OLD and NEW collected different quantities \(1 difference, each said on stderr\); of the rest, 2 of 2 primary'
	[[ "$stderr" == *"spanstat: not comparable: span paths: collected in NEW only (OLD was run without --spans)"* ]]
	[[ "$stderr" == *"spanstat: --folded 'n.folded' not written: the span paths are not comparable"* ]]
	[ ! -e n.folded ]
	assert_equal "$(jq -c '[.verdict, .status, .not_comparable]' n.json)" \
		'["not comparable",2,[{"kind":"spans","name":null,"collected_in":"new","message":"span paths: collected in NEW only (OLD was run without --spans)"}]]'
	assert_equal "$(verdict n.json main\;work self_ns)" 'not comparable'
	# an event counted in one only; and the event lists and commands differ
	jq '.runs[].events += [{name: "cycles", unit: "", value: 5}] | .command = ["./a"] |
		.events = [{name: "task-clock"}, {name: "cycles"}]' old.json >cyc.json
	jq '.command = ["./b"] | .events = [{name: "task-clock"}]' old.json >b.json
	run --separate-stderr -2 "$SPANSTAT" diff --json=c.json cyc.json b.json
	assert_equal "$stderr" "spanstat: warning: the commands differ: OLD ran './a', NEW ran './b'
spanstat: warning: the event lists differ: OLD counted 'task-clock,cycles', NEW 'task-clock'
spanstat: not comparable: event 'cycles': counted in OLD only"
	assert_equal "$(jq '.warnings | length' c.json)" 2
	# a span value one side collected
	jq '.spans.threads[].nodes[].cpu_ns = 5' old.json >cpu.json
	run --separate-stderr -2 "$SPANSTAT" diff old.json cpu.json
	assert_equal "$stderr" "spanstat: not comparable: span value 'off_cpu_ns': collected in NEW only"
	# different commands alone only warn
	jq '.command = ["./b"]' old.json >cb.json
	jq '.command = ["./a"]' old.json >ca.json
	run --separate-stderr -0 "$SPANSTAT" diff ca.json cb.json
	assert_equal "$stderr" "spanstat: warning: the commands differ: OLD ran './a', NEW ran './b'"
}

@test "diff: a span path only in OLD is gone, only in NEW new" {
	session old.json 100 101 99 100.5 99.5
	jq '.spans.threads[].nodes[1].name = "other"' old.json >new.json
	run -0 "$SPANSTAT" diff --all --json=g.json old.json new.json
	assert_output --regexp ' gone .* main;work: self_ns'
	assert_output --regexp ' new .* main;other: self_ns'
	assert_equal "$(jq -r '.items[] | select(.name == "main;work" and .field == "count") | .presence' g.json)" gone
	assert_equal "$(jq -r '.items[] | select(.name == "main;other" and .field == "count") | .presence' g.json)" new
}

@test "diff of a real before/after pair: a loop built at -O2 is better than at -O0" {
	slow=$(build_workload opt_loop -O0 $(span_link_flags))
	fast=$(build_workload opt_loop -O2 $(span_link_flags))
	run -0 timeout 120 "$SPANSTAT" -r 5 --spans --json=o0.json -- "$slow" 8
	run -0 timeout 120 "$SPANSTAT" -r 5 --spans --json=o2.json -- "$fast" 8
	# the same work: the same spans, as often
	assert_equal "$(jq -c '[.spans.merged.nodes[] | [.name, .count]] | sort' o0.json)" \
		"$(jq -c '[.spans.merged.nodes[] | [.name, .count]] | sort' o2.json)"
	# 5%: page faults, deterministic in a run, may differ by a few between the builds
	run --separate-stderr -0 "$SPANSTAT" diff --threshold=5 --json=o.json o0.json o2.json
	assert_line --index 0 --partial 'spanstat diff: better: '
	assert_equal "$(verdict o.json task-clock '')" better
	# the span's CPU time is better; its wall self time too, unless the
	# machine is so busy that other programs' turns blur it (then the
	# test finds no difference, and never a worse one)
	assert_equal "$(verdict o.json round\;multiply cpu_ns)" better
	[[ "$(verdict o.json round\;multiply self_ns)" == @(better|same) ]]
	jq -e '[.items[] | select(.family == "primary") | .verdict] | index("worse") == null' o.json
	[[ "$stderr" == "spanstat: warning: the commands differ: "* ]]
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

@test "diff refuses a document whose span paths would not fit: a long name in a deep tree" {
	# every node's path repeats its ancestors' names: a 1 MiB name above
	# 400 levels is 400 MiB of paths (a 4,000-deep one took 13 GB)
	local deep
	deep=$(build_workload span_deep $(span_link_flags))
	run "$SPANSTAT" --spans --json=deep.json -- "$deep" 400
	assert_success
	python3 -c '
import json, sys
d = json.load(open("deep.json"))
for t in d["spans"]["threads"]:
    for n in t["nodes"]:
        if n["parent"] is None:
            n["name"] = "x" * (1 << 20)
json.dump(d, open("big.json", "w"))'
	run "$SPANSTAT" diff deep.json big.json
	assert_failure 125
	assert_output "spanstat: 'big.json': span thread 0: its span paths add up to more than 128 MiB of text (long names in a deep tree): not compared"
	# the same tree with its own names compares
	run "$SPANSTAT" diff deep.json deep.json
	[ "$status" -ne 125 ]
}

@test "diff: a reader that goes away is an output not written (125 and its line), never death by SIGPIPE" {
	# many changed quantities, so that the listing outgrows a pipe's buffer
	many_paths old.json 1 1.0 10
	many_paths new.json 2 1.3 11
	local o
	for o in --all --json=- --flamegraph=-; do
		run bash -c '"$0" diff "$1" old.json new.json 2>err | head -c 10 >/dev/null
			echo "${PIPESTATUS[0]}"; cat err' "$SPANSTAT" "$o"
		[ "${lines[0]}" = 125 ] || fail "$o: status ${lines[0]}: $output"
		case $o in
		--all) [ "${lines[1]}" = "spanstat: cannot write the comparison to standard output: Broken pipe" ] ;;
		*) [ "${lines[1]}" = "spanstat: cannot write ${o%=-} to standard output: Broken pipe" ] ;;
		esac || fail "$o: $output"
		[ "${#lines[@]}" -eq 2 ] || fail "$o: $output"
	done
}

@test "diff: a newer schema_version and standard input twice are refused with one line" {
	session old.json 100 101 99 100.5 99.5
	run -0 "$SPANSTAT" diff old.json old.json
	jq '.schema_version = 99' old.json >new99.json
	run -125 "$SPANSTAT" diff old.json new99.json
	assert_output "spanstat: 'new99.json': schema_version 99 is newer than this spanstat reads (2): compare it with the spanstat that wrote it"
	run -125 "$SPANSTAT" diff - - <old.json
	assert_output "spanstat: OLD and NEW are both standard input ('-'): it can be read once"
}
