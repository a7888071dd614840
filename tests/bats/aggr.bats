#!/usr/bin/env bats
# aggr.bats: perf stat's aggregation modes through the installed binary, each
# against Debian's perf on the same command where perf has the mode: -A (a row
# per CPU), --per-core, --per-die, --per-socket, --per-node and --per-thread
# print the same row names as perf, human and -x CSV, with as many fields per
# CSV line (with -I and -r too); --per-cache (newer perf's) names the caches
# sysfs lists; the rows add up to the totals JSON carries; the refusals are
# one line and 125.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export TARGET
	TARGET=$(build_workload attach_target)
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

teardown() {
	if [ -n "${TPID:-}" ]; then
		kill "$TPID" 2>/dev/null || true
		wait "$TPID" 2>/dev/null || true
	fi
}

# start_target: the two-thread workload, its pid in TPID and worker in TTID
start_target() {
	"$TARGET" >target.out &
	TPID=$!
	for _ in $(seq 100); do
		grep -q '^pid' target.out 2>/dev/null && break
		sleep 0.05
	done
	TTID=$(awk '/^pid/ { print $4 }' target.out)
}

# labels FILE: the first CSV field of each row (the unit's name), sorted, once
labels() {
	grep -v '^#' "$1" | grep -v '^$' | cut -d, -f1 | sort -u
}

# seps FILE: the number of commas of each row, once each
seps() {
	grep -v '^#' "$1" | grep -v '^$' | awk -F, '{ print NF - 1 }' | sort -u
}

# human_labels FILE: the first word of each counter line of a human summary
human_labels() {
	awk '/task-clock|context-switches|page-faults/ { print $1 }' "$1" | sort -u
}

require_perf() {
	require_cmd perf
	timeout 10 perf stat -a -e task-clock -o /dev/null -- true 2>/dev/null ||
		skip_or_fail "perf cannot count system-wide here"
}

@test "-A, --per-core, --per-die, --per-socket, --per-node: perf's rows and CSV fields" {
	require_perf
	local m
	for m in -A --per-core --per-die --per-socket --per-node; do
		run -0 "$SPANSTAT" "$m" -a -x, -e task-clock,context-switches -o s.csv -- sleep 0.2
		run -0 timeout 20 perf stat "$m" -a -x, -e task-clock,context-switches -o p.csv -- sleep 0.2
		cat s.csv p.csv
		[ -n "$(labels s.csv)" ]
		assert_equal "$(labels s.csv)" "$(labels p.csv)"
		assert_equal "$(seps s.csv)" "$(seps p.csv)"
		# every unit has a row of each event
		[ "$(grep -c task-clock s.csv)" -eq "$(labels s.csv | wc -l)" ]
		[ "$(grep -c context-switches s.csv)" -eq "$(labels s.csv | wc -l)" ]
		run -0 "$SPANSTAT" "$m" -a -e task-clock,context-switches -o s.txt -- sleep 0.1
		run -0 timeout 20 perf stat "$m" -a -e task-clock,context-switches -o p.txt -- sleep 0.1
		cat s.txt p.txt
		assert_equal "$(human_labels s.txt)" "$(human_labels p.txt)"
	done
	# perf's CSV test counts: 7 fields per row (6 commas) plain, 8 with -A,
	# 9 with the CPU count of a core, die, socket or node
	run -0 "$SPANSTAT" -A -a -x, -e task-clock -o a.csv -- sleep 0.1
	assert_equal "$(seps a.csv)" 7
	run -0 "$SPANSTAT" --per-socket -a -x, -e task-clock -o b.csv -- sleep 0.1
	assert_equal "$(seps b.csv)" 8
}

@test "-A: a row per CPU online, each CPU's task-clock about the time it counted" {
	run -0 "$SPANSTAT" -A -a -x, -e task-clock -o a.csv -- sleep 0.3
	cat a.csv
	local want
	want=$(for c in /sys/devices/system/cpu/cpu[0-9]*; do
		[ -r "$c/online" ] && [ "$(cat "$c/online")" = 0 ] && continue
		echo "CPU${c##*cpu}"
	done | sort -u)
	assert_equal "$(labels a.csv)" "$want"
	# a CPU's clock runs the whole time, idle or not: about 300 ms each
	awk -F, '{ if ($2 < 150 || $2 > 3000) { print "bad: " $0; exit 1 } }' a.csv
}

