#!/usr/bin/env bats
# spanvalues.bats: what each span cost, through the installed binary and span
# library (spanstat(1), SPAN VALUES): per-span events of --span-events, on-
# and off-CPU time, allocations of --span-allocs, in both transports (the
# target aggregating, and events streaming with --perfetto), in threads and
# forked children, and how they show in the table, JSON, folded stacks
# (--weight) and Perfetto.  span_metrics' spans have known costs: touch
# faults in 16384 fresh pages, sibling touches nothing, sleep sleeps 50 ms,
# spin spins 100 ms, mallocs makes 1000 allocations of 100 bytes, frees
# frees them.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export METRICS
	METRICS=$(build_workload span_metrics $(span_link_flags))
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# mode_opts MODE: the options for one of the two ways spans travel.
mode_opts() {
	[ "$1" != stream ] || echo "--perfetto=s.pftrace"
}

# node FILE NAME FIELD: FIELD (a jq path under the node) of the merged node NAME.
node() {
	jq "[.spans.merged.nodes[] | select(.name == \"$2\") | $3] | first" "$1"
}

# thread_node FILE NAME FIELD: FIELD of NAME in every thread's tree, one per line.
thread_node() {
	jq ".spans.threads[] | .nodes[] | select(.name == \"$2\") | $3" "$1"
}

@test "--span-events: page faults and task-clock per span, exact, in both transports" {
	for mode in agg stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --span-events=page-faults,task-clock \
			--spans -e task-clock -- "$METRICS"
		assert_success
		pf=$(node x.json touch '.metrics["page-faults"]')
		sib=$(node x.json sibling '.metrics["page-faults"]')
		echo "$mode: touch $pf faults, sibling $sib"
		[ "$pf" -ge 16000 ]
		[ "$sib" -le 8 ]
		# task-clock: the spin is on a CPU for (nearly) all its 100 ms; the
		# sleep barely
		spin=$(node x.json spin '.metrics["task-clock"]')
		sleep_=$(node x.json sleep '.metrics["task-clock"]')
		wall=$(node x.json spin .total_ns)
		echo "$mode: spin task-clock $spin of $wall ns, sleep $sleep_"
		[ "$spin" -ge $((wall * 9 / 10)) ] && [ "$spin" -le "$wall" ]
		[ "$sleep_" -lt 5000000 ]
		assert_equal "$(jq -c '[.spans.metrics[] | [.name, .kind, .supported, .unit]]' x.json)" \
			'[["off_cpu_ns","off_cpu",true,"ns"],["page-faults","event",true,""],["task-clock","event",true,"ns"]]'
	done
}

@test "--span-events: hardware events without a PMU show <not supported> per span, and null" {
	if "$SPANSTAT" -x, -e cycles -- true 2>&1 | grep -qv 'not supported'; then
		skip "this machine counts cycles: the unsupported path cannot be shown"
	fi
	run "$SPANSTAT" --json=x.json --span-events=cycles,instructions,page-faults --spans -o sum.txt \
		-e task-clock -- "$METRICS"
	assert_success
	grep -E 'cycles/call +instructions/call +page-faults/call +IPC' sum.txt
	grep -E '<not supported> +<not supported> +[0-9,.]+ +- +touch$' sum.txt
	assert_equal "$(node x.json touch '.metrics.cycles')" null
	assert_equal "$(jq -c '[.spans.metrics[] | .supported]' x.json)" '[true,false,false,true]'
}

@test "threads and forked children count their own values" {
	for mode in agg stream; do
		for how in threads fork; do
			run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --span-events=page-faults \
				--spans -e task-clock -- "$METRICS" "$how"
			assert_success
			run thread_node x.json touch '.metrics["page-faults"]'
			echo "$mode $how: $output"
			assert_equal "${#lines[@]}" 2
			[ "${lines[0]}" -ge 16000 ] && [ "${lines[0]}" -le 17000 ]
			[ "${lines[1]}" -ge 16000 ] && [ "${lines[1]}" -le 17000 ]
			run thread_node x.json sibling '.metrics["page-faults"]'
			[ "${lines[0]}" -le 8 ] && [ "${lines[1]}" -le 8 ]
		done
	done
}

