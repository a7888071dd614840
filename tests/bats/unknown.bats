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
