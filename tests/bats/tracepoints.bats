#!/usr/bin/env bats
# tracepoints.bats: tracepoints as -e and --span-events name them, perf's way
# (SYS:EVENT, globs in either part, modifiers, groups), through the installed
# binary and compared with Debian's perf where the counts are exact: writes
# does exactly N write() calls; sched tracepoints are not deterministic and
# are checked for presence and order only.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export WRITES
	WRITES=$(build_workload writes)
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	[ -r /sys/kernel/tracing/events/syscalls/sys_enter_write/id ] ||
		[ -r /sys/kernel/debug/tracing/events/syscalls/sys_enter_write/id ] ||
		skip_or_fail "no readable tracefs with syscall tracepoints"
}

# csv_names FILE: the event names (third field) of -x, output, one a line.
csv_names() {
	awk -F, 'NF >= 3 { print $3 }' "$1"
}

# csv_count FILE NAME: the count (first field) of NAME in -x, output.
csv_count() {
	awk -F, -v n="$2" '$3 == n { print $1 }' "$1"
}

@test "syscalls:sys_enter_write counts exactly the command's writes, as perf does" {
	require_cmd perf
	run -0 "$SPANSTAT" -x, -o s.csv -e syscalls:sys_enter_write -- "$WRITES" 37
	run -0 timeout 60 perf stat -x, -o p.csv -e syscalls:sys_enter_write -- "$WRITES" 37
	assert_equal "$(csv_count s.csv syscalls:sys_enter_write)" 37
	assert_equal "$(csv_count p.csv syscalls:sys_enter_write)" 37
}

@test "globs expand as perf expands them: each a counter, in perf's order" {
	require_cmd perf
	for spec in 'syscalls:sys_enter_wr*' 'sched:sched_s*' 'sy*:sys_*_write' 'sched:sched_switch,syscalls:sys_enter_write*'; do
		run -0 "$SPANSTAT" -x, -o s.csv -e "$spec" -- "$WRITES" 3
		run -0 timeout 60 perf stat -x, -o p.csv -e "$spec" -- "$WRITES" 3
		run -0 csv_names s.csv
		local mine=$output
		run -0 csv_names p.csv
		assert_equal "$mine" "$output"
		[ "$(wc -l <<<"$mine")" -gt 1 ]
	done
	assert_equal "$(csv_count s.csv syscalls:sys_enter_write)" 3
}

@test "modifiers and groups on tracepoints count as perf counts them" {
	require_cmd perf
	for spec in 'syscalls:sys_enter_write:u' 'syscalls:sys_enter_write:k' \
		'{syscalls:sys_enter_write,syscalls:sys_exit_write}' \
		'{syscalls:sys_enter_write,syscalls:sys_exit_write}:u' '{sched:sched_switch,syscalls:sys_*_write}'; do
		run -0 "$SPANSTAT" -x, -o s.csv -e "$spec" -- "$WRITES" 5
		run -0 timeout 60 perf stat -x, -o p.csv -e "$spec" -- "$WRITES" 5
		# perf leaves a group's modifiers out of its members' names
		for n in syscalls:sys_enter_write syscalls:sys_exit_write; do
			run -0 csv_count p.csv "$n"
			local want=$output
			run -0 awk -F, -v n="$n" '$3 == n || $3 == n ":u" || $3 == n ":k" { print $1 }' s.csv
			assert_equal "$output" "$want"
		done
	done
	run -0 csv_names s.csv
	assert_line sched:sched_switch
}

@test "tracepoints work with -I, -r and --json" {
	run -0 "$SPANSTAT" -x, -o i.csv -I 100 -e syscalls:sys_enter_write -- "$WRITES" 11
	run -0 awk -F, '$4 == "syscalls:sys_enter_write" && $2 ~ /^[0-9]+$/ { s += $2 } END { print s }' i.csv
	assert_output 11
	run -0 "$SPANSTAT" -x, -o r.csv -r 3 -e syscalls:sys_enter_write -- "$WRITES" 13
	assert_equal "$(csv_count r.csv syscalls:sys_enter_write)" 13
	run -0 "$SPANSTAT" --json=x.json -e 'syscalls:sys_enter_write,sched:sched_switch' -- "$WRITES" 17
	# --json loads the span library into the command, whose own writes count too
	run -0 jq -e '[.events[] | select(.name == "syscalls:sys_enter_write") | .value >= 17 and .supported] == [true]' x.json
	run -0 jq -e '[.events[] | select(.name == "sched:sched_switch")] | length == 1' x.json
}

