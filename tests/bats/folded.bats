#!/usr/bin/env bats
# folded.bats: --folded=FILE|- and --folded-threads end to end: every line
# against the grammar, the known stacks of the workloads, self times that
# add up (against the same run's span table and wall time), escaping of
# names the grammar cannot hold, -finstrument-functions frames by symbol
# (static functions included), and a file that appears whole or not at all.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export SPAN_THREADS SPAN_FINSTR SPAN_NAMES
	SPAN_THREADS=$(build_workload span_threads $(span_link_flags))
	SPAN_FINSTR=$(build_workload span_finstr -finstrument-functions)
	SPAN_NAMES=$(build_workload span_names $(span_link_flags))
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# check_grammar FILE: every line is `frame;frame VALUE` split at its last
# space, frames without ';' (spaces allowed: flame graph tools split at the
# last space) and not empty, VALUE a positive decimal integer, no control
# bytes anywhere; and there is at least one line.
check_grammar() {
	[ -s "$1" ] || { echo "$1: empty"; return 1; }
	if LC_ALL=C grep -n -v -E '^[^;]+(;[^;]+)* [0-9]+$' "$1"; then
		echo "^ lines that break the grammar"
		return 1
	fi
	if LC_ALL=C grep -n -P '[\x00-\x09\x0b-\x1f\x7f]' "$1"; then
		echo "^ control bytes"
		return 1
	fi
	if LC_ALL=C grep -n -E ' 0+$| 0[0-9]' "$1"; then
		echo "^ zero or zero-padded values"
		return 1
	fi
	# a trailing newline on the last line too
	[ "$(tail -c1 "$1" | od -An -c | tr -d ' ')" = '\n' ]
}

# paths FILE: the stack paths of FILE, without the values, sorted.
paths() {
	sed -E 's/ [0-9]+$//' "$1" | LC_ALL=C sort
}

# strip_roots: drops the two --folded-threads root frames.
strip_roots() {
	sed -E 's/^[^;]+;[^;]+;//'
}

THREADS_PATHS='main
main;join
main;sleep
main;spawn
work
work;outer
work;outer;inner
work;outer;inner;scoped'

@test "--folded=FILE: the grammar on every line, the workload's stacks, sorted by path" {
	run "$SPANSTAT" --folded=out.folded -- "$SPAN_THREADS"
	assert_success
	# the summary still goes to stderr
	assert_output --partial 'Performance counter stats for'
	refute_output --regexp 'work;outer'
	check_grammar out.folded
	assert_equal "$(paths out.folded)" "$THREADS_PATHS"
	# one line per path, in bytewise order
	LC_ALL=C sort -c -u -k1,1 out.folded
}

@test "--folded=- writes the stacks to stdout, the summary stays on stderr" {
	run --separate-stderr "$SPANSTAT" --folded=- -- "$SPAN_THREADS"
	assert_success
	printf '%s\n' "$output" >stdout.folded
	check_grammar stdout.folded
	assert_equal "$(paths stdout.folded)" "$THREADS_PATHS"
	refute_output --partial 'Performance counter stats'
	[[ $stderr == *"Performance counter stats for"* ]]
	[[ $stderr == *"seconds time elapsed"* ]]
	[[ $stderr != *"work;outer"* ]]
}

@test "self times add up: they match the same run's table, and totals fit in the wall time" {
	run "$SPANSTAT" --spans --folded=out.folded -- "$SPAN_THREADS"
	assert_success
	check_grammar out.folded
	# For every path of the table: its self time is the folded value, and its
	# total is the sum of the folded values of the path and all below it (the
	# table prints 3 significant digits: allow 0.5% and 10 ns).
	awk 'function ns(v, u) { return v * (u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "us" ? 1e3 : 1) }
		function near(a, b) { d = a - b; if (d < 0) d = -d; return d <= b / 200 + 10 }
		FNR == NR { self[$1] = $2; next }
		/^ Spans by stack path:/ { sec = 1; next }
		/^ Spans by name:/ { sec = 0 }
		/ count +total +self +mean +wall / { col = length($0) - 3; next }
		sec && NF >= 9 && $1 ~ /^[0-9,]+$/ {
			p = substr($0, col); rows++
			sum = 0
			for (k in self) if (k == p || index(k, p ";") == 1) sum += self[k]
			if (!near(ns($4, $5), self[p] + 0)) { print p ": self " $4 $5 " vs folded " self[p]; bad = 1 }
			if (!near(ns($2, $3), sum)) { print p ": total " $2 $3 " vs folded sum " sum; bad = 1 }
			if (sum < self[p]) bad = 1
		}
		END { if (rows != 8) { print rows " rows"; bad = 1 }; exit bad }' out.folded - <<<"$output"
	# main holds the 50 ms sleep; no thread's stacks add up to more than the
	# run's wall time (self times are exclusive)
	elapsed=$(awk '/seconds time elapsed/ { printf "%.0f\n", $1 * 1e9 }' <<<"$output")
	run "$SPANSTAT" --folded=- --folded-threads -- "$SPAN_THREADS"
	assert_success
	awk -v wall="$elapsed" '/ [0-9]+$/ { split($1, f, ";"); t[f[2]] += $2 }
		END { for (k in t) { print k, t[k], "of", wall; if (t[k] > wall * 1.05) bad = 1 }
			if (length(t) != 5) bad = 1; exit bad }' <<<"$(grep -E '^[^ ]+ [0-9]+$' <<<"$output")"
	main=$(grep -E '^[^;]+;main-thread-[0-9/]+;main[; ]' <<<"$output" | awk '{ s += $2 } END { print s }')
	echo "main-thread: $main ns"
	[ "$main" -ge 50000000 ]
}

