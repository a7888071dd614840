#!/usr/bin/env bats
# mpi.bats: an MPI job under Open MPI's mpirun, 4 ranks, each recorded by
# `spanstat record -o run.%r.rec`, then the four record files reported
# together: the summary's section across ranks, the JSON's .ranks (min, mean,
# max, the max's rank and the imbalance of each counter and span path) and
# one Perfetto trace with a process per rank on one clock.  The workload
# (tests/workloads/mpi_imbalance.c) gives rank 2 twice the work of the
# others, so rank 2 must be the max of the "work" span and of task-clock.
# Needs mpicc and mpirun (Debian packages libopenmpi-dev, openmpi-bin): skips
# without them, fails under CI (SPANSTAT_REQUIRE_ALL=1).

load helpers
load pfreplay
bats_require_minimum_version 1.5.0

WORK='["rank_main","work"]'


# The job's mpirun: --allow-run-as-root only as root; the shared-memory
# transport only, with no single-copy mechanism (CMA needs ptrace rights a
# container often lacks), and more ranks than CPUs allowed.
job_mpirun() {
	local root=()
	[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
	timeout 120 mpirun "${root[@]}" --oversubscribe \
		--mca btl self,vader --mca btl_vader_single_copy_mechanism none \
		-np 4 "$@"
}

# The job runs once, in $BATS_FILE_TMPDIR/job; its status, stdout and stderr
# are kept for the first test to check.  Without Open MPI every test skips
# (fails under CI) in setup: bats cannot skip from setup_file.
setup_file() {
	export JOB="$BATS_FILE_TMPDIR/job"
	command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1 || return 0
	export PF_MISSING=
	if ! command -v protoc >/dev/null 2>&1; then
		PF_MISSING="protoc not installed (Debian package protobuf-compiler)"
	fi
	mkdir -p "$JOB"
	# as build_workload builds, with mpicc for the compiler
	# shellcheck disable=SC2046 # span_link_flags is a list of flags
	env -u CFLAGS -u LDFLAGS mpicc -O2 -g -I"$SPANSTAT_INCLUDEDIR" \
		"$WORKLOADS/mpi_imbalance.c" -o "$JOB/mpi_imbalance" $(span_link_flags) >&2
	cd "$JOB" || return 1
	local status=0
	job_mpirun "$SPANSTAT" record -e task-clock -o run.%r.rec -- ./mpi_imbalance \
		>mpirun.out 2>mpirun.err || status=$?
	echo "$status" >mpirun.status
}

setup() {
	require_cmd mpicc
	require_cmd mpirun
	cd "$JOB" || return 1
}

# jq_true FILTER FILE: the filter holds on FILE
jq_true() {
	jq -e "$1" "$2" >/dev/null || {
		echo "false on $2: $1" >&2
		return 1
	}
}

# section TITLE: the lines of the summary's section that begins with TITLE:
# the title, a blank line, the table up to the blank line after it
section() {
	awk -v t="$1" 'index($0, t) == 1 { on = 1 } on && /^$/ && n > 1 { exit } on && NF { n++ } on' report.txt
}

@test "mpi: 4 ranks each record their file; their report names rank 2 as the max" {
	echo "mpirun: status $(cat mpirun.status)"
	cat mpirun.err
	assert_equal "$(cat mpirun.status)" 0
	for r in 0 1 2 3; do
		assert_file_exists "run.$r.rec"
		assert_equal "$(grep -c "^rank $r of 4 done$" mpirun.out)" 1
		assert_equal "$(grep -c "wrote .* to 'run.$r.rec'" mpirun.err)" 1
	done
	assert_equal "$(find . -name 'run.*.rec' | wc -l)" 4
	# each file reports on its own
	for r in 0 1 2 3; do
		run -0 "$SPANSTAT" report "run.$r.rec"
		assert_output --partial 'task-clock'
		assert_line --regexp ' rank_main;work$'
	done
	"$SPANSTAT" report run.*.rec >report.txt
	cat report.txt
	# the counters across the ranks: task-clock's max is rank 2's
	run section ' Across 4 ranks'
	assert_line --regexp 'task-clock'
	assert_line --regexp ' rank 2 +[0-9]+\.[0-9]%.* task-clock$'
	# the span paths across the ranks: rank_main;work's max is rank 2's
	run section ' Span paths across 4 ranks (total time):'
	assert_line --regexp ' rank 2 +[0-9]+\.[0-9]%.* rank_main;work$'
}

@test "mpi: --json: .ranks holds the 4 ranks, rank 2 the max of work and task-clock" {
	run -0 "$SPANSTAT" report --json=job.json run.*.rec
	jq -c ".ranks.counters[], (.ranks.spans[] | select(.path == $WORK))" job.json
	jq_true '.ranks.ranks | map(.rank) == [0, 1, 2, 3]' job.json
	jq_true '.ranks.ranks | map(.file) == ["run.0.rec", "run.1.rec", "run.2.rec", "run.3.rec"]' job.json
	jq_true '.ranks.ranks | all(.host | type == "string" and length > 0)' job.json
	# task-clock: rank 2 had 60 ms of CPU time or more in "work", the others
	# 30 ms or less
	jq_true '[.ranks.counters[] | select(.name == "task-clock")] | length == 1' job.json
	jq_true '.ranks.counters[] | select(.name == "task-clock")
		| .unit == "msec" and .max_rank == 2 and .min <= .mean and .mean < .max
		  and .imbalance > 0 and .imbalance < 1
		  and ((.imbalance - (.max - .mean) / .max) | fabs) < 1e-9' job.json
	# the max is rank 2's own count
	run -0 "$SPANSTAT" report --json=r2.json run.2.rec
	own=$(jq '.events[] | select(.name == "task-clock") | .value' r2.json)
	assert_equal "$(jq '.ranks.counters[] | select(.name == "task-clock") | .max' job.json)" "$own"
	# the span path rank_main;work: rank 2 worked 60 ms, the others 30 ms, so
	# mean 37.5, max 60: imbalance 0.375.  Rank 2 works on until it had 60 ms
	# of CPU time, so under load its span grows, and the imbalance with it
	# (0.6 with two other CPU hogs on 2 CPUs) towards 0.75, the most 4 ranks
	# can have ((max - mean) / max <= 1 - 1/4).
	jq_true "[.ranks.spans[] | select(.path == $WORK)] | length == 1" job.json
	jq_true ".ranks.spans[] | select(.path == $WORK) | .total_ns
		| .max_rank == 2 and .imbalance >= 0.2 and .imbalance <= 0.75
		  and .max >= 60000000 and .min >= 30000000 and .min <= .mean and .mean < .max
		  and ((.imbalance - (.max - .mean) / .max) | fabs) < 1e-9" job.json
	jq_true ".ranks.spans[] | select(.path == $WORK)
		| .self_ns.max_rank == 2 and .count.min == 1 and .count.max == 1" job.json
	own=$(jq '.spans.threads[].nodes[] | select(.name == "work" and .depth == 1) | .total_ns' r2.json)
	assert_equal "$(jq ".ranks.spans[] | select(.path == $WORK) | .total_ns.max" job.json)" "$own"
	# every rank has the outer span once
	jq_true '.ranks.spans[] | select(.path == ["rank_main"]) | .count.min == 1 and .count.max == 1' job.json
}

@test "mpi: --perfetto: a process per rank, named by its rank, all on one clock" {
	run -0 "$SPANSTAT" report --perfetto=job.pftrace run.*.rec
	pf_load job.pftrace
	grep '^P ' job.pftrace.ev
	assert_equal "$(grep -c '^P ' job.pftrace.ev)" 4
	for r in 0 1 2 3; do
		# "rank N (HOST) COMMAND"
		run awk -v re="(^| )rank $r( |\$)" '$1 == "P" { $1 = $2 = $3 = ""; if ($0 ~ re) print }' job.pftrace.ev
		assert_equal "${#lines[@]}" 1
		pid=$(awk -v re="(^| )rank $r( |\$)" '$1 == "P" { p = $3; $1 = $2 = $3 = ""; if ($0 ~ re) print p }' job.pftrace.ev)
		# the rank's spans, on its own process
		run awk -v p="$pid" '$1 == "S" && $3 == p { print $6 }' job.pftrace.ev
		assert_line rank_main
		assert_line 'rank_main;work'
	done
	# every slice's begin and end, resolved to MONOTONIC ns, with its rank's pid
	awk "$PF_TOKENIZE" job.pftrace.txt | awk 'FNR == NR { if ($1 == "T") pid[$2] = $3; next }
		$1 == "X" && $5 ~ /^TYPE_SLICE_/ { print $2, pid[$4], $5, $6 }' job.pftrace.ev - >ts.txt
	assert_equal "$(awk '{ print $2 }' ts.txt | sort -u | wc -l)" 4
	# the whole job lies within a few seconds: the ranks are on one clock
	run awk 'NR == 1 || $1 < lo { lo = $1 } NR == 1 || $1 > hi { hi = $1 } END { print (hi - lo) / 1e9 }' ts.txt
	echo "all slices within $output s"
	awk -v s="$output" 'BEGIN { exit !(s > 0 && s < 5) }'
	# and "work" begins after a barrier: on every rank within a second
	run awk '$3 == "TYPE_SLICE_BEGIN" && $4 == "work" { print $1 }' ts.txt
	assert_equal "${#lines[@]}" 4
	spread=$(printf '%s\n' "${lines[@]}" | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print (hi - lo) / 1e9 }')
	echo "work begins within $spread s"
	awk -v s="$spread" 'BEGIN { exit !(s < 1) }'
}

@test "mpi: a single rank's report has no ranks, and no section across ranks" {
	run -0 "$SPANSTAT" report --json=one.json run.1.rec
	refute_output --partial 'across'
	refute_output --partial 'Across'
	jq_true '.ranks.ranks == [] and .ranks.spans == [] and .ranks.elapsed_ns.max == null' one.json
}

@test "mpi: the merged flame chart and folded threads name each rank's process by its rank, host and real pid" {
	run -0 "$SPANSTAT" report --flamechart=job.svg --folded=job.folded --folded-threads run.*.rec
	local r pid
	for r in 0 1 2 3; do
		"$SPANSTAT" report --json=r.json "run.$r.rec" 2>/dev/null
		pid=$(jq '[.spans.threads[] | select(.nodes | length > 0) | .pid][0]' r.json)
		[ "$pid" -gt 0 ] && [ "$pid" -lt 4194304 ]
		grep -Eq ">process rank $r \\([^)]*\\) [^<]* \\[$pid\\]</text>" job.svg ||
			fail "no heading for rank $r, pid $pid: $(grep -o '>process [^<]*' job.svg)"
		grep -q "^rank $r ([^)]*) [^;]*-$pid;" job.folded ||
			fail "no folded root for rank $r, pid $pid: $(cut -d";" -f1 job.folded | sort -u)"
	done
}

@test "spanstat-json(5)'s rank example, on this job: paths by imbalance, rank 2's work first among its own" {
	local page="${SPANSTAT_MANDIR:-/nonexistent}/man5/spanstat-json.5"
	[ -f "$page" ] || page="$SRCDIR/man/spanstat-json.5"
	# the job above ran the example's mpirun line, with the flags this
	# machine needs; the rest runs as printed, on copies of its records
	mkdir -p "$BATS_TEST_TMPDIR/ex"
	cp run.*.rec "$BATS_TEST_TMPDIR/ex/"
	cd "$BATS_TEST_TMPDIR/ex" || return 1
	example=$(man_example "$page" "The span paths most out of balance")
	grep -q '^mpirun -np 4 spanstat record -o run.%r.rec -- ./app$' <<<"$example"
	export PATH="$(dirname "$SPANSTAT"):$PATH"
	bash -c "$(ex_setup "$example" | grep -v '^mpirun ')" >/dev/null 2>&1
	run -0 --separate-stderr bash -c "$(ex_query "$example")"
	# at most five lines, imbalance descending, each as the document has it
	[ "${#lines[@]}" -ge 3 ] && [ "${#lines[@]}" -le 5 ]
	assert_equal "$output" "$(jq -r '.ranks.spans[] | "\(.self_ns.imbalance)\t\(.self_ns.max_rank)\t\(.path | join(";"))"' job.json |
		sort -t$'\t' -k1,1gr -s | head -n 5)"
	assert_line --regexp $'^0\\.[0-9]+\t2\trank_main;work$'
}