@test "an unknown tracepoint is one line naming the closest ones, and nothing runs" {
	run -125 "$SPANSTAT" -e syscalls:sys_enter_writ -- touch ran
	assert_equal "${#lines[@]}" 1
	assert_output --regexp "^spanstat: unknown tracepoint 'syscalls:sys_enter_writ' \(did you mean 'syscalls:sys_enter_write'"
	assert_not_exists ran
	run -125 "$SPANSTAT" -e 'task-clock,sched:nosuch*' -- touch ran
	assert_equal "${#lines[@]}" 1
	assert_output "spanstat: no tracepoint matches 'sched:nosuch*'"
	run -125 "$SPANSTAT" -e syscalls:sys_enter_write:q -- touch ran
	assert_output "spanstat: unknown modifier 'q' in 'syscalls:sys_enter_write:q'"
	assert_not_exists ran
	# a libpfm4 name with a unit mask (upper case) keeps libpfm4's message
	run -125 "$SPANSTAT" -e RETIRED_INSTRUCTONS:ANY -- touch ran
	assert_output --regexp "^spanstat: unknown event 'RETIRED_INSTRUCTONS"
	refute_output --partial tracepoint
	assert_not_exists ran
}

@test "without a readable tracefs, one line says so and what to do" {
	require_cmd unshare
	run timeout 30 unshare -m sh -c 'umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/debug/tracing 2>/dev/null; "$0" -e sched:sched_switch -- touch ran' "$SPANSTAT"
	[ "$status" -ne 1 ] || skip_or_fail "cannot unmount tracefs in a mount namespace here"
	assert_failure 125
	assert_output "spanstat: cannot resolve tracepoint 'sched:sched_switch': no tracefs at /sys/kernel/tracing or /sys/kernel/debug/tracing (mount -t tracefs nodev /sys/kernel/tracing)"
	assert_not_exists ran
	require_cmd setpriv
	[ "$(id -u)" = 0 ] || skip_or_fail "needs root to drop to nobody"
	run timeout 30 setpriv --reuid=nobody --regid=nogroup --clear-groups "$SPANSTAT" -e 'sched:*' -- true
	if [ -r /sys/kernel/tracing/events ] && [ "$status" -ne 125 ]; then
		skip "tracefs is readable by nobody here"
	fi
	assert_failure 125
	assert_output --regexp "^spanstat: cannot resolve tracepoint 'sched:\*': tracefs is not readable: Permission denied"
	# its directories readable, as the line suggests, but not the ids
	# (root's alone): still said so, by name or by glob, never "unknown"
	local mode
	mode=$(stat -c %a /sys/kernel/tracing)
	chmod 755 /sys/kernel/tracing
	local one glob
	one=$(timeout 30 setpriv --reuid=nobody --regid=nogroup --clear-groups "$SPANSTAT" -e syscalls:sys_enter_write -- true 2>&1) || true
	glob=$(timeout 30 setpriv --reuid=nobody --regid=nogroup --clear-groups "$SPANSTAT" -e 'syscalls:sys_enter_write*' -- true 2>&1) || true
	chmod "$mode" /sys/kernel/tracing
	if [ -r /sys/kernel/tracing/events/syscalls/sys_enter_write/id ]; then
		return 0 # the ids are readable by all here
	fi
	[[ $one == "spanstat: cannot resolve tracepoint 'syscalls:sys_enter_write': tracefs is not readable: Permission denied"* ]]
	[[ $glob == "spanstat: cannot resolve tracepoint 'syscalls:sys_enter_write*': tracefs is not readable: Permission denied"* ]]
}

@test "a perf probe dynamic event counts as a tracepoint" {
	require_cmd perf
	local libc group=spanstat_test event="write_$$"
	libc=$(ldd "$WRITES" | awk '/libc\.so/ { print $3 }')
	timeout 60 perf probe -q -x "$libc" -a "$group:$event=write" ||
		skip_or_fail "perf probe cannot add uprobes here"
	run "$SPANSTAT" -x, -o s.csv -e "$group:$event,$group:*" -- "$WRITES" 21
	local st=$status
	run -0 timeout 60 perf stat -x, -o p.csv -e "$group:$event" -- "$WRITES" 21
	timeout 60 perf probe -q -d "$group:$event"
	assert_equal "$st" 0
	run -0 csv_names s.csv
	assert_output "$(printf '%s\n%s' "$group:$event" "$group:$event")"
	assert_equal "$(csv_count p.csv "$group:$event")" 21
	run -0 csv_count s.csv "$group:$event"
	assert_output "$(printf '21\n21')"
}

@test "--span-events: a span making N write() calls shows N syscalls:sys_enter_write" {
	local w
	w=$(build_workload writes -DWITH_SPANS $(span_link_flags))
	run -0 "$SPANSTAT" --json=x.json --span-events=syscalls:sys_enter_write -- "$w" 9 4
	run -0 jq -c '.spans.merged.nodes[] | select(.name == "w") | [.count, .metrics["syscalls:sys_enter_write"]]' x.json
	assert_output '[4,36]'
	run -0 jq -c '[.spans.threads[].nodes[] | select(.name == "w") | .metrics["syscalls:sys_enter_write"]]' x.json
	assert_output '[36]'
}
