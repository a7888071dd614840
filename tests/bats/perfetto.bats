#!/usr/bin/env bats
# perfetto.bats: --perfetto traces through the real binary, each decoded by
# protoc against the schema in tests/perfetto (and the official one beside
# the tree when it is there: tests/perfetto/pf-decode) and replayed the
# way trace_processor reads them: slices per thread with their nesting and
# interned names, pids and tids, instants, counters, -I counter tracks,
# unfinished spans, the clock snapshot, and atomic files.

load helpers
load pfreplay
bats_require_minimum_version 1.5.0

# Without protoc no trace can be decoded: pf_load then skips,
# or fails under CI (SPANSTAT_REQUIRE_ALL=1), with the reason; the checks
# that need no decoding still run.
setup_file() {
	export PF_MISSING=
	if ! command -v protoc >/dev/null 2>&1; then
		PF_MISSING="protoc not installed (Debian package protobuf-compiler)"
	fi
	export THREADS FORK DIE FINSTR SPIN TRUTH LOOP DEEP
	DEEP=$(build_workload span_deep $(span_link_flags))
	TRUTH=$(build_workload span_truth -pthread $(span_link_flags))
	LOOP=$(build_workload span_loop $(span_link_flags))
	THREADS=$(build_workload span_threads $(span_link_flags))
	FORK=$(build_workload span_fork $(span_link_flags))
	DIE=$(build_workload span_die $(span_link_flags))
	FINSTR=$(build_workload span_finstr -finstrument-functions)
	SPIN=$(build_workload spin)
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# slices EV: "count tid thread path unfinished" for every distinct slice,
# sorted as text (compare with `sort <<<"$expected"`).
slices() {
	awk '$1 == "S" { print $4, $5, $6, $7 }' "$1" | sort | uniq -c | awk '{ $1 = $1; print }' | sort
}

# offcpu_args TRACE: "ends annotated sum" of TRACE's slice ends: how many,
# how many carry off_cpu_ns (each with cpu_ns too), and its sum
offcpu_args() {
	awk '/type: TYPE_SLICE_END/ { ends++ }
		/uint_value:/ { v = $2 }
		/name: "off_cpu_ns"/ { n++; s += v }
		/name: "cpu_ns"/ { c++ }
		END { if (c != n) print "cpu_ns", c, "off_cpu_ns", n; else print ends + 0, n + 0, s + 0 }' "$1.txt"
}

@test "on/off-CPU in Perfetto: a slice carries them only when it was switched out, and they sum as in JSON" {
	# span_truth sleeps in three spans; each slice that was switched out
	# carries cpu_ns and off_cpu_ns, and their off-CPU times add up to
	# what the JSON of the same run says, span for span
	run "$SPANSTAT" --perfetto=t.pftrace --json=t.json -- "$TRUTH"
	assert_success
	pf_load t.pftrace
	read -r ends n sum <<<"$(offcpu_args t.pftrace)"
	[ "$ends" -eq 5 ] && [ "$n" -ge 3 ]
	assert_equal "$sum" "$(jq '[.spans.merged.nodes[].off_cpu_ns] | add' t.json)"
	# 200,000 spans that never sleep: almost none was switched out, and
	# those that were not cost the bytes of a span without values
	run "$SPANSTAT" --perfetto=l.pftrace --json=l.json -- "$LOOP" pairs 200000
	assert_success
	pf_load l.pftrace
	read -r ends n sum <<<"$(offcpu_args l.pftrace)"
	[ "$ends" -eq 200000 ] && [ "$n" -lt 2000 ]
	assert_equal "$sum" "$(jq '[.spans.merged.nodes[].off_cpu_ns] | add' l.json)"
	[ "$(stat -c %s l.pftrace)" -lt $((24 * 200000 + 4096)) ]
}

@test "span_threads: one process, five named threads, exact nested slices on each" {
	# shellcheck disable=SC2016 # $$ is the shell's, which execs the target
	run "$SPANSTAT" --perfetto=t.pftrace -e task-clock -- sh -c 'echo $$ >pid; exec "$0"' "$THREADS"
	assert_success
	pf_load t.pftrace
	pid=$(cat pid)
	# one process track, with the target's own pid and name
	run awk '$1 == "P" { print $3, $4 }' t.pftrace.ev
	assert_output "$pid $(basename "$THREADS")"
	# five thread tracks in it: the main thread (tid = pid) and four workers
	run awk '$1 == "T" { print $3, ($4 == $3 ? "main" : "other"), $5 }' t.pftrace.ev
	assert_equal "$(sort <<<"$output")" "$(printf '%s\n' "$pid main main-thread" \
		"$pid other worker-0" "$pid other worker-1" "$pid other worker-2" "$pid other worker-3")"
	assert_equal "$(awk '$1 == "T" { print $4 }' t.pftrace.ev | sort -u | wc -l)" 5
	# every begin has its end, and the slices nest as the workload nests them
	assert_equal "$(grep -c 'TYPE_SLICE_BEGIN' t.pftrace.txt)" 12008
	assert_equal "$(grep -c 'TYPE_SLICE_END' t.pftrace.txt)" 12008
	run slices t.pftrace.ev
	expected="1 $pid main-thread main 0
1 $pid main-thread main;join 0
1 $pid main-thread main;sleep 0
1 $pid main-thread main;spawn 0"
	for w in 0 1 2 3; do
		tid=$(awk -v n="worker-$w" '$1 == "T" && $5 == n { print $4 }' t.pftrace.ev)
		expected="$expected
1 $tid worker-$w work 0
1000 $tid worker-$w work;outer 0
1000 $tid worker-$w work;outer;inner 0
1000 $tid worker-$w work;outer;inner;scoped 0"
	done
	assert_equal "$output" "$(sort <<<"$expected")"
	# names are interned per thread sequence: each name string is sent once
	# per thread that uses it, not per slice
	assert_equal "$(grep -c 'name: "outer"' t.pftrace.txt)" 4
	# one packet sequence for the process and counters, one per thread, each
	# with its own incremental clock and its track as the events' default
	assert_equal "$(awk '$1 == "Q"' t.pftrace.ev | wc -l)" 6
	assert_equal "$(grep -c 'is_incremental: true' t.pftrace.txt)" 5
	assert_equal "$(grep -c 'track_event_defaults' t.pftrace.txt)" 5
}

@test "span_threads: instants are instant events on their thread, counters a counter track" {
	run "$SPANSTAT" --perfetto=t.pftrace -e task-clock -- "$THREADS"
	assert_success
	pf_load t.pftrace
	# 10 "tick" instants on each worker's own track
	run sh -c "awk '\$1 == \"I\" { print \$5, \$6 }' t.pftrace.ev | sort | uniq -c"
	assert_equal "$(awk '{ $1 = $1; print }' <<<"$output")" "10 worker-0 tick
10 worker-1 tick
10 worker-2 tick
10 worker-3 tick"
	assert_equal "$(grep -c 'TYPE_INSTANT' t.pftrace.txt)" 40
	# "progress" is a counter track in the process's group with the 4 x 10
	# values the workers sent
	uuid=$(awk '$1 == "C" && $4 == "progress" { print $2 }' t.pftrace.ev)
	[ -n "$uuid" ]
	ptrack=$(awk '$1 == "P" { print $2 }' t.pftrace.ev)
	run awk -v u="$uuid" '$1 == "C" && $2 == u { print $3 }' t.pftrace.ev
	assert_output "$ptrack"
	run sh -c "awk -v u=$uuid '\$1 == \"V\" && \$2 == u { print \$3 }' t.pftrace.ev | sort -n | uniq -c"
	assert_equal "$(awk '{ $1 = $1; print }' <<<"$output")" "$(for v in 0 100 200 300 400 500 600 700 800 900; do echo "4 $v"; done)"
}

@test "span_fork: parent, child and the exec'd image on their own pids" {
	# shellcheck disable=SC2016 # $$ is the shell's, which execs the target
	run "$SPANSTAT" --perfetto=f.pftrace -e task-clock -- sh -c 'echo $$ >pid; exec "$0"' "$FORK"
	assert_success
	pf_load f.pftrace
	parent=$(cat pid)
	comm=$(basename "$FORK" | cut -c1-15)
	child=$(awk -v p="$parent" '$1 == "S" && $3 != p { print $3; exit }' f.pftrace.ev)
	[ -n "$child" ]
	[ "$child" != "$parent" ]
	run slices f.pftrace.ev
	# the exec'd image keeps the child's pid; "at-exec" was open across exec;
	# a thread is named by its comm (the exec'd image is /proc/self/exe)
	assert_equal "$output" "$(sort <<<"1 $child exe at-exec 1
1 $child exe child 0
3 $child exe child;child-step 0
1 $child exe exec-image 0
2 $child exe exec-image;exec-step 0
1 $parent $comm parent 0
1 $parent $comm parent;fork 0
1 $parent $comm parent;wait 0")"
	# a process track each, each holding its own thread (tid = pid)
	run sh -c "awk '\$1 == \"P\" { print \$3 }' f.pftrace.ev | sort -u"
	assert_output "$(printf '%s\n' "$parent" "$child" | sort)"
	run sh -c "awk '\$1 == \"T\" { print \$3, \$4 }' f.pftrace.ev | sort"
	assert_output "$(printf '%s\n' "$parent $parent" "$child $child" | sort)"
}

@test "span_finstr: -finstrument-functions slices carry function names, static ones too" {
	run "$SPANSTAT" --perfetto=i.pftrace -e task-clock -- "$FINSTR"
	assert_success
	pf_load i.pftrace
	run slices i.pftrace.ev
	assert_equal "$(cut -d' ' -f1,4- <<<"$output")" "$(sort <<<"1 main 0
1 main;run 0
3 main;run;leaf_a 0
2 main;run;mid 0
4 main;run;mid;leaf_b 0
1 main;run;spin 0")"
	# one process, one thread: the target's
	assert_equal "$(awk '$1 == "S" { print $3, $4 }' i.pftrace.ev | sort -u | wc -l)" 1
	assert_equal "$(grep -c 'TYPE_SLICE_BEGIN' i.pftrace.txt)" 12
}

@test "-I 50: each supported perf event is a counter track sampled every interval" {
	run "$SPANSTAT" --perfetto=s.pftrace --json=s.json -I 50 -e task-clock,page-faults,cycles -- "$SPIN" 300
	assert_success
	pf_load s.pftrace
	run sh -c "awk '\$1 == \"C\" { print \$4, \$5 }' s.pftrace.ev | sort"
	assert_output "page-faults UNIT_COUNT
task-clock msec"
	for ev in task-clock page-faults; do
		uuid=$(awk -v n="$ev" '$1 == "C" && $4 == n { print $2 }' s.pftrace.ev)
		n=$(awk -v u="$uuid" '$1 == "V" && $2 == u' s.pftrace.ev | wc -l)
		echo "$ev: $n samples"
		[ "$n" -ge 5 ]
		# one sample per interval of the same run
		assert_equal "$n" "$(jq '.intervals | length' s.json)"
	done
	# the samples are per interval: they add up to the run's count
	uuid=$(awk '$1 == "C" && $4 == "task-clock" { print $2 }' s.pftrace.ev)
	sum=$(awk -v u="$uuid" '$1 == "V" && $2 == u { s += $3 } END { printf "%.3f", s }' s.pftrace.ev)
	total=$(jq '.events[] | select(.name == "task-clock") | .value' s.json)
	echo "samples sum $sum ms, run $total ms"
	awk -v a="$sum" -v b="$total" 'BEGIN { d = a - b; exit !(b >= 250 && d < 0.01 && d > -0.01) }'
}

@test "-I: an interval in which the target did not run is a 0 sample, not a gap" {
	# A counter track holds its last value until the next sample: leaving
	# out the intervals the target slept through would show it busy there.
	# shellcheck disable=SC2016 # "$0" is the shell's first argument
	run "$SPANSTAT" --perfetto=g.pftrace --json=g.json -I 20 -e task-clock -- sh -c 'sleep 0.12; exec "$0" 60' "$SPIN"
	assert_success
	pf_load g.pftrace
	idle=$(jq '[.intervals[].events[] | select(.state != "ok")] | length' g.json)
	echo "$idle of $(jq '.intervals | length' g.json) intervals not counted"
	[ "$idle" -ge 2 ]
	uuid=$(awk '$1 == "C" && $4 == "task-clock" { print $2 }' g.pftrace.ev)
	run awk -v u="$uuid" '$1 == "V" && $2 == u { print ($3 == 0 ? "zero" : "busy") }' g.pftrace.ev
	assert_equal "$(grep -c zero <<<"$output")" "$idle"
	assert_equal "${#lines[@]}" "$(jq '.intervals | length' g.json)"
}

@test "spans open when the target dies are closed and marked unfinished" {
	ulimit -c 0
	run "$SPANSTAT" --perfetto=d.pftrace -e task-clock -- "$DIE" abort
	assert_failure 134
	pf_load d.pftrace
	run slices d.pftrace.ev
	assert_equal "$(cut -d' ' -f1,4- <<<"$output")" "$(sort <<<"1 outer 1
1 outer;done 0
1 outer;inner 1")"
	# the mark is the debug annotation a consumer shows as the slice's arg
	assert_equal "$(grep -c 'name: "unfinished"' d.pftrace.txt)" 2
	# the same for spans left open by exit()
	run "$SPANSTAT" --perfetto=e.pftrace -e task-clock -- "$DIE" exit
	assert_failure 3
	pf_load e.pftrace
	run slices e.pftrace.ev
	assert_equal "$(cut -d' ' -f1,4- <<<"$output")" "$(sort <<<"1 outer 1
1 outer;done 0
1 outer;inner 1")"
}

@test "MONOTONIC timestamps come with a ClockSnapshot that holds BOOTTIME" {
	run "$SPANSTAT" --perfetto=c.pftrace -e task-clock -- "$DIE" exit
	assert_failure 3
	pf_load c.pftrace
	grep -q 'timestamp_clock_id: 3$' c.pftrace.txt
	# the first packet is the snapshot: BOOTTIME and MONOTONIC read together
	# (BOOTTIME runs ahead by the time suspended, and is read first)
	run awk '/^packet/ { n++ } n == 1 && /clock_id:/ { id = $2 } n == 1 && /^      timestamp:/ { print id, $2 }' c.pftrace.txt
	boot=$(awk '$1 == 6 { print $2 }' <<<"$output")
	mono=$(awk '$1 == 3 { print $2 }' <<<"$output")
	echo "BOOTTIME $boot MONOTONIC $mono"
	[ -n "$boot" ]
	[ -n "$mono" ]
	[ "$((boot + 1000000))" -ge "$mono" ]
	[ "$boot" -ge "$(awk '{ printf "%d", $1 * 1e9 - 1e9 }' /proc/uptime)" ]
	# every MONOTONIC timestamp is after the snapshot's (same session)
	first=$(awk '/timestamp_clock_id: 3$/ { print prev; exit } /^  timestamp:/ { prev = $2 }' c.pftrace.txt)
	[ "$first" -ge "$((mono - 1000000000))" ]
}

@test "no trace file after a failed exec, nor a temporary one" {
	run -127 "$SPANSTAT" --perfetto=x.pftrace -e task-clock -- ./no-such-command
	assert_failure 127
	assert_not_exists x.pftrace
	run ls -A
	assert_output ""
}

@test "an unwritable trace path fails with 125 before the target starts" {
	run "$SPANSTAT" --perfetto=no/such/dir/x.pftrace -- sh -c "touch $BATS_TEST_TMPDIR/ran"
	assert_failure 125
	assert_output --regexp "^spanstat: cannot write 'no/such/dir/x.pftrace': No such file or directory$"
	run ls -A
	assert_output ""
}

@test "a trace is complete after success and nothing else is left" {
	run "$SPANSTAT" --perfetto=ok.pftrace -e task-clock -- "$FORK"
	assert_success
	pf_load ok.pftrace
	rm ok.pftrace.txt ok.pftrace.ev
	run ls -A
	assert_output "ok.pftrace"
}

@test "tests/perfetto/pf-decode: the schema the tree keeps must agree with the official one" {
	require_cmd protoc
	run -0 "$SPANSTAT" --perfetto=t.pftrace -- "$THREADS"
	pf=$SRCDIR/tests/perfetto/pf-decode
	# an "official" schema that names a field spanstat writes differently
	mkdir renamed extra
	sed 's/thread_name = 5/name_of_thread = 5/' "$SRCDIR/tests/perfetto/spanstat_trace.proto" \
		>renamed/perfetto_trace.proto
	SPANSTAT_PERFETTO_OFFICIAL=$PWD/renamed run -3 --separate-stderr "$pf" <t.pftrace
	assert_output ''
	[[ $stderr == *"disagree"*"name_of_thread"* ]]
	# a field the kept schema lacks: packet { 99: 5 } after the trace
	sed 's/^message TracePacket {/&\n  optional uint64 extra = 99;/' \
		"$SRCDIR/tests/perfetto/spanstat_trace.proto" >extra/perfetto_trace.proto
	{ cat t.pftrace; printf '\012\003\230\006\005'; } >x.pftrace
	SPANSTAT_PERFETTO_OFFICIAL=$PWD/extra run -0 "$pf" <t.pftrace
	SPANSTAT_PERFETTO_OFFICIAL=$PWD/extra run -3 "$pf" <x.pftrace
	# CI requires the official schema; elsewhere its absence is fine
	SPANSTAT_PERFETTO_OFFICIAL=$PWD/none SPANSTAT_REQUIRE_SHARED=1 run -2 "$pf" <t.pftrace
	SPANSTAT_PERFETTO_OFFICIAL=$PWD/none SPANSTAT_REQUIRE_SHARED= run -0 "$pf" <t.pftrace
	assert_output --partial 'thread_name:'
}

@test "names that are not UTF-8 are written escaped as in JSON, so the trace's strings are valid UTF-8" {
	run "$SPANSTAT" --perfetto=b.pftrace --json=b.json -- "$DEEP" bytes $'arg\xff%'
	assert_success
	pf_load b.pftrace
	# protoc prints bytes past ASCII as octal escapes: only cafe's e-acute,
	# valid UTF-8 that goes as it is
	run grep -c '\\[0-3][0-7][0-7]' b.pftrace.txt
	assert_output 1
	grep -qF 'caf\303\251' b.pftrace.txt
	local n
	for n in 'bad%FF%FE' 'trunc%E2%82' 't%80x'; do
		grep -qF "\"$n\"" b.pftrace.txt || fail "$n is not in the trace"
	done
	# the escaped names are JSON's
	grep -qF '"bad%FF%FE"' b.json
}
