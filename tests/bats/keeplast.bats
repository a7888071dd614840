#!/usr/bin/env bats
# keeplast.bats: the flight recorder, --keep-last=SIZE, through the installed
# binary: the record file holds the last SIZE bytes of events and says what
# was overwritten, the counts add up to what an aggregating run counts,
# spans cut at the window's start are left out and said, SIGUSR2 writes a
# snapshot while the target goes on, and bad input gets one line.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export PHASES
	PHASES=$(build_workload span_phases $(span_link_flags))
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# The spans a JSON document's threads hold, all paths.
json_spans() {
	jq '[.spans.threads[].nodes[] | .count] | add' "$1"
}

# The span names a JSON document holds, one a line, sorted.
json_names() {
	jq -r '[.spans.threads[].nodes[] | .name] | unique | .[]' "$1"
}

# Waits (up to 30 s) for the target of a run in the background to get half
# way (span_phases' go.ready), as its snapshot tests need.
half_way() {
	local i
	for ((i = 0; i < 3000; i++)); do [ -e go.ready ] && break; sleep 0.01; done
	[ -e go.ready ] || fail "the target never got half way"
}

# Waits (up to 30 s) for err, the background run's stderr, to hold TEXT.
err_says() {
	local i
	for ((i = 0; i < 3000; i++)); do grep -q "$1" err && break; sleep 0.01; done
}

# N from "... N spans (" of the --keep-last line in a file of stderr.
overwritten() {
	sed -n 's/.*(--keep-last)[^:]*: \([0-9][0-9]*\) spans\{0,1\} (.*overwritten.*/\1/p' "$1" | head -1
}

@test "keep-last: the file holds about SIZE of the last events; kept + overwritten = all" {
	# 1 + 200 * 501 spans, some 4 MB of events: far more than the window
	run -0 "$SPANSTAT" --json=all.json -- "$PHASES" 200 500
	assert_equal "$(json_spans all.json)" 100201
	"$SPANSTAT" record --keep-last=256K -o k.rec -- "$PHASES" 200 500 2>err
	cat err
	size=$(stat -c %s k.rec)
	echo "size $size"
	# at most SIZE of records, one block more at the most, and the rest
	[ "$size" -le $((256 * 1024 + 65536 + 12 + 16384)) ]
	# at least SIZE less the block the last overwrite took
	[ "$size" -ge $((256 * 1024 - 65536 - 12)) ]
	grep -q "^\[ spanstat: 'k.rec' keeps the last 262144 bytes of events (--keep-last): [0-9]* spans (" err
	over=$(overwritten err)
	[ "$over" -gt 0 ]
	run -0 "$SPANSTAT" report --json=k.json -o k.txt k.rec
	echo "$output"
	refute_output --partial 'is damaged'
	assert_output --partial "'k.rec' holds the last 262144 bytes of events (--keep-last): $over spans"
	# the run and the phase it was in when the window starts are cut: said, not invented
	assert_output --regexp "[0-9]+ spans cut at the window's start \(begun before it\) are left out"
	# and in the outputs: the summary and the JSON
	grep -q "^ span window: the last 262144 bytes of events (--keep-last); [0-9,]* spans ([0-9,]* events) before them were overwritten, [0-9]* cut at the window's start left out" k.txt
	assert_equal "$(jq '.spans.window.overwritten_spans' k.json)" "$over"
	assert_equal "$(jq '.spans.window.keep_last' k.json)" 262144
	[ "$(jq '.spans.window.cut' k.json)" -gt 0 ]
	kept=$(json_spans k.json)
	echo "kept $kept overwritten $over"
	assert_equal $((kept + over)) 100201
	# the last spans are there, the first are not
	json_names k.json >names
	grep -qx phase0199 names
	run ! grep -qx phase0000 names
	run ! grep -qx run names
	# the process began before the window: its name is kept all the same
	jq -r '.spans.threads[0].process_name' k.json | grep -q '^span_phases'
	# the stream's own counts are the whole run's
	assert_equal "$(jq '.spans.decode.spans' k.json)" 100201
}

