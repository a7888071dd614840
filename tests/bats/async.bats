#!/usr/bin/env bats
# async.bats: async spans (spanstat_async_begin/_enter/_exit/_end, the line
# protocol's b/n/x/e lines, Python's spanstat.async_*(); issue 24): busy and
# idle times per path and per name in the span table and the JSON, the same
# aggregated in the target and streamed; Perfetto tracks of their own with
# flows to the enter slices on the threads; the flame chart; spans left open
# marked unfinished; report of a record the same bytes as the live outputs.
#
# span_async: 4 "request" spans (begun by main inside "serve"), each entered
# 3 times by two pool threads in turn (busy >= 3 x 20 ms spinning, idle >=
# 2 x 30 ms between), each with a "query" child begun inside it; "open"
# adds "leak", never ended.  Times are only checked against generous floors.

load helpers
load pfreplay
bats_require_minimum_version 1.5.0

setup_file() {
	export PF_MISSING=
	if ! command -v protoc >/dev/null 2>&1; then
		PF_MISSING="protoc not installed (Debian package protobuf-compiler)"
	fi
	SPAN_ASYNC=$(build_workload span_async $(span_link_flags))
	export SPAN_ASYNC
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# rows FILE KEY: "path-or-name count unfinished enters moved" per row of
# .spans.async.KEY (paths joined by ;)
rows() {
	jq -r --arg k "$2" '.spans.async[$k][]
		| "\(if .path then (.path | join(";")) else .name end) \(.count) \(.unfinished) \(.enters) \(.moved)"' "$1"
}

@test "async: busy and idle per path and per name, aggregated and streamed" {
	local opts
	for opts in "" --perfetto=s.pftrace; do
		# shellcheck disable=SC2086 # opts is one option or none
		run -0 timeout -k 5 120 "$SPANSTAT" --spans -o sum.txt --json=s.json $opts -- \
			"$SPAN_ASYNC"
		run rows s.json paths
		assert_output "request 4 0 12 4
request;query 4 0 4 0"
		run rows s.json names
		assert_output "request 4 0 12 4
query 4 0 4 0"
		# busy + idle is the whole; generous floors: half of what the
		# workload spins (12 x 20 ms) and sleeps (8 x 30 ms)
		run jq -r '.spans.async.paths[] | select(.name == "request")
			| (.busy_ns + .idle_ns == .total_ns) and (.busy_ns >= 120000000)
			  and (.idle_ns >= 120000000) and (.busy_ns < .total_ns)' s.json
		assert_output true
		run jq -r '.spans.async.paths[] | select(.name == "query")
			| (.busy_ns + .idle_ns == .total_ns) and (.busy_ns >= 2000000)' s.json
		assert_output true
		# the per-name rows sum the paths'
		run jq '[.spans.async.paths[] | select(.name == "request") | .total_ns] ==
			[.spans.async.names[] | select(.name == "request") | .total_ns]' s.json
		assert_output true
		# the span table: both tables, the thread spans untouched
		grep -q '^ Async spans by path' sum.txt
		grep -q '^ Async spans by name' sum.txt
		run grep -E '^ +4 .* 12 +4  request$' sum.txt
		[ "${#lines[@]}" -eq 2 ]
		grep -qE '^ +4 .* 4 +0  request;query$' sum.txt
		grep -qE '^ +1 .*  serve$' sum.txt
	done
}

@test "async: one still open at the end is marked unfinished everywhere" {
	run -0 timeout -k 5 120 "$SPANSTAT" --spans -o sum.txt --json=s.json \
		--perfetto=s.pftrace -- "$SPAN_ASYNC" open
	run rows s.json paths
	assert_output "leak 1 1 0 0
request 4 0 12 4
request;query 4 0 4 0"
	run jq -r '.spans.async.paths[] | select(.name == "leak")
		| (.busy_ns == 0) and (.idle_ns == .total_ns) and (.total_ns > 0)' s.json
	assert_output true
	grep -qE '^ +1 .*  leak  \(1 unfinished\)$' sum.txt
	pf_load s.pftrace
	run awk '$1 == "S" && $5 == "async" && $6 == "leak" { print $7 }' s.pftrace.ev
	assert_output 1
}

@test "async in Perfetto: a track per span, enter slices on the threads, flows between" {
	run -0 timeout -k 5 120 "$SPANSTAT" --spans --perfetto=t.pftrace -- "$SPAN_ASYNC"
	pf_load t.pftrace
	# a track per async span, under the process's track, named by the span
	run bash -c "awk '\$1 == \"A\" { print \$4 }' t.pftrace.ev | sort | uniq -c"
	assert_output "$(printf '%7d %s\n' 4 query 4 request)"
	proc=$(awk '$1 == "P" { print $2 }' t.pftrace.ev)
	run awk -v p="$proc" '$1 == "A" && $3 != p' t.pftrace.ev
	assert_output ""
	# one slice on each, none unfinished; the enters on the pool threads,
	# a query's inside its request's; serve alone on the main thread
	run bash -c "awk '\$1 == \"S\" && \$5 != \"pool\" && \$5 != \"async\" { print \$6, \$7 }' t.pftrace.ev"
	assert_output "serve 0"
	run bash -c "awk '\$1 == \"S\" && (\$5 == \"pool\" || \$5 == \"async\") { print \$5, \$6, \$7 }' t.pftrace.ev | sort | uniq -c"
	assert_output "$(printf '%7d %s\n' 4 'async query 0' 4 'async request 0' 12 'pool request 0' 4 'pool request;query 0')"
	# flows: each async span's id on its begin and on each of its enters
	run bash -c "grep -o 'flow_ids: [0-9]*' t.pftrace.txt | sort | uniq -c | awk '{ print \$1 }' | sort | uniq -c"
	assert_output "$(printf '%7d %s\n' 4 2 4 4)"
	# the end of each says its busy and idle ns
	[ "$(grep -c '"busy_ns"' t.pftrace.txt)" -eq 8 ]
	[ "$(grep -c '"idle_ns"' t.pftrace.txt)" -eq 8 ]
}

@test "async: the report of a record is the live outputs, byte for byte" {
	run -0 timeout -k 5 120 "$SPANSTAT" --record=r.rec -o live.txt --spans --json=live.json \
		--perfetto=live.pftrace --flamechart=live.fc.svg -- "$SPAN_ASYNC" open
	run -0 timeout -k 5 60 "$SPANSTAT" report -o rep.txt --json=rep.json \
		--perfetto=rep.pftrace --flamechart=rep.fc.svg r.rec
	for x in txt json pftrace fc.svg; do
		cmp "live.$x" "rep.$x"
	done
	run rows rep.json paths
	assert_output "leak 1 1 0 0
request 4 0 12 4
request;query 4 0 4 0"
}

@test "async in the flame chart: a lane of the process's async spans, busy and idle in each title" {
	run -0 timeout -k 5 120 "$SPANSTAT" --spans -o /dev/null --flamechart=f.svg -- \
		"$SPAN_ASYNC" open
	run grep -c 'async spans \[[0-9]*\]' f.svg
	assert_output 1
	run grep -c '<title>request (async [^,]*, at [^,]*, busy [^,]*, idle [^,)]*)</title>' f.svg
	assert_output 4
	run grep -c '<title>query (async ' f.svg
	assert_output 4
	grep -q '<title>leak (async [^<]*, busy 0 ns, idle [^<]*, unfinished)</title>' f.svg
	# the thread spans are still drawn on their thread's lane
	grep -q '<title>serve (' f.svg
}

@test "async spans by lines: b, n, x and e from a shell script, bad ones counted" {
	cat >l.sh <<'SH'
exec {fd}>>"$SPANSTAT_LINES"
p=$$
printf 'b %d - - 5 handle req\n' $p >&$fd
(printf 'n %d %d - 5\n' $p $BASHPID; sleep 0.05; printf 'x %d %d - 5\n' $p $BASHPID) >&$fd
(printf 'n %d %d - 5\n' $p $BASHPID; printf 'x %d %d - 5\n' $p $BASHPID) >&$fd
printf 'e %d - - 5\nb %d - - 6 left open\n' $p $p >&$fd
printf 'x %d - - 99\n' $p >&$fd           # no such span: unmatched
printf 'b %d - - 0 zero\nn %d - - 5 x\n' $p $p >&$fd # id 0, junk after the id: bad lines
SH
	run -0 timeout -k 5 60 "$SPANSTAT" --spans -o l.txt --json=l.json -- bash l.sh
	run rows l.json paths
	assert_output "handle req 1 0 2 1
left open 1 1 0 0"
	run jq -r '.spans.async.paths[0] | (.busy_ns + .idle_ns == .total_ns)' l.json
	assert_output true
	assert_equal "$(jq '.spans.decode | .bad_lines, .unmatched' l.json | tr '\n' ' ')" "2 1 "
	grep -q '^ Async spans by path' l.txt
	run -1 grep -c 'no spans collected' l.txt
	assert_output 0
}

@test "async spans from Python: spanstat.async_*() in a thread pool, with and without the C part" {
	require_cmd python3
	cat >a.py <<'PY'
import time
from concurrent.futures import ThreadPoolExecutor
import spanstat
for i in (1, 2, 3):
    spanstat.async_begin("job", i)
def step(i):
    spanstat.async_enter(i)
    end = time.monotonic() + 0.01
    while time.monotonic() < end:
        pass
    spanstat.async_exit(i)
with ThreadPoolExecutor(2) as ex:
    for _ in range(2):
        list(ex.map(step, (1, 2, 3)))
for i in (1, 2, 3):
    spanstat.async_end(i)
spanstat.async_begin("open", 2**64 - 1)
for bad in (0, 2**64, -1):
    try:
        spanstat.async_enter(bad)
    except ValueError:
        print("refused", bad)
PY
	local pure
	for pure in 0 1; do
		SPANSTAT_PY_PURE=$pure run -0 timeout -k 5 60 "$SPANSTAT" --spans -o p.txt \
			--json=p.json -- python3 a.py
		assert_output "refused 0
refused 18446744073709551616
refused -1"
		run jq -r '.spans.async.paths[] | "\(.name) \(.count) \(.unfinished) \(.enters)"' p.json
		assert_output "job 3 0 6
open 1 1 0"
		run jq -r '.spans.async.paths[0] | (.busy_ns + .idle_ns == .total_ns) and (.busy_ns >= 30000000)' p.json
		assert_output true
		assert_equal "$(jq '.spans.decode | .bad_lines, .unmatched' p.json | tr '\n' ' ')" "0 0 "
	done
}

@test "async: a thread that ends inside an async span leaves it there, not at the span's end" {
	# orphan: entered by a thread that spins 200 ms and ends without
	# leaving it; main spins 200 ms more, then ends it: idle is that time
	run -0 timeout -k 5 120 "$SPANSTAT" --spans -o o.txt --json=o.json --record=o.rec -- \
		"$SPAN_ASYNC" gone
	run jq -r '.spans.async.paths[] | select(.name == "orphan")
		| "\(.count) \(.enters) \(.busy_ns + .idle_ns == .total_ns) \(.busy_ns >= 100000000) \(.idle_ns >= 100000000)"' o.json
	assert_output "1 1 true true true"
	run -0 timeout -k 5 60 "$SPANSTAT" report -o r.txt --json=r.json o.rec
	cmp o.json r.json
	cmp o.txt r.txt
}

@test "async: one entered when its process is killed ends at the process's end" {
	# doomed: entered, 200 ms spinning, then SIGKILL: busy until the kill
	run -137 timeout -k 5 120 "$SPANSTAT" --spans -o k.txt --json=k.json -- "$SPAN_ASYNC" kill
	run jq -r '.spans.async.paths[] | select(.name == "doomed")
		| "\(.count) \(.unfinished) \(.busy_ns >= 100000000) \(.busy_ns + .idle_ns == .total_ns)"' k.json
	assert_output "1 1 true true"
}

@test "async: 60000 open at once are all kept, none dropped" {
	# the reader looked for the innermost entered span and for each end
	# through every open one: quadratic, so slow that the pipe filled and
	# the target dropped most ends
	run -0 timeout -k 5 120 "$SPANSTAT" --spans -o m.txt --json=m.json -- "$SPAN_ASYNC" many
	run jq -r '.spans.async.names[] | "\(.name) \(.count) \(.unfinished)"' m.json
	assert_output "task 60000 0"
	assert_equal "$(jq '.spans.decode | .dropped, .unmatched, .over_limit' m.json | tr '\n' ' ')" "0 0 0 "
}

@test "async: 60000 open at once, each of its own name: all kept, none dropped" {
	# each begin looked for its row through every row made so far
	run -0 timeout -k 5 120 "$SPANSTAT" --spans -o m.txt --json=m.json -- "$SPAN_ASYNC" names
	run jq -r '[.spans.async.names[] | select(.count == 1 and .unfinished == 0)] | length' m.json
	assert_output 60000
	run jq -r '[.spans.async.paths[] | select(.count == 1 and .unfinished == 0 and (.path | length) == 1)] | length' m.json
	assert_output 60000
	assert_equal "$(jq '.spans.decode | .dropped, .unmatched, .over_limit' m.json | tr '\n' ' ')" "0 0 0 "
	# the tables: a row per path and per name
	run grep -cE '^ +1 .*  task-[0-9]+$' m.txt
	assert_output 120000
}
