#!/usr/bin/env bats
# statopts.bats: perf stat's run options through the installed binary, each
# against perf stat (Debian's /usr/bin/perf) on the same command where perf
# can run it: -D/--delay, --timeout, --interval-count, -n/--null,
# --pre/--post, -G/--cgroup and --for-each-cgroup (cgroup v2: a cgroup made
# here, a spinning process moved into it, removed in teardown).  No test
# asserts a timing: only wide bounds and comparisons within one test.

load helpers

setup_file() {
	export SPIN LOOP OPEN
	SPIN=$(build_workload spin)
	LOOP=$(build_workload span_loop $(span_link_flags))
	OPEN=$(build_workload span_open $(span_link_flags))
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	CG_DIR= CG_PID=
}

teardown() {
	if [ -n "$CG_PID" ]; then
		kill "$CG_PID" 2>/dev/null || true
		wait "$CG_PID" 2>/dev/null || true
	fi
	if [ -n "$CG_DIR" ] && [ -d "$CG_DIR" ]; then
		# anything left inside goes back to the root before the cgroup goes
		while read -r p; do echo "$p" >"$CG_ROOT/cgroup.procs" 2>/dev/null || true; done <"$CG_DIR/cgroup.procs"
		rmdir "$CG_DIR" 2>/dev/null || true
	fi
}

# csv_value EVENT: the value column of EVENT's line in $output (-x,).
csv_value() {
	awk -F, -v e="$1" '$3 == e { print $1; exit }' <<<"$output"
}

# fields FILE: the number of comma-separated fields of each line, one per line.
fields() {
	awk -F, '{ print NF }' "$1"
}

# bad_input ARGS...: spanstat refuses ARGS in one line, exit 125, and runs
# nothing (the command would have made the file "ran").
bad_input() {
	run "$SPANSTAT" "$@" -- touch ran
	[ "$status" -eq 125 ] || fail "exit $status for $*, expected 125: $output"
	[ "${#lines[@]}" -eq 1 ] || fail "not one line: $output"
	assert_output --regexp '^spanstat: '
	[ ! -e ran ] || fail "the command ran for $*"
}

# --- -D, --delay ---------------------------------------------------------------

@test "-D: the delay's CPU time is not counted; perf's CSV has the same fields" {
	run -0 "$SPANSTAT" -x, -e task-clock -- "$SPIN" 600
	full=$(csv_value task-clock)
	run -0 "$SPANSTAT" -x, -e task-clock -D 300 -- "$SPIN" 600
	delayed=$(csv_value task-clock)
	echo "task-clock without delay $full ms, with -D 300 $delayed ms"
	# 600 ms of CPU; 300 ms of wall time are left out, of which the spinner
	# had some CPU however loaded the machine is
	awk -v f="$full" -v d="$delayed" 'BEGIN { exit !(f >= 500 && d > 0 && d < f - 30) }'
	echo "$output" >ours.csv
	require_cmd perf
	run -0 timeout 60 perf stat -x, -e task-clock -D 300 -o theirs.csv -- "$SPIN" 600
	grep -v -e '^#' -e '^$' theirs.csv >theirs.rows
	diff <(fields ours.csv) <(fields theirs.rows)
}

@test "-D: a command that ends before the delay is <not counted>, as perf says it" {
	run -0 "$SPANSTAT" -x, -e task-clock -D 2000 -- true
	assert_output --regexp '^<not counted>,msec,task-clock,0,'
	require_cmd perf
	run -0 timeout 60 perf stat -x, -e task-clock -D 2000 -- true
	assert_output --partial '<not counted>,msec,task-clock,0,'
}

@test "-D: the JSON says the delay, and the elapsed time leaves it out" {
	run -0 "$SPANSTAT" -e task-clock -D 300 --json=s.json -- sleep 0.6
	run -0 jq -e '.delay_ms == 300 and .timeout_ms == 0 and .interval_count == 0' s.json
	# 600 ms of sleep less 300 of delay: under 550 ms counted however late
	# the command got going
	run -0 jq -e '.rusage.elapsed_ns < 550000000 and .rusage.elapsed_ns > 0' s.json
}

