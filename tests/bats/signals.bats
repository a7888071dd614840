#!/usr/bin/env bats
# signals.bats: every signal whose default action would end spanstat reaches
# the target once (sent to spanstat's pid, or by the terminal), spanstat
# still prints the summary and exits with the target's status, and the target
# is never left running.  tests/bats/sigdrive.py drives each case over the
# sigcount workload; see it for the line each case prints.

load helpers

# Every signal whose default action is to terminate or dump core.
STANDARD="HUP INT QUIT ILL TRAP ABRT BUS FPE USR1 SEGV USR2 PIPE ALRM TERM STKFLT XCPU XFSZ VTALRM PROF IO PWR SYS"

setup() {
	require_cmd python3
	cd "$BATS_TEST_TMPDIR"
	SIGCOUNT=$(build_workload sigcount)
}

# drive MODE SIG...: one line per signal: SIGNO STATUS LOG SUMMARY GONE
drive() {
	python3 "$BATS_TEST_DIRNAME/sigdrive.py" "$SPANSTAT" "$SIGCOUNT" "$@"
}

rt_all() {
	seq "$(kill -l RTMIN)" "$(kill -l RTMAX)"
}

# check_lines WANT_STATUS WANT_LOG: every line of $output has them, the
# summary and the target gone; @ in WANT_LOG stands for the signal.
check_lines() {
	local n=0 sig code log summary gone
	while read -r sig code log summary gone; do
		n=$((n + 1))
		echo "signal $sig: exit $code, target got $log, summary $summary, gone $gone"
		assert_equal "$code" "$1"
		assert_equal "$log" "${2//@/$sig}"
		assert_equal "$summary" 1
		assert_equal "$gone" 1
	done <<<"$output"
	[ "$n" -gt 0 ]
}

@test "each terminating signal sent to spanstat reaches the target once" {
	local rtmax
	rtmax=$(kill -l RTMAX)
	run drive pid USR1 USR2 ALRM PIPE TERM RTMIN
	assert_success
	assert_equal "${#lines[@]}" 6
	check_lines $((128 + rtmax)) "@,$rtmax"
	# shellcheck disable=SC2046
	run drive pid $STANDARD $(rt_all | sed '$d')
	assert_success
	check_lines $((128 + rtmax)) "@,$rtmax"
}

@test "a signal sent with sigqueue() reaches the target with its value" {
	local rtmax
	rtmax=$(kill -l RTMAX)
	run drive queue USR1 TERM RTMIN
	assert_success
	assert_equal "${#lines[@]}" 3
	check_lines $((128 + rtmax)) "@:1234,$rtmax"
}

@test "a target that dies of the relayed signal gives 128+N and the summary" {
	for sig in USR1 USR2 ALRM PIPE TERM INT HUP QUIT RTMIN RTMAX; do
		run drive die "$sig"
		assert_success
		check_lines $((128 + $(kill -l "$sig"))) "@"
	done
}

@test "a signal from the terminal reaches the target once" {
	local rtmax
	rtmax=$(kill -l RTMAX)
	run drive tty INT QUIT
	assert_success
	assert_equal "${#lines[@]}" 2
	check_lines $((128 + rtmax)) "@,$rtmax"
}

@test "spanstat does not relay what the terminal sent" {
	local rtmax
	rtmax=$(kill -l RTMAX)
	# the target left the foreground group: the terminal's signal reaches
	# spanstat alone, which must not pass it on
	run drive ttyalone INT QUIT
	assert_success
	assert_equal "${#lines[@]}" 2
	check_lines $((128 + rtmax)) "$rtmax"
}

@test "a signal sent to the process group reaches the target twice" {
	local rtmax
	rtmax=$(kill -l RTMAX)
	# real-time signals queue: both copies arrive
	# shellcheck disable=SC2046
	run drive group $(rt_all | sed '$d')
	assert_success
	check_lines $((128 + rtmax)) "@,@,$rtmax"
	# a standard signal's two copies merge when the second comes before the
	# target handled the first: once or twice, never more, never lost
	# shellcheck disable=SC2086
	run drive group $STANDARD
	assert_success
	local sig code log summary gone
	while read -r sig code log summary gone; do
		echo "signal $sig: exit $code, target got $log"
		assert_equal "$code" $((128 + rtmax))
		[[ "$log" == "$sig,$rtmax" || "$log" == "$sig,$sig,$rtmax" ]]
		assert_equal "$summary" 1
		assert_equal "$gone" 1
	done <<<"$output"
}

