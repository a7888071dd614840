#!/usr/bin/env bats
# spans.bats: --spans end to end through the installed binary and span
# library: exact span counts per stack path and per name from workloads whose
# structure is fixed (threads, SPANSTAT_SCOPE, fork, exec), the table's place
# after the counter summary, injection by LD_PRELOAD, the library as a no-op
# without spanstat, and the one timing the issue asks for (a 50 ms sleep
# inside a span shows 50 ms within 10%).

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export SPAN_THREADS SPAN_FORK SPAN_FINSTR SPAN_LOOP
	SPAN_THREADS=$(build_workload span_threads $(span_link_flags))
	SPAN_FORK=$(build_workload span_fork $(span_link_flags))
	SPAN_FINSTR=$(build_workload span_finstr -finstrument-functions)
	SPAN_LOOP=$(build_workload span_loop $(span_link_flags))
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# span_counts path|name: "PATH COUNT" (or "NAME COUNT") for every row of the
# span table in $output, counts without thousands separators.
span_counts() {
	awk -v want="$1" '
		/^ Spans by stack path:/ { sec = "path"; next }
		/^ Spans by name:/ { sec = "name"; next }
		/^ span data:/ { sec = ""; next }
		/ count +total +self +mean +wall / { col = length($0) - 3; next }
		sec == want && NF >= 9 && $1 ~ /^[0-9,]+$/ {
			c = $1; gsub(",", "", c)
			p = substr($0, col)
			print p, c
		}' <<<"$output"
}

# span_total_ns PATH: the table's total for stack path PATH, in ns.
span_total_ns() {
	awk -v want="$1" '
		/^ Spans by stack path:/ { sec = 1; next }
		/^ Spans by name:/ { sec = 0 }
		/ count +total +self +mean +wall / { col = length($0) - 3; next }
		sec && substr($0, col) == want {
			m = $3 == "s" ? 1e9 : $3 == "ms" ? 1e6 : $3 == "us" ? 1e3 : 1
			printf "%.0f\n", $2 * m
		}' <<<"$output"
}

# line_of REGEX: the number of the first line of $output matching REGEX.
line_of() {
	grep -n -m1 -E -- "$1" <<<"$output" | cut -d: -f1
}

THREADS_PATHS='main 1
main;join 1
main;sleep 1
main;spawn 1
work 4
work;outer 4000
work;outer;inner 4000
work;outer;inner;scoped 4000'

THREADS_NAMES='inner 4000
join 1
main 1
outer 4000
scoped 4000
sleep 1
spawn 1
work 4'

@test "nested spans in 5 threads: exact counts per stack path and per name" {
	run "$SPANSTAT" --spans -- "$SPAN_THREADS"
	assert_success
	assert_equal "$(span_counts path | sort)" "$THREADS_PATHS"
	assert_equal "$(span_counts name | sort)" "$THREADS_NAMES"
}

@test "SPANSTAT_SCOPE ends with its block; instants and counters add no spans or problems" {
	run "$SPANSTAT" --spans -- "$SPAN_THREADS"
	assert_success
	# "scoped" is closed where scoped_work() returns: nothing nests inside it,
	# and the explicit ends of "inner" and "outer" still match
	refute_output --partial 'span data:'
	refute_output --regexp 'tick|progress'
	run grep 'scoped;' <<<"$(span_counts path)"
	assert_failure 1
}