@test "-D: spans cover the whole run, the delay included" {
	run -0 "$SPANSTAT" -D 5000 --json=s.json -- "$LOOP" pairs 1000
	run -0 jq '[.spans.merged.nodes[] | select(.name == "pair") | .count] | add' s.json
	assert_output 1000
}

@test "no -D: the elapsed time covers the command's exec, never less than its task-clock" {
	# one thread cannot have more CPU time than the wall time around it;
	# a few runs, as the exec of 'true' is most of its life
	for _ in 1 2 3; do
		run -0 "$SPANSTAT" -e task-clock --json=s.json -- true
		run -0 jq -e '.rusage.elapsed_ns >= .events[0].raw' s.json
		run -0 "$SPANSTAT" -D 0 -e task-clock --json=s.json -- true
		run -0 jq -e '.rusage.elapsed_ns >= .events[0].raw' s.json
	done
}

@test "-D: the spans' wall shares are of the whole run, the delay included" {
	# "outer" stays open for the command's last 100 ms: over the run less
	# the delay it would be more than all of the wall time
	run -3 "$SPANSTAT" -D 50 --spans --json=s.json -- "$OPEN" exit
	run -0 jq -e '[.spans.merged.nodes[] | select(.name == "outer") | .total_ns][0] as $o
		| $o > 0 and .spans.wall_ns >= $o' s.json
	run -3 "$SPANSTAT" -D 50 --spans -- "$OPEN" exit
	refute_output --regexp '(1[0-9][0-9]|[2-9][0-9][0-9])\.[0-9]%'
	# a record keeps it: its report says the same
	run -3 "$SPANSTAT" -D 50 --record=s.rec -- "$OPEN" exit
	run -0 "$SPANSTAT" report --json=r.json s.rec
	run -0 jq -e '[.spans.merged.nodes[] | select(.name == "outer") | .total_ns][0] as $o
		| $o > 0 and .spans.wall_ns >= $o' r.json
}

@test "-D: bad values are refused in one line, nothing run" {
	bad_input -D -1
	assert_output --partial "invalid --delay '-1'"
	bad_input --delay=abc
	bad_input --delay=86400001
	bad_input --delay=
}

# --- --timeout -----------------------------------------------------------------

@test "--timeout: sleep 10 stopped with SIGTERM, counts printed, exit 0 as perf's" {
	SECONDS=0
	run "$SPANSTAT" -x, -e task-clock --timeout=200 -- sleep 10
	took=$SECONDS
	assert_success
	[ "$took" -lt 8 ] || fail "took $took s"
	assert_output --regexp '^[0-9.]+,msec,task-clock,'
	grep -E '^[0-9.<]' <<<"$output" >ours.csv
	require_cmd perf
	run timeout 60 perf stat -x, -e task-clock --timeout=200 -o theirs.csv -- sleep 10
	[ "$status" -eq 0 ] || fail "perf exited $status"
	grep -v -e '^#' -e '^$' theirs.csv >theirs.rows
	diff <(fields ours.csv) <(fields theirs.rows)
}

@test "--timeout: a command that ends first keeps its own status" {
	run "$SPANSTAT" -e task-clock --timeout=5000 -- sh -c 'exit 3'
	[ "$status" -eq 3 ]
}

@test "--timeout: every -r run is stopped; JSON shows SIGTERM with exit code 0" {
	SECONDS=0
	run -0 "$SPANSTAT" -r 2 -e task-clock --timeout=200 --json=s.json -- sleep 10
	[ "$SECONDS" -lt 8 ]
	assert_output --partial "(2 runs)"
	run -0 jq -e '.timeout_ms == 200 and .runs_completed == 2 and
		([.runs[].exit | .signal == 15 and .exit_code == 0] | all)' s.json
}

@test "--timeout: a system-wide count without a command ends by itself" {
	SECONDS=0
	run -0 timeout 20 "$SPANSTAT" -a -x, -e task-clock --timeout=300
	[ "$SECONDS" -lt 8 ]
	assert_output --regexp '^[0-9.]+,msec,task-clock,'
}

