#!/usr/bin/env bats
# exit.bats: spanstat's exit status is the target's; 128+N for a signal
# (with the summary still printed); 126/127 when the command cannot run.
# Signals sent to spanstat are signals.bats'.

load helpers

setup() {
	cd "$BATS_TEST_TMPDIR"
}

@test "the target's exit status passes through" {
	for code in 0 1 3 42 124 125 255; do
		run "$SPANSTAT" -e task-clock -- sh -c "exit $code"
		assert_equal "$status" "$code"
		assert_output --partial "task-clock"
	done
}

@test "a target killed by a signal gives 128+N and the summary" {
	run "$SPANSTAT" -e task-clock -- sh -c 'kill -SEGV $$'
	assert_equal "$status" 139
	assert_output --partial "task-clock"
	run "$SPANSTAT" -e task-clock -- sh -c 'kill -KILL $$'
	assert_equal "$status" 137
}

@test "a missing command exits 127 with one line" {
	run "$SPANSTAT" -e task-clock -- ./no-such-command
	assert_failure 127
	assert_equal "${#lines[@]}" 1
	assert_output "spanstat: cannot run './no-such-command': No such file or directory"
	run "$SPANSTAT" -- no-such-command-in-path
	assert_failure 127
}

@test "a command that cannot be executed exits 126" {
	printf 'not a program\n' > data.txt
	chmod 644 data.txt
	run "$SPANSTAT" -e task-clock -- ./data.txt
	assert_failure 126
	assert_output --regexp "^spanstat: cannot run './data.txt': Permission denied$"
	run "$SPANSTAT" -e task-clock -- /
	assert_failure 126
}
