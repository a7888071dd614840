#!/usr/bin/env bats
# endings.bats: a process that ends without running destructors (_exit,
# _Exit, the usual end of a forked child) loses none of the spans it
# recorded, nor does one that dies of a stack overflow or of SIGKILL, and a
# vfork()ed child's _exit sends nothing of its parent's.  A span left open
# when its thread or process ends (exit, _exit, abort, SIGKILL, exec,
# pthread_exit, a -finstrument-functions main that calls exit) ends where
# the thread did, with its true on/off-CPU split, marked unfinished, alike
# aggregated, streamed and recorded.  What a process records after the
# library's exit path ran (a late destructor's spans) is counted and said.

load helpers
load pfreplay

setup_file() {
	# without protoc a trace cannot be decoded: pf_load skips
	# (fails under CI) with the reason
	export PF_MISSING=
	if ! command -v protoc >/dev/null 2>&1; then
		PF_MISSING="protoc not installed (Debian package protobuf-compiler)"
	fi
	export EXITW OVERFLOW
	EXITW=$(build_workload span_exit $(span_link_flags))
	OVERFLOW=$(build_workload span_overflow $(span_link_flags) -O0)
	LONGJMP=$(build_workload span_longjmp $(span_link_flags))
	LONGJMP_F=$(build_workload span_longjmp -DNO_API -D_FORTIFY_SOURCE=2 -finstrument-functions)
	OPEN=$(build_workload span_open $(span_link_flags))
	OPEN_F=$(build_workload span_open -DNO_API -finstrument-functions)
	export LONGJMP LONGJMP_F OPEN OPEN_F
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# mode_opts MODE: the options for one of the two ways spans travel:
# "aggregate" (no streaming output: each thread keeps its call tree in its
# ring slot) or "stream" (--perfetto: every event goes through the rings)
mode_opts() {
	[ "$1" != stream ] || echo "--perfetto=s.pftrace"
}

# mode_run MODE CMD...: CMD (its fd 3 closed) under spanstat in MODE
# (aggregate, stream, or record then report) with --spans and -e
# task-clock, its JSON in x.json; $output the summary's, $cmd_output what
# the run printed (record's own, not report's)
mode_run() {
	local mode=$1
	shift
	if [ "$mode" = record ]; then
		run "$SPANSTAT" record -o x.rec -e task-clock -- "$@" 3>&-
		assert_success
		cmd_output=$output
		run "$SPANSTAT" report --json=x.json --spans x.rec
	else
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock -- "$@" 3>&-
		cmd_output=$output
	fi
}

# count NAME FILE: the merged count of spans named NAME
count() {
	jq "[.spans.merged.nodes[] | select(.name == \"$1\") | .count] | add // 0" "$2"
}

@test "_exit and _Exit lose no span, and the process's end is seen" {
	local how mode
	for mode in aggregate stream; do
		for how in _exit _Exit; do
			run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock -- "$EXITW" "$how"
			assert_failure 3
			assert_equal "$(count work x.json)" 100
			assert_equal "$(jq -c '.spans.decode | [.no_exit, .unfinished, .dropped]' x.json)" "[0,0,0]"
		done
	done
}

@test "SIGKILL loses no span: every event recorded before the kill arrives" {
	local mode
	for mode in aggregate stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock -- "$EXITW" kill
		assert_failure 137
		assert_equal "$(count work x.json)" 1000
		assert_equal "$(count thread-work x.json)" 3000
		# "open" was begun and never ended: spanstat closes it, and says the
		# process's end was not seen
		assert_equal "$(count open x.json)" 1
		assert_equal "$(jq -c '.spans.decode | [.no_exit, .unfinished, .dropped, .lost_records]' x.json)" "[1,1,0,0]"
	done
}

@test "more threads alive at once than there are rings: none loses a span" {
	local mode
	for mode in aggregate stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock -- "$EXITW" threads 300
		assert_success
		assert_equal "$(count t x.json)" 3000
		assert_equal "$(jq '[.spans.threads[] | select(.nodes | length > 0)] | length' x.json)" 300
		assert_equal "$(jq -c '.spans.decode | [.no_exit, .unfinished, .dropped, .lost_records]' x.json)" "[0,0,0,0]"
	done
}

@test "a forked child that calls _exit shows its spans" {
	local mode
	for mode in aggregate stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock -- "$EXITW" fork
		assert_success
		assert_equal "$(count child x.json)" 50
		assert_equal "$(count parent x.json)" 10
		assert_equal "$(jq '.spans.decode.no_exit' x.json)" 0
		assert_equal "$(jq '[.spans.threads[].pid] | unique | length' x.json)" 2
	done
}

@test "a vfork()ed child's _exit sends nothing of its parent's" {
	local mode
	for mode in aggregate stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock -- "$EXITW" vfork
		assert_success
		assert_equal "$(count parent x.json)" 20
		assert_equal "$(jq -c '.spans.decode | [.no_exit, .unfinished, .unmatched]' x.json)" "[0,0,0]"
		assert_equal "$(jq '[.spans.threads[].pid] | unique | length' x.json)" 1
	done
}

@test "a stack overflow still sends every span it recorded (alternate signal stack)" {
	ulimit -c 0
	local mode levels
	for mode in aggregate stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock -- "$OVERFLOW"
		assert_failure 139
		assert_equal "$(jq '.exit.signal' x.json)" 11
		# the handler ran: the exit record came, and every span open at
		# the death arrived and was closed by spanstat
		levels=$(count recurse x.json)
		echo "$mode: levels: $levels"
		[ "$levels" -ge 30 ]
		assert_equal "$(count outer x.json)" 1
		assert_equal "$(jq -c '.spans.decode | [.no_exit, .unfinished - '"$levels"']' x.json)" "[0,1]"
	done
}

# tree FILE: "depth name count" of every merged node, in the JSON's order
tree() {
	jq -r '.spans.merged.nodes[] | "\(.depth) \(.name) \(.count)"' "$1"
}

@test "longjmp and siglongjmp end the spans they skip, at the jump" {
	local how
	for how in aggregate stream; do
		run "$SPANSTAT" $(mode_opts "$how") --json=ok.json --spans -e task-clock -- "$LONGJMP" ok
		assert_success
		local mode
		for mode in jump sig; do
			run "$SPANSTAT" $(mode_opts "$how") --json=x.json --spans -e task-clock -- "$LONGJMP" "$mode"
			assert_success
			# the same tree as the run without errors: "after" follows the
			# jump inside "round", not inside the levels it skipped
			assert_equal "$(tree x.json)" "$(tree ok.json)"
			assert_equal "$(tree x.json | head -3)" "$(printf '%s\n' '0 round 10' '1 level 10' '2 level 10')"
			assert_equal "$(jq -c '.spans.decode | [.unfinished, .unmatched, .dropped]' x.json)" '[0,0,0]'
			# the parents' times hold their children's: each level spins 20 us
			# before going deeper, so a level's total is at least the next
			# one's plus 10 x 20 us, and a round's at least its levels' and after's
			run jq '[.spans.merged.nodes[] | select(.name == "level") | .total_ns] as $t
				| ([range(0; 4) | $t[.] >= $t[. + 1] + 200000] | all)
				and (.spans.merged.nodes[0].total_ns >= $t[0] + ([.spans.merged.nodes[] | select(.name == "after") | .total_ns] | add))' x.json
			assert_output true
		done
	done
}

@test "a longjmp out of -finstrument-functions frames (__longjmp_chk) ends them" {
	local mode
	for mode in aggregate stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock -- "$LONGJMP_F" jump
		assert_success
		assert_equal "$(jq -c '.spans.decode | [.unfinished, .unmatched]' x.json)" '[0,0]'
		# main -> level x5 nested, entered 10 times; spin under each level
		run jq -r '[.spans.merged.nodes[] | select(.name == "level")] | map("\(.depth) \(.count)") | join(",")' x.json
		assert_output '1 10,2 10,3 10,4 10,5 10'
	done
}

# open_ok FILE NAME MIN_NS MIN_OFF: FILE's merged NAME ran once, was closed
# by spanstat (unfinished), lasted MIN_NS or more (and under 5 s) and was
# off-CPU for MIN_OFF or more of it
open_ok() {
	local c u total off
	read -r c u total off < <(jq -r "[.spans.merged.nodes[] | select(.name == \"$2\")] | first
		| \"\(.count) \(.unfinished) \(.total_ns) \(.off_cpu_ns)\"" "$1")
	echo "$1: $2 $c x, $u unfinished, $total ns, $off ns off-CPU"
	[ "$c" = 1 ]
	[ "$u" = 1 ]
	[ "$total" -ge "$3" ]
	[ "$total" -lt 5000000000 ]
	[ "$off" -ge "$4" ]
	[ "$off" -le "$total" ]
}

# shape FILE: the merged tree with its counts and marks, and what spanstat
# closed, lost or did not see end; no times
shape() {
	jq -c '[.spans.merged.nodes[] | [.depth, .name, .count, .unfinished]],
		(.spans.decode | [.spans, .unfinished, .unmatched, .no_exit, .dropped])' "$1"
}

# open_run MODE FILE HOW: span_open HOW with its spans aggregated, streamed
# (--perfetto) or recorded (record, then report --json), into FILE
open_run() {
	case $1 in
	record)
		run "$SPANSTAT" record -o r.rec -e task-clock -- "${@:3}"
		"$SPANSTAT" report --json="$2" r.rec >/dev/null
		;;
	*) run "$SPANSTAT" $(mode_opts "$1") --json="$2" --spans -e task-clock -- "${@:3}" ;;
	esac
}

