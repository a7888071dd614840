#!/usr/bin/env bats
# target.bats: span collection against hostile or odd targets: one that dies
# inside open spans, one that closes every fd before recording, one that
# writes garbage to every fd, bytes that are not records at all, a daemon
# that keeps the span pipe open after the target exits, and a reader that
# stops reading.  Each time: no crash, no hang, the counter summary and the
# exit status intact, the spans that were sent shown.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export SPAN_DIE SPAN_CLOSEFDS SPAN_GARBAGE SPAN_THREADS SPAN_STALL SPAN_LOOP
	SPAN_DIE=$(build_workload span_die $(span_link_flags))
	SPAN_CLOSEFDS=$(build_workload span_closefds $(span_link_flags))
	SPAN_GARBAGE=$(build_workload span_garbage $(span_link_flags))
	SPAN_THREADS=$(build_workload span_threads $(span_link_flags))
	SPAN_STALL=$(build_workload span_stall $(span_link_flags))
	SPAN_LOOP=$(build_workload span_loop $(span_link_flags))
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	ulimit -c 0 # span_die segv/abort: no core files
}

teardown() {
	# a daemon the test left behind (its pid, recorded by the test itself)
	if [ -s daemon.pid ]; then
		kill -- "-$(cat daemon.pid)" 2>/dev/null || kill "$(cat daemon.pid)" 2>/dev/null || true
	fi
}

# span_counts [path|name]: "PATH COUNT" (or "NAME COUNT") for every row of
# the span table in $output, counts without thousands separators.
span_counts() {
	awk -v want="${1:-path}" '
		/^ Spans by stack path:/ { sec = "path"; next }
		/^ Spans by name:/ { sec = "name"; next }
		/^ span data:/ { sec = ""; next }
		/ count +total +self +mean +wall / { col = length($0) - 3; next }
		sec == want && NF >= 9 && $1 ~ /^[0-9,]+$/ { c = $1; gsub(",", "", c); print substr($0, col), c }' <<<"$output"
}

DIE_PATHS='outer  (1 unfinished) 1
outer;done 1
outer;inner  (1 unfinished) 1'

# die_check HOW STATUS: span_die HOW exits with STATUS, the summary is
# printed, and the spans open at death show, closed and counted unfinished.
die_check() {
	run "$SPANSTAT" --spans -- "$SPAN_DIE" "$1"
	assert_failure "$2"
	assert_output --regexp "Performance counter stats for '.*span_die[^ ]* $1'"
	assert_output --partial 'seconds time elapsed'
	assert_equal "$(span_counts | sort)" "$DIE_PATHS"
	assert_line ' span data: 2 unfinished spans closed at exit'
}

@test "dies of SIGABRT inside spans: status 134, the open spans closed and counted" {
	die_check abort 134
}

@test "dies of SIGSEGV inside spans: status 139, the open spans closed and counted" {
	die_check segv 139
}

@test "dies of SIGTERM inside spans: status 143, the open spans closed and counted" {
	die_check term 143
}

@test "exit() inside spans: its status, the open spans closed and counted" {
	die_check exit 3
}

@test "a signal the target ignores stays ignored" {
	# SIG_IGN survives exec: the library must not put its handler over it,
	# so the SIGTERM is ignored and span_die goes on to abort()
	run "$SPANSTAT" --spans -- sh -c 'trap "" TERM; exec "$1" term' sh "$SPAN_DIE"
	assert_failure 134
	assert_equal "$(span_counts | sort)" "$DIE_PATHS"
	assert_line ' span data: 2 unfinished spans closed at exit'
}

@test "spans recorded after close_range() closed every fd still arrive" {
	run "$SPANSTAT" --spans -- "$SPAN_CLOSEFDS" range
	assert_success
	assert_equal "$(span_counts | sort)" "$(printf '%s\n' 'after 1' 'after;step 1000' 'before 1')"
	refute_output --partial 'span data:'
}

@test "spans recorded after closing fds one by one (and reusing them) still arrive" {
	run "$SPANSTAT" --spans -- "$SPAN_CLOSEFDS" loop
	assert_success
	assert_equal "$(span_counts | sort)" "$(printf '%s\n' 'after 1' 'after;step 1000' 'before 1')"
	refute_output --partial 'span data:'
}

@test "garbage written to every fd: one line of bad data, the rest intact" {
	run without_extra_fds sh -c 'exec "$@" </dev/null >target.out 2>&1' sh \
		"$SPANSTAT" -o summary.txt --spans -- "$SPAN_GARBAGE"
	assert_success
	# the target did write its garbage (to stdout and stderr at least)
	[ "$(stat -c %s target.out)" -ge 12000 ]
	# the summary is clean text: the target never had spanstat's -o file
	run -1 env LC_ALL=C grep -c -P '[^\x20-\x7e\t]' summary.txt
	assert_output 0
	run cat summary.txt
	assert_output --partial 'Performance counter stats for'
	assert_output --partial 'seconds time elapsed'
	assert_equal "$(span_counts | sort)" "$(printf '%s\n' 'after-garbage 1' \
		'after-garbage;step 100' 'last 1')"
	assert_equal "$(grep -c 'span data:' summary.txt)" 1
	assert_line --regexp '^ span data: [0-9,]+ bad bytes? skipped'
}