@test "-C: only the CPUs listed have rows" {
	run -0 "$SPANSTAT" -A -C 0 -x, -e task-clock -o a.csv -- sleep 0.1
	assert_equal "$(labels a.csv)" CPU0
	run -0 "$SPANSTAT" --per-core -C 0 -x, -e task-clock -o c.csv -- sleep 0.1
	cat c.csv
	[ "$(labels c.csv | wc -l)" -eq 1 ]
	# one CPU in that core's row
	assert_equal "$(cut -d, -f2 c.csv)" 1
}

@test "--per-cache: a row per cache instance of the highest level, named as sysfs says" {
	local want=() c lvl id k top=0
	for c in /sys/devices/system/cpu/cpu[0-9]*; do
		for k in "$c"/cache/index*; do
			[ -r "$k/level" ] || continue
			lvl=$(cat "$k/level")
			[ "$lvl" -gt "$top" ] && top=$lvl
		done
	done
	[ "$top" -gt 0 ] || skip_or_fail "no cache levels in sysfs"
	for c in /sys/devices/system/cpu/cpu[0-9]*; do
		for k in "$c"/cache/index*; do
			[ "$(cat "$k/level" 2>/dev/null)" = "$top" ] || continue
			id=$(cat "$k/id" 2>/dev/null || cut -d, -f1 "$k/shared_cpu_list" | cut -d- -f1)
			want+=("S$(cat "$c/topology/physical_package_id")-D$(cat "$c/topology/die_id" 2>/dev/null || echo 0)-L$top-ID$id")
			break
		done
	done
	run -0 "$SPANSTAT" --per-cache -a -x, -e task-clock -o c.csv -- sleep 0.1
	cat c.csv
	assert_equal "$(labels c.csv)" "$(printf '%s\n' "${want[@]}" | sort -u)"
	# as many fields as --per-core's, the number of CPUs adding up to all
	assert_equal "$(seps c.csv)" 8
	assert_equal "$(awk -F, '{ n += $2 } END { print n }' c.csv)" "${#want[@]}"
	run -0 "$SPANSTAT" --per-cache=L1 -a -e task-clock -o h.txt -- sleep 0.1
	cat h.txt
	grep -qE '^S[0-9]+-D[0-9]+-L1-ID[0-9]+ +1 ' h.txt
}

@test "-I and -r: perf's fields and rows, per interval and over runs" {
	require_perf
	local m
	for m in -A --per-core; do
		run -0 "$SPANSTAT" "$m" -a -I 100 -x, -e task-clock -o s.csv -- sleep 0.35
		run -0 timeout 20 perf stat "$m" -a -I 100 -x, -e task-clock -o p.csv -- sleep 0.35
		cat s.csv p.csv
		assert_equal "$(seps s.csv)" "$(seps p.csv)"
		assert_equal "$(cut -d, -f2 s.csv | sort -u)" "$(grep -v '^#' p.csv | grep -v '^$' | cut -d, -f2 | sort -u)"
		run -0 "$SPANSTAT" "$m" -a -r 2 -x, -e task-clock -o r.csv -- sleep 0.1
		run -0 timeout 20 perf stat "$m" -a -r 2 -x, -e task-clock -o q.csv -- sleep 0.1
		cat r.csv q.csv
		assert_equal "$(seps r.csv)" "$(seps q.csv)"
		assert_equal "$(labels r.csv)" "$(labels q.csv)"
	done
	run -0 "$SPANSTAT" --per-core -a -I 100 -e task-clock -o h.txt -- sleep 0.15
	cat h.txt
	grep -q '^#           time core            cpus             counts' h.txt
}

