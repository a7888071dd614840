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
