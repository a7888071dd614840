#!/usr/bin/env bats
# input.bats: strict, one-line handling of bad input: numbers are digits
# only, control bytes in echoed arguments are escaped, and a closed, full or
# broken standard output is reported in words with the documented status.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# Asserts spanstat failed with 125 and printed exactly one error line.
assert_one_error() {
	assert_failure 125
	assert_equal "${#lines[@]}" 1
	assert_line --index 0 --regexp "^spanstat: "
}

@test "numbers take digits only: leading space, sign, suffix, zero" {
	for bad in ' 5' '+5' '5 ' '5x' '0' '-1' '' '0x10' '1e3'; do
		run "$SPANSTAT" -r "$bad" -- sh -c "touch ran"
		assert_one_error
		assert_output --partial "invalid --repeat '$bad'"
		run "$SPANSTAT" -I "$bad" -- sh -c "touch ran"
		assert_one_error
		assert_output --partial "invalid --interval-print '$bad'"
	done
	assert_not_exists ran
	run "$SPANSTAT" -r 1000001 -- true
	assert_one_error
	assert_output "spanstat: invalid --repeat '1000001': expected a whole number of runs from 1 to 1000000"
	run "$SPANSTAT" -I 86400001 -- true
	assert_one_error
	assert_output "spanstat: invalid --interval-print '86400001': expected milliseconds from 10 to 86400000"
	run "$SPANSTAT" -r 02 -e task-clock -- true
	assert_success
	assert_output --partial "(2 runs)"
}

@test "control bytes in echoed arguments are escaped: every error is one line" {
	esc=$'\x1b'
	run "$SPANSTAT" $'--bad\x1b[31m\nx'
	assert_one_error
	assert_output "spanstat: unknown option '--bad\\x1b[31m\\nx' (see 'spanstat --help')"
	run "$SPANSTAT" -e $'no\nsuch\tevent' -- true
	assert_one_error
	assert_output --partial "'no\\nsuch\\tevent'"
	run -127 "$SPANSTAT" -e task-clock -- $'no\nsuch\rcmd'
	assert_equal "${#lines[@]}" 1
	assert_output "spanstat: cannot run 'no\\nsuch\\x0dcmd': No such file or directory"
	run "$SPANSTAT" -o $'no/such/\x7fdir/out' -- true
	assert_one_error
	assert_output --partial "'no/such/\\x7fdir/out'"
	refute_output --partial "$esc"
}

@test "--help, -V and --list into a closed stdout: one line, exit 125" {
	for args in --help -h -V --version --list; do
		run sh -c '"$0" "$1" >&-' "$SPANSTAT" "$args"
		assert_one_error
		assert_output --regexp "^spanstat: cannot write the (help|version|event list): standard output is closed$"
	done
}

@test "--help, -V and --list into a full stdout: one line, exit 125" {
	for args in --help -V --list; do
		run sh -c '"$0" "$1" >/dev/full' "$SPANSTAT" "$args"
		assert_one_error
		assert_output --regexp "^spanstat: cannot write the (help|version|event list): No space left on device$"
	done
}

@test "--json=- and --folded=- into a closed stdout fail before the target starts" {
	for opt in --json=- --folded=- --perfetto=- -o-; do
		run sh -c '"$0" "$1" -e task-clock -- touch ran >&-' "$SPANSTAT" "$opt"
		assert_one_error
		assert_output --regexp "^spanstat: cannot write (--json|--folded|--perfetto|--output) to standard output: standard output is closed$"
	done
	assert_not_exists ran
}

@test "a closed stdout stays closed for the target" {
	run sh -c '"$0" -e task-clock -o sum.txt -- sh -c "[ -e /proc/\$\$/fd/1 ] && echo fd1=open >&2 || echo fd1=closed >&2" >&-' "$SPANSTAT"
	assert_success
	assert_output "fd1=closed"
}

@test "a broken stdout for --json=- is reported in words; the target's status and the other outputs survive" {
	require_cmd python3
	run python3 - "$SPANSTAT" <<'PY'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)                       # nobody will ever read: writes get EPIPE
p = subprocess.run([sys.argv[1], "--json=-", "-o", "sum.txt", "-e", "task-clock",
                    "--", "sh", "-c", "exit 3"], stdout=w, stderr=subprocess.PIPE)
sys.stdout.write(p.stderr.decode())
print("exit=%d" % p.returncode)
PY
	assert_success
	assert_line --index 0 "spanstat: cannot write --json to standard output: Broken pipe"
	assert_line --index 1 "exit=3"
	grep -q task-clock sum.txt
}

@test "a full stdout for --json=- keeps the summary and gives 125 when the target succeeded" {
	run sh -c '"$0" --json=- -e task-clock -- true >/dev/full' "$SPANSTAT"
	assert_failure 125
	assert_output --partial "task-clock"
	assert_line "spanstat: cannot write --json to standard output: No space left on device"
	run sh -c '"$0" --json=- -e task-clock -- sh -c "exit 4" >/dev/full' "$SPANSTAT"
	assert_failure 4
}