@test "--per-thread -p: a row per thread, comm-tid, its own counts" {
	require_perf
	start_target
	local comm
	comm=$(cat "/proc/$TPID/comm")
	run -0 "$SPANSTAT" --per-thread -p "$TPID" -x, -e page-faults,task-clock -o s.csv -- \
		sh -c "sleep 0.3; kill -USR1 $TPID; sleep 0.7"
	run -0 timeout 20 perf stat --per-thread -p "$TPID" -x, -e page-faults,task-clock -o p.csv -- sleep 0.2
	cat s.csv p.csv
	assert_equal "$(labels s.csv)" "$(printf '%s\n' "$comm-$TPID" "$comm-$TTID" | sort -u)"
	assert_equal "$(labels s.csv)" "$(labels p.csv)"
	assert_equal "$(seps s.csv)" "$(seps p.csv)"
	# the worker touched 4096 pages; the main thread only waited
	[ "$(awk -F, -v t="$comm-$TTID" '$1 == t && $4 == "page-faults" { print $2 }' s.csv)" -ge 4096 ]
	[ "$(awk -F, -v t="$comm-$TPID" '$1 == t && $4 == "page-faults" { print $2 + 0 }' s.csv)" -lt 1000 ]
	# human: perf's "%16s-%-8d" columns
	run -0 "$SPANSTAT" --per-thread -t "$TTID" -e page-faults -o h.txt -- sleep 0.1
	cat h.txt
	grep -qE "^ +$comm-$TTID +" h.txt
}

@test "--per-thread -a: every thread that counted something, largest first" {
	run -0 "$SPANSTAT" --per-thread -a -x, -e task-clock -o s.csv -- sleep 0.2
	head -5 s.csv
	[ "$(wc -l <s.csv)" -ge 2 ]
	# comm-tid names, counted, sorted by value; the threads that never ran
	# (idle kernel threads, there are always some) left out
	awk -F, '$1 !~ /-[0-9]+$/ || $2 !~ /^[0-9.]+$/ || !($5 > 0) { print "bad: " $0; exit 1 }' s.csv
	cut -d, -f2 s.csv | sort -g -r -c
	[ "$(wc -l <s.csv)" -lt "$(find /proc/[0-9]*/task -maxdepth 1 -name '[0-9]*' 2>/dev/null | wc -l)" ]
}

@test "--per-thread -a: an event no thread counted still shows, <not supported> or 0" {
	# perf leaves such an event out altogether: the user cannot tell it failed
	run -0 "$SPANSTAT" --per-thread -a -x, -e cycles,major-faults,task-clock -o s.csv -- sleep 0.1
	cat s.csv
	[ "$(awk -F, '$4 == "cycles"' s.csv | wc -l)" -ge 1 ]
	awk -F, '$4 == "cycles" && $2 != "<not supported>" && $2 !~ /^[0-9.]+$/ { exit 1 }' s.csv
	[ "$(awk -F, '$4 == "major-faults"' s.csv | wc -l)" -ge 1 ]
	[ "$(awk -F, '$4 == "task-clock"' s.csv | wc -l)" -ge 2 ]
}

@test "--per-thread -r: a thread that slept through a run counted 0 there, in its mean" {
	start_target
	# run 1 makes the worker touch 4096 pages; in run 2 it never runs
	cat >once.sh <<-EOF
		if [ -e did ]; then sleep 0.1; exit 0; fi
		: >did
		kill -USR1 $TPID
		for i in \$(seq 200); do grep -q '^done 1' target.out && exit 0; sleep 0.05; done
		exit 1
	EOF
	run -0 "$SPANSTAT" -r 2 --per-thread -p "$TPID" -e page-faults --json=j.json -- sh once.sh
	local w="(.aggregation.units | map(.tid) | index($TTID))"
	assert_equal "$(jq -r ".runs[1].units[$w].events[0].state" j.json)" "not counted"
	[ "$(jq ".runs[0].units[$w].events[0].raw" j.json)" -ge 4096 ]
	# the mean over both runs, as perf takes it, not over the one it ran in
	assert_equal "$(jq ".aggregation.units[$w].events[0].raw" j.json)" \
		"$(jq "[.runs[].units[$w].events[0].raw] | add / 2 | . + 0.5 | floor" j.json)"
	# so the units' means add up to the totals' mean
	local sum total
	sum=$(jq '[.aggregation.units[].events[0].raw] | add' j.json)
	total=$(jq '.events[0].raw' j.json)
	[ "$((sum - total))" -ge -1 ] && [ "$((sum - total))" -le 1 ]
}

@test "--per-thread: a thread named with a newline and a terminal escape is one row, its bytes as \\xNN" {
	require_cmd python3
	python3 -c 'import ctypes, time
ctypes.CDLL(None).prctl(15, b"\x1b[2Jx\ny", 0, 0, 0)
time.sleep(60)' &
	TPID=$!
	for _ in $(seq 50); do
		grep -q 2J "/proc/$TPID/comm" 2>/dev/null && break
		sleep 0.1
	done
	run -0 "$SPANSTAT" --per-thread -p "$TPID" -x, -e task-clock -o s.csv -- sleep 0.1
	cat -A s.csv
	[ "$(wc -l <s.csv)" -eq 1 ]
	assert_equal "$(cut -d, -f1 s.csv)" "\\x1b[2Jx\\x0ay-$TPID"
	run -0 "$SPANSTAT" --per-thread -p "$TPID" -e task-clock -- sleep 0.1
	assert_output --partial " \\x1b[2Jx\\x0ay-$TPID "
	refute_output --partial $'\e'
}

