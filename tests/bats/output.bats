#!/usr/bin/env bats
# output.bats: where results go: -o FILE and --append, -x CSV in perf's
# column order, and no partial file left behind by any failure.

load helpers

setup() {
	cd "$BATS_TEST_TMPDIR"
}

@test "-o FILE writes the summary there, not to stderr" {
	run "$SPANSTAT" -o out.txt -e task-clock -- true
	assert_success
	refute_output --partial "task-clock"
	assert_file_exists out.txt
	grep -q "task-clock" out.txt
	grep -q "Performance counter stats" out.txt
}

@test "--append adds to the -o FILE" {
	echo "first line" > out.txt
	run "$SPANSTAT" -o out.txt --append -e task-clock -- true
	assert_success
	run "$SPANSTAT" -o out.txt --append -e page-faults -- true
	assert_success
	assert_equal "$(head -n1 out.txt)" "first line"
	grep -q "task-clock" out.txt
	grep -q "page-faults" out.txt
	run "$SPANSTAT" -o out.txt -e context-switches -- true
	run grep -c "first line" out.txt
	assert_output 0
}

@test "-o into a missing directory fails before the target runs" {
	run "$SPANSTAT" -o no/such/dir/out.txt -- sh -c "touch $BATS_TEST_TMPDIR/ran"
	assert_failure 125
	assert_equal "${#lines[@]}" 1
	assert_output --regexp "^spanstat: cannot write 'no/such/dir/out.txt': No such file or directory$"
	assert_not_exists ran
}

@test "-o onto something unwritable fails before the target runs" {
	mkdir adir
	run "$SPANSTAT" -o adir -- sh -c "touch $BATS_TEST_TMPDIR/ran"
	assert_failure 125
	assert_output --regexp "^spanstat: cannot write 'adir': Is a directory$"
	run "$SPANSTAT" -o /proc/spanstat-test.out -- sh -c "touch $BATS_TEST_TMPDIR/ran"
	assert_failure 125
	assert_output --regexp "^spanstat: cannot write '/proc/spanstat-test.out': "
	assert_not_exists ran
}

@test "a failed run leaves no output file and no temporary file" {
	run "$SPANSTAT" -o out.txt -x, -e task-clock -- ./no-such-command
	assert_failure 127
	assert_not_exists out.txt
	run ls -A
	assert_output ""
}

@test "-x, prints perf's CSV columns" {
	run "$SPANSTAT" -x, -e task-clock,page-faults,cycles -- true
	assert_success
	# value,unit,event,runtime,pcnt-running,metric-value,metric-unit
	assert_line --regexp '^[0-9]+\.[0-9]+,msec,task-clock,[0-9]+,100\.00,[0-9.]+,CPUs utilized$'
	assert_line --regexp '^[0-9]+,,page-faults,[0-9]+,100\.00,[0-9.]+,[KMG]?/sec$'
	assert_line --regexp '^<not supported>,,cycles,0,100\.00,,$'
}

@test "-x with another separator and -r adds the variance column" {
	run "$SPANSTAT" -x ';' -r 2 -e task-clock -- true
	assert_success
	assert_line --regexp '^[0-9]+\.[0-9]+;msec;task-clock;[0-9]+\.[0-9]{2}%;[0-9]+;100\.00;'
}
