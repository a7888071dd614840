#!/usr/bin/env bats
# spanvalues.bats: what each span cost, through the installed binary and span
# library (spanstat(1), SPAN VALUES): per-span events of --span-events, on-
# and off-CPU time, allocations of --span-allocs, in both transports (the
# target aggregating, and events streaming with --perfetto), in threads and
# forked children, and how they show in the table, JSON, folded stacks
# (--weight) and Perfetto.  span_metrics' spans have known costs: touch
# faults in 16384 fresh pages, sibling touches nothing, sleep sleeps 50 ms,
# spin spins 100 ms, mallocs makes 1000 allocations of 100 bytes (104 bytes
# each by glibc's malloc_usable_size, which --span-allocs counts), frees
# frees them.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export METRICS LAYOUT
	METRICS=$(build_workload span_metrics $(span_link_flags))
	LAYOUT=$(build_workload span_layout $(span_link_flags))
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# mode_opts MODE: the options for one of the two ways spans travel.
mode_opts() {
	[ "$1" != stream ] || echo "--perfetto=s.pftrace"
}

# node FILE NAME FIELD: FIELD (a jq path under the node) of the merged node NAME.
node() {
	jq "[.spans.merged.nodes[] | select(.name == \"$2\") | $3] | first" "$1"
}

# thread_node FILE NAME FIELD: FIELD of NAME in every thread's tree, one per line.
thread_node() {
	jq -r ".spans.threads[] | .nodes[] | select(.name == \"$2\") | $3" "$1"
}

@test "--span-events: page faults and task-clock per span, exact, in both transports" {
	for mode in agg stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --span-events=page-faults,task-clock \
			--spans -e task-clock -- "$METRICS"
		assert_success
		pf=$(node x.json touch '.metrics["page-faults"]')
		sib=$(node x.json sibling '.metrics["page-faults"]')
		echo "$mode: touch $pf faults, sibling $sib"
		[ "$pf" -ge 16000 ]
		[ "$sib" -le 8 ]
		# task-clock: the spin is on a CPU for all of its time the thread's
		# own clock saw (all its 100 ms on an idle machine); the sleep barely
		own=$(awk '$1 == "spin-cpu" { print $3 }' <<<"$output")
		spin=$(node x.json spin '.metrics["task-clock"]')
		sleep_=$(node x.json sleep '.metrics["task-clock"]')
		wall=$(node x.json spin .total_ns)
		echo "$mode: spin task-clock $spin of $wall ns (its own clock $own), sleep $sleep_"
		[ "$spin" -ge $((own * 9 / 10)) ]
		[ "$spin" -le $((own * 11 / 10 + 1000000)) ]
		[ "$spin" -le "$wall" ]
		[ "$sleep_" -lt 5000000 ]
		assert_equal "$(jq -c '[.spans.metrics[] | [.name, .kind, .supported, .unit]]' x.json)" \
			'[["off_cpu_ns","off_cpu",true,"ns"],["page-faults","event",true,""],["task-clock","event",true,"ns"]]'
	done
}

@test "--span-events: hardware events without a PMU show <not supported> per span, and null" {
	if "$SPANSTAT" -x, -e cycles -- true 2>&1 | grep -qv 'not supported'; then
		skip "this machine counts cycles: the unsupported path cannot be shown"
	fi
	run "$SPANSTAT" --json=x.json --span-events=cycles,instructions,page-faults --spans -o sum.txt \
		-e task-clock -- "$METRICS"
	assert_success
	grep -E 'cycles/call +instructions/call +page-faults/call +IPC' sum.txt
	grep -E '<not supported> +<not supported> +[0-9,.]+ +- +touch$' sum.txt
	assert_equal "$(node x.json touch '.metrics.cycles')" null
	assert_equal "$(jq -c '[.spans.metrics[] | .supported]' x.json)" '[true,false,false,true]'
}