@test "a span open at exit, _exit, abort, exec or pthread_exit ends at the end, its sleep off-CPU, in every mode" {
	ulimit -c 0
	local how mode status_of
	declare -A status_of=([exit]=3 [_exit]=3 [abort]=134 [exec]=0 [thread]=0)
	for how in exit _exit abort exec thread; do
		for mode in aggregate stream record; do
			open_run "$mode" "$mode.json" "$OPEN" "$how"
			assert_equal "$status" "${status_of[$how]}"
			# "outer": a 10 ms spin, then 100 ms asleep, then the end
			open_ok "$mode.json" outer 110000000 95000000
		done
		assert_equal "$(shape stream.json)" "$(shape aggregate.json)"
		assert_equal "$(shape record.json)" "$(shape aggregate.json)"
		assert_equal "$(jq -c '.spans.decode | [.unfinished, .no_exit]' aggregate.json)" '[1,0]'
		# the exec'd image's own span is there, closed by itself
		[ "$how" != exec ] ||
			assert_equal "$(jq -c '[.spans.merged.nodes[] | select(.name == "after") | .count, .unfinished]' aggregate.json)" '[1,0]'
	done
}

@test "a span open when the process is killed from outside (SIGKILL) ends at the kill, in every mode" {
	local mode pid i
	for mode in aggregate stream record nooff; do
		# each run its own file: no pid of an earlier one read by mistake
		: >"out.$mode"
		case $mode in
		record) "$SPANSTAT" record -o r.rec -e task-clock -- "$OPEN" kill >"out.$mode" 2>err.txt & ;;
		nooff) "$SPANSTAT" --no-off-cpu --json=$mode.json --spans -e task-clock -- "$OPEN" kill >"out.$mode" 2>err.txt & ;;
		*) "$SPANSTAT" $(mode_opts "$mode") --json=$mode.json --spans -e task-clock -- "$OPEN" kill >"out.$mode" 2>err.txt & ;;
		esac
		local spid=$!
		pid=
		for i in $(seq 100); do
			pid=$(awk '$1 == "sleeping" { print $2 }' "out.$mode")
			[ -z "$pid" ] || break
			sleep 0.1
		done
		[ -n "$pid" ]
		sleep 0.2
		kill -KILL "$pid"
		local st=0
		wait "$spid" || st=$?
		assert_equal "$st" 137
		[ "$mode" != record ] || "$SPANSTAT" report --json=record.json r.rec >/dev/null
		[ "$mode" = nooff ] && continue
		# a 10 ms spin, then asleep from before "sleeping" until the kill
		open_ok "$mode.json" outer 210000000 190000000
	done
	assert_equal "$(shape stream.json)" "$(shape aggregate.json)"
	assert_equal "$(shape record.json)" "$(shape aggregate.json)"
	assert_equal "$(jq -c '.spans.decode | [.unfinished, .no_exit]' aggregate.json)" '[1,1]'
	# without the off-CPU split the kernel still says when the process ended
	assert_equal "$(jq -c '[.spans.merged.nodes[] | select(.name == "outer") | .count, .unfinished, .off_cpu_ns]' nooff.json)" '[1,1,null]'
	[ "$(jq '[.spans.merged.nodes[] | select(.name == "outer") | .total_ns] | first' nooff.json)" -ge 210000000 ]
}