@test "the span table follows the counter summary, sorted by total" {
	run "$SPANSTAT" --spans -e task-clock,page-faults -- "$SPAN_THREADS"
	assert_success
	head=$(line_of "^ Performance counter stats for '.*span_threads")
	tc=$(line_of 'msec task-clock')
	el=$(line_of 'seconds time elapsed')
	rss=$(line_of 'KiB max RSS')
	bypath=$(line_of '^ Spans by stack path:')
	byname=$(line_of '^ Spans by name:')
	echo "lines: header $head task-clock $tc elapsed $el rss $rss paths $bypath names $byname"
	[ -n "$head" ]
	[ -n "$tc" ]
	[ -n "$el" ]
	[ -n "$rss" ]
	[ "$head" -lt "$tc" ]
	[ "$tc" -lt "$el" ]
	[ "$el" -lt "$bypath" ]
	[ "$rss" -lt "$bypath" ]
	[ "$bypath" -lt "$byname" ]
	assert_output --regexp ' +count +total +self +mean +wall +cpu/call +off-cpu/call +off% +path'
	assert_output --regexp ' +count +total +self +mean +wall +cpu/call +off-cpu/call +off% +name'
	# rows by descending total, in both tables
	awk '/^ Spans by/ { if (n) exit bad; n = 1; prev = -1; next }
		n && $1 ~ /^[0-9,]+$/ && NF >= 9 {
			m = $3 == "s" ? 1e9 : $3 == "ms" ? 1e6 : $3 == "us" ? 1e3 : 1
			t = $2 * m
			if (prev >= 0 && t > prev) { print "not sorted: " $0; bad = 1 }
			prev = t
		}
		END { exit bad }' <<<"$output"
	# main holds the 50 ms sleep: most of the wall time, never more than all
	share=$(awk '/^ Spans by stack path:/ { s = 1 } / count +total +self +mean +wall / { col = length($0) - 3 }
		s && col && substr($0, col) == "main" { sub("%", "", $8); print $8; exit }' <<<"$output")
	echo "main: $share% of wall"
	awk -v p="$share" 'BEGIN { exit !(p >= 50 && p <= 100) }'
}

@test "thread names come from spanstat_thread_name" {
	run --separate-stderr "$SPANSTAT" --folded=- --folded-threads -- "$SPAN_THREADS"
	assert_success
	threads=$(sed -E 's/^[^;]*;([^;]*)-[0-9]+\/[0-9]+;.*/\1/' <<<"$output" | sort -u)
	assert_equal "$threads" "$(printf '%s\n' main-thread worker-0 worker-1 worker-2 worker-3)"
	# the main thread's tid is the pid; five distinct tids in one process
	assert_line --regexp '^span_threads[^;]*-([0-9]+);main-thread-\1/\1;main [0-9]+$'
	assert_equal "$(sed -E 's/^span_threads[^;]*-([0-9]+);[^;]*-\1\/([0-9]+);.*/\2/' <<<"$output" | sort -u | wc -l)" 5
}

@test "a 50 ms nanosleep inside a span shows as 50 ms within 10%" {
	# the only timing assertion (issue 3 asks for it).  Scheduling delays on a
	# shared machine only lengthen the sleep, so the best of 3 runs is taken;
	# a clock that is off (a bad TSC calibration) misses in every run.
	local ok=
	for try in 1 2 3; do
		run --separate-stderr "$SPANSTAT" --spans --folded=- -- "$SPAN_THREADS"
		assert_success
		folded=$(awk '$1 == "main;sleep" { print $2 }' <<<"$output")
		output=$stderr
		table=$(span_total_ns 'main;sleep')
		echo "try $try: folded $folded ns, table $table ns"
		[ -n "$folded" ]
		[ -n "$table" ]
		if awk -v f="$folded" -v t="$table" 'BEGIN {
			exit !(f >= 45e6 && f <= 55e6 && t >= 45e6 && t <= 55e6) }'; then
			ok=1
			break
		fi
	done
	[ -n "$ok" ]
}

@test "--spans without spans says so, keeps the summary and the exit status" {
	run "$SPANSTAT" --spans -- true
	assert_success
	assert_output --regexp "Performance counter stats for 'true'"
	assert_output --partial 'seconds time elapsed'
	# and why: the library ran in it, but nothing began a span
	assert_line --partial ' no spans collected: the command ran with the span library but began no span; spans come from its API (spanstat(3)), a build with -finstrument-functions or -pg'
	assert_line --partial 'without a rebuild, --lib-calls makes its library calls spans, and --python a Python program'
	refute_output --partial 'Spans by'
	run "$SPANSTAT" --spans -- sh -c 'exit 7'
	assert_failure 7
	assert_output --partial 'seconds time elapsed'
	assert_line --partial ' no spans collected: the command ran with the span library'
}

@test "--spans on a statically linked program says the span library never started in it" {
	local st
	st=$(build_workload spin -static) || skip "no static C library here"
	run --separate-stderr "$SPANSTAT" --spans -- "$st"
	assert_success
	run printf '%s\n' "$stderr"
	assert_line ' no spans collected: the span library never started in the command (a statically linked or set-user-ID program ignores LD_PRELOAD); link it dynamically with -lspanstat, or write spans as lines to SPANSTAT_LINES (spanstat-lines(5))'
}

