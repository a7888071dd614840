#!/usr/bin/env bats
# attach.bats: counting tasks spanstat did not start (-p, -t, -a, -C), through
# the installed binary, against perf stat's numbers for the same process:
# every thread of a process and only the threads named, bounded by a
# COMMAND, by the processes' end or by SIGINT; system-wide; rusage left out
# and said so; the errors name the target.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export TARGET
	TARGET=$(build_workload attach_target)
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	"$TARGET" >target.out &
	TPID=$!
	for _ in $(seq 100); do
		grep -q '^pid' target.out 2>/dev/null && break
		sleep 0.05
	done
	TTID=$(awk '/^pid/ { print $4 }' target.out)
}

teardown() {
	kill "$TPID" 2>/dev/null || true
	wait "$TPID" 2>/dev/null || true
}

# faults FILE: the page-faults count of a summary, separators removed
faults() {
	awk '/page-faults/ { gsub(",", "", $1); print $1; exit }' "$1"
}

# poke N: N rounds of 4096 page faults in the target, each awaited
poke() {
	local want
	for _ in $(seq "$1"); do
		want=$(($(ndone) + 1))
		kill -USR1 "$TPID"
		for _ in $(seq 250); do
			[ "$(ndone)" -lt "$want" ] || break
			sleep 0.02
		done
	done
}

ndone() {
	grep -c '^done' target.out || true
}

@test "-p: every thread of a running process, counted as perf stat counts it" {
	require_cmd perf
	"$SPANSTAT" -p "$TPID" -e page-faults,task-clock -o s.txt -- sleep 2 &
	local s=$!
	perf stat -p "$TPID" -e page-faults,task-clock -o p.txt -- sleep 2 &
	local p=$!
	sleep 0.5
	poke 2
	wait "$s"
	wait "$p"
	cat s.txt p.txt
	grep -q "Performance counter stats for process id '$TPID'" s.txt
	sf=$(faults s.txt)
	pf=$(faults p.txt)
	# two rounds of 4096 pages, in the worker thread: both see them
	[ "$sf" -ge 8192 ]
	[ "$pf" -ge 8192 ]
	[ $((sf > pf ? sf - pf : pf - sf)) -le 200 ]
	grep -q 'rusage are not known for tasks spanstat did not start' s.txt
	run -1 grep -e 'max RSS' -e 'seconds user' s.txt
}

@test "-t: only the threads named" {
	run -0 "$SPANSTAT" -t "$TPID" -e page-faults -o main.txt -- sh -c "sleep 0.3; kill -USR1 $TPID; sleep 0.7"
	run -0 "$SPANSTAT" -t "$TTID" -e page-faults -o worker.txt -- sh -c "sleep 0.3; kill -USR1 $TPID; sleep 0.7"
	cat main.txt worker.txt
	grep -q "thread id '$TPID'" main.txt
	# the faults are the worker's: the main thread only waits
	[ "$(faults main.txt)" -lt 1000 ]
	[ "$(faults worker.txt)" -ge 4096 ]
}

@test "a task or CPU named twice counts once: -p PID,PID, -p PID,TID, -t TID,TID, -C 0,0" {
	local how
	for how in "-p $TPID,$TPID" "-p $TPID,$TTID" "-t $TTID,$TTID"; do
		# shellcheck disable=SC2086
		run -0 "$SPANSTAT" $how -e page-faults -o f.txt -- sh -c "sleep 0.3; kill -USR1 $TPID; sleep 0.7"
		cat f.txt
		[ "$(faults f.txt)" -ge 4096 ]
		[ "$(faults f.txt)" -lt 8000 ]
	done
	run -0 "$SPANSTAT" -C 0,0,0 -e task-clock -x, -o c.txt -- sleep 0.3
	cat c.txt
	# one CPU's clock: about 300 ms, not 900
	[ "$(awk -F, '/task-clock/ { printf "%d", $1 }' c.txt)" -lt 600 ]
}

@test "-p without a COMMAND: until the process exits, or until SIGINT; the JSON says so" {
	"$SPANSTAT" -p "$TPID" -e page-faults --json=j.json -o a.txt &
	local s=$!
	sleep 0.5
	poke 1
	kill -TERM "$TPID"
	wait "$s"
	[ "$(faults a.txt)" -ge 4096 ]
	assert_equal "$(jq -r '.target' j.json)" "process id '$TPID'"
	assert_equal "$(jq -c '[.command, .rusage.user_ns, .rusage.max_rss_kib]' j.json)" '[[],null,null]'
	[ "$(jq '.rusage.elapsed_ns' j.json)" -gt 400000000 ]
	# a second target: SIGINT ends the count, and the summary still comes
	"$TARGET" >t2.out &
	local t2=$!
	sleep 0.2
	# (a background job starts with SIGINT ignored: give it back)
	env --default-signal=INT "$SPANSTAT" -p "$t2" -e task-clock -o b.txt &
	s=$!
	sleep 0.5
	kill -INT "$s"
	wait "$s"
	grep -q "process id '$t2'" b.txt
	grep -q 'seconds time elapsed' b.txt
	# SIGTERM too
	"$SPANSTAT" -p "$t2" -e task-clock -o c.txt &
	s=$!
	sleep 0.3
	kill -TERM "$s"
	wait "$s"
	grep -q 'seconds time elapsed' c.txt
	kill "$t2"
}