@test "a -finstrument-functions main that calls exit ends at the exit, in every mode" {
	local mode
	for mode in aggregate stream record; do
		open_run "$mode" "$mode.json" "$OPEN_F" finstr
		assert_success
		# main: step (a 10 ms spin), then 100 ms asleep in a function that is
		# no span, then exit()
		open_ok "$mode.json" main 110000000 95000000
		assert_equal "$(jq -c '[.spans.merged.nodes[] | select(.name == "step") | .count, .unfinished, .depth]' "$mode.json")" '[1,0,1]'
	done
	assert_equal "$(shape stream.json)" "$(shape aggregate.json)"
	assert_equal "$(shape record.json)" "$(shape aggregate.json)"
}

@test "a span spanstat closed carries one mark everywhere: unfinished" {
	local mode
	for mode in aggregate stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --flamechart=c.svg \
			--spans -e task-clock -- "$OPEN" exit
		assert_equal "$status" 3
		# the span table: after the path and after the name, the others bare
		assert_line --regexp '^ +1 .*  outer  \(1 unfinished\)$'
		assert_equal "$(grep -c '  outer  (1 unfinished)$' <<<"$output")" 2
		assert_equal "$(grep -c '  outer;step$' <<<"$output")" 1
		assert_equal "$(grep -c '  step$' <<<"$output")" 1
		assert_line ' span data: 1 unfinished span closed at exit'
		# JSON: the node's count of them
		assert_equal "$(jq -c '[.spans.merged.nodes[] | [.name, .unfinished]]' x.json)" '[["outer",1],["step",0]]'
		# the flame chart's tooltip
		assert_equal "$(grep -o '[^>]*unfinished[^<]*' c.svg | sed 's/(.*,/(/')" 'outer ( unfinished)'
	done
	# Perfetto, decoded as trace_processor reads it: the slice carries the
	# argument "unfinished", its child not
	pf_load s.pftrace
	assert_equal "$(awk '$1 == "S" { print $6, $7 }' s.pftrace.ev | sort)" "$(printf '%s\n' 'outer 1' 'outer;step 0')"
	assert_equal "$(grep -c 'name: "unfinished"' s.pftrace.txt)" 1
}