@test "--span-events a target's user cannot open show <not supported> per span, and null" {
	[ "$(id -u)" = 0 ] || skip "needs root to run the target as another user"
	# spanstat (root) can open sched:sched_switch; the user nobody, under
	# perf_event_paranoid 2, cannot count the kernel (page-faults:u it can)
	local old
	old=$(cat /proc/sys/kernel/perf_event_paranoid)
	echo 2 >/proc/sys/kernel/perf_event_paranoid
	scratch=$(mktemp -d /tmp/spanstat-values.XXXXXX)
	cp "$METRICS" "$scratch/span_metrics"
	cp -L "$SPANSTAT_LIBDIR"/libspanstat.so.0 "$scratch/"
	chmod -R a+rX "$scratch"
	local mode status=0
	for mode in agg stream; do
		"$SPANSTAT" $(mode_opts "$mode") --spans --json=x.json -o sum.txt \
			--span-events=sched:sched_switch,page-faults:u -e task-clock -- \
			setpriv --reuid=nobody --regid=nogroup --clear-groups \
			env LD_LIBRARY_PATH="$scratch" "$scratch/span_metrics" >out.txt 2>&1 || status=$?
		[ "$status" = 0 ] || break
		cat sum.txt
		grep -E '<not supported> +[0-9,.]+ +touch$' sum.txt || status=1
		[ "$(node x.json touch '.metrics["sched:sched_switch"]')" = null ] || status=2
		[ "$(node x.json touch '.metrics["page-faults:u"]')" -ge 16000 ] || status=3
		[ "$(jq -c '[.spans.metrics[] | .supported]' x.json)" = '[true,false,true]' ] || status=4
		[ "$status" = 0 ] || break
	done
	echo "$old" >/proc/sys/kernel/perf_event_paranoid
	rm -rf "$scratch"
	cat out.txt
	assert_equal "$mode: $status" "$mode: 0"
}

@test "threads and forked children count their own values" {
	for mode in agg stream; do
		for how in threads fork; do
			run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --span-events=page-faults \
				--spans -e task-clock -- "$METRICS" "$how"
			assert_success
			run thread_node x.json touch '.metrics["page-faults"]'
			echo "$mode $how: $output"
			assert_equal "${#lines[@]}" 2
			[ "${lines[0]}" -ge 16000 ]
			[ "${lines[0]}" -le 17000 ]
			[ "${lines[1]}" -ge 16000 ]
			[ "${lines[1]}" -le 17000 ]
			run thread_node x.json sibling '.metrics["page-faults"]'
			[ "${lines[0]}" -le 8 ]
			[ "${lines[1]}" -le 8 ]
		done
	done
}

@test "a child whose SPANSTAT_VALUES names other values, as many, leaves the sums unknown, not misnamed" {
	# span_layout runs itself with the two events the other way round:
	# its touch faults 16384 pages, which read as context switches if the
	# child's values were taken in the session's order
	local ev=page-faults,context-switches
	for mode in agg stream; do
		run -0 "$SPANSTAT" $(mode_opts "$mode") --spans --json=x.json -o sum.txt \
			--span-events=$ev -- "$LAYOUT" swap
		cat sum.txt
		assert_line "SPANSTAT_VALUES e:1:2:0:0:0,e:1:3:0:0:0 -> e:1:3:0:0:0,e:1:2:0:0:0"
		assert_equal "$(node x.json touch .count)" 1
		assert_equal "$(node x.json touch '.metrics["page-faults"]')" null
		assert_equal "$(node x.json touch '.metrics["context-switches"]')" null
		assert_equal "$(jq -c '[.spans.metrics[] | select(.kind == "event") | .supported]' x.json)" \
			'[false,false]'
		grep -E '<not supported> +<not supported> +touch$' sum.txt
		# and why: the child is counted and said
		assert_equal "$(jq .spans.decode.unvalued_processes x.json)" 1
		grep -F '1 process whose spans came without the values asked for (its SPANSTAT_VALUES gone or changed' sum.txt
		# the same child with the session's layout: known, and where they belong
		run -0 "$SPANSTAT" $(mode_opts "$mode") --spans --json=y.json -o sum.txt \
			--span-events=$ev -- "$LAYOUT" keep
		pf=$(node y.json touch '.metrics["page-faults"]')
		cs=$(node y.json touch '.metrics["context-switches"]')
		echo "$mode: kept: touch $pf faults, $cs switches"
		[ "$pf" -ge 16000 ]
		[ "$cs" -lt 1000 ]
		assert_equal "$(jq .spans.decode.unvalued_processes y.json)" 0
		! grep -F 'without the values asked for' sum.txt
	done
	# recorded: the replay sees what the live run saw
	run -0 "$SPANSTAT" record -o x.rec --span-events=$ev -- "$LAYOUT" swap
	run -0 "$SPANSTAT" report --json=r.json x.rec
	assert_equal "$(node r.json touch .count)" 1
	assert_equal "$(jq .spans.decode.unvalued_processes r.json)" 1
	assert_equal "$(node r.json touch '.metrics["context-switches"]')" null
	assert_equal "$(jq -c '[.spans.metrics[] | select(.kind == "event") | .supported]' r.json)" \
		'[false,false]'
	run -0 "$SPANSTAT" record -o y.rec --span-events=$ev -- "$LAYOUT" keep
	run -0 "$SPANSTAT" report --json=r.json y.rec
	[ "$(node r.json touch '.metrics["page-faults"]')" -ge 16000 ]
}