@test "-t without a COMMAND: the count ends when the thread does, not at the next second" {
	require_cmd python3
	# a thread that is not its process's leader, alive for 0.3 s more
	python3 -c '
import threading, time, sys
t = threading.Thread(target=time.sleep, args=(0.6,))
t.start()
print(t.native_id, flush=True)
time.sleep(5)' >th.out &
	local py=$!
	for _ in $(seq 100); do
		[ -s th.out ] && break
		sleep 0.05
	done
	sleep 0.3
	run -0 timeout 10 "$SPANSTAT" -t "$(cat th.out)" -e task-clock --json=t.json -o t.txt
	kill "$py"
	# seen through a PIDFD_THREAD pidfd, not found missing from /proc a
	# second later
	[ "$(jq '.rusage.elapsed_ns' t.json)" -lt 700000000 ]
}

@test "-a and -C: every task on the CPUs, with -I and -x" {
	run -0 "$SPANSTAT" -a -e task-clock,context-switches -- sleep 0.3
	assert_output --partial "Performance counter stats for 'system wide'"
	# task-clock over 2 CPUs for 0.3 s: about 0.6 s of CPU time counted
	tc=$(awk '/task-clock/ { print $1; exit }' <<<"$output")
	awk -v t="$tc" 'BEGIN { exit !(t > 300) }'
	run -0 "$SPANSTAT" -C 0 -x, -I 100 -e context-switches -- sleep 0.35
	[ "$(grep -c ',context-switches' <<<"$output")" -ge 3 ]
	run -0 "$SPANSTAT" -C 0 -e task-clock -- sleep 0.1
	assert_output --partial "'CPU(s) 0'"
}

@test "bad targets: no such process, bad lists, offline CPUs, spans and -r refused" {
	run -125 "$SPANSTAT" -p 99999999999 -- true
	assert_output "spanstat: invalid --pid '99999999999': expected ids separated by commas"
	run -125 "$SPANSTAT" -p 4194300 -- true
	assert_output "spanstat: cannot count process 4194300: No such process"
	run -125 "$SPANSTAT" -p 12x -- true
	assert_output "spanstat: invalid --pid '12x': expected ids separated by commas"
	run -125 "$SPANSTAT" -C 9999 -- true
	assert_output "spanstat: invalid --cpu '9999': CPU 9999 is not online"
	run -125 "$SPANSTAT" -p " $TPID" -- true
	assert_output "spanstat: invalid --pid ' $TPID': expected ids separated by commas"
	run -125 "$SPANSTAT" -C "0, 1" -- true
	assert_output "spanstat: invalid --cpu '0, 1': expected CPUs such as 0,2-3"
	run -125 "$SPANSTAT" -C 1-0 -- true
	assert_output "spanstat: invalid --cpu '1-0': expected CPUs such as 0,2-3"
	run -125 "$SPANSTAT" -p "$TPID" --spans -- true
	assert_output "spanstat: span collection needs a COMMAND that spanstat starts, not -p, -t, -a or -C"
	run -125 "$SPANSTAT" -p "$TPID" -r 3
	assert_output "spanstat: -r repeats a COMMAND: with -p, -t, -a or -C it needs one to bound each run"
	run -125 "$SPANSTAT" -p "$TPID" -a -- true
	assert_output "spanstat: -p, -t and -a or -C cannot be combined: count one kind of target"
	run -125 "$SPANSTAT"
	assert_output "spanstat: missing COMMAND (see 'spanstat --help')"
}

@test "a process of another user, under perf_event_paranoid 2: the refusal explained" {
	[ "$(id -u)" = 0 ] || skip "needs root to switch users and set the sysctl"
	local old
	old=$(cat /proc/sys/kernel/perf_event_paranoid)
	echo 2 >/proc/sys/kernel/perf_event_paranoid
	run -125 setpriv --reuid=65534 --regid=65534 --clear-groups "$SPANSTAT" -p 1 -e task-clock -- true
	echo "$old" >/proc/sys/kernel/perf_event_paranoid
	assert_output --partial "cannot count process id '1': "
	assert_output --partial "perf_event_paranoid"
}
