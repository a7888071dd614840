#!/usr/bin/env bats
# reportin.bats: what spanstat report (and diff, through the same reader)
# takes as its input files: FIFOs, pipes, /dev/stdin and <(...) are read to
# their end; a directory or a device gets one line; a signal stops a report
# that waits or reads, with 128+N and no output left; a file cut short by
# another process while it is read is an error line or a report, never a
# crash.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export THREADS
	THREADS=$(build_workload span_threads $(span_link_flags))
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	run -0 "$SPANSTAT" record -o r.rec -e task-clock -- "$THREADS"
	run -0 "$SPANSTAT" report --json=file.json r.rec
}

drive() {
	timeout 300 python3 "$BATS_TEST_DIRNAME/readdrive.py" "$@"
}

@test "report: a FIFO, a pipe, /dev/stdin and <(...) are read to their end" {
	mkfifo fifo
	# the writer comes later: the report waits for it, then reads it all
	(sleep 0.2; cat r.rec >fifo) &
	local writer=$!
	run --separate-stderr -0 timeout 60 "$SPANSTAT" report --json=fifo.json fifo
	# this job's own pid: a bare wait would wait for bats' timeout watchdog too
	wait "$writer"
	cmp file.json fifo.json
	run -0 bash -c 'cat r.rec | timeout 60 "$0" report --json=pipe.json /dev/stdin' "$SPANSTAT"
	cmp file.json pipe.json
	run -0 timeout 60 "$SPANSTAT" report --json=redir.json /dev/stdin <r.rec
	cmp file.json redir.json
	run -0 bash -c 'timeout 60 "$0" report --json=subst.json <(cat r.rec)' "$SPANSTAT"
	cmp file.json subst.json
}

@test "report: a stream that is not a record is refused without reading it all" {
	run -125 bash -c 'yes | timeout 60 "$0" report /dev/stdin' "$SPANSTAT"
	assert_output "spanstat: cannot read '/dev/stdin': not a spanstat record file"
	run -125 bash -c ': | timeout 60 "$0" report /dev/stdin' "$SPANSTAT"
	assert_output "spanstat: cannot read '/dev/stdin': not a spanstat record file"
}

@test "report: a directory or a device is one line, not 'Invalid argument'" {
	mkdir dir
	run -125 "$SPANSTAT" report --json=o.json dir
	assert_output "spanstat: cannot read 'dir': is a directory"
	run -125 "$SPANSTAT" report /dev/null
	assert_output "spanstat: cannot read '/dev/null': not a file or a pipe"
	run -125 "$SPANSTAT" report r.rec dir
	assert_output "spanstat: cannot read 'dir': is a directory"
	[ ! -e o.json ]
}

@test "report: SIGINT or SIGTERM stop a report waiting for a FIFO's writer: 128+N, no output" {
	mkfifo fifo
	run -0 drive signal INT fifo "$SPANSTAT" report --json=o.json fifo
	assert_output 130
	run -0 drive signal TERM fifo "$SPANSTAT" report -o o.txt --perfetto=o.pftrace fifo
	assert_output 143
	[ ! -e o.json ] && [ ! -e o.txt ] && [ ! -e o.pftrace ]
	ls -A >list
	assert_equal "$(cat list)" "$(printf 'fifo\nfile.json\nlist\nr.rec')"
}

@test "report: SIGTERM while a large file is read or replayed: 143" {
	drive grow r.rec big.rec 64
	run -0 drive signal TERM big.rec "$SPANSTAT" report --json=o.json big.rec
	assert_output 143
}

@test "report: a file cut short while it is read: an error line or a report, never a signal" {
	drive grow r.rec big.rec 64
	for i in 1 2 3 4 5 6 7 8; do
		cp big.rec x.rec
		run -0 drive truncate 100000 x.rec "$SPANSTAT" report --json=x.json x.rec
		case "${lines[0]}" in
		0) ;;
		125) assert_equal "${lines[1]}" "spanstat: cannot read 'x.rec': it changed while it was read" ;;
		*) fail "report ended with ${lines[0]}: $output" ;;
		esac
	done
	# diff reads a record through the same reader
	for i in 1 2 3; do
		cp big.rec x.rec
		run -0 drive truncate 100000 x.rec "$SPANSTAT" diff r.rec x.rec
		[ "${lines[0]}" -ge 0 ] && [ "${lines[0]}" -le 1 -o "${lines[0]}" -eq 125 ]
	done
}
