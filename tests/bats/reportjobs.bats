#!/usr/bin/env bats
# reportjobs.bats: spanstat report -j N (--jobs) through the installed
# binary: the outputs are the same bytes whatever N is (1, the single
# thread, 2 and 4, and the default), for each output that takes span
# events and for several at once, with span values, -I samples, runs,
# messages, async spans, typed arguments, a --keep-last window, a damaged
# file and the files of several ranks (which replay in threads of their own
# unless a file is older than END's list of process names); what a file
# lost is said once; bad
# values get one line and status 125.  Never a timing: bench/report-bench
# measures.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export THREADS ASYNC MSG ARGS PHASES
	THREADS=$(build_workload span_threads $(span_link_flags))
	ASYNC=$(build_workload span_async $(span_link_flags))
	MSG=$(build_workload span_msg $(span_link_flags))
	ARGS=$(build_workload span_args $(span_link_flags))
	PHASES=$(build_workload span_phases $(span_link_flags))
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# same_bytes FILE... -- OUTPUT-OPTIONS...: reports FILE... with -j1, -j2,
# -j4 and no -j, each output option's file (and stdout, stderr) named for
# the run; every run's are the same bytes as -j1's.
same_bytes() {
	local files=() j k o
	while [ "$1" != -- ]; do
		files+=("$1")
		shift
	done
	shift
	for j in 1 2 4 default; do
		local args=()
		[ "$j" = default ] || args+=("-j$j")
		for o in "$@"; do
			args+=("$o.$j")
		done
		timeout 120 "$SPANSTAT" report "${args[@]}" "${files[@]}" >"out.$j" 2>"err.$j" || {
			echo "report -j$j failed: $(cat "err.$j")"
			return 1
		}
	done
	for j in 2 4 default; do
		cmp "out.1" "out.$j" || return 1
		cmp "err.1" "err.$j" || return 1
		for o in "$@"; do
			o=${o#*=}
			[ -s "$o.1" ] || {
				echo "no output $o.1"
				return 1
			}
			cmp "$o.1" "$o.$j" || return 1
		done
	done
}

@test "reportjobs: threads, values, runs and -I samples: every output the same bytes for any -j" {
	timeout 120 "$SPANSTAT" record -o t.rec -r 2 -I 10 -e task-clock -- "$THREADS" 2>/dev/null
	same_bytes t.rec -- --perfetto=t.pftrace
	same_bytes t.rec -- --json=t.json
	same_bytes t.rec -- --folded=t.folded
	same_bytes t.rec -- --flamechart=t.svg
	# two outputs that take span events, and the ones that do not, at once
	same_bytes t.rec -- --perfetto=two.pftrace --json=two.json
	same_bytes t.rec -- --perfetto=all.pftrace --flamechart=all.svg --folded=all.folded \
		--json=all.json --pprof=all.pb.gz
	# the trace is whole: its -I samples and the workers' spans are in it
	grep -c "worker-3" all.svg.4 >/dev/null
}

@test "reportjobs: messages, async spans and typed arguments: the same bytes for any -j" {
	timeout 60 "$SPANSTAT" record -o m.rec -- "$MSG" 2>/dev/null
	same_bytes m.rec -- --perfetto=m.pftrace --flamechart=m.svg --json=m.json
	timeout 60 "$SPANSTAT" record -o a.rec -- "$ASYNC" 2>/dev/null
	same_bytes a.rec -- --perfetto=a.pftrace --flamechart=a.svg --json=a.json
	timeout 60 "$SPANSTAT" record -o g.rec -- "$ARGS" 2>/dev/null
	same_bytes g.rec -- --perfetto=g.pftrace --json=g.json
}

@test "reportjobs: a --keep-last window and a damaged file: the same bytes, losses said once" {
	timeout 120 "$SPANSTAT" record --keep-last=256K -o k.rec -- "$PHASES" 200 500 2>/dev/null
	same_bytes k.rec -- --perfetto=k.pftrace --flamechart=k.svg --json=k.json
	# the spans cut at the window's start, counted by one replay only
	run -0 grep -c "cut at the window's start" err.4
	assert_output 1
	cut=$(sed -n 's/.* \([0-9][0-9]*\) spans\{0,1\} cut at the window.s start.*/\1/p' err.1)
	[ "$cut" -gt 0 ]
	run -0 jq '.spans.window.cut' k.json.4
	assert_output "$cut"
	size=$(stat -c %s k.rec)
	head -c $((size * 2 / 3)) k.rec >half.rec
	same_bytes half.rec -- --perfetto=h.pftrace --json=h.json
	run -0 grep -c "is damaged" err.2
	assert_output 1
	grep -q "is damaged: 0 bad records (0 of span events), [1-9][0-9]* bytes cut off" err.2
}

@test "reportjobs: the files of several ranks merge to the same bytes for any -j" {
	OMPI_COMM_WORLD_RANK=0 timeout 60 "$SPANSTAT" record -o r0.rec -- "$THREADS" 2>/dev/null
	OMPI_COMM_WORLD_RANK=1 timeout 60 "$SPANSTAT" record -o r1.rec -- "$ASYNC" 2>/dev/null
	same_bytes r0.rec r1.rec -- --perfetto=r.pftrace --flamechart=r.svg --json=r.json
	grep -q "rank 1 (" r.svg.4
}

@test "reportjobs: bad -j values get one line and status 125" {
	timeout 60 "$SPANSTAT" record -o t.rec -- true 2>/dev/null
	for bad in 0 257 x 2x -1 ''; do
		run -125 "$SPANSTAT" report -j "$bad" t.rec
		assert_output "spanstat: invalid --jobs '$bad': expected a whole number of threads from 1 to 256"
		run -125 "$SPANSTAT" report --jobs="$bad" t.rec
		assert_output "spanstat: invalid --jobs '$bad': expected a whole number of threads from 1 to 256"
	done
	run -125 "$SPANSTAT" report -j
	assert_output --partial "spanstat: "
	[ "${#lines[@]}" -eq 1 ]
	run -125 "$SPANSTAT" record -j 2 -o x.rec -- true
	assert_output "spanstat: record: -j is an option of 'spanstat report', which makes the outputs from the record file"
	run -125 "$SPANSTAT" -j 2 true
	assert_output "spanstat: -j is an option of 'spanstat report', which makes the outputs from a record file"
	run -0 "$SPANSTAT" report -j 256 --folded=f.folded t.rec
}

@test "reportjobs: an output that fails at a -I sample fails alone, for any -j" {
	[ -w /dev/full ] || skip "no /dev/full"
	timeout 120 "$SPANSTAT" record -o t.rec -r 2 -I 10 -e task-clock -- "$THREADS" 2>/dev/null
	OMPI_COMM_WORLD_RANK=1 timeout 120 "$SPANSTAT" record -o t1.rec -I 10 -e task-clock \
		-- "$THREADS" 2>/dev/null
	for files in t.rec "t.rec t1.rec"; do
		# shellcheck disable=SC2086
		timeout 120 "$SPANSTAT" report -j1 --json=whole.json --flamechart=whole.svg $files \
			>whole.out 2>/dev/null
		for j in 1 2 4; do
			# shellcheck disable=SC2086
			run --separate-stderr -125 timeout 120 "$SPANSTAT" report -j$j \
				--perfetto=/dev/full --json=x.json --flamechart=x.svg $files
			assert_equal "$stderr" "spanstat: cannot write --perfetto '/dev/full': No space left on device"
			# the other outputs and the summary's -I lines, whole
			assert_equal "$output" "$(cat whole.out)"
			cmp x.json whole.json
			cmp x.svg whole.svg
		done
	done
}

@test "reportjobs: without -j, one thread per CPU the report may run on, not per online CPU" {
	command -v strace >/dev/null || skip "no strace"
	command -v taskset >/dev/null || skip "no taskset"
	[ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ] || skip "one online CPU"
	timeout 60 "$SPANSTAT" record -o t.rec -- "$THREADS" 2>/dev/null
	cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
	# threads started: one clone each (the trace replayed in a thread of its own)
	clones() {
		timeout 60 taskset -c "$cpu" strace -f -qq -e trace=clone,clone3 -o st.txt \
			"$SPANSTAT" report "$@" --perfetto=t.pftrace t.rec >/dev/null 2>&1
		grep -c clone st.txt || true
	}
	# against -j1's (a sanitizer's runtime starts threads of its own)
	local base
	base=$(clones -j1)
	run -0 clones -j2
	assert_output $((base + 1))
	run -0 clones
	assert_output "$base"
}

@test "reportjobs: the files of several ranks replay in threads of their own; older files one at a time" {
	command -v strace >/dev/null || skip "no strace"
	OMPI_COMM_WORLD_RANK=0 timeout 60 "$SPANSTAT" record -o r0.rec -- "$THREADS" 2>/dev/null
	OMPI_COMM_WORLD_RANK=1 timeout 60 "$SPANSTAT" record -o r1.rec -- "$MSG" fork 2>/dev/null
	# a file written before END listed the processes' names
	python3 "$BATS_TEST_DIRNAME/recraft.py" r1.rec old1.rec end:19
	# threads started: one clone each (the trace replayed in a thread of its own)
	clones() {
		timeout 60 strace -f -qq -e trace=clone,clone3 -o st.txt \
			"$SPANSTAT" report --perfetto=t.pftrace "$@" >/dev/null 2>&1
		grep -c clone st.txt || true
	}
	local base
	base=$(clones -j1 r0.rec r1.rec)
	# a thread per file, each replaying the trace
	run -0 clones -j2 r0.rec r1.rec
	assert_output $((base + 2))
	run -0 clones -j2 r0.rec old1.rec
	assert_output "$base"
	# the same bytes either way, every process named with its rank
	same_bytes r0.rec r1.rec -- --perfetto=r.pftrace --json=r.json --folded=r.folded
	same_bytes r0.rec old1.rec -- --perfetto=o.pftrace --json=o.json
	run -0 jq -r '[.. | objects | select(has("process_name")) | .process_name] | unique | .[]' r.json.2
	assert_line --regexp '^rank 0 \(.*\) span_threads'
	assert_line --regexp '^rank 1 \(.*\) span_msg'
	refute_line --regexp '^span_'
	run -0 jq -r '[.. | objects | select(has("process_name")) | .process_name] | unique | .[]' o.json.4
	assert_line --regexp '^rank 1 \(.*\) span_msg'
}