@test "--json: the rows per unit, adding up to the totals" {
	run -0 "$SPANSTAT" --per-core -a -I 100 -e task-clock,context-switches --json=j.json -x, -o s.csv -- sleep 0.25
	assert_equal "$(jq -r '.aggregation.mode' j.json)" core
	assert_equal "$(jq -r '.aggregation.units[].id' j.json | sort -u)" "$(cut -d, -f2 s.csv | sort -u)"
	# the same reads: the units' raw counts add up to the totals exactly
	local e
	for e in 0 1; do
		assert_equal "$(jq "[.aggregation.units[].events[$e].raw] | add" j.json)" "$(jq ".events[$e].raw" j.json)"
	done
	assert_equal "$(jq '[.aggregation.units[].cpus] | add' j.json)" "$(getconf _NPROCESSORS_ONLN)"
	[ "$(jq '.intervals[0].units | length' j.json)" -eq "$(jq '.aggregation.units | length' j.json)" ]
	[ "$(jq '.runs[0].units | length' j.json)" -eq "$(jq '.aggregation.units | length' j.json)" ]
	run -0 "$SPANSTAT" -e task-clock --no-spans --json=n.json -- true
	assert_equal "$(jq -c '[.aggregation, .runs[0].units]' n.json)" '[{"mode":"global","units":[]},[]]'
}

@test "--no-merge is accepted: each event is one PMU's" {
	run -0 "$SPANSTAT" --no-merge -A -a -x, -e task-clock -o m.csv -- sleep 0.1
	run -0 "$SPANSTAT" -A -a -x, -e task-clock -o n.csv -- sleep 0.1
	assert_equal "$(labels m.csv)" "$(labels n.csv)"
}

@test "refusals: one line, 125, nothing run" {
	local m
	for m in -A --per-core --per-die --per-socket --per-node --per-cache; do
		run -125 "$SPANSTAT" "$m" -e task-clock -- touch ran
		assert_output "spanstat: $m needs -a or -C: it splits the counts of CPUs, as in perf stat"
		[ ! -e ran ]
	done
	run -125 "$SPANSTAT" --per-core -p 1 -- touch ran
	assert_output "spanstat: --per-core needs -a or -C: it splits the counts of CPUs, as in perf stat"
	run -125 "$SPANSTAT" --per-thread -e task-clock -- touch ran
	assert_output "spanstat: --per-thread needs -p, -t or -a: as in perf stat, a COMMAND spanstat starts is counted with its threads together"
	run -125 "$SPANSTAT" --per-thread -C 0 -- touch ran
	assert_output --partial "spanstat: --per-thread needs -p, -t or -a"
	run -125 "$SPANSTAT" -A --per-core -a -- touch ran
	assert_output "spanstat: -A and --per-core cannot be combined: pick one aggregation"
	run -125 "$SPANSTAT" --per-cache=L99 -a -- touch ran
	assert_output --regexp "^spanstat: invalid --per-cache 'L99': the caches here go up to L[0-9]+$"
	run -125 "$SPANSTAT" --per-cache=x -a -- touch ran
	assert_output "spanstat: invalid --per-cache 'x': expected a cache level such as L2, l3 or 3"
	run -125 "$SPANSTAT" record --per-core -a -- touch ran
	assert_output "spanstat: record: --per-core is not an option of 'spanstat record' (see 'spanstat record --help')"
	# a report of --record's file would have the totals only, not the rows
	run -125 "$SPANSTAT" -A -a --record=r.rec -- touch ran
	assert_output "spanstat: -A cannot be kept in a record file: it keeps the totals only, so its report would lose the rows per unit"
	run -125 "$SPANSTAT" --per-thread -a --record=r.rec -- touch ran
	assert_output --partial "spanstat: --per-thread cannot be kept in a record file"
	[ ! -e r.rec ]
	[ ! -e ran ]
}