@test "--timeout: bad values and -I are refused, as perf refuses them" {
	bad_input --timeout=5
	assert_output --partial "invalid --timeout '5'"
	bad_input --timeout=x
	bad_input --timeout=100 -I 100
	require_cmd perf
	run timeout 60 perf stat --timeout=5 -e task-clock -- true
	assert_failure
	run timeout 60 perf stat --timeout=100 -I 100 -e task-clock -- true
	assert_failure
}

# --- --interval-count ------------------------------------------------------------

@test "--interval-count: N intervals and no more, as perf prints them; the command runs on" {
	run -0 "$SPANSTAT" -x, -I 100 --interval-count=2 -e task-clock -- sleep 0.8
	ours=$(grep -c 'task-clock' <<<"$output")
	[ "$ours" -eq 2 ] || fail "$ours interval lines: $output"
	grep -E '^ *[0-9]' <<<"$output" >ours.csv
	require_cmd perf
	run -0 timeout 60 perf stat -x, -I 100 --interval-count=2 -e task-clock -o theirs.csv -- sleep 0.8
	grep -v -e '^#' -e '^$' theirs.csv >theirs.rows
	[ "$(wc -l <theirs.rows)" -eq 2 ]
	diff <(fields ours.csv) <(fields theirs.rows)
	# the command was not stopped: it ran to its end
	run -0 "$SPANSTAT" -I 100 --interval-count=1 -e task-clock --json=s.json -- sh -c 'sleep 0.5; touch done'
	[ -e done ]
	run -0 jq -e '.exit.signal == null and (.intervals | length) == 1 and .interval_count == 1' s.json
}

@test "--interval-count: a system-wide count without a command ends after N" {
	SECONDS=0
	run -0 timeout 20 "$SPANSTAT" -a -x, -I 100 --interval-count=3 -e task-clock
	[ "$SECONDS" -lt 8 ]
	[ "$(grep -c task-clock <<<"$output")" -eq 3 ]
}

@test "--interval-count: refused without -I and for bad values" {
	bad_input --interval-count=2
	assert_output --partial "needs -I"
	bad_input -I 100 --interval-count=0
	bad_input -I 100 --interval-count=two
}

# --- -n, --null ------------------------------------------------------------------

@test "-n: only the times, as perf's null run prints them; CSV prints nothing, as perf's" {
	run -0 "$SPANSTAT" -n -- sleep 0.1
	assert_output --regexp 'seconds time elapsed'
	refute_output --partial 'task-clock'
	refute_output --partial 'msec'
	run -0 "$SPANSTAT" -n -x, -- sleep 0.1
	assert_output ''
	require_cmd perf
	run -0 timeout 60 perf stat -n -x, -- sleep 0.1
	assert_output ''
	run -0 timeout 60 perf stat -n -- sleep 0.1
	assert_output --regexp 'seconds time elapsed'
	refute_output --partial 'msec'
}

@test "-n -r 3: the elapsed time's mean and spread, as perf's" {
	run -0 "$SPANSTAT" -n -r 3 -- sleep 0.05
	assert_output --partial "(3 runs)"
	assert_output --regexp '[0-9.]+ \+- [0-9.]+ seconds time elapsed'
	require_cmd perf
	run -0 timeout 60 perf stat -n -r 3 -- sleep 0.05
	assert_output --regexp '[0-9.]+ \+- [0-9.]+ seconds time elapsed'
}

@test "-n: the JSON has no events; spans still come" {
	run -0 "$SPANSTAT" -n --json=s.json -- "$LOOP" pairs 100
	run -0 jq -e '(.events | length) == 0 and (.runs[0].events | length) == 0' s.json
	run -0 jq '[.spans.merged.nodes[] | select(.name == "pair") | .count] | add' s.json
	assert_output 100
}

@test "-n: not with -e or -I" {
	bad_input -n -e task-clock
	bad_input -n -I 100
}

# --- --pre, --post -----------------------------------------------------------------

@test "--pre and --post run around each run, as perf runs them" {
	run -0 "$SPANSTAT" -r 2 -x, -e task-clock --pre='echo pre >>log' --post='echo post >>log' \
		-- sh -c 'echo run >>log'
	run cat log
	assert_output "$(printf 'pre\nrun\npost\npre\nrun\npost')"
	require_cmd perf
	rm log
	run -0 timeout 60 perf stat -r 2 -x, -e task-clock --pre='echo pre >>log' --post='echo post >>log' \
		-- sh -c 'echo run >>log'
	run cat log
	assert_output "$(printf 'pre\nrun\npost\npre\nrun\npost')"
}

