#!/usr/bin/env bats
# record.bats: spanstat record, spanstat report and --record through the
# installed binary: a live run's outputs and those reported later from its
# own record file are the same bytes; damaged files report what is left and
# say what was lost; bad input gets one line and status 125.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export METRICS THREADS FORK DIE GARBAGE MIXED EXITW LOOP
	LOOP=$(build_workload span_loop $(span_link_flags))
	METRICS=$(build_workload span_metrics $(span_link_flags))
	THREADS=$(build_workload span_threads $(span_link_flags))
	FORK=$(build_workload span_fork $(span_link_flags))
	DIE=$(build_workload span_die $(span_link_flags))
	GARBAGE=$(build_workload span_garbage $(span_link_flags))
	MIXED=$(build_workload span_lines_mixed $(span_link_flags))
	EXITW=$(build_workload span_exit $(span_link_flags))
}

# The record types of a file, one per line, in order, repeats squeezed.
rec_types() {
	python3 -c '
import struct,sys
d=open(sys.argv[1],"rb").read(); o=16; last=None
while o+12<=len(d):
    t,l,c=struct.unpack_from("<III",d,o)
    if t!=last: print(t)
    last=t; o+=12+l' "$1"
}

# live_vs_report [-N] ARGS...: a live run (status N, default 0) with
# --record and the trace outputs, its record holding the raw capture (RAW
# blocks, no EVENTS), and the report of it: the same bytes.
live_vs_report() {
	local want=0
	if [[ $1 == -[0-9]* ]]; then
		want=${1#-}
		shift
	fi
	# (the garbage workload writes to every descriptor it has: only its own)
	run without_extra_fds sh -c 'exec "$@" </dev/null >target.out 2>&1' sh \
		"$SPANSTAT" --record=r.rec -o live.txt --spans --json=live.json --perfetto=live.pftrace \
		--folded=live.folded --flamechart=live.fc.svg "$@"
	assert_equal "$status" "$want"
	run -0 rec_types r.rec
	assert_line 14
	refute_line 4
	run -0 "$SPANSTAT" report -o rep.txt --json=rep.json --perfetto=rep.pftrace \
		--folded=rep.folded --flamechart=rep.fc.svg r.rec
	for x in txt json pftrace folded fc.svg; do
		cmp "live.$x" "rep.$x"
	done
	# and with the replay in threads of their own
	run -0 "$SPANSTAT" report -j 3 --json=rep3.json --perfetto=rep3.pftrace r.rec
	cmp live.json rep3.json
	cmp live.pftrace rep3.pftrace
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

@test "record: live outputs and the report of their own record file are the same bytes" {
	run -0 "$SPANSTAT" --record=r.rec -o live.txt --spans --json=live.json --folded=live.folded \
		--perfetto=live.pftrace --pprof=live.pb.gz --flamegraph=live.fg.svg \
		--flamechart=live.fc.svg -e task-clock,page-faults --span-events=page-faults \
		--span-allocs -r 2 -I 100 -- "$METRICS" threads
	run -0 "$SPANSTAT" report -o rep.txt --json=rep.json --folded=rep.folded \
		--perfetto=rep.pftrace --pprof=rep.pb.gz --flamegraph=rep.fg.svg \
		--flamechart=rep.fc.svg r.rec
	for x in txt json folded pftrace pb.gz fg.svg fc.svg; do
		cmp "live.$x" "rep.$x"
	done
	# and they hold what the run did: two runs, the faults of touch, samples
	assert_equal "$(jq '.runs | length' rep.json)" 2
	assert_equal "$(jq '[.intervals[]] | length > 0' rep.json)" true
	faults=$(jq '[.spans.threads[].nodes[] | select(.name == "touch") | .metrics["page-faults"]] | add' rep.json)
	[ "$faults" -ge 60000 ]
	grep -q 'Spans by stack path' rep.txt
}

@test "record: report prints the summary and span table on stdout; the target's status stays" {
	run -0 "$SPANSTAT" record -o r.rec -e task-clock,page-faults -r 2 -- "$THREADS"
	assert_output --partial "[ spanstat record: wrote"
	assert_output --partial "'r.rec' ]"
	run --separate-stderr -0 "$SPANSTAT" report r.rec
	assert_output --partial "Performance counter stats for '$THREADS' (2 runs):"
	assert_output --partial 'page-faults'
	assert_output --partial 'Spans by stack path'
	[ -z "$stderr" ]
	run -3 "$SPANSTAT" record -o s.rec -- sh -c 'exit 3'
	[ -s s.rec ]
	run -0 "$SPANSTAT" report --json=s.json s.rec
	assert_equal "$(jq .exit.exit_code s.json)" 3
	assert_equal "$(jq -c .command s.json)" '["sh","-c","exit 3"]'
}

@test "record: the default file, %r in its name, and 'spanstat -- record' runs a program" {
	run -0 "$SPANSTAT" record -- true
	[ -s spanstat.rec ]
	OMPI_COMM_WORLD_RANK=3 run -0 "$SPANSTAT" record -o 'run.%r.rec' -- true
	[ -s run.3.rec ]
	mkdir bin
	printf '#!/bin/sh\necho the record program\n' >bin/record
	chmod +x bin/record
	PATH="$PWD/bin:$PATH" run -0 "$SPANSTAT" -- record
	assert_output --partial 'the record program'
	assert_output --partial "Performance counter stats for 'record'"
}

@test "record: outputs belong to report, measurement options to record" {
	run -125 "$SPANSTAT" record --json=x.json -- true
	assert_output "spanstat: record: --json is an option of 'spanstat report', which makes the outputs from the record file"
	[ ! -e x.json ]
	# named as written, also when the file is a word of its own
	run -125 "$SPANSTAT" record --folded x.folded -- true
	assert_output "spanstat: record: --folded is an option of 'spanstat report', which makes the outputs from the record file"
	run -125 "$SPANSTAT" record -x , -- true
	assert_output --partial "record: -x is an option of 'spanstat report'"
	# an option of neither: each points to its own help, not to the other
	run -125 "$SPANSTAT" record --record=x.rec -- true
	assert_output "spanstat: record: --record is not an option of 'spanstat record' (see 'spanstat record --help')"
	run -125 "$SPANSTAT" report --record=x.rec r.rec
	assert_output "spanstat: report: --record is not an option of 'spanstat report' (see 'spanstat report --help')"
	run -125 "$SPANSTAT" record --bogus -- true
	assert_output "spanstat: unknown option '--bogus' (see 'spanstat record --help')"
	run -125 "$SPANSTAT" --help=x
	assert_output "spanstat: option '--help' takes no argument"
	run -0 "$SPANSTAT" record -o r.rec -- true
	run -125 "$SPANSTAT" report -e cycles r.rec
	assert_output "spanstat: report: -e is an option of the measurement ('spanstat record'), not of the report"
	run -125 "$SPANSTAT" report
	assert_output "spanstat: report: missing FILE (see 'spanstat report --help')"
	run -0 "$SPANSTAT" report --help
	assert_output --partial 'Usage: spanstat report [OPTIONS] FILE...'
	run -0 "$SPANSTAT" record --help
	assert_output --partial 'Usage: spanstat record'
}

@test "record: a failed recording leaves no file and an existing one intact" {
	echo precious >r.rec
	run -125 "$SPANSTAT" record -o r.rec -e no-such-event -- true
	assert_equal "$(cat r.rec)" precious
	run -127 "$SPANSTAT" record -o r.rec -- ./no-such-command
	assert_equal "$(cat r.rec)" precious
	run -125 "$SPANSTAT" record -o q.rec -e no-such-event -- true
	[ ! -e q.rec ]
	ls -A >list
	assert_equal "$(cat list)" "$(printf 'list\nr.rec')"
}

@test "report: bad files get one line and 125; an output never replaces its record" {
	run -125 "$SPANSTAT" report missing.rec
	assert_output "spanstat: cannot read 'missing.rec': No such file or directory"
	echo '{"a": 1}' >j.json
	run -125 "$SPANSTAT" report j.json
	assert_output "spanstat: cannot read 'j.json': not a spanstat record file"
	: >empty.rec
	run -125 "$SPANSTAT" report empty.rec
	assert_output "spanstat: cannot read 'empty.rec': not a spanstat record file"
	run -0 "$SPANSTAT" record -o r.rec -- "$THREADS"
	cp r.rec v.rec
	printf '\x09' | dd of=v.rec bs=1 seek=8 conv=notrunc status=none
	run -125 "$SPANSTAT" report v.rec
	assert_output "spanstat: cannot read 'v.rec': record file version 9 (this spanstat reads versions 1 to 4)"
	cp r.rec keep.rec
	run -125 "$SPANSTAT" report --json=r.rec r.rec
	assert_output "spanstat: report: --json 'r.rec' is the record file 'r.rec'"
	cmp r.rec keep.rec
	run -0 "$SPANSTAT" record -o other.rec -e page-faults -- true
	run -125 "$SPANSTAT" report r.rec other.rec
	assert_output "spanstat: report: 'other.rec' counted other events or span values than 'r.rec': report them apart"
}

@test "report: a truncated or damaged file reports what is left and says what was lost" {
	# enough spans for several blocks of the capture (64 KiB each, packed)
	run -0 "$SPANSTAT" record -o r.rec -- "$LOOP" pairs 200000
	run -0 "$SPANSTAT" report --json=whole.json r.rec
	whole=$(jq '[.spans.threads[].nodes[].count] | add' whole.json)
	size=$(stat -c %s r.rec)
	# cut in the middle: the events before the cut remain, the runs' counts are lost
	head -c $((size / 2)) r.rec >half.rec
	run --separate-stderr -0 "$SPANSTAT" report --json=half.json half.rec
	[[ "$stderr" == *"spanstat: report: 'half.rec' is damaged:"*"bytes cut off at the end, the recording's end is missing; reporting what is left"* ]]
	[[ "$stderr" == *"spanstat: report: 'half.rec': the counts of 1 run are lost"* ]]
	half=$(jq '[.spans.threads[].nodes[].count] | add' half.json)
	[ "$half" -gt 0 ]
	[ "$half" -lt "$whole" ]
	# what the cut took is unknown, not zero (the spans before it are real)
	jq -e '.runs_requested == 1 and .runs_completed == 0 and .runs == []' half.json
	jq -e '.events[0] | .state == "unknown" and .value == null and .raw == null and .time_enabled_ns == null' half.json
	jq -e '[.rusage[]] + [.exit[]] + [.elapsed[]] | all(. == null)' half.json
	jq -e '.spans.decode | del(.untracked) | [.[]] | all(. == null)' half.json
	jq -e '.spans.overhead.events == null' half.json
	run -0 "$SPANSTAT" report half.rec
	assert_line --regexp "^ Performance counter stats for '.*' \(0 of 1 run\):$"
	assert_line --regexp '^ +- seconds time elapsed$'
	assert_line --regexp '^ +- KiB max RSS$'
	assert_line --regexp '^ +- / - page faults \(minor / major\)$'
	refute_line --regexp '^ +0\.000000000 seconds'
	assert_line " span data: what the target dropped or sent damaged is not known (the recording's end is lost)"
	# a flipped byte inside a block of events in the middle (not the first,
	# which holds the process's start and names): that block is lost, the
	# rest stays
	cp r.rec flip.rec
	off=$(python3 -c '
import struct,sys
d=open("r.rec","rb").read(); o=16; blocks=[]
while o+12<=len(d):
    t,l,c=struct.unpack_from("<III",d,o)
    if t in (4,14): blocks.append(o+12+l//2)
    o+=12+l
print(blocks[len(blocks)//2])')
	printf '\xff' | dd of=flip.rec bs=1 seek="$off" conv=notrunc status=none
	run --separate-stderr -0 "$SPANSTAT" report --json=flip.json flip.rec
	# one line: the block the bad record was is the one missing
	assert_equal "$stderr" "spanstat: report: 'flip.rec' is damaged: 1 bad record (1 of span events), 0 bytes cut off at the end; reporting what is left"
	assert_equal "$(jq '.runs | length' flip.json)" 1
	flip=$(jq '[.spans.threads[].nodes[].count] | add' flip.json)
	[ "$flip" -lt "$whole" ]
}

@test "diff: record files are inputs as JSON documents are" {
	run -0 "$SPANSTAT" record -o a.rec -e task-clock -r 3 -- "$THREADS"
	run -0 "$SPANSTAT" record -o b.rec -e task-clock -r 3 -- "$THREADS"
	run -0 "$SPANSTAT" report --json=b.json b.rec
	run "$SPANSTAT" diff --json=d.json a.rec b.rec
	[ "$status" -le 1 ]
	assert_output --partial "Comparing 'a.rec' (3 runs) with 'b.rec' (3 runs)"
	assert_equal "$(jq '[.items[] | select(.name == "task-clock")] | length' d.json)" 1
	assert_equal "$(jq '[.items[] | select(.field == "total_ns")] | length > 0' d.json)" true
	run "$SPANSTAT" diff a.rec b.json
	[ "$status" -le 1 ]
	head -c 100 a.rec >cut.rec
	run -125 "$SPANSTAT" diff cut.rec b.rec
	assert_output --partial "spanstat: cannot read 'cut.rec': its head is damaged"
}

@test "report: several files merge: ranks side by side, one trace, pids apart" {
	for r in 0 1 2; do
		OMPI_COMM_WORLD_RANK=$r run -0 "$SPANSTAT" record -e task-clock -o "job.$r.rec" -- "$THREADS"
	done
	run --separate-stderr -0 "$SPANSTAT" report --json=job.json job.0.rec job.1.rec job.2.rec
	assert_output --partial "(3 ranks):"
	assert_output --partial " Across 3 ranks"
	assert_output --partial " Span paths across 3 ranks (total time):"
	assert_equal "$(jq -c '[.ranks.ranks[].rank]' job.json)" '[0,1,2]'
	assert_equal "$(jq -c '[.ranks.ranks[].file]' job.json)" '["job.0.rec","job.1.rec","job.2.rec"]'
	assert_equal "$(jq '.runs | length' job.json)" 3
	assert_equal "$(jq '.ranks.counters[0].name' job.json)" '"task-clock"'
	jq -e '.ranks.spans[] | select(.path == ["work"]) | .count.min > 0 and .total_ns.max >= .total_ns.mean and .total_ns.mean >= .total_ns.min and .total_ns.imbalance >= 0 and .total_ns.imbalance < 1' job.json
	# the processes of each rank keep their own pids and say whose they are
	assert_equal "$(jq '[.spans.threads[].pid] | unique | length' job.json)" 3
	jq -e '[.spans.threads[].process_name] | map(test("^rank [0-2] \\(")) | all' job.json
	run -0 "$SPANSTAT" report --json=one.json job.0.rec
	assert_equal "$(jq -c .ranks.ranks one.json)" "[]"
}

@test "report: a strings record naming ids far beyond the file is damage, not memory" {
	run -0 "$SPANSTAT" record -o r.rec -- "$THREADS"
	# 4 billion ids from a few bytes: once a 16 GB table and half a minute
	python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec big.rec add:2:4000000000,0
	run --separate-stderr timeout 20 "$SPANSTAT" report --json=big.json big.rec
	assert_equal "$status" 0
	[[ "$stderr" == *"'big.rec' is damaged: 1 bad record (0 of span events), 0 bytes cut off at the end; reporting what is left"* ]]
	jq -e '[.spans.threads[].nodes[] | select(.name == "work")] | length > 0' big.json
}

@test "report: span depths deeper than any recording nests are damage" {
	# a window keeps decoded events (EVENTS), whose depths a file can lie about
	run -0 "$SPANSTAT" record --keep-last=1G -o r.rec -- "$THREADS"
	python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec deep.rec ev:depth=100000
	python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec wide.rec ev:depth=2147483647
	# a flame chart 16 million pixels high, and int overflow in its height
	run -0 "$SPANSTAT" report --flamechart=deep.svg deep.rec
	height=$(grep -o 'height="[0-9]*"' deep.svg | head -1 | tr -dc 0-9)
	[ "$height" -lt 100000 ]
	run -0 "$SPANSTAT" report --flamechart=wide.svg wide.rec
	height=$(grep -o 'height="[0-9]*"' wide.svg | head -1 | tr -dc 0-9)
	[ "$height" -lt 100000 ]
}

@test "report: a name shown as no text is skipped, not 'Cannot allocate memory'" {
	run -0 "$SPANSTAT" record -o r.rec -- "$THREADS"
	# a NAMES record after the real one (the reader keeps the last): name 1 as text 0
	python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec names.rec add:3:1,1,0,0,0
	run --separate-stderr -0 "$SPANSTAT" report --json=names.json names.rec
	[ -z "$stderr" ]
	jq -e '[.spans.threads[].nodes[] | select(.name == "work")] | length > 0' names.json
}

@test "diff: a record on standard input, a pipe or <(...) is read whole, never another file of its name" {
	run -0 "$SPANSTAT" record -r 3 -o a.rec -e task-clock -- "$THREADS"
	run -0 "$SPANSTAT" record -r 3 -o b.rec -e task-clock -- true
	"$SPANSTAT" diff --json=byname.json a.rec b.rec >/dev/null || true
	# a file named - beside: stdin's record is compared, not that file
	cp a.rec ./-
	"$SPANSTAT" diff --json=stdin.json b.rec - <b.rec >/dev/null || true
	assert_equal "$(jq -c '[.status, .verdict]' stdin.json)" '[0,"same"]'
	"$SPANSTAT" diff --json=fifo.json <(cat a.rec) <(cat b.rec) >/dev/null || true
	"$SPANSTAT" diff --json=pipe.json - b.rec <a.rec >/dev/null || true
	# the same comparison whatever the inputs were
	for f in fifo.json pipe.json; do
		assert_equal "$(jq -c '[.status, .verdict, [.items[] | .old.mean]]' "$f")" \
			"$(jq -c '[.status, .verdict, [.items[] | .old.mean]]' byname.json)"
	done
	"$SPANSTAT" report --json=a.json a.rec >/dev/null
	# a JSON document on stdin too
	run -0 "$SPANSTAT" diff a.rec - <a.json
}

@test "report: --compensate takes the cost out of the ranks' span paths too" {
	run -0 "$SPANSTAT" record -o r.rec -- "$THREADS"
	for c in "" --compensate; do
		run -0 "$SPANSTAT" report $c --json=j.json r.rec r.rec
		# two ranks of the same recording: each rank's total is half the table's
		ranks=$(jq '[.ranks.spans[] | select(.path == ["work"]) | .total_ns.mean * 2] | add' j.json)
		table=$(jq '[.spans.threads[].nodes[] | select(.name == "work") | .total_ns] | add' j.json)
		assert_equal "$ranks" "$table"
	done
}

@test "report: a start time beyond what nanoseconds can hold is damage" {
	run -0 "$SPANSTAT" record -o r.rec -- "$THREADS"
	# a second END (the reader keeps the last) whose first run started in 2^63 s:
	# pprof's time_nanos overflowed int64_t (UBSan)
	python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec late.rec add:8:0,0,0,1,0x7fffffffffffffff,0,0
	run --separate-stderr -0 "$SPANSTAT" report --pprof=late.pb --json=late.json late.rec
	[[ "$stderr" == *"'late.rec' is damaged: 1 bad record (0 of span events), 0 bytes cut off at the end; reporting what is left"* ]]
	start=$(jq .start.unix_ns late.json)
	[ "${#start}" -le 19 ]
	[ "$start" -gt 1500000000000000000 ]
}

@test "report: a block of events whose CRC holds but does not decode is said to be lost" {
	run -0 "$SPANSTAT" record --keep-last=1G -o r.rec -- "$THREADS"
	run -0 "$SPANSTAT" report --json=whole.json r.rec
	whole=$(jq '[.spans.threads[].nodes[].count] | add' whole.json)
	python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec deep.rec ev:depth=5000
	run --separate-stderr -0 "$SPANSTAT" report --json=deep.json deep.rec
	re="'deep.rec' is damaged: ([0-9]+) bad records? \(([0-9]+) of span events\), 0 bytes cut off at the end; reporting what is left"
	[[ "$stderr" =~ $re ]]
	[ "${BASH_REMATCH[1]}" -gt 0 ]
	assert_equal "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
	deep=$(jq '[.spans.threads[].nodes[].count] | add // 0' deep.json)
	[ "$deep" -lt "$whole" ]
}

@test "report: a RAW block whose CRC holds but does not parse is said to be lost, the items before it replayed" {
	run -0 "$SPANSTAT" record -o r.rec -- "$THREADS"
	run -0 "$SPANSTAT" report --json=whole.json r.rec
	whole=$(jq '[.spans.threads[].nodes[].count] | add' whole.json)
	python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec junk.rec raw:junk
	run --separate-stderr -0 "$SPANSTAT" report --json=junk.json junk.rec
	[[ "$stderr" == *"'junk.rec' is damaged: 1 bad record (1 of span events), 0 bytes cut off at the end; reporting what is left"* ]]
	assert_equal "$(jq '[.spans.threads[].nodes[].count] | add' junk.json)" "$whole"
	# a setup that is not first: the block is lost from there
	python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec setup.rec raw:setup
	run --separate-stderr -0 "$SPANSTAT" report --json=setup.json setup.rec
	[[ "$stderr" == *"'setup.rec' is damaged: 1 bad record (1 of span events)"* ]]
}

@test "report: a RAW setup whose layout does not parse is damage said, not a crash; another layout leaves the values unknown" {
	run -0 "$SPANSTAT" record -o r.rec --span-events=page-faults -- "$METRICS"
	# a layout wider than 32 bits, or its varint cut: every block's setup
	# refused (the first one once made a decoder the next took as set up)
	for to in 0x1ffffffff cut; do
		python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec bad.rec raw:layout=$to
		for j in 1 3; do
			run --separate-stderr -0 "$SPANSTAT" report -j $j --json=bad.json \
				--perfetto=bad.pftrace -o /dev/null bad.rec
			[[ "$stderr" == *"'bad.rec' is damaged: "*" bad record"*" of span events)"* ]] ||
				fail "$to: $stderr"
		done
	done
	# another session's layout, well formed: the spans, their values unknown
	python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec other.rec raw:layout=12345
	run --separate-stderr -0 "$SPANSTAT" report --json=other.json -o /dev/null other.rec
	assert_equal "$(jq "[.spans.merged.nodes[] | select(.name == \"touch\") | .count] | first" other.json)" 1
	assert_equal "$(jq -c '[.spans.merged.nodes[] | select(.name == "touch") | .metrics["page-faults"]]' other.json)" '[null]'
}

@test "report: a RAW block left out or written twice, every CRC holding, is said: END counted the records" {
	local op
	for rec in record live; do
		# several blocks (64 KiB each, packed): one of them left out or doubled
		if [ $rec = record ]; then
			run -0 "$SPANSTAT" record -o r.rec -- "$LOOP" pairs 200000
		else
			run -0 "$SPANSTAT" --record=r.rec --json=live.json -o /dev/null -- "$LOOP" pairs 200000
		fi
		run --separate-stderr -0 "$SPANSTAT" report --json=whole.json -o /dev/null r.rec
		assert_equal "$stderr" ""
		python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec drop.rec raw:drop
		run --separate-stderr -0 "$SPANSTAT" report -o /dev/null drop.rec
		# the numbered blocks say which: one line, END's count not repeated
		assert_equal "$stderr" "spanstat: report: 'drop.rec' is damaged: of its capture's RAW blocks 1 missing (damaged or left out), 0 repeated and 0 out of order (these two left out); reporting what is left"
		run --separate-stderr -0 "$SPANSTAT" report -j 3 -o /dev/null drop.rec
		[[ "$stderr" == *"RAW blocks 1 missing"* ]]
		# a block written twice is left out the second time: said, and the
		# report is the whole file's
		python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec dup.rec raw:dup
		for j in 1 3; do
			run --separate-stderr -0 "$SPANSTAT" report -j $j --json=dup.json -o /dev/null dup.rec
			assert_equal "$stderr" "spanstat: report: 'dup.rec' is damaged: of its capture's RAW blocks 0 missing (damaged or left out), 1 repeated and 0 out of order (these two left out); reporting what is left"
			cmp dup.json whole.json
		done
	done
}

@test "report: a capture that lost every RAW block says the file lost them, not that the program began no span" {
	run -0 "$SPANSTAT" record -o r.rec -- "$METRICS"
	cp r.rec a.rec
	while python3 "$BATS_TEST_DIRNAME/recraft.py" a.rec b.rec raw:drop=0 2>/dev/null; do
		mv b.rec a.rec
	done
	run -0 "$SPANSTAT" report --json=w.json -o /dev/null r.rec
	for j in 1 3; do
		run --separate-stderr -0 "$SPANSTAT" report -j $j --json=a.json -o sum.txt a.rec
		[[ "$stderr" == *"'a.rec' is damaged: its capture replays 0 span records where the run took"* ]]
		[[ "$stderr" == *"1 process whose every record was in its lost RAW blocks is missing"* ]]
		grep -F 'no spans collected: the record file lost the raw capture' sum.txt
		! grep -F 'began no span' sum.txt
		! grep -F 'never started' sum.txt
		assert_equal "$(jq .spans.decode.file_lost_records a.json)" "$(jq .spans.decode.records w.json)"
		assert_equal "$(jq .spans.decode.file_lost_processes a.json)" 1
	done
}

@test "report: losing the RAW block with a process's start loses that block's spans only, counted" {
	run -0 "$SPANSTAT" record -o r.rec -- "$LOOP" pairs 200000
	run -0 "$SPANSTAT" report --json=whole.json -o /dev/null r.rec
	whole=$(jq .spans.decode.spans whole.json)
	nraw=$(python3 -c '
import struct,sys
d=open(sys.argv[1],"rb").read(); o=16; n=0
while o+12<=len(d):
    t,l,c=struct.unpack_from("<III",d,o); n+=t==14; o+=12+l
print(n)' r.rec)
	[ "$nraw" -ge 4 ]
	# the first blocks hold the HELLO and the names: each lost in turn
	for k in 0 1 2; do
		python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec d$k.rec raw:drop=$k
		for j in 1 3; do
			run --separate-stderr -0 "$SPANSTAT" report -j $j --json=d$k.json -o /dev/null d$k.rec
			[[ "$stderr" == *"'d$k.rec' is damaged: of its capture's RAW blocks 1 missing (damaged or left out)"* ]] ||
				fail "block $k: $stderr"
			spans=$(jq .spans.decode.spans d$k.json)
			# at most about a block's share of the spans lost (blocks are
			# alike but the first, which is smaller)
			[ "$spans" -le "$whole" ]
			[ $((whole - spans)) -le $((2 * whole / nraw)) ] ||
				fail "block $k: $spans spans of $whole left ($nraw blocks)"
			# the records the block held are the file's loss, not the target's
			[ "$spans" -eq "$whole" ] ||
				jq -e '.spans.decode.file_lost_records > 0' d$k.json
			assert_equal "$(jq .spans.decode.lost_records d$k.json)" "$(jq .spans.decode.lost_records whole.json)"
		done
	done
}

# raw_block_with FILE TEXT: the number (from 0) of the first RAW block whose
# bytes hold TEXT, then whether the block after it holds it too.
raw_block_with() {
	python3 -c '
import struct,sys
d=open(sys.argv[1],"rb").read(); o=16; raw=[]
while o+12<=len(d):
    t,l,c=struct.unpack_from("<III",d,o)
    if t==14: raw.append(d[o+12:o+12+l])
    o+=12+l
k=next(i for i,p in enumerate(raw) if sys.argv[2].encode() in p)
print(k, int(k+1<len(raw) and sys.argv[2].encode() in raw[k+1]))' "$1" "$2"
}

@test "report: a process whose every record was in a lost RAW block is said, and the file's losses are not the target's" {
	cp "$LOOP" tinyproc
	run -0 "$SPANSTAT" record -o r.rec -- sh -c "'$LOOP' pairs 200000; ./tinyproc pairs 20; '$LOOP' pairs 200000"
	run --separate-stderr -0 "$SPANSTAT" report --json=whole.json -o whole.txt r.rec
	assert_equal "$stderr" ""
	jq -e '.spans.decode | .file_lost_records == 0 and .file_lost_processes == 0 and .file_missing_answers == 0 and .processes >= 3' whole.json
	read -r k again < <(raw_block_with r.rec tinyproc)
	# tinyproc's 20 spans take part of one block: the next one's state
	# does not list it
	assert_equal "$again" 0
	python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec d.rec raw:drop=$k
	for j in 1 3; do
		run --separate-stderr -0 "$SPANSTAT" report -j $j --json=d.json -o d.txt d.rec
		[[ "$stderr" == *"'d.rec' is damaged: of its capture's RAW blocks 1 missing (damaged or left out)"* ]] ||
			fail "$stderr"
		[[ "$stderr" == *"spanstat: report: 'd.rec' is damaged: 1 process whose every record was in its lost RAW blocks is missing from the report; reporting what is left"* ]] ||
			fail "$stderr"
		jq -e '.spans.decode | .file_lost_processes == 1 and .file_lost_records > 0' d.json
		# the lost process is one of the processes the library announced
		assert_equal "$(jq .spans.decode.processes d.json)" "$(jq .spans.decode.processes whole.json)"
		# what the target lost is the live run's count: none
		assert_equal "$(jq .spans.decode.lost_records d.json)" "$(jq .spans.decode.lost_records whole.json)"
		n=$(jq .spans.decode.file_lost_records d.json)
		run -0 cat d.txt
		refute_output --partial "lost by the target"
		assert_line " span data damaged: $n records lost from the record file (damaged or missing RAW blocks), not by the target; span counts and times leave out what was lost"
		assert_output --partial "records lost from the record file (damaged or missing RAW blocks), 1 process lost from the record file (its every record was in lost RAW blocks)"
		# the switch records the block held are lost too: the split says so
		if jq -e '.spans.metrics | map(.name) | index("off_cpu_ns") != null' whole.json; then
			assert_line " on/off-CPU split incomplete: the switch records of the record file's lost RAW blocks are lost with them; cpu times may be too high and off-cpu times too low"
			run -1 grep -c "lost RAW blocks are lost with them" whole.txt
		fi
		assert_equal "$(jq '[.spans.threads[].pid] | unique | length' d.json)" \
			$(($(jq '[.spans.threads[].pid] | unique | length' whole.json) - 1))
	done
	# with another file, the losses are the files' sum: said of the files
	run --separate-stderr -0 "$SPANSTAT" report -o two.txt d.rec r.rec
	run -0 cat two.txt
	assert_line " span data damaged: $n records lost from the record files (damaged or missing RAW blocks), not by the target; span counts and times leave out what was lost"
	assert_output --partial "records lost from the record files (damaged or missing RAW blocks), 1 process lost from the record files (its every"
	refute_output --partial "from the record file "
}

@test "report: a thread whose name was in a lost RAW block keeps it: the next block's state names it (version 4)" {
	run -0 "$SPANSTAT" record -o n.rec -- "$LOOP" named 300000
	assert_equal "$(head -c 12 n.rec | tail -c 4 | od -An -tu4 | tr -d ' ')" 4
	run --separate-stderr -0 "$SPANSTAT" report --json=whole.json -o /dev/null n.rec
	assert_equal "$stderr" ""
	assert_equal "$(jq -c '[.spans.threads[].thread_name]' whole.json)" '["looper-thread"]'
	read -r k again < <(raw_block_with n.rec looper-thread)
	python3 "$BATS_TEST_DIRNAME/recraft.py" n.rec d.rec raw:drop=$k
	for j in 1 3; do
		run --separate-stderr -0 "$SPANSTAT" report -j $j --json=d.json -o /dev/null d.rec
		assert_equal "$stderr" "spanstat: report: 'd.rec' is damaged: of its capture's RAW blocks 1 missing (damaged or left out), 0 repeated and 0 out of order (these two left out); reporting what is left"
		assert_equal "$(jq -c '[.spans.threads[].thread_name]' d.json)" '["looper-thread"]'
		[ "$(jq '.spans.threads[0].count' d.json)" -lt 300000 ]
	done
	# as version 3 wrote it (states without the names, END's 25 counts):
	# read as before, and after the same loss the thread shows unnamed
	python3 "$BATS_TEST_DIRNAME/recraft.py" n.rec v3.rec v3
	assert_equal "$(head -c 12 v3.rec | tail -c 4 | od -An -tu4 | tr -d ' ')" 3
	run --separate-stderr -0 "$SPANSTAT" report --json=v3.json -o /dev/null v3.rec
	assert_equal "$stderr" ""
	cmp <(jq 'del(.spans.decode)' v3.json) <(jq 'del(.spans.decode)' whole.json)
	assert_equal "$(jq -c '.spans.decode | [.file_lost_records, .file_lost_processes]' v3.json)" "[0,0]"
	python3 "$BATS_TEST_DIRNAME/recraft.py" v3.rec d3.rec raw:drop=$k
	run --separate-stderr -0 "$SPANSTAT" report --json=d3.json -o /dev/null d3.rec
	assert_equal "$(jq -c '[.spans.threads[].thread_name]' d3.json)" '[null]'
	# its END does not count processes: those lost whole are not known
	[[ "$stderr" == *"'d3.rec' is damaged: processes whose every record was in its lost RAW blocks, missing from the report, are not known (its END is older than their count)"* ]]
	jq -e '.spans.decode.file_lost_processes == null and .spans.decode.processes == null' d3.json
}

@test "report: a record file cut short says why the processes it lost whole are unknown" {
	run -0 "$SPANSTAT" record -o r.rec -- "$LOOP" pairs 300000
	head -c $(($(stat -c %s r.rec) / 2)) r.rec >cut.rec
	run --separate-stderr -0 "$SPANSTAT" report --json=cut.json -o /dev/null cut.rec
	# its END is missing, not older than the count of processes
	[[ "$stderr" == *"'cut.rec' is damaged: processes whose every record was in its lost RAW blocks, missing from the report, are not known (its END is missing: a recording cut short or damaged at its end)"* ]] ||
		fail "$stderr"
	[[ "$stderr" != *"older than their count"* ]] || fail "$stderr"
	jq -e '.spans.decode.file_lost_processes == null' cut.json
}

@test "report: an answer to the decoder missing from the raw capture is said, in JSON too" {
	run -0 "$SPANSTAT" record -o m.rec -- "$MIXED"
	run --separate-stderr -0 "$SPANSTAT" report --json=m.json -o /dev/null m.rec
	assert_equal "$stderr" ""
	python3 "$BATS_TEST_DIRNAME/recraft.py" m.rec na.rec raw:noanswer
	run --separate-stderr -0 "$SPANSTAT" report --json=na.json -o na.txt na.rec
	assert_equal "$stderr" "spanstat: report: 'na.rec' is damaged: 1 answer the live run's decoder got (symbol names, process starts and names, whether a process still ran) is missing from its capture, taken as unknown; reporting what is left"
	assert_equal "$(jq .spans.decode.file_missing_answers na.json)" 1
	grep -q "1 answer to the decoder missing from the record file (taken as unknown)" na.txt
}

@test "report: RAW blocks out of order and a STRINGS record lost are said" {
	run -0 "$SPANSTAT" record -o r.rec -- "$LOOP" pairs 200000
	run -0 "$SPANSTAT" report --json=whole.json -o /dev/null r.rec
	python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec swap.rec raw:swap
	run --separate-stderr -0 "$SPANSTAT" report --json=swap.json -o /dev/null swap.rec
	[[ "$stderr" == *"'swap.rec' is damaged: of its capture's RAW blocks 0 missing (damaged or left out), 0 repeated and 1 out of order (these two left out); reporting what is left"* ]] ||
		fail "$stderr"
	jq -e '.spans.decode.file_lost_records > 0' swap.json
	assert_equal "$(jq .spans.decode.lost_records swap.json)" "$(jq .spans.decode.lost_records whole.json)"
	# the strings of the names, and the last ones
	for k in 1 -1; do
		python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec s.rec strings:drop=$k
		run --separate-stderr -0 "$SPANSTAT" report -o /dev/null s.rec
		[[ "$stderr" =~ "'s.rec' is damaged: "[1-9][0-9]*" of its strings are missing (STRINGS records lost or damaged): what they name shows as [lost]; reporting what is left" ]] ||
			fail "STRINGS $k: $stderr"
	done
}

@test "report: a file version 2 wrote (RAW blocks without numbers) reads as before" {
	run -0 "$SPANSTAT" record -o r.rec -- "$LOOP" pairs 200000
	run --separate-stderr -0 "$SPANSTAT" report --json=whole.json -o /dev/null r.rec
	assert_equal "$stderr" ""
	python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec v2.rec v2
	assert_equal "$(head -c 12 v2.rec | tail -c 4 | od -An -tu4 | tr -d ' ')" 2
	run --separate-stderr -0 "$SPANSTAT" report --json=v2.json -o /dev/null v2.rec
	assert_equal "$stderr" ""
	cmp v2.json whole.json
	# without numbers a block left out is said by END's count alone
	python3 "$BATS_TEST_DIRNAME/recraft.py" v2.rec drop.rec raw:drop
	run --separate-stderr -0 "$SPANSTAT" report -o /dev/null drop.rec
	[[ "$stderr" == *"(RAW blocks missing or repeated)"* ]]
}

@test "record: the raw capture replays to the live bytes: off-CPU values, fork and exec, a killed process" {
	live_vs_report -- "$METRICS" threads
	jq -e '[.spans.threads[].nodes[] | select(.metrics.off_cpu_ns != null)] | length > 0' rep.json ||
		jq -e '.spans.metrics | index("off_cpu_ns") == null' rep.json
	live_vs_report -- "$FORK"
	assert_equal "$(jq '[.spans.threads[].pid] | unique | length' rep.json)" 2
	live_vs_report -134 -- "$DIE" abort
	jq -e '.spans.decode.unfinished > 0' rep.json
	# killed by SIGKILL: its rings are read at the end, its spans close as the kernel told
	live_vs_report -137 -- sh -c "'$THREADS' & sleep 0.05; kill -9 \$!; wait; kill -9 \$\$"
}

# raw_tags FILE: the tags of the items of its RAW blocks, one per line,
# repeats squeezed.
raw_tags() {
	python3 -c '
import struct,sys
d=open(sys.argv[1],"rb").read(); o=16; last=None
def varint(b,i):
    v=s=0
    while True:
        c=b[i]; i+=1; v|=(c&127)<<s; s+=7
        if c<128: return v,i
while o+12<=len(d):
    t,l,c=struct.unpack_from("<III",d,o)
    if t==14:
        b=d[o+12:o+12+l]; i=0
        while i<len(b):
            tag=b[i]; n,i=varint(b,i+1); i+=n
            if tag!=last: print(tag)
            last=tag
    o+=12+l' "$1"
}

@test "record: spanstat record only captures; report decodes, checks the off-CPU split, and -j agrees" {
	run -0 "$SPANSTAT" record -o r.rec -e task-clock -- "$METRICS" threads
	# the live run made no tree: the replay checks (16), no damage came (13)
	run -0 raw_tags r.rec
	assert_line 16
	refute_line 13
	run -0 "$SPANSTAT" report --json=rep.json --perfetto=rep.pftrace --folded=rep.folded r.rec
	run -0 "$SPANSTAT" report -j 3 --json=rep3.json --perfetto=rep3.pftrace --folded=rep3.folded r.rec
	cmp rep.json rep3.json
	cmp rep.pftrace rep3.pftrace
	cmp rep.folded rep3.folded
	jq -e '.spans.decode.spans > 0 and .spans.decode.events > 0 and .spans.decode.dropped == 0' rep.json
	jq -e '[.spans.threads[].damage.off_cpu_unplaced_ns] | add == 0' rep.json
	# with other outputs the run decodes live and checks its own tree
	run -0 "$SPANSTAT" --record=l.rec --json=l.json -- "$METRICS" threads
	run -0 raw_tags l.rec
	refute_line 16
}

@test "record: the raw capture replays to the live bytes: a process the target leaves running" {
	# the orphan lives on 5 s after the run: the replay is told what the
	# live run found (running, not ended) and when the stream ended, where
	# its open "held" ends; not what /proc says when the report runs
	live_vs_report -e task-clock -- "$EXITW" orphan
	assert_equal "$(jq -c '.spans.decode | [.running, .no_exit]' rep.json)" "[1,0]"
	assert_equal "$(jq -c '[.spans.merged.nodes[] | select(.name == "held") |
		[.count, .unfinished, .total_ns >= 190000000]]' rep.json)" '[[1,1,true]]'
	grep -q "1 process still running when the run ended" rep.txt
	# once it is gone, the report still says what the live run found
	local pid
	pid=$(jq '[.spans.threads[] | select(.nodes[]?.name == "held") | .pid] | first' rep.json)
	while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
	run -0 "$SPANSTAT" report --json=late.json r.rec
	cmp live.json late.json
}

@test "record: the raw capture replays to the live bytes: the line protocol, garbage, --span-events, runs" {
	live_vs_report -- sh -c 'exec 3>>"$SPANSTAT_LINES"; echo "B $$ - - outer" >&3;
		echo "I $$ - - tick" >&3; sleep 0.01; echo "E $$ - - outer" >&3; echo "B $$ - - open" >&3'
	jq -e '.spans.decode.lines >= 3' rep.json
	live_vs_report -- "$MIXED"
	# garbage on every descriptor, the span pipe's too: bad bytes, counted alike
	live_vs_report -- "$GARBAGE"
	jq -e '.spans.decode.bad_bytes > 0' rep.json
	# and garbage in the shared ring file while spans are recorded
	live_vs_report -- sh -c "'$THREADS'; head -c 8192 /dev/zero | tr '\\0' '\\377' |
		dd of=\"\$SPANSTAT_SHM\" bs=4096 seek=1 conv=notrunc status=none; '$THREADS'"
	live_vs_report -e task-clock --span-events=page-faults,task-clock --span-allocs -r 2 -I 50 \
		-- "$METRICS" threads
}

@test "report: two files of one rank are reported, with a warning" {
	OMPI_COMM_WORLD_RANK=1 run -0 "$SPANSTAT" record -o a.rec -- "$THREADS"
	OMPI_COMM_WORLD_RANK=1 run -0 "$SPANSTAT" record -o b.rec -- "$THREADS"
	run --separate-stderr -0 "$SPANSTAT" report --json=j.json a.rec b.rec
	assert_equal "$stderr" "spanstat: report: 'a.rec' and 'b.rec' both hold rank 1: the ranks compared may not be the job's"
	assert_equal "$(jq -c '[.ranks.ranks[].rank]' j.json)" '[1,1]'
	# outside a job a file's rank is its place: no warning
	run -0 "$SPANSTAT" record -o c.rec -- "$THREADS"
	run --separate-stderr -0 "$SPANSTAT" report --json=k.json c.rec c.rec
	[ -z "$stderr" ]
	assert_equal "$(jq -c '[.ranks.ranks[].rank]' k.json)" '[0,1]'
}

@test "report: after a damaged length the reader finds the next intact record" {
	run -0 "$SPANSTAT" record -o r.rec -e task-clock -r 3 -- "$THREADS"
	run -0 "$SPANSTAT" report --json=whole.json r.rec
	# the first RUN record's length made larger than the file: the two other
	# runs and the END after it were lost with it
	python3 -c '
import struct,sys
d=bytearray(open("r.rec","rb").read()); o=16
while o+12<=len(d):
    t,l,c=struct.unpack_from("<III",d,o)
    if t==6: struct.pack_into("<I",d,o+4,0x7fffffff); break
    o+=12+l
open("len.rec","wb").write(d)'
	run --separate-stderr -0 "$SPANSTAT" report --json=len.json len.rec
	re="'len.rec' is damaged: 1 bad record \(0 of span events\), ([0-9]+) bytes skipped, 0 bytes cut off at the end; reporting what is left"
	[[ "$stderr" =~ $re ]]
	[[ "$stderr" == *"'len.rec': the counts of 1 run are lost"* ]]
	assert_equal "$(jq '.runs | length' len.json)" 2
	assert_equal "$(jq .runs_requested len.json)" 3
	assert_equal "$(jq -c '[.runs[].rusage.elapsed_ns > 0] | all' len.json)" true
	# the spans and the decoder's counts of END are all still there
	assert_equal "$(jq -c .spans.decode len.json)" "$(jq -c .spans.decode whole.json)"
	assert_equal "$(jq -c .spans.merged len.json)" "$(jq -c .spans.merged whole.json)"
}

@test "report: records of a type it does not know are skipped and said, not dropped silently" {
	run -0 "$SPANSTAT" record -o r.rec -r 2 -- "$THREADS"
	# a flipped byte in a header's type (outside the CRC): a run start lost
	python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec t.rec type:7=99
	run --separate-stderr -0 "$SPANSTAT" report --json=t.json t.rec
	assert_equal "$stderr" "spanstat: report: 't.rec': 1 record of a type this spanstat does not know skipped (written by a newer spanstat, or a damaged header)"
	# an intact file says nothing of the kind
	run --separate-stderr -0 "$SPANSTAT" report --json=r.json r.rec
	assert_equal "$stderr" ""
}

@test "report: a run whose results are lost keeps the others' numbers; span shares unknown" {
	run -0 "$SPANSTAT" record -o r.rec -r 3 -- "$THREADS"
	# the first RUN record's payload damaged: run 0's results lost
	python3 - <<'PY'
import struct
d = bytearray(open("r.rec", "rb").read())
off = 16
while off + 12 <= len(d):
    t, ln, _ = struct.unpack_from("<III", d, off)
    if t == 6:
        d[off + 14] ^= 0xFF
        break
    off += 12 + ln
open("bad.rec", "wb").write(d)
PY
	run --separate-stderr -0 "$SPANSTAT" report --spans --json=bad.json bad.rec
	assert_equal "$(jq -c '[.runs[].run]' bad.json)" "[1,2]"
	assert_equal "$(jq -c '[.spans.threads[].run] | unique' bad.json)" "[0,1,2]"
	# spans of three runs over the walls of two: no share, not one above 100%
	assert_equal "$(jq '.spans.wall_ns' bad.json)" null
	run ! grep -E ' [0-9.]+% +[0-9.]+ [mun]?s ' <<<"$output"
	# diff takes the report's own JSON of it, and the record
	run -0 "$SPANSTAT" diff bad.json bad.json
	run "$SPANSTAT" diff r.rec bad.rec
	[ "$status" -ne 125 ] # a verdict, whichever
}