@test "keep-last: --record beside live outputs: they count the whole run, the record the window" {
	"$SPANSTAT" --keep-last=128K --record=k.rec --json=live.json -o live.txt -- "$PHASES" 100 500 2>err
	cat err
	assert_equal "$(json_spans live.json)" 50101
	over=$(overwritten err)
	run -0 "$SPANSTAT" report --json=k.json k.rec
	refute_output --partial 'is damaged'
	assert_equal $(($(json_spans k.json) + over)) 50101
}

@test "keep-last: a live run's --perfetto and --flamechart are the window's, as report makes them" {
	"$SPANSTAT" --keep-last=128K --record=k.rec --perfetto=live.pftrace --flamechart=live.svg \
		--json=live.json -o live.txt -- "$PHASES" 100 500 2>err
	cat err
	run -0 "$SPANSTAT" report --perfetto=rep.pftrace --flamechart=rep.svg -o rep.txt k.rec
	cmp live.pftrace rep.pftrace
	cmp live.svg rep.svg
	# the window's: the last phase, not the first (the flame chart may merge
	# what is narrower than a pixel: the trace holds every name)
	grep -aq phase0099 live.pftrace
	run ! grep -aq phase0000 live.pftrace
	# while the JSON counts the whole run, and has no window
	assert_equal "$(json_spans live.json)" 50101
	assert_equal "$(jq '.spans.window.keep_last' live.json)" null
	# no record file, no window outputs: said, and the status says it
	run -125 "$SPANSTAT" --keep-last=128K --record=/nonexistent/dir/k.rec --perfetto=x.pftrace \
		-- "$PHASES" 2 2
	[ ! -e x.pftrace ]
}

@test "keep-last: runs, -I samples and run starts stay whole in the window" {
	run -0 "$SPANSTAT" record --keep-last=128K -r 2 -I 10 -o k.rec -- "$PHASES" 100 500
	run -0 "$SPANSTAT" report --json=k.json k.rec
	echo "$output"
	refute_output --partial 'is damaged'
	refute_output --partial 'counts of'
	assert_equal "$(jq '.runs | length' k.json)" 2
	json_names k.json >names
	grep -qx phase0099 names
	run ! grep -qx phase0000 names
}

@test "keep-last: SIGUSR2 writes a snapshot while the target goes on; its status stays" {
	rm -f go go.ready
	"$SPANSTAT" record --keep-last=128K -o k.rec -- "$PHASES" 100 2000 go 3 2>err &
	local pid=$! code=0
	half_way
	kill -USR2 "$pid"
	err_says 'snapshot of'
	cp k.rec snap.rec
	touch go
	wait "$pid" || code=$?
	cat err
	assert_equal "$code" 3
	grep -q "^\[ spanstat: snapshot of [0-9.]* MB to 'k.rec'; [0-9]* spans overwritten so far \]" err
	# the snapshot: whole, the first half's last spans, nothing after
	run -0 "$SPANSTAT" report --json=snap.json snap.rec
	echo "$output"
	refute_output --partial 'is damaged'
	refute_output --partial 'counts of'
	assert_output --partial "as a snapshot taken while the target ran"
	assert_equal "$(jq '.spans.window.snapshot' snap.json)" true
	json_names snap.json >names
	grep -qx phase0049 names
	run ! grep -qx phase0050 names
	run ! grep -qx phase0000 names
	assert_equal "$(jq '.runs | length' snap.json)" 0
	# the final file: the end of the run, the counts, the status
	run -0 "$SPANSTAT" report --json=k.json k.rec
	refute_output --partial 'is damaged'
	refute_output --partial snapshot
	json_names k.json >names
	grep -qx phase0099 names
	assert_equal "$(jq '.runs[0].exit.exit_code' k.json)" 3
	over=$(overwritten err)
	assert_equal $(($(json_spans k.json) + over)) 200101
}

