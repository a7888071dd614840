#!/usr/bin/env bats
# cli.bats: the command line itself: help, version, and every kind of bad
# input rejected with one 'spanstat: ...' line, exit 125, target never run.

load helpers

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# The target of a rejected command line: leaves a file if it ever runs.
canary() {
	printf '%s\n' "sh -c 'touch $BATS_TEST_TMPDIR/ran'"
}

assert_rejected() {
	assert_failure 125
	assert_equal "${#lines[@]}" 1
	assert_line --index 0 --regexp "^spanstat: $1"
	assert_not_exists "$BATS_TEST_TMPDIR/ran"
}

@test "--help lists the usage and every option" {
	run "$SPANSTAT" --help
	assert_success
	assert_line --index 0 --partial "Usage: spanstat [OPTIONS] [--] COMMAND"
	for o in --event --repeat --interval-print --field-separator --output --append \
		--spans --folded --folded-threads --json --perfetto --list --help --version; do
		assert_output --partial -- "$o"
	done
}

@test "--version prints the version" {
	run "$SPANSTAT" --version
	assert_success
	assert_output --regexp '^spanstat [0-9]+\.[0-9]+\.[0-9]+$'
}

@test "missing COMMAND is an error" {
	run "$SPANSTAT" -e task-clock
	assert_rejected "missing COMMAND"
	run "$SPANSTAT"
	assert_rejected "missing COMMAND"
}

@test "an unknown option is an error" {
	run "$SPANSTAT" --bogus -- true
	assert_rejected "unknown option '--bogus'"
	run "$SPANSTAT" -Z true
	assert_rejected "unknown option '-Z'"
}

@test "an option without its argument is an error" {
	run "$SPANSTAT" -e
	assert_rejected "option '-e' needs an argument"
}

@test "-r 0, -r abc and -r -1 are errors" {
	for bad in 0 abc -1 1x ''; do
		run "$SPANSTAT" -r "$bad" -- sh -c "touch $BATS_TEST_TMPDIR/ran"
		assert_rejected "invalid --repeat '$bad'"
	done
}

@test "-I below 10 ms is an error" {
	for bad in 1 9 0 abc; do
		run "$SPANSTAT" -I "$bad" -- sh -c "touch $BATS_TEST_TMPDIR/ran"
		assert_rejected "invalid --interval-print '$bad'"
	done
}

@test "options after COMMAND belong to COMMAND" {
	run "$SPANSTAT" -e task-clock -- sh -c 'echo "$@"' sh -e -r 0 --bogus
	assert_success
	assert_line --index 0 -- "-e -r 0 --bogus"
	run "$SPANSTAT" -e task-clock sh -c 'echo "$@"' sh -I 1
	assert_success
	assert_line --index 0 -- "-I 1"
}

@test "--append without --output is an error" {
	run "$SPANSTAT" --append -- sh -c "touch $BATS_TEST_TMPDIR/ran"
	assert_rejected "--append needs --output"
}

@test "two outputs on standard output are an error" {
	run "$SPANSTAT" --folded=- --json=- -- sh -c "touch $BATS_TEST_TMPDIR/ran"
	assert_rejected "--folded and --json cannot both write to standard output"
}

@test "a refusal's hint is a line of its own, not a literal \\n" {
	[ "$(id -u)" = 0 ] || skip "needs root to switch users and set the sysctl"
	local old
	old=$(cat /proc/sys/kernel/perf_event_paranoid)
	echo 2 >/proc/sys/kernel/perf_event_paranoid
	run -125 setpriv --reuid=65534 --regid=65534 --clear-groups "$SPANSTAT" -p 1 -e task-clock -- true
	echo "$old" >/proc/sys/kernel/perf_event_paranoid
	assert_equal "${#lines[@]}" 2
	assert_line --index 0 --regexp "^spanstat: cannot count process id '1': .*perf_event_paranoid is 2"
	assert_line --index 1 --regexp '^hint: '
	refute_output --partial '\n'
}

@test "an output named like an option is refused, nothing run" {
	for opt in --folded --json --perfetto -o --flamegraph; do
		run "$SPANSTAT" "$opt" -- sh -c "touch $BATS_TEST_TMPDIR/ran"
		[ "$opt" = -o ] && opt=--output
		assert_rejected "$opt: '--' looks like an option, not a file name \\(write \\./-- for a file of that name\\)$"
	done
	run "$SPANSTAT" --json -x -e task-clock -- sh -c "touch $BATS_TEST_TMPDIR/ran"
	assert_rejected "--json: '-x' looks like an option"
	run "$SPANSTAT" record -o --spans -- sh -c "touch $BATS_TEST_TMPDIR/ran"
	assert_rejected "--output: '--spans' looks like an option"
	run "$SPANSTAT" report --json --spans x.rec
	assert_rejected "--json: '--spans' looks like an option"
	[ ! -e ./-- ] && [ ! -e ./-x ] && [ ! -e ./--spans ]
	# - itself is standard output, and ./-- a file of that name
	"$SPANSTAT" --json=- -e task-clock -- true 2>/dev/null | jq -e .schema_version >/dev/null
	run -0 "$SPANSTAT" --json ./-- -e task-clock -- true
	jq -e .schema_version ./-- >/dev/null
}

@test "a summary whose -o file cannot be written goes to standard error; the status stays" {
	bats_require_minimum_version 1.5.0
	run --separate-stderr -3 "$SPANSTAT" -o /dev/full -e task-clock -- sh -c 'exit 3'
	[ -z "$output" ]
	[[ "$stderr" == "spanstat: cannot write --output '/dev/full': No space left on device; the summary follows on standard error"$'\n'* ]]
	[[ "$stderr" == *"Performance counter stats for 'sh -c exit 3'"*"seconds time elapsed"* ]]
	# a full file system: the file is not left behind, the summary is not lost
	[ "$(id -u)" = 0 ] || skip "needs root to mount a small tmpfs"
	mkdir full
	mount -t tmpfs -o size=8k none full || skip "cannot mount a tmpfs here"
	dd if=/dev/zero of=full/fill bs=1k count=8 status=none 2>/dev/null || true
	run --separate-stderr -0 "$SPANSTAT" -o full/sum.txt -e task-clock -- true
	ls -A full >list
	umount full
	assert_equal "$(cat list)" fill
	[[ "$stderr" == "spanstat: cannot write --output 'full/sum.txt': No space left on device; the summary follows on standard error"$'\n'* ]]
	[[ "$stderr" == *"Performance counter stats for 'true'"*"seconds time elapsed"* ]]
}
