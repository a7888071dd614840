#!/usr/bin/env bats
# valgrind.bats: spanstat's core paths run clean under valgrind's memcheck
# (counting, repeated runs, intervals, CSV, the list, bad input, spans with
# their values in both transports and every output).

load helpers

setup_file() {
	export SPIN METRICS
	SPIN=$(build_workload spin)
	METRICS=$(build_workload span_metrics $(span_link_flags))
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	require_cmd valgrind
	# the sanitizer build cannot run under valgrind
	if nm -D "$SPANSTAT" 2>/dev/null | grep -q __asan_init; then
		skip "spanstat is built with ASan"
	fi
}

vg() {
	valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		--quiet "$SPANSTAT" "$@"
}

@test "valgrind: counting with the default events" {
	run vg -- true
	assert_success
}

@test "valgrind: -r, -I, -x and -o" {
	run vg -r 2 -I 50 -x, -o out.csv -e task-clock,page-faults,cycles -- "$SPIN" 120
	assert_success
	assert_file_exists out.csv
}

@test "valgrind: --list and bad input" {
	run vg --list fault
	assert_success
	run vg -e nosuchevent -- true
	assert_failure 125
	run vg -- ./no-such-command
	assert_failure 127
}

@test "valgrind: spans with off-CPU time, events and allocations, aggregated and streamed" {
	run vg --spans --span-events=page-faults,cycles --span-allocs --json=a.json --folded=a.txt \
		--weight=page-faults -e task-clock -- "$METRICS" threads
	assert_success
	run vg --spans --span-events=page-faults --span-allocs --perfetto=s.pftrace --json=s.json \
		-e task-clock -- "$METRICS" fork
	assert_success
	assert_equal "$(jq '[.spans.merged.nodes[] | select(.name == "mallocs") | .allocs] | first' s.json)" 2000
}