@test "keep-last: SIZE takes K, M and G; bad sizes and combinations get one line and 125" {
	run -0 "$SPANSTAT" record --keep-last=1M -o a.rec -- "$PHASES" 2 2
	assert_output --partial "keeps the last 1048576 bytes"
	run -0 "$SPANSTAT" record --keep-last=131072 -o a.rec -- "$PHASES" 2 2
	assert_output --partial "keeps the last 131072 bytes"
	run -0 "$SPANSTAT" record --keep-last=2GiB -o a.rec -- "$PHASES" 2 2
	assert_output --partial "keeps the last 2147483648 bytes"
	# either case, as the man page says
	for good in 1mib 1MIB 1m; do
		run -0 "$SPANSTAT" record --keep-last="$good" -o a.rec -- "$PHASES" 2 2
		assert_output --partial "keeps the last 1048576 bytes"
	done
	for bad in 100K 1X 65G '' K 1.5M -1M 1MB; do
		run -125 "$SPANSTAT" record --keep-last="$bad" -o b.rec -- "$PHASES" 2 2
		assert_output "spanstat: invalid --keep-last '$bad': expected a size from 128K to 64G: bytes, or a number with K, M or G (KiB, MiB, GiB)"
	done
	run -125 "$SPANSTAT" --keep-last=1M -- "$PHASES" 2 2
	assert_output "spanstat: --keep-last needs a record file or a trace output: spanstat record, --record=FILE, --perfetto or --flamechart"
	run -125 "$SPANSTAT" record --keep-last=1M -o - -- "$PHASES" 2 2
	assert_output --partial "spanstat: --keep-last needs a record file, not standard output"
	run -125 "$SPANSTAT" report --keep-last=1M a.rec
	[ ! -e b.rec ] && [ ! -e b.out ]
}

@test "keep-last: a snapshot is refused when the record file is a stream" {
	# -o /dev/stdout: a snapshot would go down the stream ahead of the end's
	# file, two record files in one (the window's spans counted twice)
	rm -f go go.ready
	"$SPANSTAT" record --keep-last=128K -o /dev/stdout -- "$PHASES" 100 2000 go 3 >k.rec 2>err &
	local pid=$! code=0
	half_way
	kill -USR2 "$pid"
	err_says 'snapshot'
	touch go
	wait "$pid" || code=$?
	cat err
	assert_equal "$code" 3
	grep -qx "spanstat: cannot write a snapshot to '/dev/stdout': a stream (a FIFO, a device or spanstat's own output), which a snapshot cannot replace; the record is written when the run ends" err
	run ! grep -q 'snapshot of' err
	run -0 "$SPANSTAT" report --json=k.json k.rec
	echo "$output"
	refute_output --partial 'is damaged'
	refute_output --partial snapshot
	over=$(overwritten err)
	assert_equal $(($(json_spans k.json) + over)) 200101
}

@test "keep-last: a report of several window files says their windows, summed" {
	"$SPANSTAT" record --keep-last=128K -o a.rec -- "$PHASES" 100 500 2>erra
	"$SPANSTAT" record --keep-last=256K -o b.rec -- "$PHASES" 200 500 2>errb
	"$SPANSTAT" record -o c.rec -- "$PHASES" 2 2
	overa=$(overwritten erra)
	overb=$(overwritten errb)
	run -0 "$SPANSTAT" report --json=m.json -o m.txt a.rec b.rec c.rec
	echo "$output"
	cat m.txt
	# the spans are the windows' (and c's whole run): not the whole sessions'
	assert_equal "$(jq '.spans.window.keep_last' m.json)" $((128 * 1024 + 256 * 1024))
	assert_equal "$(jq '.spans.window.overwritten_spans' m.json)" $((overa + overb))
	assert_equal $(($(json_spans m.json) + overa + overb)) $((50101 + 100201 + 7))
	[ "$(jq '.spans.window.cut' m.json)" -gt 0 ]
	grep -q "^ span window: 2 of the 3 files hold the last bytes of their events (--keep-last, 393216 bytes in all); [0-9,]* spans ([0-9,]* events) before them were overwritten, [0-9]* cut at the window's start left out" m.txt
}