@test "--weight=page-faults puts the faulting span on top of the folded output" {
	run "$SPANSTAT" --folded=f.txt --weight=page-faults --span-events=page-faults \
		-e task-clock -- "$METRICS"
	assert_success
	cat f.txt
	assert_equal "$(sort -k2,2nr f.txt | head -1 | cut -d' ' -f1)" touch
	[ "$(awk '$1 == "touch" { print $2 }' f.txt)" -ge 16000 ]
	# the default weight is wall time: the spin's 100 ms of CPU are at
	# least 100 ms of wall time (which span is on top depends on the load)
	run "$SPANSTAT" --folded=w.txt -e task-clock -- "$METRICS"
	[ "$(awk '$1 == "spin" { print $2 }' w.txt)" -ge 100000000 ]
}

@test "--weight and the span options reject what cannot work" {
	run -125 "$SPANSTAT" --weight=bogus --folded=f.txt -- true
	assert_output "spanstat: invalid --weight 'bogus': expected wall, cpu, off-cpu, allocs, alloc-bytes or an event of --span-events"
	run -125 "$SPANSTAT" --weight=wall -- true
	assert_output "spanstat: --weight needs --folded, --json, --pprof or --flamegraph"
	run -125 "$SPANSTAT" --weight=allocs --folded=f.txt -- true
	assert_output "spanstat: --weight=allocs needs --span-allocs"
	run -125 "$SPANSTAT" --weight=cpu --no-off-cpu --folded=f.txt -- true
	assert_output "spanstat: --weight=cpu needs the off-CPU split that --no-off-cpu turns off"
	run -125 "$SPANSTAT" --span-events=page-faults -- true
	assert_output "spanstat: --span-events needs a span output: --spans, --folded, --json, --perfetto, --pprof, --flamegraph or --flamechart"
	run -125 "$SPANSTAT" --span-allocs -o x.txt -- true
	assert_output "spanstat: --span-allocs needs a span output: --spans, --folded, --json, --perfetto, --pprof, --flamegraph or --flamechart"
	assert_file_not_exists x.txt
	run -125 "$SPANSTAT" --span-events=nosuchevent --spans -- true
	assert_output --partial "spanstat: invalid --span-events 'nosuchevent': "
	assert_file_not_exists f.txt
}

@test "a weight the machine cannot count fails that output only, the target's status kept" {
	if "$SPANSTAT" -x, -e cycles -- true 2>&1 | grep -qv 'not supported'; then
		skip "this machine counts cycles"
	fi
	run "$SPANSTAT" --folded=f.txt --weight=cycles --span-events=cycles --json=x.json \
		-e task-clock -- sh -c 'exit 3'
	assert_failure 3
	assert_output --partial "spanstat: cannot write --folded 'f.txt': --weight=cycles cannot be counted here"
	assert_file_not_exists f.txt
	assert_file_exists x.json
}