@test "with -r, a run killed with spans open keeps its end until the stream's: every run's spans end at its kill" {
	local mode
	for mode in aggregate stream; do
		run "$SPANSTAT" -r 2 $(mode_opts "$mode") --json=$mode.json --spans -e task-clock -- "$OPEN" selfkill
		assert_equal "$status" 137
		# two "outer", each a 10 ms spin and 100 ms asleep before the kill
		read -r c u total off < <(jq -r '[.spans.merged.nodes[] | select(.name == "outer")] | first
			| "\(.count) \(.unfinished) \(.total_ns) \(.off_cpu_ns)"' $mode.json)
		echo "$mode: outer $c x, $u unfinished, $total ns, $off ns off-CPU"
		[ "$c" = 2 ]
		[ "$u" = 2 ]
		[ "$total" -ge 220000000 ]
		[ "$total" -lt 10000000000 ]
		[ "$off" -ge 190000000 ]
		[ "$off" -le "$total" ]
	done
	assert_equal "$(shape stream.json)" "$(shape aggregate.json)"
}

# late_lib NAME [FLAGS...]: span_late_lib built as NAME.so in the test's
# directory, not linked with libspanstat (its destructor runs after the
# library's)
late_lib() {
	local name=$1
	shift
	env -u CFLAGS -u LDFLAGS ${CC%% *} -O2 -g -fPIC -shared -I"$SPANSTAT_INCLUDEDIR" "$@" \
		"$WORKLOADS/span_late_lib.c" -o "$name.so"
}

@test "events after the exit path (a late destructor's) are counted and said, aggregated, streamed and recorded" {
	local prog how mode n late
	prog=$(build_workload span_late -ldl $(span_link_flags))
	late_lib liblate
	late_lib liblatef -DNO_API -finstrument-functions
	late_lib liblatepg -DNO_API -pg
	late_lib liblatefe -DNO_API -pg -mfentry
	# exit: an exit handler that runs after every destructor, surely after
	# the library's; liblate*: a destructor that glibc runs after it here
	# (the order of unrelated objects' is glibc's: a span it let through
	# would be counted, not lost)
	# (liblatepg, liblatefe: -pg's trampolines count a call's begin and end)
	declare -A events=([exit]=14 [liblate]=14 [liblatef]=16 [liblatepg]=16 [liblatefe]=16)
	for how in exit liblate liblatef liblatepg liblatefe; do
		n=${events[$how]}
		local arg=exit
		[ "$how" = exit ] || arg=$PWD/$how.so
		for mode in aggregate stream record; do
			if [ "$mode" = record ]; then
				run "$SPANSTAT" record -o r.rec -e task-clock -- "$prog" "$arg"
				assert_success
				run "$SPANSTAT" report --json=x.json r.rec
			else
				run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock \
					-- "$prog" "$arg"
			fi
			assert_success
			echo "$how $mode"
			# the spans before the exit path are all there
			case $how in liblate?*) ;; *) assert_equal "$(count work x.json)" 5 ;; esac
			# those after it are in no span, but counted and said
			late=$(jq '.spans.decode.late' x.json)
			if [ "$how" = exit ] || [ "$late" != 0 ]; then
				assert_equal "$late" "$n"
				assert_equal "$(jq '[.spans.merged.nodes[] | select(.name == "late")] | length' x.json)" 0
				assert_line --partial " span data: $n events recorded after their process's exit path, not in the spans"
			else # this glibc ran the destructor first: every span is there
				case $how in
				liblate?*) assert_equal "$(count late_step x.json)" 7 ;;
				*) assert_equal "$(count late x.json)" 7 ;;
				esac
			fi
			assert_equal "$(jq -c '.spans.decode | [.no_exit, .unfinished, .dropped]' x.json)" "[0,0,0]"
		done
	done
	# the folded output's run says it too, in JSON and without the table
	run "$SPANSTAT" --folded=f.txt --json=x.json -- "$prog" exit
	assert_success
	assert_equal "$(jq '.spans.decode.late' x.json)" 14
	assert_line --partial " span data: 14 events recorded after their process's exit path"
	# spans that all came late: said so, not "began no span"
	run "$SPANSTAT" --spans -- "$prog" only
	assert_success
	assert_line " no spans collected: the command's only span events came after its exit path (below)"
	assert_line --partial " span data: 14 events recorded after their process's exit path"
	refute_output --partial "began no span"
	# a process without the ring file (its environment lost it) cannot
	# count them: unknown, never 0
	run "$SPANSTAT" --json=x.json -- sh -c "unset SPANSTAT_SHM; exec '$prog' exit"
	assert_success
	assert_equal "$(jq -c '.spans.decode | [.late, .late_counted, .late_uncounted_processes]' x.json)" "[null,0,1]"
	assert_line " span data: events recorded after their process's exit path, not in the spans: not known; 1 process without the ring file could not count its own"
	# one that counted and one that could not: at least what was counted
	run "$SPANSTAT" --json=x.json -- sh -c "'$prog' exit; unset SPANSTAT_SHM; '$prog' exit"
	assert_success
	assert_equal "$(jq -c '.spans.decode | [.late, .late_counted, .late_uncounted_processes]' x.json)" "[null,14,1]"
	assert_line " span data: events recorded after their process's exit path, not in the spans: at least 14; 1 process without the ring file could not count its own"
	refute_line --partial " span data: 14 events"
	# a record file older than the count does not know it: null, and
	# nothing said (a window keeps decoded events, as files before the
	# raw capture did: a raw one's replay counts them again)
	"$SPANSTAT" record --keep-last=1G -o r.rec -e task-clock -- "$prog" exit >/dev/null 2>&1
	python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec old.rec end:20
	run "$SPANSTAT" report --json=old.json old.rec
	assert_success
	assert_equal "$(jq -c '.spans.decode | [.late, .misnested, .no_exit]' old.json)" "[null,0,0]"
	refute_output --partial "exit path"
}

