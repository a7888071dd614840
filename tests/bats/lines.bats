#!/usr/bin/env bats
# lines.bats: spans from programs that do not link libspanstat, through the
# line protocol (spanstat-lines(5)) and its Python module and bash helper, as
# installed: nested spans per thread and process in every output, forks and
# multiprocessing, malformed and over-long lines counted, interleaved writers,
# the time forms, spans left open at the end, and no effect without spanstat.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# paths FILE: "path count" for every node of the merged tree of a JSON document
paths() {
	jq -r '.spans.merged.nodes as $n
		| reduce $n[] as $x ({}; .[$x.id | tostring] =
			(if $x.parent == null then $x.name else .[$x.parent | tostring] + ";" + $x.name end))
		| . as $p | $n[] | "\($p[.id | tostring]) \(.count)"' "$1" | sort
}

@test "Python: nested spans per thread, fork and multiprocessing children, in every output" {
	require_cmd python3
	run "$SPANSTAT" --json=p.json --folded=p.txt --perfetto=p.pftrace --spans -o sum.txt \
		-e task-clock -- python3 "$WORKLOADS/lines_py.py"
	assert_success
	assert_output 2470
	run paths p.json
	assert_output "child 1
main 1
main;work 2
main;work;inner 2
square 20
work 3
work;inner 3"
	# the worker thread is named, and the main thread's spans are its own
	assert_equal "$(jq -r '.spans.threads[] | select(.thread_name == "worker") | [.nodes[] | .name] | join(",")' p.json)" \
		"work,inner"
	# the fork child and the pool workers are processes of their own
	[ "$(jq '[.spans.threads[] | .pid] | unique | length' p.json)" -ge 3 ]
	assert_equal "$(jq '.spans.instants, .spans.counters' p.json | tr '\n' ' ')" "1 1 "
	assert_equal "$(jq '.spans.decode | .bad_lines, .unmatched, .unfinished' p.json | tr '\n' ' ')" "0 0 0 "
	grep -q '^main;work;inner [0-9]' p.txt
	grep -q 'main;work;inner$' sum.txt
	[ -s p.pftrace ]
	# on- and off-CPU time apply to these spans as to the library's
	[ "$(jq '[.spans.merged.nodes[] | select(.name == "inner") | .off_cpu_ns] | first' p.json)" -gt 1000000 ]
}

@test "Python: the module does nothing without spanstat, and imports without it" {
	require_cmd python3
	local dir
	dir=$(dirname "$(find "$STAGE" -name spanstat.py | head -1)")
	[ -f "$dir/spanstat.py" ]
	run env -u SPANSTAT_LINES PYTHONPATH="$dir" python3 "$WORKLOADS/lines_py.py" noop
	assert_success
	assert_output disabled
	run "$SPANSTAT" --spans -e task-clock -- python3 "$WORKLOADS/lines_py.py" noop
	assert_success
	assert_line enabled
	assert_output --regexp ' work;inner'
}

