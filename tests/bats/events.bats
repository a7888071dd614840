#!/usr/bin/env bats
# events.bats: event lists in perf's syntax through the real binary: names,
# groups, modifiers, raw events, defaults, errors, and --list.

load helpers

setup() {
	cd "$BATS_TEST_TMPDIR"
}

@test "no -e counts perf stat's default set" {
	run "$SPANSTAT" -- true
	assert_success
	for e in task-clock context-switches cpu-migrations page-faults cycles instructions \
		branches branch-misses; do
		assert_output --regexp "[0-9.,>]+ +(msec )? *$e"
	done
}

@test "hardware events show <not supported> here, software events real values" {
	if perf_ok=$(perf stat -e instructions true 2>&1) && ! grep -q 'not supported' <<<"$perf_ok"; then
		skip "this machine has a hardware PMU"
	fi
	run "$SPANSTAT" -e task-clock,cycles,instructions,page-faults -- true
	assert_success
	assert_output --regexp '<not supported> +cycles'
	assert_output --regexp '<not supported> +instructions'
	assert_output --regexp '[1-9][0-9]* +page-faults'
	refute_output --regexp '(^| )0 +cycles'
}

@test "a group is accepted and counted together" {
	run "$SPANSTAT" -e '{task-clock,page-faults}' -e context-switches -- true
	assert_success
	assert_output --regexp '[0-9.]+ msec task-clock'
	assert_output --regexp '[1-9][0-9,]* +page-faults'
	assert_output --regexp '[0-9,]+ +context-switches'
}

@test "modifiers, raw events, cache and alias names resolve" {
	run "$SPANSTAT" -e task-clock:u,page-faults:k,cs,faults,r1a8,L1-dcache-load-misses,alignment-faults,emulation-faults -- true
	assert_success
	assert_output --regexp 'task-clock:u'
	assert_output --regexp 'r1a8'
	assert_output --regexp 'L1-dcache-load-misses'
	assert_output --regexp '[0-9,]+ +alignment-faults'
	assert_output --regexp '[0-9,]+ +emulation-faults'
}

@test "an unknown event is rejected with suggestions" {
	run "$SPANSTAT" -e cyclez -- sh -c "touch $BATS_TEST_TMPDIR/ran"
	assert_failure 125
	assert_equal "${#lines[@]}" 1
	assert_output --regexp "^spanstat: unknown event 'cyclez'.*cycles"
	assert_not_exists ran
}

@test "unbalanced braces and empty lists are rejected" {
	for bad in '{cycles,instructions' 'cycles}' '' ',' 'task-clock,,page-faults' '{}'; do
		run "$SPANSTAT" -e "$bad" -- sh -c "touch $BATS_TEST_TMPDIR/ran"
		assert_failure 125
		assert_equal "${#lines[@]}" 1
		assert_output --regexp '^spanstat: (unbalanced|empty)'
		assert_not_exists ran
	done
}

@test "--list shows generic and software events and marks what cannot count here" {
	run "$SPANSTAT" --list
	assert_success
	assert_line --regexp '^  task-clock +software'
	assert_line --regexp '^  alignment-faults +software'
	assert_line --regexp '^  cycles +hardware'
	if [ ! -d /sys/bus/event_source/devices/cpu ]; then
		assert_line --regexp '^  cycles +.*\(not supported here\)$'
	fi
	refute_line --regexp '^  task-clock .*not supported here'
	[ "${#lines[@]}" -gt 20 ]
}

@test "--list PATTERN filters" {
	run "$SPANSTAT" --list fault
	assert_success
	assert_output --regexp 'page-faults'
	refute_line --regexp '^  task-clock '
}
