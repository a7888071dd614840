#!/usr/bin/env bats
# flamechart.bats: --flamechart checked as a person would look at it: valid
# XML (xmllint), a lane per thread under its process, every span instance in
# time order, the ones shorter than a pixel merged and counted, loaded by
# headless Chromium without a script error, its zoom (with the time axis) and
# search driven through the URL fragment and read back from the DOM.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export SPAN_THREADS METRICS LOOP BUSY
	SPAN_THREADS=$(build_workload span_threads $(span_link_flags))
	BUSY=$(build_workload span_busy $(span_link_flags))
	METRICS=$(build_workload span_metrics $(span_link_flags))
	LOOP=$(build_workload span_loop $(span_link_flags))
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# frames FILE: "lane depth x width name" per frame, in the order written
# hidden_counts SVG: the chart's counts of spans under a pixel, as
# "SMALL ALL IN_RUNS IN_PARENTS OUTERMOST"
hidden_counts() {
	sed -n -E 's/.*>([0-9]+) of ([0-9]+) spans under a pixel: ([0-9]+) in runs, ([0-9]+) in their parents, ([0-9]+) outermost hidden.*/\1 \2 \3 \4 \5/p' "$1"
}

frames() {
	sed -n -E 's/.*<g class="f" data-d="([0-9]+)" data-v="[0-9]+" data-n="([^"]*)" data-l="([0-9]+)">.*<rect x="([0-9.]+)" y="-?[0-9]+" width="([0-9.]+)".*/\3 \1 \4 \5 \2/p' "$1"
}

@test "--flamechart: a lane per thread, every span counted, drawn or merged" {
	require_cmd xmllint
	run -0 "$SPANSTAT" --flamechart=t.svg --json=t.json -e task-clock -- "$SPAN_THREADS"
	run -0 xmllint --noout t.svg
	# every thread with spans has its lane, named, under its one process
	for tid in $(jq '.spans.threads[] | select(.nodes | length > 0) | .tid' t.json); do
		name=$(jq -r ".spans.threads[] | select(.tid == $tid) | .thread_name" t.json)
		grep -q "thread $name \\[$tid\\]" t.svg
	done
	assert_equal "$(grep -c '>process ' t.svg)" 1
	# every thread with spans has its lane, drawn or said to be all small
	assert_equal "$(grep -c '>  thread ' t.svg)" \
		"$(jq '[.spans.threads[] | select(.nodes | length > 1)] | length' t.json)"
	# drawn alone + drawn in runs + merged = every span the JSON counts
	drawn=$(frames t.svg | grep -cvE ' ×[0-9]+$| [0-9]+ spans$' || true)
	read -r small all inruns merged roots < <(hidden_counts t.svg)
	assert_equal "$all" "$(jq '[.spans.threads[].nodes[].count] | add' t.json)"
	assert_equal "$((inruns + merged + roots))" "$small"
	assert_equal "$((drawn + small))" "$all"
	# the main thread's spans, in time order, each with its own instance
	run -0 jq -r '.spans.threads[] | select(.thread_name == "main-thread") | .tid' t.json
	grep -q '<title>main (' t.svg
	# a 50 ms sleep lasts 50 ms or more (how much more depends on the load)
	grep -Eq '<title>sleep \(([5-9][0-9]|[1-9][0-9][0-9])\.[0-9][0-9] ms, at ' t.svg
	# every worker's "work" is one frame at depth 0, not merged with the others
	assert_equal "$(frames t.svg | awk '$2 == 0 && $5 == "work"' | wc -l)" 4
}

@test "--flamechart: x is time, children inside their parents, in the order they ran" {
	run -0 "$SPANSTAT" --flamechart=m.svg -e task-clock -- "$METRICS"
	frames m.svg >f.txt
	cat f.txt
	# touch, sibling, sleep, spin run one after another inside the lane
	order=$(awk '$5 ~ /^(touch|sleep|spin)$/ { print $5 }' f.txt | head -3 | tr '\n' ' ')
	assert_equal "$order" "touch sleep spin "
	# a depth-1 frame lies within a depth-0 frame of its lane
	run awk '$2 == 0 { lo[$1] = $3; hi[$1] = $3 + $4 }
		$2 == 1 && ($3 < lo[$1] - 0.01 || $3 + $4 > hi[$1] + 0.01) { print "outside:", $0; bad = 1 }
		END { exit bad }' f.txt
	assert_success
	# sleep's 50 ms are about 50 ms of the axis
	grep -q '<g id="axis"' m.svg
	grep -q '>0 ns</text>' m.svg
}

