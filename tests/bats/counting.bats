#!/usr/bin/env bats
# counting.bats: real counts on software events: page faults against perf
# stat, task-clock against rusage, inheritance into threads and children,
# repeated runs and interval mode.

load helpers

setup_file() {
	export TOUCH SPIN
	TOUCH=$(build_workload touch)
	SPIN=$(build_workload spin)
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# csv_value EVENT: the value column of EVENT's line in $output (-x, CSV).
csv_value() {
	awk -F, -v e="$1" '$3 == e { print $1 }' <<<"$output"
}

@test "64 MiB touched: at least 16,000 page faults, within 1% of perf stat" {
	require_cmd perf
	run "$SPANSTAT" -x, -e page-faults -- "$TOUCH" 64
	assert_success
	ours=$(csv_value page-faults)
	run perf stat -x, -e page-faults -- "$TOUCH" 64
	assert_success
	theirs=$(csv_value page-faults)
	echo "spanstat $ours, perf $theirs"
	[ "$ours" -ge 16000 ]
	awk -v a="$ours" -v b="$theirs" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b / 100) }'
}

@test "the summary groups thousands and shows rusage" {
	run "$SPANSTAT" -e page-faults -- "$TOUCH" 64
	assert_success
	assert_output --regexp "Performance counter stats for '.*touch.* 64'"
	assert_output --regexp '[1-9][0-9]?[0-9]?,[0-9]{3} +page-faults'
	assert_output --regexp '[0-9]+\.[0-9]+ seconds time elapsed'
	assert_output --regexp '[0-9]+\.[0-9]+ seconds user'
	assert_output --regexp '[0-9]+\.[0-9]+ seconds sys'
	assert_output --regexp '[0-9,]+ KiB max RSS'
}

@test "task-clock agrees with the same run's user+sys" {
	run "$SPANSTAT" -e task-clock -- "$SPIN" 300
	assert_success
	tc=$(awk '/msec task-clock/ { gsub(",", "", $1); print $1 }' <<<"$output")
	user=$(awk '/seconds user/ { print $1 }' <<<"$output")
	sys=$(awk '/seconds sys/ { print $1 }' <<<"$output")
	echo "task-clock ${tc} ms, user $user s, sys $sys s"
	# within 10% or 20 ms, whichever is larger (rusage is tick-sampled)
	awk -v t="$tc" -v u="$user" -v s="$sys" 'BEGIN {
		r = (u + s) * 1000; d = t - r; if (d < 0) d = -d
		tol = r / 10; if (tol < 20) tol = 20; exit !(t >= 250 && d <= tol) }'
}

@test "counts cover the target's threads and child processes" {
	run "$SPANSTAT" -x, -e task-clock -- "$SPIN" 200 2 1
	assert_success
	tc=$(csv_value task-clock)
	echo "task-clock $tc ms for 3 x 200 ms"
	awk -v t="$tc" 'BEGIN { exit !(t >= 540) }'
}

@test "spanstat's own work is not counted" {
	run "$SPANSTAT" -x, -e task-clock,page-faults -- true
	assert_success
	pf=$(csv_value page-faults)
	run perf stat -x, -e page-faults -- true
	theirs=$(csv_value page-faults)
	echo "spanstat $pf, perf $theirs"
	[ "$pf" -le $((theirs + 20)) ]
}

@test "-r N runs N times and prints ( +- x% ) per line" {
	run "$SPANSTAT" -r 3 -e task-clock,page-faults,cycles -- "$TOUCH" 4
	assert_success
	assert_output --partial "(3 runs)"
	assert_output --regexp 'msec task-clock.*\( \+- +[0-9]+\.[0-9]{2}% \)'
	assert_output --regexp 'page-faults.*\( \+- +[0-9]+\.[0-9]{2}% \)'
	assert_output --regexp '<not supported> +cycles'
	assert_output --regexp 'seconds time elapsed'
}

@test "-I prints counts every interval while the command runs" {
	run "$SPANSTAT" -I 100 -e task-clock,page-faults -- "$SPIN" 550
	assert_success
	stamps=$(awk '/msec task-clock/ && $1 ~ /^[0-9]+\.[0-9]+$/ { print $1 }' <<<"$output")
	n=$(wc -l <<<"$stamps")
	echo "$n task-clock interval lines"
	[ "$n" -ge 3 ]
	# one line per interval per event, in time order
	sort -n -c <<<"$stamps"
	assert_equal "$(grep -c 'page-faults' <<<"$output")" "$n"
	assert_output --regexp '^#.*time.*counts'
}

@test "-I with -x prints CSV with a leading timestamp" {
	run "$SPANSTAT" -I 100 -x, -e task-clock -- "$SPIN" 250
	assert_success
	assert_output --regexp '^ *[0-9]+\.[0-9]+,[0-9.]+,msec,task-clock,'
}