@test "Python: the module installs where Debian's python3 imports it, not only under spanstat" {
	# automake's default, PREFIX/lib/python3.X/site-packages, is not on
	# Debian's sys.path: configure asks the Python it found (sitedir.py)
	[ -x /usr/bin/python3 ] || skip "no Debian python3 here"
	local dir prefix
	for prefix in /usr/local /usr; do
		dir=$(/usr/bin/python3 "$SRCDIR/lib/python/sitedir.py" "$prefix")
		[[ $dir == '${prefix}/lib/python3'*/dist-packages ]]
		dir=$prefix${dir#'${prefix}'}
		run /usr/bin/python3 -c 'import sys; print(sys.argv[1] in sys.path)' "$dir"
		assert_output True
	done
	# a prefix the Python does not search: nothing, and automake's default stays
	run /usr/bin/python3 "$SRCDIR/lib/python/sitedir.py" "$BATS_TEST_TMPDIR/nowhere"
	assert_success
	assert_output ''
	# and this build's configure chose such a directory: the staged module's
	# place, without the stage, is on Debian's python3's path (unless the
	# build was configured with another Python or prefix on purpose)
	local staged
	staged=$(dirname "$(find "$STAGE" -name spanstat.py | head -1)")
	staged=${staged#"$STAGE"}
	if [[ $staged == /usr/local/* || $staged == /usr/lib/* ]]; then
		run /usr/bin/python3 -c 'import sys; print(sys.argv[1] in sys.path)' "$staged"
		assert_output True
	fi
	# the module works imported from such a directory, outside spanstat
	mkdir -p site && cp "$(find "$STAGE" -name spanstat.py | head -1)" site/
	run env -u SPANSTAT_LINES PYTHONPATH=site /usr/bin/python3 "$WORKLOADS/lines_py.py" noop
	assert_success
	assert_output disabled
}

@test "bash: spanstat.bash, one printf per event; subshells are processes; statuses kept" {
	run "$SPANSTAT" --json=b.json --folded=b.txt -e task-clock -- bash "$WORKLOADS/lines_sh.bash" raw
	assert_success
	assert_output --partial "status 1"
	run paths b.json
	assert_output "build 1
build;failing 1
build;step 3
build;step;inner 1
raw 1
sub 1"
	assert_equal "$(jq '.spans.counters, .spans.decode.bad_lines' b.json | tr '\n' ' ')" "1 1 "
	# no process per span: the script starts sleep and false only
	grep -q '^build;step;inner [0-9]' b.txt
}

@test "interleaved writers: 8 processes x 500 spans, every line whole" {
	cat >w.sh <<'SH'
exec {fd}>>"$SPANSTAT_LINES"
for p in 1 2 3 4 5 6 7 8; do
	(for i in $(seq 500); do printf 'B %d - - w%d\nE %d - - w%d\n' $BASHPID $p $BASHPID $p >&$fd; done) &
done
wait
SH
	run "$SPANSTAT" --json=w.json --spans -e task-clock -- bash w.sh
	assert_success
	assert_equal "$(jq '[.spans.merged.nodes[] | .count] | add' w.json)" 4000
	assert_equal "$(jq '.spans.decode | .bad_lines, .unmatched' w.json | tr '\n' ' ')" "0 0 "
}

@test "times: monotonic ns, realtime seconds with '.' or ',', and the reading time" {
	cat >t.sh <<'SH'
exec {fd}>>"$SPANSTAT_LINES"
now=$(awk '{ print $1 }' /proc/uptime) # not monotonic: only a sanity bound below
m=$(python3 -c 'import time; print(time.monotonic_ns())')
r=$(python3 -c 'import time; print("%.6f" % time.time())')
printf 'B %d - %d mono\nE %d - %d mono\n' $$ $m $$ $((m + 5000000)) >&$fd
printf 'B %d - @%s real\n' $$ "$r" >&$fd
r2=$(python3 -c "print('%.6f' % ($r + 0.25))")
printf 'E %d - @%s real\n' $$ "${r2/./,}" >&$fd
printf 'B %d - - now\n' $$ >&$fd
sleep 0.1
printf 'E %d - - now\n' $$ >&$fd
SH
	require_cmd python3
	run "$SPANSTAT" --json=t.json -e task-clock --spans -- bash t.sh
	assert_success
	assert_equal "$(jq '[.spans.merged.nodes[] | select(.name == "mono") | .total_ns] | first' t.json)" 5000000
	real=$(jq '[.spans.merged.nodes[] | select(.name == "real") | .total_ns] | first' t.json)
	[ "$real" -ge 249000000 ]
	[ "$real" -le 251000000 ]
	# '-': the time spanstat read the line (two reads apart, or one batch)
	assert_equal "$(jq '[.spans.merged.nodes[] | select(.name == "now") | .count] | first' t.json)" 1
}

@test "malformed lines are counted and skipped, never trusted" {
	cat >m.sh <<'SH'
exec {fd}>>"$SPANSTAT_LINES"
r=${EPOCHREALTIME/,/.}    # now, to the us: '@'$r'000' to the ns
{
printf 'B %d - @%s000 ok\n' $$ "$r"
printf 'Q %d - 100 x\n' $$            # unknown op
printf 'B x - 100 x\n'                 # pid not a number
printf 'B 0 - 100 x\n'                 # pid 0
printf 'B %d 5x 100 x\n' $$           # tid not a number
printf 'B %d - 1e9 x\n' $$            # time not a number
printf 'B %d - 99999999999999999999 x\n' $$   # time overflows
printf 'C %d - 100 12q x\n' $$        # counter value not a number
printf 'B %d - 100\n' $$              # no name field
printf 'B%d - 100 x\n' $$             # no space after the op
printf '\n'                            # empty
head -c 5000 /dev/zero | tr '\0' 'a'; printf '\n'   # too long
printf 'E %d - @%s100 ok\n' $$ "$r"
printf 'B %d - @%s200 tail-without-newline' $$ "$r"
} >&$fd
SH
	run "$SPANSTAT" --json=m.json -e task-clock --spans -- bash m.sh
	assert_success
	assert_equal "$(jq ".spans.decode.bad_lines" m.json)" 12
	assert_equal "$(jq -c '[.spans.merged.nodes[] | [.name, .count, .total_ns]]' m.json)" '[["ok",1,100]]'
	assert_output --partial "12 bad lines skipped"
}

@test "the process's X line ends its spans; lines and the library share a process" {
	cat >x.sh <<'SH'
exec {fd}>>"$SPANSTAT_LINES"
r=${EPOCHREALTIME/,/.}
printf 'B %d - @%s000 open\nX %d - @%s050\n' $$ "$r" $$ "$r" >&$fd
SH
	# bash itself loads the library (its HELLO may come before or after the
	# lines): either way the X closes the span at its time
	for i in 1 2 3; do
		run "$SPANSTAT" --json=x.json -e task-clock --spans -- bash x.sh
		assert_success
		assert_equal "$(jq -c '[.spans.merged.nodes[] | [.name, .count, .total_ns, .unfinished]]' x.json)" \
			'[["open",1,50,1]]'
	done
	# an X after the spans ended closes nothing
	run "$SPANSTAT" --json=y.json -e task-clock --spans -- bash -c '
		printf "B %d - - mine\n" $$ >>"$SPANSTAT_LINES"; sleep 0.05
		printf "E %d - - mine\nX %d - -\n" $$ $$ >>"$SPANSTAT_LINES"'
	assert_success
	assert_equal "$(jq -c '[.spans.merged.nodes[] | [.name, .count, .unfinished]]' y.json)" '[["mine",1,0]]'
}

@test "bash: a span left open at the end of the script ends with the shell, its sleep off-CPU" {
	cat >o.sh <<'SH'
. "$SPANSTAT_SH"
spanstat_begin open
spanstat_span step true
sleep 0.1
SH
	local mode
	for mode in aggregate stream; do
		opts=()
		[ "$mode" = aggregate ] || opts=(--perfetto=o.pftrace)
		run "$SPANSTAT" "${opts[@]}" --json=$mode.json --spans -e task-clock -- bash o.sh
		assert_success
		read -r c u total off < <(jq -r '[.spans.merged.nodes[] | select(.name == "open")] | first
			| "\(.count) \(.unfinished) \(.total_ns) \(.off_cpu_ns)"' $mode.json)
		echo "$mode: open $c x, $u unfinished, $total ns, $off ns off-CPU"
		# the shell waited for sleep's 100 ms, then ended: open lasted that long
		[ "$c" = 1 ]
		[ "$u" = 1 ]
		[ "$total" -ge 100000000 ]
		[ "$total" -lt 5000000000 ]
		[ "$off" -ge 95000000 ]
		[ "$off" -le "$total" ]
	done
	assert_equal "$(jq -c '[.spans.merged.nodes[] | [.depth, .name, .count, .unfinished]]' stream.json)" \
		"$(jq -c '[.spans.merged.nodes[] | [.depth, .name, .count, .unfinished]]' aggregate.json)"
}

@test "times that contradict are bad lines: before the process, a child outside its parent; so is a NUL in a name" {
	cat >c.sh <<'SH'
exec {fd}>>"$SPANSTAT_LINES"
r=${EPOCHREALTIME/,/.}
b=$(( ${r%.*} * 1000000000 + 10#${r#*.} * 1000 ))
at() { printf '@%d.%09d' $(( $1 / 1000000000 )) $(( $1 % 1000000000 )); }
{
printf 'B %d - 100 early\n' $$                         # before the process began
printf 'I %d - %s old\n' $$ "$(at $(( b - 10000000000 )))"   # 10 s before it
printf 'B %d - %s outer\n' $$ "$(at $b)"
printf 'B %d - %s child\n' $$ "$(at $(( b - 5 )))"     # before its parent
printf 'B %d - %s inner\n' $$ "$(at $(( b + 10 )))"
printf 'E %d - %s inner\n' $$ "$(at $(( b + 20 )))"
printf 'E %d - %s outer\n' $$ "$(at $(( b + 15 )))"     # before inner ended in it
printf 'B %d - %s late\n' $$ "$(at $(( b + 30 )))"
printf 'E %d - %s late\n' $$ "$(at $(( b + 25 )))"      # before it began
printf 'E %d - %s late\n' $$ "$(at $(( b + 40 )))"
printf 'B %d - %s na\0me\n' $$ "$(at $(( b + 41 )))"   # a NUL in the name
printf 'X %d - %s\n' $$ "$(at $(( b + 35 )))"           # before late ended in outer
printf 'E %d - %s outer\n' $$ "$(at $(( b + 60 )))"
} >&$fd
SH
	run "$SPANSTAT" --json=c.json -e task-clock --spans -- bash c.sh
	assert_success
	assert_output --partial "7 bad lines skipped"
	assert_equal "$(jq -c '.spans.decode | [.bad_lines, .unmatched, .unfinished]' c.json)" '[7,0,0]'
	run paths c.json
	assert_output "outer 1
outer;inner 1
outer;late 1"
	assert_equal "$(jq -c '[.spans.merged.nodes[] | [.name, .total_ns]]' c.json)" \
		'[["outer",60],["inner",10],["late",10]]'
}

@test "a span nested under one that began after it is counted and said, in every mode" {
	MIXED=$(build_workload span_lines_mixed $(span_link_flags))
	# lib-outer reaches spanstat (at exit) after line-mid, which began after it
	# (and the 100 "warm" spans before it, in the same unread batch)
	run --separate-stderr -0 "$SPANSTAT" --spans --json=live.json --perfetto=live.pf -- "$MIXED"
	grep -q "span data: 101 spans nested under spans that began after them" <<<"$stderr"
	assert_equal "$(jq '.spans.decode.misnested' live.json)" 101
	run -0 "$SPANSTAT" record -o mixed.rec -- "$MIXED"
	run --separate-stderr -0 "$SPANSTAT" report --json=rep.json mixed.rec
	grep -q "span data: 101 spans nested under spans that began after them" <<<"$output"
	assert_equal "$(jq '.spans.decode.misnested' rep.json)" 101
	# aggregating, the target's own tree and the lines' are apart: none
	run --separate-stderr -0 "$SPANSTAT" --spans --json=agg.json -- "$MIXED"
	assert_equal "$(jq '.spans.decode.misnested' agg.json)" 0
	# one source alone, in order: none
	run --separate-stderr -0 "$SPANSTAT" --json=ok.json -- python3 "$WORKLOADS/lines_py.py"
	assert_equal "$(jq '.spans.decode.misnested' ok.json)" 0
}