@test "--flamechart in a browser: no script error, zoom redraws the axis, search matches" {
	require_cmd chromium
	run -0 "$SPANSTAT" --flamechart=m.svg -e task-clock -- "$METRICS"
	n=$(frames m.svg | awk '$5 == "sleep" { print NR - 1; exit }')
	run chromium_dom m.svg "#zoom=$n"
	assert_success
	[ "$(grep -o 'data-zoomed="in"' <<<"$output" | wc -l)" -ge 1 ]
	[ "$(grep -o 'data-zoomed="out"' <<<"$output" | wc -l)" -ge 1 ]
	# the axis now spans the sleep's 50 ms: no tick beyond it
	ticks=$(grep -o '<g id="axis".*</g>' <<<"$output" | grep -o '[0-9.]* ms</text>' | tr -d ' ms</text>')
	echo "ticks: $ticks"
	[ -n "$ticks" ]
	awk -v t="$ticks" 'BEGIN { n = split(t, a, "\n"); exit !(a[n] - a[1] <= 55) }'
	run grep -ci 'uncaught\|syntaxerror' chromium.log
	assert_output 0
	run chromium_dom m.svg '#search=^spin$'
	assert_success
	assert_output --regexp 'Matched: [1-9][0-9]?\.[0-9]%'
	timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$BATS_TEST_TMPDIR/p2" \
		--screenshot="$PWD/m.png" --window-size=1200,300 "file://$PWD/m.svg" 2>/dev/null
	[ "$(stat -c %s m.png)" -gt 5000 ]
}

@test "--flamechart of a million spans: merged below a pixel, a small file, every span counted" {
	run -0 "$SPANSTAT" --flamechart=l.svg --json=l.json -e task-clock -- "$LOOP" pairs 1000000
	read -r merged all _ < <(hidden_counts l.svg)
	echo "merged $merged of $all"
	assert_equal "$all" "$(jq '[.spans.threads[].nodes[].count] | add' l.json)"
	[ "$all" -ge 1000000 ]
	[ "$merged" -ge 990000 ]
	[ "$(stat -c %s l.svg)" -lt 2000000 ]
	run -0 xmllint --noout l.svg
}

@test "--flamechart: bad file names and no spans" {
	run -125 "$SPANSTAT" --flamechart= -- true
	assert_output "spanstat: invalid --flamechart '': expected a file name, or - for standard output"
	# a command that emits no spans: an empty chart, still valid
	run -0 "$SPANSTAT" --flamechart=e.svg -e task-clock -- true
	run -0 xmllint --noout e.svg
	grep -q '>0 of 0 spans under a pixel' e.svg
}

@test "--flamegraph and --flamechart: names that are not UTF-8 or hold markup stay valid XML" {
	require_cmd xmllint
	run -0 "$SPANSTAT" --flamegraph=u.svg --flamechart=uc.svg -e task-clock -- bash -c \
		'n=$(printf "caf\xc3\xa9 \xff\xfe<b>&\"x\"")
		printf "B %d - - %s\n" $$ "$n" >"$SPANSTAT_LINES"
		sleep 0.05
		printf "E %d - - %s\n" $$ "$n" >"$SPANSTAT_LINES"'
	for f in u.svg uc.svg; do
		run -0 xmllint --noout "$f"
		grep -q 'data-n="café %FF%FE&lt;b&gt;&amp;&quot;x&quot;"' "$f"
	done
}

@test "--flamegraph, --flamechart and diff --flamegraph: U+FFFE and U+FFFF in a name stay valid XML" {
	require_cmd xmllint
	# valid UTF-8, but no character XML allows
	run -0 "$SPANSTAT" -r 2 --flamegraph=n.svg --flamechart=nc.svg --json=n.json -e task-clock -- bash -c \
		'for n in "$(printf "a\xef\xbf\xbe")" "$(printf "b\xef\xbf\xbf")"; do
			printf "B %d - - %s\n" $$ "$n" >"$SPANSTAT_LINES"
			sleep 0.05
			printf "E %d - - %s\n" $$ "$n" >"$SPANSTAT_LINES"
		done'
	run -0 "$SPANSTAT" diff --flamegraph=nd.svg n.json n.json
	for f in n.svg nc.svg nd.svg; do
		run -0 xmllint --noout "$f"
		grep -q 'data-n="a%EF%BF%BE"' "$f"
		grep -q 'data-n="b%EF%BF%BF"' "$f"
	done
}

