#!/usr/bin/env bats
# valgrind.bats: spanstat's core paths run clean under valgrind's memcheck
# (counting, repeated runs, intervals, CSV, the list, bad input).

load helpers

setup_file() {
	export SPIN
	SPIN=$(build_workload spin)
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