@test "Perfetto slices carry the values; each thread gets a counter track per event" {
	require_cmd protoc
	run "$SPANSTAT" --perfetto=t.pftrace --span-events=page-faults --json=x.json \
		-e task-clock -- "$METRICS" threads
	assert_success
	pf_decode t.pftrace t.txt
	# every slice end carries the span's page faults (12 spans), and its
	# on- and off-CPU time when it was switched out (perfetto.bats checks
	# that those add up to the JSON's)
	assert_equal "$(grep -c 'name: "page-faults"' t.txt)" \
		"$((12 + $(grep -c 'counter {' t.txt)))"
	assert_equal "$(grep -c 'name: "cpu_ns"' t.txt)" "$(grep -c 'name: "off_cpu_ns"' t.txt)"
	[ "$(grep -c 'name: "off_cpu_ns"' t.txt)" -le 12 ]
	# two threads: two page-faults counter tracks, under each thread's track
	[ "$(grep -B2 -A4 'name: "page-faults"' t.txt | grep -c 'counter {')" -eq 2 ]
	# the largest fault count a slice carries is the touch's
	max=$(awk '/uint_value:/ { v = $2 } /name: "page-faults"/ && v > m { m = v } END { print m }' t.txt)
	[ "$max" -ge 16000 ]
}