@test "a process the target leaves running is said running, not lost, in every mode" {
	# the child records 10 "child" spans, tells its parent, and lives on 5 s
	# after the target ended: what it recorded before is all there; what it
	# records later is not seen, and the summary says so instead of calling
	# its end unseen (killed or _exit)
	local mode
	for mode in aggregate stream record; do
		mode_run "$mode" "$EXITW" orphan
		assert_success
		assert_output --partial "1 process still running when the run ended (what it records from then on is not seen)"
		refute_output --partial "end was not seen"
		assert_equal "$(count child x.json)" 10
		assert_equal "$(count parent x.json)" 10
		assert_equal "$(count later x.json)" 0
		assert_equal "$(jq -c '.spans.decode | [.running, .no_exit, .dropped]' x.json)" "[1,0,0]"
		# "held", open while the run ended, ends there, unfinished: its
		# 200 ms and more asleep are its time, off the CPU, not lost at its
		# last event
		assert_output --partial "1 unfinished span closed at exit or at the run's end"
		assert_equal "$(jq -c '[.spans.merged.nodes[] | select(.name == "held") |
			[.count, .unfinished, .total_ns >= 190000000, .off_cpu_ns >= 180000000]]' x.json)" \
			'[[1,1,true,true]]'
	done
	# a process killed before the end is no running one
	run "$SPANSTAT" --json=x.json -e task-clock -- "$EXITW" kill
	assert_equal "$(jq -c '.spans.decode | [.running, .no_exit]' x.json)" "[0,1]"
}