@test "--folded-threads: every stack under its process and thread frames" {
	run --separate-stderr "$SPANSTAT" --folded=- --folded-threads -- "$SPAN_THREADS"
	assert_success
	printf '%s\n' "$output" >threads.folded
	check_grammar threads.folded
	# PROCNAME-PID;THREADNAME-PID/TID;... with one pid throughout
	pid=$(sed -n -E '1s/^span_threads[^;]*-([0-9]+);.*/\1/p' threads.folded)
	[ -n "$pid" ]
	run grep -v -E "^span_threads[^;]*-$pid;(main-thread|worker-[0-3])-$pid/[0-9]+;[^ ]+ [0-9]+\$" threads.folded
	assert_failure 1
	assert_equal "$(grep -c '^[^;]*;main-thread-' threads.folded)" 4
	assert_equal "$(grep -c '^[^;]*;worker-' threads.folded)" 16
	assert_equal "$(strip_roots <threads.folded | sed -E 's/ [0-9]+$//' | LC_ALL=C sort -u)" \
		"$THREADS_PATHS"
}

@test "names with ';', '%' and control bytes are escaped, reversibly; spaces and UTF-8 stay" {
	run "$SPANSTAT" --folded=names.folded -- "$SPAN_NAMES"
	assert_success
	check_grammar names.folded
	assert_equal "$(paths names.folded)" "$(printf '%s\n' $'caf\xc3\xa9' 'has space' \
		'has space;semi%3Bcolon' 'has space;semi%3Bcolon;per%25cent' \
		'tab%09here%0Anewline' | LC_ALL=C sort)"
	# undoing the escapes gives the names back
	run bash -c "sed -E 's/ [0-9]+\$//; s/%([0-9A-F]{2})/\\\\x\\1/g' names.folded | grep semi | tail -n1"
	assert_equal "$(printf '%b' "$output")" 'has space;semi;colon;per%cent'
	run "$SPANSTAT" --folded=threads.folded --folded-threads -- "$SPAN_NAMES"
	assert_success
	check_grammar threads.folded
	assert_equal "$(grep -c -E '^span_names[^;]*-([0-9]+);my thread%3B1-\1/\1;' threads.folded)" 5
}

@test "-finstrument-functions: frames are symbols, static functions included, in call order" {
	# the functions below main are file-local (static) symbols of a PIE
	run -0 readelf -h "$SPAN_FINSTR"
	assert_output --regexp 'Type: +DYN'
	run -0 nm "$SPAN_FINSTR"
	assert_line --regexp ' t leaf_a(\.[a-z]+[.0-9]*)?$'
	assert_line --regexp ' t mid(\.[a-z]+[.0-9]*)?$'
	run "$SPANSTAT" --folded=finstr.folded -- "$SPAN_FINSTR"
	assert_success
	check_grammar finstr.folded
	assert_equal "$(paths finstr.folded)" "$(printf '%s\n' main 'main;run' 'main;run;leaf_a' \
		'main;run;mid' 'main;run;mid;leaf_b' 'main;run;spin')"
	# spin() busy-waits 20 ms by the clock: the hottest frame, at least that long
	spin=$(awk '$1 == "main;run;spin" { print $2 }' finstr.folded)
	echo "spin: $spin ns"
	[ "$spin" -ge 19000000 ]
	assert_equal "$(sort -k2,2n finstr.folded | tail -n1 | cut -d' ' -f1)" 'main;run;spin'
}

@test "-finstrument-functions in a non-PIE program resolves the same names" {
	nopie=$(build_workload span_finstr -finstrument-functions -no-pie -fno-pie)
	run -0 readelf -h "$nopie"
	assert_output --regexp 'Type: +EXEC'
	run --separate-stderr "$SPANSTAT" --folded=- -- "$nopie"
	assert_success
	assert_equal "$(sed -E 's/ [0-9]+$//' <<<"$output")" "$(printf '%s\n' main 'main;run' \
		'main;run;leaf_a' 'main;run;mid' 'main;run;mid;leaf_b' 'main;run;spin')"
}

@test "the folded file appears whole or not at all" {
	# COMMAND not found: status 127, no file, no temporary left behind
	run -127 "$SPANSTAT" --folded=out.folded -- ./no-such-command
	assert_equal "$(ls -A)" ''
	# an existing file keeps its contents when the run fails that way
	echo 'old 1' >kept.folded
	run -127 "$SPANSTAT" --folded=kept.folded -- ./no-such-command
	assert_equal "$(cat kept.folded)" 'old 1'
	assert_equal "$(ls -A)" 'kept.folded'
	# a file that cannot be created fails before the command starts
	run "$SPANSTAT" --folded=no-such-dir/out.folded -- touch started
	assert_failure 125
	assert_output --regexp "^spanstat: .*'no-such-dir/out.folded'"
	[ ! -e started ]
	# a successful run replaces the file and leaves nothing else
	run "$SPANSTAT" --folded=kept.folded -- "$SPAN_THREADS"
	assert_success
	check_grammar kept.folded
	assert_equal "$(ls -A)" 'kept.folded'
}