@test "--weight=page-faults puts the faulting span on top of the folded output" {
	run "$SPANSTAT" --folded=f.txt --weight=page-faults --span-events=page-faults \
		-e task-clock -- "$METRICS"
	assert_success
	cat f.txt
	assert_equal "$(sort -k2,2nr f.txt | head -1 | cut -d' ' -f1)" touch
	[ "$(awk '$1 == "touch" { print $2 }' f.txt)" -ge 16000 ]
	# the default weight is wall time: the spin is on top
	run "$SPANSTAT" --folded=w.txt -e task-clock -- "$METRICS"
	assert_equal "$(sort -k2,2nr w.txt | head -1 | cut -d' ' -f1)" spin
}

@test "--weight and the span options reject what cannot work" {
	run -125 "$SPANSTAT" --weight=bogus --folded=f.txt -- true
	assert_output "spanstat: invalid --weight 'bogus': expected wall, cpu, off-cpu, allocs, alloc-bytes or an event of --span-events"
	run -125 "$SPANSTAT" --weight=wall -- true
	assert_output "spanstat: --weight needs --folded FILE"
	run -125 "$SPANSTAT" --weight=allocs --folded=f.txt -- true
	assert_output "spanstat: --weight=allocs needs --span-allocs"
	run -125 "$SPANSTAT" --weight=cpu --no-off-cpu --folded=f.txt -- true
	assert_output "spanstat: --weight=cpu needs the off-CPU split that --no-off-cpu turns off"
	run -125 "$SPANSTAT" --span-events=page-faults -- true
	assert_output "spanstat: --span-events needs a span output: --spans, --folded or --perfetto"
	run -125 "$SPANSTAT" --span-allocs --json=x.json -- true
	assert_output "spanstat: --span-allocs needs a span output: --spans, --folded or --perfetto"
	run -125 "$SPANSTAT" --span-events=nosuchevent --spans -- true
	assert_output --partial "spanstat: invalid --span-events 'nosuchevent': "
	assert_file_not_exists f.txt
}

@test "a weight the machine cannot count fails that output only, the target's status kept" {
	if "$SPANSTAT" -x, -e cycles -- true 2>&1 | grep -qv 'not supported'; then
		skip "this machine counts cycles"
	fi
	run "$SPANSTAT" --folded=f.txt --weight=cycles --span-events=cycles --json=x.json \
		-e task-clock -- sh -c 'exit 3'
	assert_failure 3
	assert_output --partial "spanstat: cannot write --folded 'f.txt': --weight=cycles cannot be counted here"
	assert_file_not_exists f.txt
	assert_file_exists x.json
}

@test "Perfetto slices carry the values; each thread gets a counter track per event" {
	require_cmd protoc
	local schema="$SRCDIR/../shared/perfetto"
	[ -f "$schema/perfetto_trace.proto" ] || skip_or_fail "no Perfetto schema at $schema"
	run "$SPANSTAT" --perfetto=t.pftrace --span-events=page-faults --json=x.json \
		-e task-clock -- "$METRICS" threads
	assert_success
	protoc --decode=perfetto.protos.Trace -I "$schema" "$schema/perfetto_trace.proto" \
		<t.pftrace >t.txt
	# every slice end carries the span's page faults (12 spans), and its
	# on- and off-CPU time
	assert_equal "$(grep -c 'name: "page-faults"' t.txt)" \
		"$((12 + $(grep -c 'counter {' t.txt)))"
	[ "$(grep -c 'name: "cpu_ns"' t.txt)" -eq 12 ]
	[ "$(grep -c 'name: "off_cpu_ns"' t.txt)" -eq 12 ]
	# two threads: two page-faults counter tracks, under each thread's track
	[ "$(grep -B2 -A4 'name: "page-faults"' t.txt | grep -c 'counter {')" -eq 2 ]
	# the largest fault count a slice carries is the touch's
	max=$(awk '/uint_value:/ { v = $2 } /name: "page-faults"/ && v > m { m = v } END { print m }' t.txt)
	[ "$max" -ge 16000 ]
}

@test "the span table: a column per value, per call" {
	run "$SPANSTAT" --spans --span-events=page-faults -o sum.txt -e task-clock -- "$METRICS"
	assert_success
	cat sum.txt
	grep -E ' +count +total +self +mean +wall +cpu/call +off-cpu/call +off% +page-faults/call +path$' sum.txt
	faults=$(awk '/Spans by stack path/ { on = 1 } on && $NF == "touch" { print $(NF - 1); exit }' sum.txt)
	faults=${faults//,/}
	[ "${faults%.*}" -ge 16000 ]
}
