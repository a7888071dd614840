#!/usr/bin/env bats
# exit.bats: spanstat's exit status is the target's; 128+N for a signal
# (with the summary still printed); 126/127 when the command cannot run;
# signals sent to spanstat reach the target.

load helpers

setup() {
	cd "$BATS_TEST_TMPDIR"
}

@test "the target's exit status passes through" {
	for code in 0 1 3 42 124 125 255; do
		run "$SPANSTAT" -e task-clock -- sh -c "exit $code"
		assert_equal "$status" "$code"
		assert_output --partial "task-clock"
	done
}

@test "a target killed by a signal gives 128+N and the summary" {
	run "$SPANSTAT" -e task-clock -- sh -c 'kill -SEGV $$'
	assert_equal "$status" 139
	assert_output --partial "task-clock"
	run "$SPANSTAT" -e task-clock -- sh -c 'kill -KILL $$'
	assert_equal "$status" 137
}

@test "a missing command exits 127 with one line" {
	run "$SPANSTAT" -e task-clock -- ./no-such-command
	assert_failure 127
	assert_equal "${#lines[@]}" 1
	assert_output "spanstat: cannot run './no-such-command': No such file or directory"
	run "$SPANSTAT" -- no-such-command-in-path
	assert_failure 127
}

@test "a command that cannot be executed exits 126" {
	printf 'not a program\n' > data.txt
	chmod 644 data.txt
	run "$SPANSTAT" -e task-clock -- ./data.txt
	assert_failure 126
	assert_output --regexp "^spanstat: cannot run './data.txt': Permission denied$"
	run "$SPANSTAT" -e task-clock -- /
	assert_failure 126
}

# Starts spanstat on a long sleep in the background, sends SIG to spanstat.
signal_spanstat() {
	local sig=$1
	python3 - "$SPANSTAT" "$sig" <<'PY'
import os, signal, subprocess, sys, time
spanstat, sig = sys.argv[1], getattr(signal, "SIG" + sys.argv[2])
# a fresh process with default dispositions, as a shell would give it
p = subprocess.Popen([spanstat, "-e", "task-clock", "--", "sleep", "30"],
                     stderr=subprocess.PIPE, restore_signals=True,
                     preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in
                                         (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGTERM)])
time.sleep(0.3)
t = time.monotonic()
os.kill(p.pid, sig)
err = p.communicate(timeout=10)[1].decode()
print(p.returncode, round(time.monotonic() - t, 1))
print(err)
PY
}

@test "SIGTERM, SIGINT, SIGHUP and SIGQUIT sent to spanstat reach the target" {
	require_cmd python3
	for sig in TERM INT HUP QUIT; do
		run signal_spanstat "$sig"
		assert_success
		num=$(kill -l "$sig")
		read -r code secs <<<"${lines[0]}"
		echo "SIG$sig: exit $code after ${secs}s"
		assert_equal "$code" $((128 + num))
		awk -v s="$secs" 'BEGIN { exit !(s < 5) }'
		assert_output --partial "task-clock"
	done
}