@test "the exit status and summary stay intact with spans collected" {
	run "$SPANSTAT" --spans -- sh -c '"$1"; exit 42' sh "$SPAN_THREADS"
	assert_failure 42
	assert_output --partial 'Performance counter stats for'
	assert_output --partial 'seconds time elapsed'
	assert_equal "$(span_counts path | sort)" "$THREADS_PATHS"
}

@test "-finstrument-functions without linking: spanstat preloads the library" {
	run -0 readelf -d "$SPAN_FINSTR"
	refute_output --partial libspanstat
	run "$SPANSTAT" --spans -- "$SPAN_FINSTR"
	assert_success
	assert_equal "$(span_counts path | sort)" "$(printf '%s\n' 'main 1' 'main;run 1' \
		'main;run;leaf_a 3' 'main;run;mid 2' 'main;run;mid;leaf_b 4' 'main;run;spin 1')"
}

@test "the target's own LD_PRELOAD is kept beside the span library" {
	libm=$(gcc -print-file-name=libm.so.6)
	[ -f "$libm" ]
	# (spanstat itself runs with it too: an ASan build must be told to accept that)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 LD_PRELOAD=$libm \
		run "$SPANSTAT" --spans -- sh -c 'echo "preload=$LD_PRELOAD"'
	assert_success
	assert_output --regexp "preload=.*libspanstat\.so"
	assert_output --regexp "preload=.*$(basename "$libm")"
}

@test "a linked program and a second preloaded copy of the library count once" {
	run -0 readelf -d "$SPAN_THREADS"
	assert_output --partial 'libspanstat.so'
	# link against a private copy so that the preloaded copy is another object
	copy="$BATS_FILE_TMPDIR/libcopy"
	mkdir -p "$copy"
	cp -P "$SPANSTAT_LIBDIR"/libspanstat.so* "$copy/"
	other=$(build_workload span_threads "-L$copy" "-Wl,-rpath,$copy" -lspanstat)
	run "$SPANSTAT" --spans -- "$other"
	assert_success
	assert_equal "$(span_counts path | sort)" "$THREADS_PATHS"
	refute_output --partial 'span data:'
}

@test "fork: parent and child keep their own spans; exec: the new image reconnects" {
	run "$SPANSTAT" --spans -- "$SPAN_FORK"
	assert_success
	# the child's spans are roots of their own, not under the parent's "fork"
	assert_equal "$(span_counts path | sort)" "$(printf '%s\n' 'at-exec  (1 unfinished) 1' 'child 1' \
		'child;child-step 3' 'exec-image 1' 'exec-image;exec-step 2' 'parent 1' \
		'parent;fork 1' 'parent;wait 1')"
	# "at-exec" was open at the exec
	assert_line ' span data: 1 unfinished span closed at exit'
}

@test "fork and exec: the spans carry the right pids" {
	run --separate-stderr "$SPANSTAT" --folded=- --folded-threads -- "$SPAN_FORK"
	assert_success
	pid_of() { awk -v p="$1" '{ n = split($1, f, ";"); s = f[3]; for (i = 4; i <= n; i++) s = s ";" f[i]
		if (s == p) { sub(/^.*-/, "", f[1]); print f[1] } }' <<<"$output"; }
	parent=$(pid_of 'parent;wait')
	child=$(pid_of 'child;child-step')
	image=$(pid_of 'exec-image;exec-step')
	echo "parent $parent, child $child, exec'd image $image"
	[ -n "$parent" ]
	[ -n "$child" ]
	[ "$parent" != "$child" ]
	assert_equal "$image" "$child"
}

@test "64 threads: every pair arrives, each under its own thread" {
	run --separate-stderr "$SPANSTAT" --spans --folded=- --folded-threads -- "$SPAN_LOOP" threads 64 2000
	assert_success
	assert_equal "$(grep -c ';pair ' <<<"$output")" 64
	assert_equal "$(sed -E 's/^[^;]*;[^;]*\/([0-9]+);pair .*/\1/' <<<"$output" | sort -u | wc -l)" 64
	output=$stderr
	assert_equal "$(span_counts path)" 'pair 128000'
	refute_output --partial 'span data:'
}