@test "a signal ignored when spanstat starts stays ignored and is not relayed" {
	local rtmax
	rtmax=$(kill -l RTMAX)
	run drive nohup USR1 TERM HUP INT PIPE RTMIN
	assert_success
	check_lines $((128 + rtmax)) "$rtmax"
	# the target inherits it ignored
	rm -f ready
	run python3 -c '
import os, signal, subprocess, sys
signal.signal(signal.SIGUSR1, signal.SIG_IGN)
subprocess.run([sys.argv[1], "-e", "task-clock", "--", sys.argv[2], "log", "ready", "0", "0"],
               stderr=subprocess.DEVNULL, check=True)
print(open("ready").read().split("\n")[1])' "$SPANSTAT" "$SIGCOUNT"
	assert_success
	assert_output --regexp "^ignored:.* $(kill -l USR1)( |$)"
}

@test "a signal that comes before the target starts ends spanstat with 128+N" {
	run drive pre TERM INT USR1 ALRM RTMIN
	assert_success
	local sig code log summary gone
	while read -r sig code log summary gone; do
		[[ "$sig" == spanstat:* ]] && continue
		echo "signal $sig: exit $code, target got $log"
		assert_equal "$code" $((128 + sig))
		assert_equal "$log" "-" # the command never ran
		assert_equal "$summary" 0
	done <<<"$output"
	assert_line "spanstat: cannot run '$SIGCOUNT': interrupted by SIGTERM"
	assert_line "spanstat: cannot run '$SIGCOUNT': interrupted by SIGRTMIN"
	[ "$(grep -c '^spanstat: ' <<<"$output")" -eq 5 ]
}

@test "a signal that comes after the target is reaped: the results are whole, the target's status stays" {
	run drive post TERM USR1 PIPE RTMIN
	assert_success
	assert_equal "${#lines[@]}" 4
	local sig code log summary gone
	while read -r sig code log summary gone; do
		echo "signal $sig: exit $code, summary and JSON whole $summary"
		assert_equal "$code" 7 # the target's own
		assert_equal "$summary" 1
		assert_equal "$gone" 1
	done <<<"$output"
}

@test "a signal between two runs of -r ends the runs with 128+N and the summary" {
	run drive between TERM USR2 RTMIN
	assert_success
	assert_equal "${#lines[@]}" 3
	local sig code log summary gone
	while read -r sig code log summary gone; do
		echo "signal $sig: exit $code, summary of the first run only $summary"
		assert_equal "$code" $((128 + sig))
		assert_equal "$summary" 1
		assert_equal "$gone" 1
	done <<<"$output"
}

@test "spanstat's own SIGPIPE from a broken output is not relayed" {
	local rtmax
	rtmax=$(kill -l RTMAX)
	run drive ownpipe 0
	assert_success
	read -r sig code log summary gone <<<"$output"
	assert_equal "$log" "$rtmax" # no SIGPIPE
	# the -o FIFO failed: the summary went to stderr instead, and the
	# status is the target's (it died of the barrier, SIGRTMAX)
	assert_equal "$code" $((128 + rtmax))
	assert_equal "$summary" 1
	assert_equal "$gone" 1
}

@test "the C library's reserved signals (32 to SIGRTMIN-1) reach the target too" {
	# glibc keeps them for itself: sigaddset() and sigprocmask() refuse
	# them, yet their default action ends a process that has no handler
	# (make starts us with them ignored: rawdefault restores the default)
	local sig tpid code i rawdefault
	rawdefault=$(build_workload rawdefault)
	for ((sig = 32; sig < $(kill -l RTMIN); sig++)); do
		rm -f ready err
		"$rawdefault" "$SPANSTAT" -e task-clock -- \
			sh -c 'echo $$ > ready.tmp; mv ready.tmp ready; exec sleep 60' 2>err &
		local pid=$!
		for ((i = 0; i < 2000; i++)); do [ -s ready ] && break; sleep 0.01; done
		tpid=$(cat ready)
		kill -"$sig" "$pid"
		code=0
		wait "$pid" || code=$?
		local alive=0
		kill -0 "$tpid" 2>/dev/null && alive=1 && kill -KILL "$tpid"
		echo "signal $sig: exit $code, target alive $alive"
		cat err
		assert_equal "$alive" 0
		assert_equal "$code" $((128 + sig))
		grep -q 'task-clock' err || fail "no summary after signal $sig"
	done
}