@test "--pre and --post: their time is in no count" {
	run -0 "$SPANSTAT" -x, -e task-clock --json=s.json --pre="$SPIN 300" --post="$SPIN 300" -- true
	tc=$(csv_value task-clock)
	echo "task-clock $tc ms"
	awk -v t="$tc" 'BEGIN { exit !(t < 300) }'
	run -0 jq -e '.rusage.elapsed_ns < 500000000' s.json
}

@test "--pre failing: one line, exit 125, the command never runs, nothing written" {
	run "$SPANSTAT" -e task-clock --json=s.json --pre='exit 3' -- touch ran
	[ "$status" -eq 125 ]
	assert_output "spanstat: --pre 'exit 3' failed: exit status 3"
	[ ! -e ran ]
	[ ! -e s.json ]
}

@test "--post failing: one line, exit 125" {
	run "$SPANSTAT" -e task-clock --post='false' -- touch ran
	[ "$status" -eq 125 ]
	assert_output "spanstat: --post 'false' failed: exit status 1"
	[ -e ran ]
	rm ran
	bad_input --pre=
}

# --- -G, --cgroup, --for-each-cgroup -------------------------------------------------

# cg_setup: a cgroup of our own on the hierarchy perf_event counts in (the
# cgroup v2 mount, where perf_event is no v1 controller), with a process
# spinning in it: CG_NAME, CG_DIR, CG_ROOT, CG_PID.
cg_setup() {
	[ "$(id -u)" -eq 0 ] || skip_or_fail "making a cgroup needs root"
	CG_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
	[ -n "$CG_ROOT" ] || skip_or_fail "no cgroup2 mount"
	if awk '$3 == "cgroup" && $4 ~ /(^|,)perf_event(,|$)/ { f = 1 } END { exit !f }' /proc/self/mounts; then
		skip_or_fail "perf_event is bound to a cgroup v1 hierarchy here"
	fi
	CG_NAME=spanstat-bats-$$-$BATS_TEST_NUMBER
	CG_DIR=$CG_ROOT/$CG_NAME
	mkdir "$CG_DIR"
	sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" 60000' _ "$CG_DIR" "$SPIN" &
	CG_PID=$!
	for _ in $(seq 50); do
		grep -qx "$CG_PID" "$CG_DIR/cgroup.procs" && break
		sleep 0.1
	done
	grep -qx "$CG_PID" "$CG_DIR/cgroup.procs"
}

@test "-a -G: only the cgroup's tasks are counted, as perf stat -a -G counts them" {
	cg_setup
	run -0 "$SPANSTAT" -a -x, -e task-clock,task-clock -G "$CG_NAME," -- sleep 1
	echo "$output" >ours.csv
	in_cg=$(awk -F, -v g="$CG_NAME" '$3 == "task-clock" && $4 == g { print $1 }' ours.csv)
	all=$(awk -F, '$3 == "task-clock" && $4 == "" { print $1 }' ours.csv)
	echo "in the cgroup $in_cg ms, everywhere $all ms"
	# the spinner had some CPU in that second; everything had more
	awk -v c="$in_cg" -v a="$all" 'BEGIN { exit !(c > 50 && a > c) }'
	require_cmd perf
	run -0 timeout 60 perf stat -a -x, -e task-clock,task-clock -G "$CG_NAME," -o theirs.csv -- sleep 1
	grep -v -e '^#' -e '^$' theirs.csv >theirs.rows
	diff <(fields ours.csv) <(fields theirs.rows)
	diff <(cut -d, -f2-4 ours.csv) <(cut -d, -f2-4 theirs.rows)
	theirs=$(awk -F, -v g="$CG_NAME" '$4 == g { print $1 }' theirs.rows)
	echo "perf: in the cgroup $theirs ms"
	awk -v t="$theirs" 'BEGIN { exit !(t > 50) }'
}

