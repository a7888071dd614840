#!/usr/bin/env bats
# bothmodes.bats: one truth in both modes.  Each workload runs aggregating in
# the target (--spans --json) and streamed (record, then report --json), and
# both must give the same tree with the same counts and unfinished marks.
# Times cannot be compared across two runs; instead, ground-truth spans that
# spin or sleep for times the workload makes true (span_truth) must show
# on- and off-CPU values in ranges around those times, in both modes.  The
# ranges bound the workload, never spanstat's own speed.

load helpers

setup_file() {
	export W_THREADS W_LONGJMP W_RAWFORK W_SIGAPI W_SIGF W_DEEP W_EXIT W_TRUTH
	W_THREADS=$(build_workload span_threads -pthread $(span_link_flags))
	W_LONGJMP=$(build_workload span_longjmp $(span_link_flags))
	W_RAWFORK=$(build_workload span_rawfork $(span_link_flags))
	W_SIGAPI=$(build_workload span_signal -DAPI $(span_link_flags))
	W_SIGF=$(build_workload span_signal -finstrument-functions)
	W_DEEP=$(build_workload span_deep $(span_link_flags))
	W_TRUTH=$(build_workload span_truth -pthread $(span_link_flags))
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# same_tree CMD...: both modes give the same tree, nothing unmatched
same_tree() {
	same_tree_but '^$' "$@"
}

# same_tree_but RE CMD...: same_tree without the paths that match RE
same_tree_but() {
	local mode skip=$1
	shift
	for mode in aggregate stream; do
		run mode_spans $mode $mode.json -- timeout 120 "$@"
		assert_success
		assert_equal "$(jq '.spans.decode.unmatched' $mode.json)" 0
		span_paths $mode.json unfinished | awk -v re="$skip" '$3 !~ re' >$mode.tree
		[ -s $mode.tree ]
	done
	diff aggregate.tree stream.tree
}

@test "both modes, one tree: threads, instants and scoped spans" {
	same_tree "$W_THREADS"
}

@test "both modes, one tree: longjmp and siglongjmp over open spans" {
	same_tree "$W_LONGJMP" jump
	same_tree "$W_LONGJMP" sig
	# an end that names an outer span closes the inner one too, in the
	# target's own stack as in the reader's: the jump then ends only the
	# levels, never "a" a second time
	same_tree "$W_LONGJMP" mismatch
	assert_equal "$(grep -c ' round;a;b$' stream.tree)" 1
}

@test "both modes, one tree: processes made by _Fork and raw clone" {
	same_tree "$W_RAWFORK" _Fork
	same_tree "$W_RAWFORK" clone
}

# Signal handlers run when the timer fires, into whatever was running: the
# paths under them differ from run to run, so only the rest is compared
# (truespans.bats checks the handlers' own counts in each mode).
@test "both modes, one tree: API spans in signal handlers" {
	same_tree_but 'tick|on_alarm|on_usr1' "$W_SIGAPI" 200000
}

@test "both modes, one tree: -finstrument-functions calls in signal handlers" {
	same_tree_but 'tick|on_alarm|on_usr1' "$W_SIGF" 2000000
}

@test "both modes, one tree: 300 distinct paths deep" {
	same_tree "$W_DEEP" 300
}

@test "ground truth: spin and sleep times land in their ranges in both modes, across threads and exit" {
	local mode ms=1000000
	for mode in aggregate stream; do
		run mode_spans $mode $mode.json -- timeout 120 "$W_TRUTH"
		assert_success
		span_paths $mode.json unfinished >$mode.tree
		cat $mode.tree
		jq -c '[.spans.merged.nodes[] | {name, total_ns, cpu_ns, off_cpu_ns, unfinished}]' $mode.json
		# v NAME FIELD: the merged node's value
		v() { jq ".spans.merged.nodes[] | select(.name == \"$1\") | .$2" $mode.json; }
		# spans that burn N ms of their thread's CPU: at least that on-CPU
		[ "$(v spin cpu_ns)" -ge $((58 * ms)) ]
		[ "$(v tspin cpu_ns)" -ge $((38 * ms)) ]
		# spans that sleep N ms: at least that much off-CPU, little on it
		[ "$(v sleep off_cpu_ns)" -ge $((58 * ms)) ]
		[ "$(v sleep cpu_ns)" -le $((20 * ms)) ]
		[ "$(v tsleep off_cpu_ns)" -ge $((38 * ms)) ]
		[ "$(v tsleep cpu_ns)" -le $((20 * ms)) ]
		# the span left open at exit lasts its sleep, asleep, and is marked
		[ "$(v open total_ns)" -ge $((38 * ms)) ]
		[ "$(v open off_cpu_ns)" -ge $((30 * ms)) ]
		assert_equal "$(v open unfinished)" 1
		# on + off is the span's time, in every span
		jq -e '[.spans.merged.nodes[] | select(.count > 0)
			| (.cpu_ns + .off_cpu_ns - .total_ns) | fabs <= 1000000] | all' $mode.json
	done
	diff aggregate.tree stream.tree
}