@test "bytes that are no records at all, then real spans: reported, never a crash or a hang" {
	# the shell is preloaded too, so $SPANSTAT_FD is the span pipe here
	run timeout 30 "$SPANSTAT" --spans -- sh -c '
		head -c 300000 /dev/zero | tr "\0" "\377" >&$SPANSTAT_FD
		printf "SPANSTATxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" >&$SPANSTAT_FD
		"$1"; exit 9' sh "$SPAN_THREADS"
	assert_failure 9
	assert_output --partial 'seconds time elapsed'
	assert_output --partial 'main;sleep'
	assert_equal "$(grep -c 'span data:' <<<"$output")" 1
	# all 300,045 bytes accounted for, as skipped bytes or bad records
	bad=$(sed -n -E 's/^ span data: ([0-9,]+) bad bytes skipped.*/\1/p' <<<"$output" | tr -d ,)
	echo "bad bytes: $bad"
	[ -n "$bad" ]
	[ "$bad" -ge 300000 ]
	[ "$bad" -le 300045 ]
}

@test "a daemon child holding the span pipe does not hold spanstat" {
	# the target forks `sleep 30`, which inherits every fd (and the preloaded
	# library, which reconnects), then exits at once
	start=$SECONDS
	run without_extra_fds timeout 15 "$SPANSTAT" --spans -- sh -c \
		'sleep 30 </dev/null >/dev/null 2>&1 & echo $! >daemon.pid; exit 4'
	echo "returned after $((SECONDS - start)) s"
	assert_failure 4
	[ -s daemon.pid ]
	# the daemon is still alive and still holds the pipe: spanstat did not wait
	kill -0 "$(cat daemon.pid)"
	assert_output --partial 'seconds time elapsed'
	assert_line --partial ' no spans collected: '
}

@test "a daemon that records spans after the target exits does not hold spanstat" {
	# the daemon (its own process group, so teardown can end all of it) waits
	# 20 s, then runs a span workload; spanstat must not wait for it
	run without_extra_fds timeout 15 "$SPANSTAT" --spans -- sh -c \
		'setsid sh -c "sleep 20; exec \"\$0\"" "$1" </dev/null >/dev/null 2>&1 &
		echo $! >daemon.pid; exec "$1"' sh "$SPAN_THREADS"
	assert_success
	kill -0 "$(cat daemon.pid)"
	assert_output --partial 'main;sleep'
}

@test "aggregating in the target: a stopped reader costs it nothing and loses nothing" {
	# without a streaming output the target keeps its call trees itself, and
	# spanstat reads them when its threads end: span_stall stops spanstat,
	# records 2M pairs, lets spanstat go on and records 1000 more
	run without_extra_fds timeout 30 "$SPANSTAT" --spans -- "$SPAN_STALL" 2000000 1000
	assert_success
	refute_line --regexp '^ span data:'
	assert_equal "$(span_counts name | awk '$1 == "after" || $1 == "resumed" || $1 == "stalled"' | sort)" \
		"$(printf '%s\n' 'after 1000' 'resumed 1' 'stalled 2000000')"
}

@test "a stopped reader: the target is not blocked, the dropped events are counted" {
	# streaming (--perfetto): span_stall stops spanstat, records 2M pairs
	# (32 MB of events, far more than its ring holds), lets spanstat go on,
	# then records 1000 more
	run without_extra_fds timeout 30 "$SPANSTAT" --spans --perfetto=s.pftrace -- "$SPAN_STALL" 2000000 1000
	assert_success
	assert_line --regexp '^ span data: [0-9,]+ events dropped by the target'
	# every span recorded after the stall arrives
	assert_equal "$(span_counts name | awk '$1 == "after" || $1 == "resumed"' | sort)" \
		"$(printf '%s\n' 'after 1000' 'resumed 1')"
	stalled=$(span_counts name | awk '$1 == "stalled" { print $2 }')
	echo "stalled pairs that arrived: $stalled"
	[ -n "$stalled" ]
	[ "$stalled" -lt 2000000 ]
}

@test "events lost in a stall: spans begun after it do not nest under spans begun before it" {
	# the stall drops events, among them ends of "stalled" spans whose
	# begins arrived; "resumed" is begun with nothing open
	run without_extra_fds timeout 30 "$SPANSTAT" --spans --perfetto=s.pftrace -- "$SPAN_STALL" 2000000 1000
	assert_success
	assert_line --regexp '^ span data: [0-9,]+ events dropped by the target'
	paths=$(span_counts path)
	echo "$paths"
	assert_equal "$(grep -c 'stalled;' <<<"$paths")" 0
	assert_equal "$(awk '$1 == "resumed" || $1 == "resumed;after"' <<<"$paths" | sort)" \
		"$(printf '%s\n' 'resumed 1' 'resumed;after 1000')"
}

@test "a reader stopped for the target's whole life: the drops are reported" {
	# spanstat is stopped before span_loop starts and continued after it
	# ended: only what its ring held arrives (the rest was dropped once the
	# ring stayed full), and the summary must say so rather than show a clean
	# partial count
	run without_extra_fds timeout 30 "$SPANSTAT" --spans --perfetto=s.pftrace -- sh -c \
		'kill -STOP $PPID; "$1" pairs 2000000; kill -CONT $PPID' sh "$SPAN_LOOP"
	assert_success
	pairs=$(span_counts name | awk '$1 == "pair" { print $2 }')
	echo "pairs that arrived: $pairs"
	[ -n "$pairs" ]
	[ "$pairs" -lt 2000000 ]
	assert_line --regexp '^ span data: [0-9,]+ events dropped by the target'
	# the same run, continued while the target still runs: the drops get
	# through (at the latest in its final records, which wait up to 1 s for
	# room) and are counted.  The sleep runs without the library: a
	# preloaded one would itself wait at its exit for the full pipe.
	run without_extra_fds timeout 30 "$SPANSTAT" --spans --perfetto=s.pftrace -- sh -c \
		'kill -STOP $PPID; "$1" pairs 2000000 & env -u LD_PRELOAD sleep 0.2
		kill -CONT $PPID; wait' sh "$SPAN_LOOP"
	assert_success
	assert_line --regexp '^ span data: [0-9,]+ events dropped by the target'
}
