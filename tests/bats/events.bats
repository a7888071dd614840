#!/usr/bin/env bats
# events.bats: event lists in perf's syntax through the real binary: names,
# groups, modifiers, raw events, defaults, errors, and --list.

load helpers
bats_require_minimum_version 1.5.0

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

@test "a pinned group (:D) pins its leader, and every member counts, as in perf" {
	# the kernel refuses a pinned member: only the leader carries it
	run -0 "$SPANSTAT" -x, -o s.csv -e '{cpu-clock,task-clock}:D' -- true
	run -0 awk -F, '{ print $1 }' s.csv
	refute_output --partial 'not supported'
	assert_equal "${#lines[@]}" 2
	if command -v perf >/dev/null; then
		run -0 timeout 60 perf stat -x, -o p.csv -e '{cpu-clock,task-clock}:D' -- true
		run grep -c 'not supported' p.csv
		assert_output 0
	fi
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

@test "tool events: duration_time, user_time and system_time in ns, as perf shows them" {
	require_cmd perf
	local cmd=(sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 0.05')
	run -0 "$SPANSTAT" -x, -o s.csv -e duration_time,user_time,system_time -- "${cmd[@]}"
	run -0 timeout 60 perf stat -x, -o p.csv -e duration_time,user_time,system_time -- "${cmd[@]}"
	# name, unit and running percentage alike; the running time is the value
	# itself, so a time of 0 is <not counted> in both
	for f in s.csv p.csv; do
		run -0 awk -F, '!/^#/ && NF > 3 { print $2, $3, $5, ($1 == "<not counted>" ? $4 == 0 : $1 == $4) }' "$f"
		assert_line --index 0 "ns duration_time 100.00 1"
		assert_line --index 1 "ns user_time 100.00 1"
		assert_line --index 2 "ns system_time 100.00 1"
	done
	# the values are the run's elapsed time and the command's rusage, exactly
	run -0 "$SPANSTAT" --json=t.json -e duration_time,user_time,system_time,task-clock -- "${cmd[@]}"
	run -0 jq -e '(.events | map({(.name): .}) | add) as $e | .rusage as $r
		| $e.duration_time.value == $r.elapsed_ns and $e.duration_time.unit == "ns"
		and $e.user_time.value == $r.user_ns and $r.user_ns > 0
		and (if $r.sys_ns == 0 then $e.system_time.state == "not counted"
			else $e.system_time.value == $r.sys_ns end)
		and $e.duration_time.value >= 50000000' t.json
}

@test "tool events per interval and over repeats; modifiers kept; not per span" {
	run -0 "$SPANSTAT" -x, -o i.csv -I 100 -e duration_time,user_time -- sleep 0.25
	# per interval: the interval's wall time; rusage is known only at the end, as in perf
	run -0 awk -F, '$4 == "duration_time" && $2 > 0 { n++ } $4 == "user_time" && $2 == "<not counted>" { u++ } END { print (n >= 2), (n == u) }' i.csv
	assert_output "1 1"
	run -0 "$SPANSTAT" -x, -o r.csv -r 3 -e duration_time:u -- true
	run -0 awk -F, '$3 == "duration_time:u" && $2 == "ns" && $4 ~ /%$/ { print "ok" }' r.csv
	assert_output ok
	run -125 "$SPANSTAT" --span-events=page-faults,user_time -- touch ran
	assert_equal "${#lines[@]}" 1
	assert_output --regexp "^spanstat: invalid --span-events 'page-faults,user_time': 'user_time' is measured for the whole run"
	assert_not_exists ran
	run -0 "$SPANSTAT" --list _time
	assert_line --regexp '^ +duration_time +tool '
	assert_line --regexp '^ +user_time +tool '
	assert_line --regexp '^ +system_time +tool '
	run -125 "$SPANSTAT" -e duration_tme -- true
	assert_output "spanstat: unknown event 'duration_tme' (did you mean 'duration_time'?)"
}