@test "--flamechart: the axis reaches the last span's end, even one dropped below a pixel" {
	require_cmd python3
	# A: 10 ms; B, 90 ms later: 150 us, dropped as it ends (less than a
	# pixel of the run so far).  The axis must still reach B, or B would
	# have been wider than a pixel of the picture drawn.
	run -0 "$SPANSTAT" --flamechart=d.svg -e task-clock -- python3 -c '
import os, time
fd = os.open(os.environ["SPANSTAT_LINES"], os.O_WRONLY | os.O_APPEND)
p, t = os.getpid(), time.monotonic_ns()
os.write(fd, ("B %d - %d A\nE %d - %d A\nB %d - %d B\nE %d - %d B\n" % (
    p, t, p, t + 10000000, p, t + 100000000, p, t + 100150000)).encode())
time.sleep(0.15)'
	run -0 xmllint --noout d.svg
	grep -q '>1 of 2 spans under a pixel: 0 in runs, 0 in their parents, 1 outermost hidden' d.svg
	span=$(grep -o 'data-span-ns="[0-9]*"' d.svg | grep -o '[0-9]*')
	a=$(grep -o '<title>A ([0-9.]* ms, at [0-9.]* ms' d.svg | sed 's/.*at \([0-9.]*\) ms/\1/')
	# the axis spans at least A's start plus 100.1 ms (B's end, less rounding)
	python3 -c 'import sys; sys.exit(0 if int(sys.argv[1]) >= (float(sys.argv[2]) + 100.1) * 1e6 else 1)' "$span" "$a"
}

@test "--flamechart: a thread busy with spans far shorter than a pixel is drawn busy, in runs with their count" {
	require_cmd xmllint
	run -0 "$SPANSTAT" --flamechart=b.svg --json=b.json -- "$BUSY" 5000
	run -0 xmllint --noout b.svg
	# the ticks are drawn as blocks "tick ×N" at depth 1 under "work", whose
	# counts with the merged ones make the 5000 (how many runs a preemption
	# splits them into depends on the load)
	frames b.svg >f.txt
	local inruns
	inruns=$(sed -n -E 's/.* tick ×([0-9]+)$/\1/p' f.txt | awk '{ s += $1 } END { print s + 0 }')
	[ "${inruns:-0}" -ge 2500 ] || fail "only ${inruns:-0} ticks drawn in runs"
	grep -qE '<title>tick ×[0-9]+ \([0-9]+ spans, busy [0-9.]+ [a-z]+ of [0-9.]+ [a-z]+, at ' b.svg
	read -r small all runs merged roots < <(hidden_counts b.svg)
	assert_equal "$all" 5002
	assert_equal "$runs" "$inruns"
	assert_equal "$((runs + merged + roots))" "$small"
}

@test "--flamechart: a thread whose spans are all shorter than a pixel keeps its heading, which says so" {
	require_cmd python3
	require_cmd xmllint
	# thread 1: A, 100 ms; thread 2: S, 10 us in the middle, nothing else
	run -0 "$SPANSTAT" --flamechart=d.svg -e task-clock -- python3 -c '
import os, time
fd = os.open(os.environ["SPANSTAT_LINES"], os.O_WRONLY | os.O_APPEND)
p, t = os.getpid(), time.monotonic_ns()
os.write(fd, ("B %d - %d A\nE %d - %d A\nB %d %d %d S\nE %d %d %d S\n" % (
    p, t, p, t + 100000000, p, p + 1, t + 50000000, p, p + 1, t + 50010000)).encode())
time.sleep(0.15)'
	run -0 xmllint --noout d.svg
	assert_equal "$(grep -c '>  thread ' d.svg)" 2
	grep -q '>  thread ? \[[0-9]*\]: 1 span, shorter than a pixel<' d.svg
	grep -q '>1 of 2 spans under a pixel: 0 in runs, 0 in their parents, 1 outermost hidden<' d.svg
}