@test "keep-last: a record file that could not be put in place is not said kept, nor made into traces" {
	mkdir d
	rm -f go go.ready
	"$SPANSTAT" --keep-last=128K --record=d/k.rec --perfetto=k.pftrace -o /dev/null \
		-- "$PHASES" 100 500 go 2>err &
	local pid=$! code=0
	half_way
	rm -rf d
	touch go
	wait "$pid" || code=$?
	cat err
	assert_equal "$code" 125
	grep -q "^spanstat: cannot write --record 'd/k.rec': " err
	run ! grep -q "keeps the last" err
	grep -qx "spanstat: cannot write --perfetto 'k.pftrace': the record file it is made from was not written" err
	[ ! -e k.pftrace ]
}

@test "keep-last: a snapshot that cannot be written says it was the snapshot" {
	mkdir d
	rm -f go go.ready
	"$SPANSTAT" record --keep-last=128K -o d/k.rec -- "$PHASES" 100 500 go 2>err &
	local pid=$! code=0
	half_way
	rm -rf d
	kill -USR2 "$pid"
	err_says 'snapshot'
	touch go
	wait "$pid" || code=$?
	cat err
	assert_equal "$code" 125
	grep -qx "spanstat: cannot write a snapshot to 'd/k.rec': No such file or directory" err
	grep -qx "spanstat: cannot write --output 'd/k.rec': No such file or directory" err
	assert_equal "$(wc -l <err)" 2
}

@test "keep-last: without a record file, --perfetto and --flamechart are a flight recorder" {
	mkdir tmp
	export TMPDIR=$PWD/tmp
	run --separate-stderr -0 "$SPANSTAT" --keep-last=128K --perfetto=t.pftrace \
		--flamechart=t.svg --json=t.json -- "$PHASES" 100 500
	grep -q "^\[ spanstat: the traces' window keeps the last 131072 bytes of events (--keep-last): [0-9]* spans" <<<"$stderr"
	# the window's last phases, not the first; the JSON counts the whole run
	grep -aq phase0099 t.pftrace
	run ! grep -aq phase0000 t.pftrace
	[ -s t.svg ]
	assert_equal "$(json_spans t.json)" 50101
	# the private record is gone, its directory too
	assert_equal "$(ls -A tmp)" ""
	# the same bytes as a report of the window's record would make: made
	# from a record the same way, the trace decodes as report's does
	run -0 "$SPANSTAT" --keep-last=128K --record=k.rec --perfetto=r.pftrace -- "$PHASES" 100 500
	run -0 "$SPANSTAT" report --perfetto=rep.pftrace k.rec
	cmp r.pftrace rep.pftrace
	# no room for the window's record: said, the traces not made, 125
	run --separate-stderr -125 env TMPDIR=/nonexistent "$SPANSTAT" --keep-last=128K \
		--perfetto=x.pftrace -- "$PHASES" 2 2
	assert_equal "$stderr" "spanstat: --keep-last: cannot make a directory for the window's record in '/nonexistent': No such file or directory"
	[ ! -e x.pftrace ]
}

@test "keep-last: SIGUSR2 makes the traces of the window so far while the target goes on" {
	mkdir tmp
	export TMPDIR=$PWD/tmp
	rm -f go go.ready
	"$SPANSTAT" --keep-last=128K --perfetto=t.pftrace --flamechart=t.svg -- \
		"$PHASES" 100 2000 go 3 2>err &
	local pid=$! code=0
	half_way
	kill -USR2 "$pid"
	err_says 'snapshot of the window to --flamechart'
	cp t.pftrace snap.pftrace
	cp t.svg snap.svg
	touch go
	wait "$pid" || code=$?
	cat err
	assert_equal "$code" 3
	grep -q "^\[ spanstat: snapshot of the window to --perfetto 't.pftrace'; [0-9]* spans overwritten so far \]" err
	# the snapshot: the first half's last spans, nothing after
	grep -aq phase0049 snap.pftrace
	run ! grep -aq phase0050 snap.pftrace
	run ! grep -aq phase0000 snap.pftrace
	[ -s snap.svg ]
	# the end: the run's last
	grep -aq phase0099 t.pftrace
	assert_equal "$(ls -A tmp)" ""
}