@test "without spanstat the library is a silent no-op" {
	run "$SPAN_THREADS"
	assert_success
	assert_output ''
	run env LD_PRELOAD="$SPANSTAT_LIBDIR/libspanstat.so.0" "$SPAN_FINSTR"
	assert_success
	assert_output ''
	# variables left behind that name no spanstat pipe change nothing
	run env SPANSTAT_FD=1 SPANSTAT_PIPE_ID=0:0 SPANSTAT_PIPE=/nonexistent SPANSTAT_CLOCK=mono \
		"$SPAN_THREADS"
	assert_success
	assert_output ''
	run env SPANSTAT_FD=2 SPANSTAT_CLOCK=tsc "$SPAN_FORK"
	assert_success
	assert_output ''
}

@test "the span table shows control characters escaped, one row per span" {
	local bin
	bin=$(build_workload span_names $(span_link_flags))
	run "$SPANSTAT" -e task-clock --spans -- "$bin"
	assert_success
	assert_line --regexp ' tab\\x09here\\x0anewline$'
	refute_line --regexp '^newline'
}

@test "a name at two addresses with the same text is one name, aggregated or streamed" {
	local st opts
	st=$(build_workload span_sametext $(span_link_flags))
	for opts in "" --perfetto=s.pftrace; do
		# shellcheck disable=SC2086 # opts is one option or none
		run "$SPANSTAT" --json=s.json --spans $opts -- "$st"
		assert_success
		assert_equal "$(jq -c '[.spans.decode.unmatched, .spans.decode.unfinished]' s.json)" '[0,0]'
		assert_equal "$(jq -c '[.spans.merged.nodes[] | [.depth, .name, .count]]' s.json)" \
			'[[0,"same",5],[1,"in",5]]'
	done
}

@test "the span table says what the instrumentation cost the target, and the JSON too" {
	local opts
	for opts in "" --perfetto=s.pftrace; do
		# shellcheck disable=SC2086 # opts is one option or none
		run "$SPANSTAT" --spans --json=o.json $opts -- "$SPAN_THREADS"
		assert_success
		assert_line --regexp "^ instrumentation: [0-9,]+ events, about [0-9.]+ ns each: [0-9.]+ .s, [0-9]+% of the target's CPU time$"
		# two events per span, one per instant and counter value, exactly
		assert_equal "$(jq '.spans.overhead.events == 2 * .spans.decode.spans + .spans.instants + .spans.counters' o.json)" true
		assert_equal "$(jq '.spans.overhead | .ns_per_event > 0 and .total_ns > 0 and .cpu_fraction > 0' o.json)" true
		assert_equal "$(jq -c '.spans.overhead | [.compensated, .removed_ns]' o.json)" '[false,0]'
	done
}

@test "--compensate takes that cost out of the span times, never below zero, and says so" {
	run "$SPANSTAT" --spans --compensate --json=o.json --folded=o.folded -- "$SPAN_THREADS"
	assert_success
	assert_line --regexp "^ instrumentation: .*; taken out of the span times above \(--compensate: [0-9.]+ .s of self time\)$"
	assert_equal "$(jq '.spans.overhead | .compensated and .removed_ns > 0' o.json)" true
	# every time is still a time: nothing below zero, no self above its total
	assert_equal "$(jq '[.spans.merged.nodes[], .spans.threads[].nodes[]
		| .self_ns >= 0 and .total_ns >= .self_ns] | all' o.json)" true
	# the folded values are the compensated self times
	assert_equal "$(awk '{ s += $NF } END { print s }' o.folded)" \
		"$(jq '[.spans.merged.nodes[] | .self_ns] | add' o.json)"
	# counts are untouched
	run "$SPANSTAT" --spans --compensate -- "$SPAN_THREADS"
	compensated=$(span_counts path | sort)
	run "$SPANSTAT" --spans -- "$SPAN_THREADS"
	assert_equal "$compensated" "$(span_counts path | sort)"
}

@test "--compensate is listed in --help" {
	run "$SPANSTAT" --help
	assert_output --partial '--compensate'
}