@test "the span table: a column per value, per call" {
	run "$SPANSTAT" --spans --span-events=page-faults -o sum.txt -e task-clock -- "$METRICS"
	assert_success
	cat sum.txt
	grep -E ' +count +total +self +mean +wall +cpu/call +off-cpu/call +off% +page-faults/call +path$' sum.txt
	faults=$(awk '/Spans by stack path/ { on = 1 } on && $NF == "touch" { print $(NF - 1); exit }' sum.txt)
	faults=${faults//,/}
	[ "${faults%.*}" -ge 16000 ]
}

@test "--span-allocs: allocations and frees per span, exact, in both transports" {
	for mode in agg stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --span-allocs --spans \
			-e task-clock -- "$METRICS"
		assert_success
		assert_equal "$(node x.json mallocs '[.allocs, .frees, .alloc_bytes, .free_bytes]' | jq -c .)" \
			'[1000,0,104000,0]'
		# memory allocated before the span began counts as freed where it is freed
		assert_equal "$(node x.json frees '[.allocs, .frees, .alloc_bytes, .free_bytes]' | jq -c .)" \
			'[0,1000,0,104000]'
		assert_equal "$(node x.json sleep '[.allocs, .frees]' | jq -c .)" '[0,0]'
		# the table: allocations, frees, bytes and the change in bytes in use, per call
		grep -E ' +1,000\.0 +0\.0 +104,000\.0 +104,000\.0 +mallocs$' <<<"$output"
		grep -E ' +0\.0 +1,000\.0 +0\.0 +-104,000\.0 +frees$' <<<"$output"
	done
}

@test "--span-allocs: threads and forked children count their own" {
	for how in threads fork; do
		run "$SPANSTAT" --json=x.json --span-allocs --spans -e task-clock -- "$METRICS" "$how"
		assert_success
		run jq -r ".spans.threads[] | .nodes[] | select(.name == \"mallocs\") | [.allocs, .alloc_bytes] | @tsv" x.json
		assert_equal "${#lines[@]}" 2
		assert_equal "${lines[0]}" $'1000\t104000'
		assert_equal "${lines[1]}" $'1000\t104000'
	done
}

@test "--span-allocs: C++ new and delete, aligned new included, are counted" {
	command -v "${CXX:-g++}" >/dev/null 2>&1 || skip_or_fail "${CXX:-g++} not installed"
	local inc=()
	[ -n "${SPANSTAT_INCLUDEDIR:-}" ] && inc=(-I"$SPANSTAT_INCLUDEDIR")
	# shellcheck disable=SC2046
	"${CXX:-g++}" -O1 "${inc[@]}" "$WORKLOADS/alloc_cxx.cc" -o axx $(span_link_flags)
	run "$SPANSTAT" --json=x.json --span-allocs --folded=f.txt --weight=allocs -e task-clock -- ./axx
	assert_success
	# 100 objects of 40 bytes, a vector (24) and its 1000 ints (4000, 4008
	# usable): glibc's usable sizes
	assert_equal "$(node x.json news '[.allocs, .alloc_bytes]' | jq -c .)" '[102,8032]'
	assert_equal "$(node x.json deletes '[.frees, .free_bytes]' | jq -c .)" '[102,8032]'
	# over-aligned blocks: their usable size depends on where glibc found room
	assert_equal "$(node x.json aligned '[.allocs, .frees, .alloc_bytes == .free_bytes, .alloc_bytes >= 2560]' | jq -c .)" \
		'[10,10,true,true]'
	# --weight=allocs: the folded value is the span's allocations
	assert_equal "$(awk '$1 == "news" { print $2 }' f.txt)" 102
}

@test "libspanstat-alloc: every function it wraps counts right, and programs run normally" {
	local lib="$SPANSTAT_LIBDIR/libspanstat-alloc.so.0"
	assert_file_exists "$lib"
	local ac
	ac=$(build_workload alloc_calls -ldl)
	run env LD_PRELOAD="$lib" "$ac" threads
	assert_success
	refute_output --partial FAIL
	# glibc's own programs, a threaded one, and Python
	run env LD_PRELOAD="$lib" sort -r /etc/passwd
	assert_success
	assert_equal "$(env LD_PRELOAD="$lib" sort /etc/passwd | md5sum)" "$(sort /etc/passwd | md5sum)"
	run env LD_PRELOAD="$lib" ls -la /usr/lib
	assert_success
	run env LD_PRELOAD="$lib" python3 -c 'import json, threading; t = [threading.Thread(target=lambda: json.dumps(list(range(10000)))) for _ in range(4)]; [x.start() for x in t]; [x.join() for x in t]; print("fine")'
	assert_success
	assert_output fine
	# without the library: the counter is not there (the workload says so)
	run "$ac"
	assert_failure
	assert_output --partial "not preloaded"
}

@test "--span-allocs leaves the program's heap as it finds it, filters and all" {
	# Its blocks are cut from what the heap holds free: a piece that spanstat
	# left there would give a malloc(100) inside a span 120 usable bytes, not
	# 104 (a raised mmap threshold, a 1 MiB block from the heap).
	local heap base
	heap=$(build_workload alloc_heap -finstrument-functions $(span_link_flags))
	base=$("$heap")
	[[ "$base" == "free chunks "* ]]
	for opts in "" "--exclude=nomatch" "--filter=cat:io" "--perfetto=s.pftrace --exclude=nomatch"; do
		# shellcheck disable=SC2086
		run --separate-stderr timeout -k 5 60 "$SPANSTAT" $opts --span-allocs --json=x.json -o /dev/null -- "$heap"
		assert_success
		assert_output "$base"
	done
}

@test "--span-allocs: what the recorder allocates to judge a function under the filters is not the span's" {
	# The filters demangle each C++ function's name on its first call, inside
	# its caller's span; only outer's own block of 100 bytes is counted (in
	# main's too, which holds outer).
	local q mode
	q=$(build_cxx_workload span_cxx_quiet span_cxx_quiet $(span_link_flags)) || return 1
	for mode in agg stream; do
		for filt in --exclude=nomatch --exclude=cat:cpu; do
			run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --span-allocs "$filt" \
				-e task-clock -- "$q"
			assert_success
			for fn in main outer; do
				assert_equal "$(node x.json $fn '[.allocs, .alloc_bytes, .frees, .free_bytes]' | jq -c .)" \
					'[1,104,1,104]'
			done
			assert_equal "$(jq -c '[.spans.merged.nodes[] | select(.name | test("Worker")) | .allocs + .frees] | unique' x.json)" '[0]'
			assert_equal "$(jq '.spans.merged.nodes | length' x.json)" 4
		done
	done
}

@test "on- and off-CPU time of every span, unasked, in both transports" {
	for mode in agg stream; do
		for how in "" threads; do
			run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock -- \
				"$METRICS" $how
			assert_success
			local out=$output
			# every thread's sleep: at least 45 ms off-CPU, under 5 ms on it
			run thread_node x.json sleep '"\(.off_cpu_ns) \(.cpu_ns)"'
			echo "$mode $how sleep: $output"
			for l in "${lines[@]}"; do
				read -r off on <<<"$l"
				[ "$off" -ge 45000000 ]
				[ "$on" -lt 5000000 ]
			done
			# every thread's spin: on-CPU within 10% of its wall time on an
			# idle machine; on a loaded one the spin is preempted, so what
			# is checked is the thread's own CPU clock over the span
			run jq -r '.spans.threads[] | .tid as $t | .nodes[] | select(.name == "spin")
				| "\($t) \(.cpu_ns) \(.total_ns)"' x.json
			echo "$mode $how spin (tid on wall): $output"
			for l in "${lines[@]}"; do
				read -r tid on wall <<<"$l"
				own=$(awk -v t="$tid" '$1 == "spin-cpu" && $2 == t { print $3 }' <<<"$out")
				echo "tid $tid: spanstat $on ns on-CPU, its own clock $own ns, wall $wall"
				[ -n "$own" ]
				[ "$on" -le "$wall" ]
				[ "$on" -ge $((own * 9 / 10)) ]
				[ "$on" -le $((own * 11 / 10 + 1000000)) ]
			done
		done
	done
	# the two add up to the span's time, and self times likewise
	assert_equal "$(jq '[.spans.merged.nodes[] | select(.cpu_ns + .off_cpu_ns != .total_ns or .self_cpu_ns + .self_off_cpu_ns != .self_ns)] | length' x.json)" 0
}

@test "--weight=off-cpu and cpu; --no-off-cpu turns the split off" {
	run "$SPANSTAT" --folded=off.txt --weight=off-cpu -e task-clock -- "$METRICS"
	assert_success
	# the sleep's 50 ms are off-CPU (a loaded machine may switch the spin
	# out longer: no ranking)
	cat off.txt
	[ "$(awk '$1 == "sleep" { print $2 }' off.txt)" -ge 45000000 ]
	run "$SPANSTAT" --folded=cpu.txt --weight=cpu -e task-clock -- "$METRICS"
	cat cpu.txt
	[ "$(awk '$1 == "spin" { print $2 }' cpu.txt)" -gt 5000000 ]
	[ "$(awk '$1 == "sleep" { print $2 }' cpu.txt)" -lt 5000000 ]
	run "$SPANSTAT" --json=x.json --spans --no-off-cpu -e task-clock -- "$METRICS"
	assert_success
	refute_output --partial "off-cpu/call"
	assert_equal "$(node x.json sleep '[.cpu_ns, .off_cpu_ns]' | jq -c .)" '[null,null]'
	assert_equal "$(jq '.spans.metrics | length' x.json)" 0
}

@test "values under the filters: a span --min-duration held back keeps its own begin's values" {
	for mode in agg stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --span-events=page-faults --span-allocs \
			--min-duration=1ms --spans -e task-clock -- "$METRICS"
		assert_success
		# sent late, at their ends, yet measured from their begins
		[ "$(node x.json sleep .off_cpu_ns)" -ge 45000000 ]
		[ "$(node x.json touch '.metrics["page-faults"]')" -ge 16000 ]
		assert_equal "$(node x.json mallocs .count)" null
		run "$SPANSTAT" $(mode_opts "$mode") --json=y.json --span-allocs --exclude=sleep --spans \
			-e task-clock -- "$METRICS"
		assert_equal "$(node y.json mallocs '[.allocs, .alloc_bytes]' | jq -c .)" '[1000,104000]'
		assert_equal "$(node y.json sleep .count)" null
	done
}

@test "a span still open when the target is killed has its values up to the thread's last event" {
	for mode in agg stream; do
		run -137 "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans --span-events=page-faults \
			-e task-clock -- "$METRICS" killed
		assert_equal "$(node x.json killed .unfinished)" 1
		# its touch and sleep closed inside it: at least theirs
		pf=$(node x.json killed '.metrics["page-faults"]')
		off=$(node x.json killed .off_cpu_ns)
		echo "$mode killed: $pf faults, $off ns off-CPU"
		[ "$pf" -ge 16000 ]
		[ "$off" -ge 45000000 ]
		assert_equal "$(jq '[.spans.merged.nodes[] | select(.self_off_cpu_ns < 0 or .self_metrics["page-faults"] < 0)] | length' x.json)" 0
	done
}