# Waits (up to 30 s) for the target of the run in the background (pid $1,
# spanstat) to have ended: its child gone or a zombie.
target_ended() {
	local i tp st
	for ((i = 0; i < 3000; i++)); do
		tp=$(pgrep -P "$1" | head -1)
		st=$(awk '{print $3}' "/proc/$tp/stat" 2>/dev/null) || true
		[ -z "$tp" ] || [ "$st" = Z ] || [ -z "$st" ] && return 0
		sleep 0.01
	done
	fail "the target never ended"
}

@test "keep-last: SIGUSR2 sent faster than snapshots are written does not keep spanstat from the end" {
	mkdir tmp
	export TMPDIR=$PWD/tmp
	rm -f go go.ready
	"$SPANSTAT" --keep-last=64M --perfetto=t.pftrace --flamechart=t.svg -o sum.txt -- \
		"$PHASES" 100 5000 go 3 2>err &
	local pid=$! code=0
	half_way
	# a SIGUSR2 every 10 ms for 20 s at most, while spanstat lives
	(
		end=$((SECONDS + 20))
		while [ $SECONDS -lt $end ] && kill -USR2 "$pid" 2>/dev/null; do sleep 0.01; done
	) &
	local storm=$! t0=$SECONDS
	touch go
	wait "$pid" || code=$?
	local took=$((SECONDS - t0))
	kill "$storm" 2>/dev/null || true
	wait "$storm" || true
	grep -v 'snapshot of' err
	echo "took $took s"
	assert_equal "$code" 3
	# the target takes well under a second: not the storm's 20 s
	[ "$took" -lt 12 ]
	grep -q "^\[ spanstat: snapshot of the window to --perfetto 't.pftrace'" err
	grep -q "^\[ spanstat: the traces' window keeps the last 67108864 bytes" err
	run ! grep -q '^spanstat:' err
	# the end's trace holds the last phase; on a slow machine the storm's
	# snapshots can keep spanstat from the ring long enough that the
	# target drops events, and then the summary says so
	grep -aq phase0099 t.pftrace || grep -q 'events lost by the target' sum.txt
	assert_equal "$(ls -A tmp)" ""
}

@test "keep-last: a signal after the target ended does not stop the window's traces" {
	mkdir tmp
	export TMPDIR=$PWD/tmp
	local sig
	for sig in USR2 TERM; do
		rm -f go go.ready t.pftrace
		"$SPANSTAT" --keep-last=256M --perfetto=t.pftrace -o /dev/null -- \
			"$PHASES" 400 5000 go 3 2>err &
		local pid=$! code=0
		half_way
		touch go
		target_ended "$pid"
		# one signal, while the window (some 40 MB) is made into the trace
		kill -"$sig" "$pid" 2>/dev/null || true
		wait "$pid" || code=$?
		cat err
		# the target's status, and the trace whole
		assert_equal "$code" 3
		run ! grep -q '^spanstat:' err
		grep -aq phase0399 t.pftrace
		assert_equal "$(ls -A tmp)" ""
	done
}

@test "keep-last: traces made from a record file that is a stream are refused before the run" {
	# they are made by reading the record file back: a pipe would be read
	# from (its reader robbed, spanstat waiting for ever), /dev/null holds nothing
	local f
	for f in /dev/stdout /dev/null; do
		rm -f ran
		run -125 --separate-stderr bash -c "timeout -k 5 30 '$SPANSTAT' --keep-last=128K --record=$f \
			--perfetto=x.pftrace -o /dev/null -- touch ran | cat >out.rec; exit \${PIPESTATUS[0]}"
		assert_equal "$stderr" "spanstat: --keep-last: cannot make the traces from the record file '$f': a stream (a FIFO, a device or spanstat's own output), which cannot be read back"
		[ ! -e x.pftrace ] && [ ! -e ran ]
	done
	# spanstat record's own file may be a stream: nothing reads it back
	run -0 --separate-stderr bash -c "'$SPANSTAT' record --keep-last=128K -o /dev/stdout -- \"$PHASES\" 2 2 | cat >k.rec"
	run -0 "$SPANSTAT" report -o /dev/null k.rec
}
