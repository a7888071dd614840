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

@test "README's picture is the demo's flame graph as this spanstat draws it" {
	require_cmd xmllint
	pic="$SRCDIR/man/demo-flamegraph.svg"
	grep -q '](man/demo-flamegraph.svg)' "$SRCDIR/README.md"
	run -0 xmllint --noout "$pic"
	demo=$(build_workload demo -finstrument-functions)
	run -0 "$SPANSTAT" --flamegraph=d.svg -- "$demo"
	# the same frames (name and depth), drawn by the same script
	frames() { grep -o 'data-d="[0-9]*" data-v="[0-9]*" data-n="[^"]*"' "$1" | sed 's/ data-v="[0-9]*"//' | sort; }
	assert_equal "$(frames "$pic")" "$(frames d.svg)"
	[ "$(frames d.svg | wc -l)" -ge 5 ]
	assert_equal "$(sed -n '/<script/,/<\/script>/p' "$pic")" "$(sed -n '/<script/,/<\/script>/p' d.svg)"
}

@test "--flamegraph --folded-threads: each thread apart under its process, as --folded roots them" {
	run -0 "$SPANSTAT" --flamegraph=r.svg --folded=r.folded --folded-threads --json=r.json \
		-e task-clock -- "$SPAN_THREADS"
	run -0 xmllint --noout r.svg
	svgframes() { grep -o "data-d=\"$2\" data-v=\"[0-9]*\" data-n=\"[^\"]*\"" "$1" | sed -E 's/.*data-n="([^"]*)"/\1/' | sort; }
	# the process frame and one frame per thread, named as the folded roots
	assert_equal "$(svgframes r.svg 0)" "$(cut -d';' -f1 r.folded | sort -u)"
	assert_equal "$(svgframes r.svg 1)" "$(cut -d';' -f2 r.folded | cut -d' ' -f1 | sort -u)"
	assert_equal "$(svgframes r.svg 1 | wc -l)" 5
	# a thread's frame is as wide as its spans' time: the JSON's thread total
	for tid in $(jq '.spans.threads[].tid' r.json); do
		want=$(jq "[.spans.threads[] | select(.tid == $tid) | .nodes[] | select(.depth == 0) | .total_ns] | add" r.json)
		grep -q "data-d=\"1\" data-v=\"$want\" data-n=\"[^\"]*/$tid\"" r.svg
	done
	# "work" is under each worker, not merged into one
	assert_equal "$(svgframes r.svg 2 | grep -c '^work$')" 4
	run -125 "$SPANSTAT" --folded-threads --pprof=x.pb.gz -- true
	assert_output "spanstat: --folded-threads needs --folded or --flamegraph"
}
