#!/usr/bin/env bats
# unknown.bats: what a run did not measure, or a damaged record no longer
# holds, is shown as unknown ('-' in the summary and tables, null in JSON)
# and left out of means, minimums and maximums with a note saying so; never
# a zero, never a made-up count.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR"
}

@test "one run's elapsed mean is its elapsed time; the spread stays null" {
	run -0 "$SPANSTAT" --json=one.json -e task-clock -- true
	jq -e '.elapsed.mean_ns == .rusage.elapsed_ns and .elapsed.mean_ns > 0' one.json
	jq -e '.elapsed.stddev_ns == null and .elapsed.rel_stddev_pct == null' one.json
	run -0 "$SPANSTAT" --json=two.json -e task-clock -r 2 -- true
	jq -e '(.elapsed.mean_ns | type) == "number" and (.elapsed.stddev_ns | type) == "number"' two.json
}

@test "a script the library never instrumented gets no instrumentation line" {
	# a bash script whose one span (the line protocol's) is still open at
	# exit: spanstat closes it; the library itself recorded nothing
	printf '#!/bin/bash\n. "${SPANSTAT_SH:?}"\nspanstat_begin open\nspanstat_span done true\n' >open.sh
	chmod +x open.sh
	run --separate-stderr -0 "$SPANSTAT" --spans --json=open.json -- ./open.sh
	[[ "$stderr" == *" span data: 1 unfinished span closed at exit"* ]]
	[[ "$stderr" != *"instrumentation:"* ]]
	assert_equal "$(jq .spans.overhead.events open.json)" 0
	assert_equal "$(jq '.spans.decode.unfinished' open.json)" 1
}

# cut FILE: FILE cut just before its first RUN record (a recording whose
# end, results included, never reached the disk)
cut_before_results() {
	python3 -c '
import struct,sys
d=open(sys.argv[1],"rb").read(); o=16
while o+12<=len(d):
    t,l,c=struct.unpack_from("<III",d,o)
    if t==6: break
    o+=12+l
open(sys.argv[1],"wb").write(d[:o])' "$1"
}

@test "report: results cut off a -r 3 record are unknown in every output, and 3 runs were asked for" {
	run -0 "$SPANSTAT" record -o r.rec -e task-clock -r 3 -- true
	cut_before_results r.rec
	run --separate-stderr -0 "$SPANSTAT" report --json=r.json r.rec
	assert_line "$(printf ' Performance counter stats for %s (0 of 3 runs):' "'true'")"
	assert_line --regexp '^ +- msec task-clock$'
	assert_line --regexp '^ +- seconds time elapsed$'
	assert_line --regexp '^ +- seconds user$'
	refute_output --regexp '(^| )0\.0+ '
	[[ "$stderr" == *"'r.rec': the counts of 3 runs are lost"* ]]
	jq -e '.runs_requested == 3 and .runs_completed == 0' r.json
	jq -e '.events[0].value == null and .events[0].state == "unknown" and .rusage.elapsed_ns == null and .exit.exit_code == null' r.json
	run --separate-stderr -0 "$SPANSTAT" report -x, r.rec
	assert_output '-,msec,task-clock,,,,,'
}

@test "report: a rank whose results are lost is left out of min, mean and max, and said to be" {
	THREADS=$(build_workload span_threads $(span_link_flags))
	for r in 0 1 2; do
		OMPI_COMM_WORLD_RANK=$r run -0 "$SPANSTAT" record -e task-clock -o "job.$r.rec" -- "$THREADS"
	done
	cut_before_results job.1.rec
	run --separate-stderr -0 "$SPANSTAT" report --json=job.json job.0.rec job.1.rec job.2.rec
	assert_output --partial "(3 ranks, 2 runs):"
	assert_line " 1 of 3 ranks has no results: left out of the counters and the time elapsed"
	assert_line --regexp ' rank [02] .* task-clock \(2 of 3 ranks\)$'
	assert_line --regexp ' rank [02] .* time elapsed \(2 of 3 ranks\)$'
	refute_output --partial ' 0.00 msec '
	jq -e '.runs_requested == 3 and .runs_completed == 2' job.json
	jq -e '[.ranks.ranks[].runs] == [1, 0, 1]' job.json
	jq -e '.ranks.counters[0] | .ranks == 2 and .min > 0 and .min <= .mean and .mean <= .max and .max_rank != 1' job.json
	jq -e '.ranks.elapsed_ns | .ranks == 2 and .min > 0 and .max_rank != 1' job.json
	# the two ranks that have results agree with their own reports
	"$SPANSTAT" report --json=r0.json job.0.rec >/dev/null
	"$SPANSTAT" report --json=r2.json job.2.rec >/dev/null
	jq -e --slurpfile a r0.json --slurpfile b r2.json \
		'.ranks.elapsed_ns.min == ([$a[0].rusage.elapsed_ns, $b[0].rusage.elapsed_ns] | min)' job.json
	# rank 1's end is lost with its results: the decoder's counts are unknown
	jq -e '.spans.decode.spans == null and .spans.decode.untracked == 0' job.json
}

@test "diff: a record whose results are lost is refused, not compared as zeros" {
	run -0 "$SPANSTAT" record -o r.rec -e task-clock -r 3 -- true
	run -0 "$SPANSTAT" record -o good.rec -e task-clock -r 3 -- true
	cut_before_results r.rec
	run --separate-stderr -125 "$SPANSTAT" diff r.rec good.rec
	assert_equal "${lines[*]:-}" ""
	[[ "$stderr" == *"spanstat: 'r.rec': no run's results are known (a damaged or partial recording): nothing to compare"* ]]
}
