#!/usr/bin/env bats
# flamegraph.bats: --flamegraph checked as a person would look at it: valid
# XML (xmllint), loaded by headless Chromium without a script error, drawn
# to a PNG, its search and zoom driven through the URL fragment and read
# back from the DOM; frames and widths against the same run's JSON.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export SPAN_THREADS METRICS
	SPAN_THREADS=$(build_workload span_threads $(span_link_flags))
	METRICS=$(build_workload span_metrics $(span_link_flags))
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# chromium_dom SVG FRAGMENT: the DOM after the SVG's script ran; stderr
# (Chromium's log, console messages included) goes to chromium.log.
chromium_dom() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 \
		--user-data-dir="$BATS_TEST_TMPDIR/profile" --dump-dom "file://$PWD/$1$2" 2>chromium.log
}

@test "--flamegraph: valid XML, one frame per path, widths the JSON's totals" {
	require_cmd xmllint
	run "$SPANSTAT" --flamegraph=t.svg --json=t.json -e task-clock -- "$SPAN_THREADS"
	assert_success
	run xmllint --noout t.svg
	assert_success
	# every merged node with time is a frame, its value its total
	frames=$(grep -c '<g class="f"' t.svg)
	assert_equal "$frames" "$(jq '[.spans.merged.nodes[] | select(.total_ns > 0)] | length' t.json)"
	for name in main work; do
		v=$(jq "[.spans.merged.nodes[] | select(.name == \"$name\" and .depth == 0) | .total_ns] | add" t.json)
		grep -q "data-v=\"$v\" data-n=\"$name\"" t.svg
	done
	grep -q '<title>main (' t.svg
	grep -q 'too narrow to draw' t.svg
}

@test "--flamegraph in a browser: no script error, search and zoom work, it draws" {
	require_cmd chromium
	run "$SPANSTAT" --flamegraph=m.svg --json=m.json -e task-clock -- "$METRICS"
	assert_success
	# search: the matched share is sleep's share of all the time drawn
	run chromium_dom m.svg '#search=^sleep$'
	assert_success
	refute_output --partial 'Matched: 0.0%'
	want=$(jq -r '([.spans.merged.nodes[] | select(.depth == 0) | .total_ns] | add) as $all
		| [.spans.merged.nodes[] | select(.name == "sleep") | .total_ns] | add * 1000 / $all
		| round / 10 | tostring' m.json)
	assert_output --regexp "Matched: ${want%.0}(\\.0)?%"
	run grep -ci 'uncaught\|syntaxerror' chromium.log
	assert_output 0
	# zoom into the first frame drawn: it and what is inside it stay, the rest goes
	run chromium_dom m.svg '#zoom=0'
	assert_success
	[ "$(grep -o 'data-zoomed="in"' <<<"$output" | wc -l)" -ge 1 ]
	[ "$(grep -o 'data-zoomed="out"' <<<"$output" | wc -l)" -ge 1 ]
	run grep -ci 'uncaught\|syntaxerror' chromium.log
	assert_output 0
	# and it draws: a PNG of the picture, not blank
	timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$BATS_TEST_TMPDIR/p2" \
		--screenshot="$PWD/m.png" --window-size=1200,300 "file://$PWD/m.svg" 2>/dev/null
	[ "$(stat -c %s m.png)" -gt 5000 ]
}

@test "--flamegraph --weight=page-faults: the faulting span is the widest" {
	run "$SPANSTAT" --flamegraph=f.svg --weight=page-faults --span-events=page-faults \
		-e task-clock -- "$METRICS"
	assert_success
	widest=$(grep -o 'data-d="0" data-v="[0-9]*" data-n="[^"]*"' f.svg | sort -t'"' -k4,4nr | head -1)
	assert_equal "${widest##*data-n=}" '"touch"'
	grep -q 'page-faults' f.svg
}