@test "a process left running that recorded nothing yet is said running too, in every mode" {
	# the child records nothing before the target ends, then 10x "later":
	# unseen, which the summary says instead of nothing
	local mode
	for mode in aggregate stream record; do
		mode_run "$mode" "$EXITW" quiet
		assert_success
		assert_output --partial "1 process still running when the run ended (what it records from then on is not seen)"
		refute_output --partial "end was not seen"
		assert_equal "$(count parent x.json)" 10
		assert_equal "$(count later x.json)" 0
		assert_equal "$(jq -c '.spans.decode | [.running, .no_exit, .dropped]' x.json)" "[1,0,0]"
	done
}

@test "a process whose pid a thread of another took since is not running" {
	# /proc/PID answers for a thread's tid too: the child that ended unseen
	# must not pass for running when an orphan's thread bears its pid
	local max mode tr
	max=$(cat /proc/sys/kernel/pid_max)
	[ "$max" -le 65536 ] || skip "pid_max $max: the pid space does not wrap in a test's time"
	tr=$(build_workload span_tidreuse $(span_link_flags))
	for mode in aggregate stream record; do
		mode_run "$mode" "$tr"
		[[ $cmd_output != *"not taken"* ]] || skip "the pid went to another process"
		assert_success
		assert_output --partial "1 process still running when the run ended"
		assert_equal "$(jq -c '.spans.decode | [.running, .no_exit]' x.json)" "[1,0]"
		sleep 2 # the orphan's thread ends before the next run
	done
}

@test "running is asked of the process the records came from: a live thread, not a namesake pid" {
	# a child whose main thread ended (pthread_exit) while another records
	# and lives on: /proc shows its leader a zombie, the process runs
	run "$SPANSTAT" --json=x.json --spans -e task-clock -- "$EXITW" leader 3>&-
	assert_success
	assert_output --partial "1 process still running when the run ended"
	refute_output --partial "end was not seen"
	assert_equal "$(count thread x.json)" 10
	assert_equal "$(jq -c '.spans.decode | [.running, .no_exit]' x.json)" "[1,0]"
	# killed in a pid namespace: its pid there (2) is another process here
	# (kthreadd), which is no process of the target still running
	local ns=(unshare -p -f)
	[ "$(id -u)" = 0 ] || ns=(unshare -U -r -p -f)
	"${ns[@]}" true 2>/dev/null || skip_or_fail "no pid namespace (unshare -p -f)"
	run "$SPANSTAT" --json=x.json --spans -e task-clock -- "${ns[@]}" sh -c "\"$EXITW\" kill; true"
	assert_success
	assert_equal "$(count work x.json)" 1000
	assert_equal "$(jq -c '.spans.decode | [.running, .no_exit]' x.json)" "[0,1]"
	refute_output --partial "still running"
}
