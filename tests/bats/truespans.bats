#!/usr/bin/env bats
# truespans.bats: spans stay true in programs that are merely unusual:
# signal handlers that record spans while the recorder is busy, processes
# made without fork(), code unloaded and loaded again at the same address,
# a vfork()ed child's spans of every kind (made on its parent's memory),
# threads the kernel gives a tid an ended thread had.
# Every case runs in both modes (aggregating in the target, and streaming
# through the record file) and must give the same tree and exact counts.

load helpers

setup_file() {
	export SIG_F SIG_API RAWFORK
	SIG_F=$(build_workload span_signal -finstrument-functions)
	SIG_API=$(build_workload span_signal -DAPI $(span_link_flags))
	RAWFORK=$(build_workload span_rawfork $(span_link_flags))
	export GAP SWLOST SCRIPT
	GAP=$(build_workload span_gap $(span_link_flags))
	SCRIPT=$(build_workload span_script -I"$WORKLOADS" $(span_link_flags))
	SWLOST=$(build_workload span_swlost $(span_link_flags))
	export FORKWAIT WAITROOM
	FORKWAIT=$(build_workload span_forkwait $(span_link_flags))
	WAITROOM=$(build_workload span_waitroom $(span_link_flags))
	export LOOP CALFORK
	LOOP=$(build_workload span_loop -finstrument-functions $(span_link_flags))
	CALFORK=$(build_workload span_calfork $(span_link_flags))
	export TIDAGAIN
	TIDAGAIN=$(build_workload span_tidagain -lpthread $(span_link_flags))
	export VF_FI VF_PG
	VF_FI=$(build_workload span_vfork -finstrument-functions $(span_link_flags))
	if [ "$(uname -m)" = x86_64 ]; then # -pg builds are traced there only
		VF_PG=$(build_workload span_vfork -pg $(span_link_flags))
	fi
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

@test "signal handlers: -finstrument-functions calls in handlers nest where they interrupted, exactly" {
	local mode
	for mode in aggregate stream; do
		mode_spans "$mode" s.json -- "$SIG_F" 3000000 2000
		read -r t u c < <(sed -E 's/ticks=([0-9]+) usr1=([0-9]+) calls=([0-9]+)/\1 \2 \3/' stdout)
		[ "$t" -gt 10 ]
		assert_equal "$(span_sum tick s.json)" "$t"
		assert_equal "$(span_sum on_usr1_body s.json)" "$u"
		assert_equal "$(span_sum leaf s.json)" "$((c + t + u))"
		# every path starts at main; no handler nests in itself
		span_paths s.json >paths
		run grep -E ' (on_alarm|tick|leaf|work)(;|$)|on_alarm.*;on_alarm' paths
		assert_failure 1
		assert_equal "$(jq -c '.spans.decode | [.unmatched, .unfinished, .dropped]' s.json)" "[0,0,0]"
	done
}

@test "signal handlers: API spans at 20 kHz are neither dropped nor unmatched, in both modes" {
	local mode
	for mode in aggregate stream; do
		mode_spans "$mode" s.json -- "$SIG_API" 2000000 20000
		read -r t u c < <(sed -E 's/ticks=([0-9]+) usr1=([0-9]+) calls=([0-9]+)/\1 \2 \3/' stdout)
		[ "$t" -gt 10 ]
		assert_equal "$(span_sum tick s.json)" "$t"
		assert_equal "$(span_sum usr1 s.json)" "$u"
		assert_equal "$(span_sum leaf s.json)" "$((c + t + u))"
		assert_equal "$(span_sum work s.json)" 1
		span_paths s.json >paths
		run grep -E ' (tick|leaf|usr1)(;|$)|tick.*;tick' paths
		assert_failure 1
		assert_equal "$(jq -c '.spans.decode | [.unmatched, .unfinished, .dropped]' s.json)" "[0,0,0]"
	done
}

@test "processes made by _Fork(), raw clone(SIGCHLD) and fork(): each under its own pid" {
	local mode how
	for mode in aggregate stream; do
		for how in _Fork clone fork; do
			mode_spans "$mode" f.json -- "$RAWFORK" "$how"
			read -r _ ppid _ cpid <stdout
			[ "$cpid" -gt 0 ]
			# the parent's spans under its pid, the child's under its own
			assert_equal "$(jq "[.spans.threads[] | select(.pid == $ppid) | .nodes[]
				| select(.name == \"before\" or .name == \"after\") | .count] | add" f.json)" 30
			assert_equal "$(jq "[.spans.threads[] | select(.pid == $ppid) | .nodes[]
				| select(.name == \"parent\") | .count] | add" f.json)" 1
			assert_equal "$(jq "[.spans.threads[] | select(.pid == $cpid) | .nodes[]
				| select(.name == \"child-step\") | .count] | add" f.json)" 30
			assert_equal "$(jq "[.spans.threads[] | select(.pid == $cpid and .tid == $cpid)] | length" f.json)" 1
			assert_equal "$(jq "[.spans.threads[] | select(.pid == $ppid) | .nodes[]
				| select(.name | startswith(\"child\"))] | length" f.json)" 0
			assert_equal "$(jq -c '.spans.decode | [.unmatched, .dropped, .lost_records]' f.json)" "[0,0,0]"
		done
	done
}

@test "code unloaded and another library loaded at its address: each named after what was mapped" {
	local mode n
	for n in alpha beta; do
		env -u CFLAGS -u LDFLAGS ${CC%% *} -O2 -g -fPIC -shared -finstrument-functions -DNAME=$n \
			"$WORKLOADS/span_reload_lib.c" -o "lib$n.so"
	done
	local reload
	reload=$(build_workload span_reload -finstrument-functions -ldl)
	for mode in aggregate stream; do
		mode_spans "$mode" r.json -- "$reload" "$PWD"
		# the case under test: the loader put beta where alpha was
		[ "$(cat stdout)" = same ] || skip_or_fail "the loader moved libbeta.so"
		span_paths r.json >paths
		run cat paths
		assert_line '2 main;alpha_entry'
		assert_line '10 main;alpha_entry;alpha_leaf'
		assert_line '1 main;beta_entry'
		assert_line '5 main;beta_entry;beta_leaf'
		assert_equal "$(jq -c '.spans.decode | [.unmatched, .unfinished, .dropped]' r.json)" "[0,0,0]"
	done
}

@test "setup is not a span's: a thread's first span and a name's first use cost what others cost" {
	local first
	first=$(build_workload span_first $(span_link_flags))
	local mode
	for mode in aggregate stream; do
		mode_spans "$mode" f.json -- "$first" 50
		assert_equal "$(span_sum first f.json)" 50
		# the least of 50 empty spans: a thread's start (buffers, a ring
		# slot, its name: tens of microseconds) and a name's definition (a
		# write to the pipe: microseconds) are outside them; the least is
		# robust to the odd preemption under load
		local fmin nmin
		fmin=$(jq '[.spans.threads[] | .nodes[] | select(.name == "first") | .total_ns] | min' f.json)
		nmin=$(jq '[.spans.threads[] | .nodes[] | select(.name | startswith("named-")) | .total_ns] | min' f.json)
		[ "$fmin" -lt 10000 ] || fail "least first span $fmin ns"
		[ "$nmin" -lt 2000 ] || fail "least first use of a name $nmin ns"
	done
}

@test "the target's own limits: a few descriptors per process, address space only for the threads' slots" {
	local res base
	res=$(build_workload span_resources $(span_link_flags))
	base=$("$res" 100 0 | sed -n 's/^fds=//p')
	local mode
	for mode in aggregate stream; do
		mode_spans "$mode" r.json -- "$res" 100 0
		# the pipe's two ends and the inherited pipe end (close-on-exec):
		# 3 whatever the number of threads
		[ "$(sed -n 's/^fds=//p' stdout)" -le $((base + 3)) ] || fail "$(cat stdout) against $base alone"
		assert_equal "$(span_sum t r.json)" 100
	done
	# --span-events: a thread (the 100 and the main thread) reads its group
	# through its leader, one descriptor; the members' are closed once mapped
	"$SPANSTAT" --spans --json=e.json --span-events=task-clock,page-faults,context-switches \
		-- "$res" 100 0 >stdout 2>stderr
	[ "$(sed -n 's/^fds=//p' stdout)" -le $((base + 3 + 101)) ] || fail "$(cat stdout) against $base alone"
	assert_equal "$(span_sum t e.json)" 100
	[ "$(jq '[.spans.merged.nodes[] | select(.name == "t") | .metrics["context-switches"]] | add' e.json)" -ge 100 ]
	# a program that may reserve 1.5 GB reserves 1 GB of it itself (the
	# limit is the target's alone: an ASan spanstat reserves terabytes)
	for mode in aggregate stream; do
		mode_spans "$mode" r.json -- sh -c 'ulimit -v 1500000 && exec "$0" 10 1000' "$res"
		assert_equal "$(grep alloc= stdout)" alloc=ok
		assert_equal "$(span_sum t r.json)" 10
	done
}

@test "refused system calls: what could not be sent is counted and said" {
	local secc mode
	secc=$(build_workload span_seccomp $(span_link_flags))
	for mode in aggregate stream; do
		mode_spans "$mode" c.json -- "$secc"
		assert_equal "$(span_sum before c.json)" 20
		# five new names could not be defined: their 10 events are dropped,
		# and the exit record could not be sent either
		assert_equal "$(jq -c '.spans.decode | [.dropped, .no_exit]' c.json)" "[10,1]"
		run grep -h 'span data:' stderr $([ "$mode" = aggregate ] || echo report.out)
		assert_output --partial '10 events dropped by the target'
	done
}

@test "a drop never breaks a tree: spans open across it stay open, both streaming paths agree" {
	# span_gap stops spanstat inside outer;mid, so that its ring fills and
	# events are dropped: mid ends and mid2 begins among them.  After the
	# drop, outer must still be open (it spans the run), mid2 must hold
	# every "after", and nothing may be unmatched or become a root.
	local out
	for out in stream record; do
		if [ $out = stream ]; then
			run timeout 60 "$SPANSTAT" --spans --json=g.json --perfetto=g.pftrace -- "$GAP" 300000 1000
		else
			run timeout 60 "$SPANSTAT" record -o g.rec -- "$GAP" 300000 1000
			assert_success
			run timeout 60 "$SPANSTAT" report --json=g.json g.rec
		fi
		assert_success
		# said at the top of the summary and above the span table
		[ "$(grep -c '^ span data damaged: [0-9,]* events lost by the target; spans open across a drop are kept whole' <<<"$output")" -eq 2 ]
		assert_equal "$(jq -c '.spans.decode | [.unmatched, .gaps > 0, .dropped > 0]' g.json)" "[0,true,true]"
		span_paths g.json >p.txt
		cat p.txt
		assert_equal "$(grep -v ' outer;mid;inner$' p.txt)" "$(printf '%s\n' '1 outer' '1 outer;mid' '1 outer;mid2' '1000 outer;mid2;after')"
		# the target's wait for room is instrumentation, measured and said
		# the waits ended in the drop: where among the spans is unknown
		assert_line --regexp "^ instrumentation: .*; waiting for room in spanstat's buffers: [0-9.]+ [mun]?s, inside the times of the spans open meanwhile, not told in place$"
		jq -e '.spans.overhead.waited_ns > 0 and .spans.overhead.waited_ns == .spans.decode.waited_ns
			and .spans.overhead.waited_placed_ns == 0' g.json
		# marked on the thread that dropped, in JSON
		jq -e '[.spans.threads[].damage] == [{dropped: .spans.decode.dropped, gaps: 1,
			off_cpu_unplaced_ns: 0}] and .spans.decode.dropped > 0' g.json
		# outer is whole; mid ended and mid2 began inside the drop: marked
		assert_equal "$(jq -c '[.spans.merged.nodes[] | select(.unfinished > 0) | .name] | sort' g.json)" '["mid","mid2"]'
		# mid2 began after mid's last inner and before the drop ended: its
		# time is its own, not the whole drop's (inside outer, longer than
		# the 100 ms nap after the drop)
		jq -e '[.spans.merged.nodes[] | {(.name): .total_ns}] | add
			| .mid2 < .outer and .mid2 >= 100000000 and .mid < .mid2' g.json
	done
}

@test "a record whose end is lost still says at the top what its threads dropped" {
	run timeout 60 "$SPANSTAT" record -o g.rec -- "$GAP" 300000 1000
	assert_success
	# cut the END record (the totals): the threads' own drop notes remain
	head -c $(($(stat -c %s g.rec) - 21)) g.rec >cut.rec
	run timeout 60 "$SPANSTAT" report --json=cut.json cut.rec
	assert_success
	jq -e '.spans.decode.dropped == null and ([.spans.threads[].damage.dropped] | add) > 0' cut.json
	n=$(jq '[.spans.threads[].damage.dropped] | add' cut.json)
	n=$(LC_ALL=C printf "%'d" "$n" 2>/dev/null || echo "$n")
	# above the span table, as for a whole record, and the totals unknown below
	[ "$(grep -c "^ span data damaged: at least [0-9,]* events lost by the target; spans open across a drop are kept whole" <<<"$output")" -eq 2 ]
	assert_line " span data: what the target dropped or sent damaged is not known (the recording's end is lost)"
}

@test "a drop never breaks a tree: 600 spans opened inside it are all opened again" {
	# more than one piece of the thread's tale (510 begins each), with and
	# without values carried by every begin
	local ev
	for ev in "" "--span-events=task-clock,page-faults"; do
		run timeout 60 "$SPANSTAT" --spans $ev --json=g.json --perfetto=g.pftrace -- "$GAP" 300000 10 600
		assert_success
		assert_equal "$(jq -c '.spans.decode | [.unmatched, .gaps]' g.json)" "[0,1]"
		# "after" sits under outer, mid2 and all 600 deep spans
		assert_equal "$(jq '[.spans.merged.nodes[] | select(.name == "after") | .depth] | max' g.json)" 602
		assert_equal "$(span_sum deep g.json)" 600
		assert_equal "$(span_sum after g.json)" 10
	done
}

@test "a drop never breaks a tree: spans opened inside it beyond the 1,024 the target follows" {
	# 1,100 deep spans begun in the drop: the target knows the names of the
	# 1,022 below its limit (outer and mid2 are the other two); the 78
	# above are open with names it cannot tell.  Their ends must close no
	# known span, nothing is unmatched, and the loss is said.
	local out
	for out in stream record; do
		if [ $out = stream ]; then
			run timeout 60 "$SPANSTAT" --spans --json=g.json --perfetto=g.pftrace -- "$GAP" 300000 10 1100
		else
			run timeout 60 "$SPANSTAT" record -o g.rec -- "$GAP" 300000 10 1100
			assert_success
			run timeout 60 "$SPANSTAT" report --spans --json=g.json g.rec
		fi
		assert_success
		assert_equal "$(jq -c '.spans.decode | [.unmatched, .gaps, .unnamed]' g.json)" "[0,1,78]"
		assert_line --partial "78 spans begun in a drop whose names the target could not tell (not shown)"
		# "after" under outer, mid2 and the 1,022 deep spans told by name;
		# every deep span told is kept, and outer, mid and mid2 once each
		assert_equal "$(jq '[.spans.merged.nodes[] | select(.name == "after") | .depth] | max' g.json)" 1024
		assert_equal "$(span_sum deep g.json)" 1022
		assert_equal "$(span_sum after g.json)" 10
		assert_equal "$(jq -c '[.spans.merged.nodes[] | select(.depth < 2) | [.name, .count]] | sort' g.json)" '[["mid",1],["mid2",1],["outer",1]]'
		# outer holds mid2, which holds the deep spans: not closed early
		jq -e '[.spans.merged.nodes[] | {(.name): .total_ns}] | add | .mid2 < .outer and .mid2 >= 100000000' g.json
	done
}

# three_modes JSON-PREFIX SCRIPT-TOKENS...: span_script aggregating
# (PREFIX-a.json), streamed (PREFIX-s.json) and through record and report
# (PREFIX-r.json)
three_modes() {
	local pre=$1
	shift
	run timeout 60 "$SPANSTAT" --spans --json=$pre-a.json -- "$SCRIPT" "$@"
	assert_success
	run timeout 60 "$SPANSTAT" --spans --json=$pre-s.json --perfetto=$pre.pftrace -- "$SCRIPT" "$@"
	assert_success
	run timeout 60 "$SPANSTAT" record -o $pre.rec -- "$SCRIPT" "$@"
	assert_success
	run timeout 60 "$SPANSTAT" report --json=$pre-r.json $pre.rec
	assert_success
}

@test "a drop never breaks a tree: drops after drops, each beyond the 1,024 spans the target follows" {
	# r opens 1,100 deep inside outer; in a first drop 200 more r (beyond
	# what the target follows: unnamed), in a second 50 of those end and
	# 30 begin.  Every end must land: nothing unmatched, k closed where
	# the program closes it, the same outer tree in every mode.
	local tokens=(B:outer:1 B:r:1 B:k:1100 stop fill:300000 B:r:200 cont
		stop fill:300000 E:r:50 B:r:30 cont E:r:180 E:k:1100 E:r:1 E:outer:1)
	three_modes d "${tokens[@]}"
	local m
	for m in a s r; do
		assert_equal "$(jq '.spans.decode.unmatched' d-$m.json)" 0
		jq -c '[.spans.merged.nodes[] | select(.depth < 3) | [.name, .depth, .count, .unfinished]]' d-$m.json >$m.top
	done
	assert_equal "$(jq -c '.spans.decode | [.gaps, .unnamed]' d-s.json)" "[2,230]"
	assert_equal "$(jq -c '.spans.decode | [.gaps, .unnamed]' d-r.json)" "[2,230]"
	diff a.top s.top
	diff a.top r.top
	grep -q '\["k",2,1,0\]' a.top
	# ten drops, each inside the last and deeper than 1,024: ten groups
	tokens=(B:outer:1 B:k:1100)
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do tokens+=(stop fill:300000 B:u:20 cont B:n:1); done
	for i in 1 2 3 4 5 6 7 8 9 10; do tokens+=(E:n:1 E:u:20); done
	tokens+=(E:k:1100 E:outer:1)
	run timeout 120 "$SPANSTAT" --spans --json=t.json --perfetto=t.pftrace -- "$SCRIPT" "${tokens[@]}"
	assert_success
	assert_equal "$(jq -c '.spans.decode | [.unmatched, .gaps, .unnamed]' t.json)" "[0,10,200]"
	assert_equal "$(span_sum n t.json)" 10
	assert_equal "$(span_sum k t.json)" 1100
}

@test "a longjmp over spans deeper than the target follows ends them all, after a drop too" {
	# the jump ends 1,100 r (76 beyond what the target follows by name, 100
	# more begun in a drop): "after" must come back to depth 1, in every
	# mode, and nothing is unmatched
	local how
	for how in "" "stop fill:300000 B:r:100 cont I:x:1"; do
		# shellcheck disable=SC2086 # the tokens split on purpose
		three_modes j B:round:1 setjmp B:r:1100 $how longjmp B:after:1 E:after:1 E:round:1
		local m
		for m in a s r; do
			assert_equal "$(jq -c '[.spans.decode.unmatched, ([.spans.merged.nodes[] | select(.name == "after") | .depth] | max)]' j-$m.json)" "[0,1]"
		done
	done
}

@test "a drop right before an exec is told: the old image's last words wait for room" {
	# span_gap execs /bin/true right after waking spanstat, its ring still
	# full: without waiting, the tale (and the drop's count) was lost in
	# most runs with values, and the summary said nothing
	local i ev
	for ev in "" "--span-events=task-clock"; do
		for i in 1 2 3; do
			run timeout 60 "$SPANSTAT" --spans $ev --json=g.json --perfetto=g.pftrace -- "$GAP" 300000 10 600 exec
			assert_success
			assert_equal "$(jq -c '.spans.decode | [.unmatched, .gaps, .dropped > 0]' g.json)" "[0,1,true]"
			assert_line --regexp '^ span data damaged: [0-9,]+ events lost by the target'
		done
	done
	run timeout 60 "$SPANSTAT" record -o g.rec -- "$GAP" 300000 10 0 exec
	assert_success
	run timeout 60 "$SPANSTAT" report --json=g.json g.rec
	assert_equal "$(jq -c '.spans.decode | [.unmatched, .gaps, .dropped > 0]' g.json)" "[0,1,true]"
}

@test "execs that fail in threads, with values: another thread's flush drops nothing" {
	# with values every event takes the thread's busy flag, which each
	# failing exec's flush holds a moment: such events were dropped
	# without a word to the shadow stack (unmatched ends in 9 of 9 runs)
	local prog
	prog=$(build_workload span_execfail -pthread $(span_link_flags))
	run timeout 120 "$SPANSTAT" --spans --span-events=task-clock,page-faults --perfetto=x.pftrace \
		--json=x.json -- "$prog" 3 2000
	assert_success
	assert_equal "$(jq -c '.spans.decode | [.unmatched, .dropped]' x.json)" "[0,0]"
	assert_equal "$(span_sum try x.json)" 6000
}

@test "an exec while another thread is in the middle of a drop: the drop is told" {
	# the exec's flush finds the dropping thread busy, or its ring full:
	# what it dropped goes through the pipe (2 runs in 10 were silent)
	local prog i
	prog=$(build_workload span_execdrop -I"$WORKLOADS" -pthread $(span_link_flags))
	for i in 1 2 3 4 5; do
		run timeout 60 "$SPANSTAT" --spans --json=x.json --perfetto=x.pftrace -- "$prog"
		assert_success
		assert_equal "$(jq -c '.spans.decode | [.unmatched, .dropped > 0]' x.json)" "[0,true]"
		assert_line --regexp '^ span data damaged: [0-9,]+ events lost by the target'
	done
}

@test "a drop is marked on its rank: the rank table says which ranks lost span data, and how much" {
	run timeout 60 "$SPANSTAT" record -o r0.rec -- "$GAP" 300000 1000
	assert_success
	run timeout 60 "$SPANSTAT" record -o r1.rec -- "$GAP" 3 10
	assert_success
	run timeout 60 "$SPANSTAT" report --json=r.json r0.rec r1.rec
	assert_success
	# said above the rank table, naming the rank
	assert_line --regexp '^ span data lost by rank 0 \([0-9,]+ events, 1 gap\): its span times leave out what was lost, so an imbalance may be the drop.s$'
	jq -e '.ranks.ranks | map([.rank, .dropped > 0, .gaps]) == [[0, true, 1], [1, false, 0]]' r.json
	# per thread, and the same in the record's report as live
	jq -e '[.spans.threads[].damage.gaps] | sort == [0, 1]' r.json
}

@test "on/off-CPU never lost silently: switched spans whose notes find no room are said and measured" {
	# span_swlost stops spanstat while an aggregating thread makes 20,000
	# spans that each sleep: their notes outgrow the thread's ring.  The
	# split must be said incomplete, with the CPU time the spans hold
	# beyond what the thread ran, and never a silent 0 off-CPU.
	run timeout 120 "$SPANSTAT" --spans --json=w.json -- "$SWLOST" 20000
	assert_success
	assert_line --regexp '^ on/off-CPU split incomplete: [0-9,]+ switch records lost \(.*\); the spans of 1 thread hold [0-9.]+ [mu]?s more CPU time than it ran; cpu times may be too high and off-cpu times too low$'
	jq -e '.spans.decode.switches_lost > 0 and ([.spans.threads[].damage.off_cpu_unplaced_ns] | add) > 0' w.json
	# streamed, nothing is lost: the spans wait for room, and the split is whole
	run timeout 120 "$SPANSTAT" --spans --json=s.json --perfetto=s.pftrace -- "$SWLOST" 2000
	assert_success
	refute_line --partial 'split incomplete'
	jq -e '.spans.decode.switches_lost == 0 and ([.spans.threads[].damage.off_cpu_unplaced_ns] | add) == 0' s.json
}

@test "on/off-CPU split checked: no span's CPU time exceeds what its thread ran, in both modes" {
	# span_truth: spans that spin and sleep known times, in two threads,
	# one open at exit; the check finds nothing to say in either mode
	local truth out
	truth=$(build_workload span_truth -pthread $(span_link_flags))
	for out in --spans --perfetto=t.pftrace; do
		run timeout 60 "$SPANSTAT" $out --json=t.json -- "$truth"
		assert_success
		refute_line --partial 'split incomplete'
		jq -e '.spans.decode.switches_lost == 0 and ([.spans.threads[].damage.off_cpu_unplaced_ns] | add) == 0
			and ([.spans.merged.nodes[] | .self_cpu_ns >= 0] | all)' t.json
	done
	# with values read at every begin (a system call, where a switch often
	# lands), an aggregating thread must still notice every switch
	local threads i
	threads=$(build_workload span_threads -pthread $(span_link_flags))
	for i in 1 2 3; do
		run timeout 60 "$SPANSTAT" --spans --span-events=page-faults,context-switches --json=t.json -- "$threads"
		assert_success
		refute_line --partial 'split incomplete'
		jq -e '([.spans.threads[].damage.off_cpu_unplaced_ns] | add) == 0' t.json
	done
}

@test "waiting for spanstat is measured once: a fork child does not tell its parent's waits again" {
	# the parent waits while spanstat is stopped, then forks 5 children
	# that never wait: every process's waits together fit in the run
	run timeout 60 "$SPANSTAT" --spans --json=w.json --perfetto=w.pftrace -- "$FORKWAIT" 1000000 5
	assert_success
	jq -e '.spans.overhead.waited_ns > 0 and .spans.overhead.waited_ns < .runs[0].rusage.elapsed_ns' w.json
}

@test "waiting for spanstat: told at its place, taken out of the spans open meanwhile by --compensate" {
	# span_waitroom stops spanstat for 50 ms inside outer;mid while it
	# records "x" spans, so that it waits for room and goes on without a
	# drop.  Every wait is told where it happened (inside outer, mid and
	# the x it began in); --compensate takes it out of exactly those.
	local out
	for out in stream record; do
		if [ $out = stream ]; then
			run timeout 60 "$SPANSTAT" --spans --json=raw.json --perfetto=w.pftrace -- "$WAITROOM" 100000 50
			assert_success
			run timeout 60 "$SPANSTAT" --spans --compensate --json=comp.json --perfetto=w.pftrace -- "$WAITROOM" 100000 50
		else
			run timeout 60 "$SPANSTAT" record -o w.rec -- "$WAITROOM" 100000 50
			assert_success
			run timeout 60 "$SPANSTAT" report --json=raw.json w.rec
			assert_success
			assert_line --regexp "^ instrumentation: .*; waiting for room in spanstat's buffers: [0-9.]+ ms, inside the times of the spans open meanwhile \\(--compensate takes it out\\)$"
			run timeout 60 "$SPANSTAT" report --compensate --json=comp.json w.rec
		fi
		assert_success
		assert_line --regexp "^ instrumentation: .*; waiting for room in spanstat's buffers: [0-9.]+ ms, taken out of the spans open meanwhile$"
		local f
		for f in raw.json comp.json; do
			# nothing dropped, every wait told in place, most of the stop's
			# 50 ms (filling the ring takes part of it on a loaded machine)
			jq -e '.spans.decode.dropped == 0 and .spans.overhead.waited_ns >= 20000000
				and .spans.overhead.waited_placed_ns == .spans.overhead.waited_ns' $f
		done
		# raw: outer holds every wait, mid the stop's (smaller waits follow
		# while spanstat catches up)
		jq -e '([.spans.merged.nodes[] | {(.name): .total_ns}] | add) as $t
			| .spans.overhead.waited_ns as $w | $t.outer >= $w and $t.mid >= 50000000' raw.json
		# compensated: the wait is out of outer, mid and x (y, 100,000
		# spans of a few ns each, may lose all its time to the events' cost
		# model: compared below, where one record gives both); no span's
		# off-CPU time exceeds its time
		jq -e '([.spans.merged.nodes[] | {(.name): .total_ns}] | add) as $t
			| .spans.overhead.waited_ns as $w | $t.outer < $w / 2 and $t.mid < $w / 2
			and $t.x < $w / 2 and $t.y >= 0' comp.json
		jq -e '[.spans.merged.nodes[] | .off_cpu_ns <= .total_ns and .self_off_cpu_ns <= .self_ns] | all' comp.json
		if [ $out = record ]; then
			# one record, both ways: what left the outer span is the wait and
			# the events' cost, to the nanosecond's rounding
			jq -s -e '(.[0].spans.merged.nodes[0].total_ns - .[1].spans.merged.nodes[0].total_ns) as $d
				| .[1].spans.overhead.waited_placed_ns as $w
				| (.[1].spans.overhead.ns_per_event * .[1].spans.overhead.events) as $e
				| $d >= $w and $d <= $w + $e + 1000' raw.json comp.json
			# and no span grew: y lost at most its events' cost and the
			# waits told inside it
			jq -s -e '[.[0].spans.merged.nodes, .[1].spans.merged.nodes] | transpose
				| map(.[0].total_ns >= .[1].total_ns) | all' raw.json comp.json
		fi
	done
}

@test "the cost measured during the run stays out of the spans: exact counts, no name of its own" {
	# Aggregating threads sample the events' cost every 65536 events on
	# the library's own scratch tree; nothing of it may reach a thread's
	# tree or stream: 2 threads of 300,000 pairs, and 500,000 instrumented
	# calls (the --compensate line measured during the run).
	run timeout 60 "$SPANSTAT" --spans --compensate --json=t.json -- "$LOOP" threads 2 300000
	assert_success
	assert_line --regexp "^ instrumentation: [0-9,]+ events, about [0-9.]+ ns each"
	assert_equal "$(jq -c '.spans.decode | [.unmatched, .unfinished, .dropped]' t.json)" "[0,0,0]"
	assert_equal "$(jq -c '[.spans.merged.nodes[] | .name] | unique' t.json)" '["pair"]'
	assert_equal "$(jq '[.spans.merged.nodes[] | .count] | add' t.json)" 600000
	jq -e '.spans.overhead.ns_per_event > 0 and .spans.overhead.events == 1200000' t.json
	run timeout 60 "$SPANSTAT" --spans --json=c.json -- "$LOOP" calls 500000
	assert_success
	assert_equal "$(jq -c '[.spans.merged.nodes[] | .name] | unique' c.json)" '["leaf"]'
	assert_equal "$(jq '[.spans.merged.nodes[] | .count] | add' c.json)" 500000
}

@test "the cost measured during the run: a fork while another thread samples leaves the child nothing of it" {
	# Two threads record all along, so that one of them is often inside a
	# sample when the main thread forks: the child's copy of that sample,
	# cut short, must not turn its later samples into spans of its own.
	run timeout 120 "$SPANSTAT" --spans --json=f.json -- "$CALFORK" 300 140000 2
	assert_success
	assert_equal "$(jq -c '[.spans.merged.nodes[] | .name] | unique' f.json)" '["bg","child","forker"]'
	assert_equal "$(jq '[.spans.merged.nodes[] | select(.name == "child") | .count] | add' f.json)" 42000000
	assert_equal "$(jq '[.spans.merged.nodes[] | select(.name == "forker") | .count] | add' f.json)" 300
	assert_equal "$(jq -c '.spans.decode | [.unmatched, .unfinished, .dropped]' f.json)" "[0,0,0]"
}

@test "a vfork()ed child's spans (API, -finstrument-functions, -pg, lib calls): none in its parent's tree, each counted dropped" {
	# The child runs on its parent's memory until it exits or execs: its 5
	# "child" spans, 5 vf_child functions and 5 getpid calls (30 events)
	# are dropped and counted; the parent's tree is exactly its own.  A
	# child that calls exit() (undefined, and common) runs the library's
	# exit path on its parent's memory: it must not end the parent's
	# recording (it once did: the parent's later spans were lost, unsaid).
	# The C library ran the exit handlers in the child, so the parent's
	# end goes unseen: said (no_exit), its drops untold.
	local bin how mode
	local want='1 0 main
1 0 main;outer
6 0 main;vf_parent
6 0 main;vf_parent;parent
6 0 main;vf_parent;parent;getppid'
	for bin in "$VF_FI" ${VF_PG:+"$VF_PG"}; do
		for how in _exit exec exit; do
			for mode in aggregate stream; do
				if [ "$mode" = aggregate ]; then
					timeout 60 "$SPANSTAT" --spans --lib-calls='getp*' --json=v.json \
						-- "$bin" "$how" >stdout 2>stderr
				else
					timeout 60 "$SPANSTAT" record --lib-calls='getp*' -o v.rec \
						-- "$bin" "$how" >stdout 2>stderr
					"$SPANSTAT" report --json=v.json v.rec >report.out 2>>stderr
				fi
				assert_equal "$(cat stdout)" "child 0"
				assert_equal "$(span_paths v.json unfinished)" "$want"
				if [ "$how" = exit ]; then
					assert_equal "$(jq -c '.spans.decode | [.unmatched, .unfinished, .no_exit]' v.json)" "[0,0,1]"
				else
					assert_equal "$(jq -c '.spans.decode | [.unmatched, .unfinished, .dropped, .no_exit]' v.json)" "[0,0,30,0]"
				fi
			done
		done
	done
	[ -n "$VF_PG" ] || [ "$(uname -m)" != x86_64 ]
}

# tidagain_agrees SPANS PATHS ARGS...: span_tidagain ARGS in a pid namespace
# of its own, aggregating, streamed and through record and report: in each,
# nothing lost, dropped, unmatched, unfinished or misnested, SPANS spans on
# the paths PATHS (span_paths)
tidagain_agrees() {
	local spans=$1 paths=$2 mode
	shift 2
	local ns=(unshare -p -f)
	[ "$(id -u)" = 0 ] || ns=(unshare -U -r -p -f)
	"${ns[@]}" "$TIDAGAIN" 2 1 "${@:3}" 2>/dev/null || skip_or_fail "cannot give a tid again (unshare -p -f, ns_last_pid)"
	for mode in aggregate stream record; do
		case $mode in
		aggregate) timeout 120 "$SPANSTAT" --json=t.json -o /dev/null -- "${ns[@]}" "$TIDAGAIN" "$@" ;;
		stream) timeout 120 "$SPANSTAT" --json=t.json --perfetto=t.pftrace -o /dev/null -- "${ns[@]}" "$TIDAGAIN" "$@" ;;
		record)
			timeout 120 "$SPANSTAT" record -o t.rec -- "${ns[@]}" "$TIDAGAIN" "$@" 2>/dev/null
			"$SPANSTAT" report --json=t.json -o /dev/null t.rec
			;;
		esac
		assert_equal "$mode $(jq -c '.spans.decode | [.lost_records, .dropped, .unmatched, .unfinished, .misnested, .spans]' t.json)" "$mode [0,0,0,0,0,$spans]"
		assert_equal "$mode $(span_paths t.json)" "$mode $paths"
	done
}

@test "a tid given again: the ended thread's records come before its successor's, nothing is said lost" {
	# ten threads one after the other, each given the first one's tid (in a
	# pid namespace, through ns_last_pid), each more words than its ring
	# holds: streamed, the new thread's first record came before the old
	# one's last (and its end), 264 records said lost by the target
	tidagain_agrees 200010 "10 thread
200000 thread;pair" 10 20000
}

@test "a tid given many times, its slots wrapping past the table's end: every earlier thread's records come first" {
	# thirty threads given tid 254, most of them short: several end
	# between two reads of the rings, holding slots 254, 255, 0, 1...;
	# streamed, slot 0's thread read its predecessor in slot 255 before
	# that one's own predecessor in 254: ~200-330 records said lost
	tidagain_agrees 200070 "30 thread
200040 thread;pair" 30 20000 254 2
}

@test "a thread gone through the exit system call, its tid given again: its last words come before its successor's" {
	# every second thread ends without its end said (its slot stays
	# owned): the words it stored after the head it last published were
	# read only at the process's end, after its successors' (10 unmatched
	# ends, thousands misnested), and its successor's first record seemed
	# a sequence gone back: a record lost.  Its end is said where it was
	# last seen, once its tid is given again
	tidagain_agrees 200070 "30 thread
200040 thread;pair" 30 20000 100 2 raw
}