@test "-a -G with one name: every event in it, the human output with perf's cgroup column" {
	cg_setup
	run -0 "$SPANSTAT" -a -e task-clock,context-switches -G "$CG_NAME" -- sleep 0.3
	assert_output --regexp "msec task-clock +$CG_NAME "
	assert_output --regexp "context-switches +$CG_NAME"
	require_cmd perf
	run -0 timeout 60 perf stat -a -e task-clock,context-switches -G "$CG_NAME" -- sleep 0.3
	assert_output --regexp "msec task-clock +$CG_NAME "
	assert_output --regexp "context-switches +$CG_NAME"
}

@test "--for-each-cgroup: every event once per cgroup, in order, as perf; JSON names them" {
	cg_setup
	run -0 "$SPANSTAT" -a -x, -e task-clock --for-each-cgroup="$CG_NAME,/" --json=s.json -- sleep 0.3
	run cut -d, -f3,4 <<<"$output"
	assert_output "$(printf 'task-clock,%s\ntask-clock,/' "$CG_NAME")"
	run -0 jq -r '[.events[].cgroup] | join(" ")' s.json
	assert_output "$CG_NAME /"
	require_cmd perf
	run -0 timeout 60 perf stat -a -x, -e task-clock --for-each-cgroup="$CG_NAME,/" -- sleep 0.3
	run cut -d, -f3,4 <<<"$output"
	assert_output "$(printf 'task-clock,%s\ntask-clock,/' "$CG_NAME")"
}

@test "--for-each-cgroup -A -I: each unit's interval rows name their cgroup and add up to its total" {
	cg_setup
	run -0 "$SPANSTAT" -a -A -I 100 -e task-clock --for-each-cgroup="$CG_NAME,/" --json=s.json -- sleep 0.35
	run -0 jq -r '[.intervals[0].units[0].events[].cgroup] | join(" ")' s.json
	assert_output "$CG_NAME /"
	# per unit and cgroup, the intervals add up to the unit's total
	run -0 jq -r '.aggregation.units[] as $u | $u.events[] as $e
		| [$u.id, $e.cgroup, $e.raw,
		   ([.intervals[].units[] | select(.id == $u.id) | .events[]
		     | select(.name == $e.name and .cgroup == $e.cgroup) | .raw] | add)]
		| @tsv' s.json
	echo "$output"
	[ "$(wc -l <<<"$output")" -eq $((2 * $(getconf _NPROCESSORS_ONLN))) ]
	awk -F'\t' '$3 != $4 { exit 1 }' <<<"$output"
}

@test "-G and --for-each-cgroup: bad uses refused in one line, nothing run" {
	bad_input -e task-clock -G foo
	assert_output --partial "needs -a or -C"
	bad_input -a -G foo -e task-clock
	assert_output --partial "-e before -G"
	bad_input -a -e task-clock -G a,b
	bad_input -a --for-each-cgroup=a,,b
	bad_input -a -e task-clock -G a --for-each-cgroup=b
	bad_input -a -e task-clock -G a --record=x.rec
	[ ! -e x.rec ]
	bad_input -a -e task-clock -G no-such-cgroup-here
	assert_output --partial "cannot open cgroup 'no-such-cgroup-here'"
}

@test "-G and --for-each-cgroup: '..' out of the hierarchy is refused, not counted as <not supported>" {
	# the parent of the cgroup mount is no cgroup: the kernel says EBADF,
	# which must not pass for an event it does not support
	bad_input -a -x, -e task-clock -G ..
	assert_output --partial "invalid cgroup '..'"
	bad_input -a -x, -e task-clock -G x/../..
	bad_input -a -x, -e task-clock --for-each-cgroup=/,..
	assert_output --partial "invalid cgroup '..'"
}

@test "-G: a cgroup that does not open is refused before --pre runs" {
	bad_input -a -e task-clock -G no-such-cgroup-here --pre='touch pre'
	assert_output --partial "cannot open cgroup 'no-such-cgroup-here'"
	[ ! -e pre ] || fail "--pre ran for a bad cgroup"
	bad_input -a -e task-clock --for-each-cgroup=/,no-such-cgroup-here --pre='touch pre'
	[ ! -e pre ] || fail "--pre ran for a bad cgroup"
}
