#!/usr/bin/env bats
# filters.bats: --min-duration, --max-depth, --filter and --exclude on the
# command line: every bad value rejected with one 'spanstat: ...' line and
# exit 125 before the target runs, and the SPANSTAT_FILTER spec the target
# gets (lib/span/filter.h's format; the min duration in the clock the
# target stamps with: TSC ticks or ns).

load helpers

setup() {
	cd "$BATS_TEST_TMPDIR"
	unset SPANSTAT_FILTER
}

assert_rejected() {
	assert_failure 125
	assert_equal "${#lines[@]}" 1
	assert_line --index 0 --regexp "^spanstat: $1"
	assert_not_exists "$BATS_TEST_TMPDIR/ran"
}

# Runs spanstat with OPTIONS... and a target that writes its SPANSTAT_CLOCK
# to clock.txt and its SPANSTAT_FILTER (or "unset") to filter.txt.
run_env() {
	rm -f clock.txt filter.txt
	run "$SPANSTAT" -e task-clock "$@" -- sh -c \
		'printf %s "${SPANSTAT_CLOCK-unset}" >clock.txt; printf %s "${SPANSTAT_FILTER-unset}" >filter.txt'
	assert_success
	assert_exists filter.txt
}

@test "--help lists the filter options" {
	run "$SPANSTAT" --help
	assert_success
	assert_line --regexp '^      --min-duration=TIME +send no span shorter than TIME'
	assert_line --regexp '^      --max-depth=N '
	assert_line --regexp '^      --filter=GLOB '
	assert_line --regexp '^      --exclude=GLOB '
}

@test "a --min-duration without a unit, or out of range, is an error" {
	local bad
	for bad in 5 500 '' 0ns 0s 1.5ms '1 ms' 1MS 1m 1sec -1ns ms 2us5 1000001s \
		99999999999999999999ns; do
		run "$SPANSTAT" --min-duration="$bad" -- sh -c "touch $BATS_TEST_TMPDIR/ran"
		assert_rejected "invalid --min-duration '$bad': expected "
	done
	run "$SPANSTAT" --min-duration=+1us -- sh -c "touch $BATS_TEST_TMPDIR/ran"
	assert_rejected "invalid --min-duration '\\+1us': expected "
	run "$SPANSTAT" --min-duration=5 -- true
	assert_rejected "invalid --min-duration '5': expected a whole number and a unit: ns, us, ms or s"
	run "$SPANSTAT" --min-duration=0ns -- true
	assert_rejected "invalid --min-duration '0ns': expected a time from 1ns to 1000000s$"
	run "$SPANSTAT" --min-duration
	assert_rejected "option '--min-duration' needs an argument"
}

@test "a --max-depth below 1 or not a number is an error" {
	local bad
	for bad in 0 -1 x 1x '' 1000001 ' 2' 99999999999999999999; do
		run "$SPANSTAT" --max-depth="$bad" -- sh -c "touch $BATS_TEST_TMPDIR/ran"
		assert_rejected "invalid --max-depth '$bad': expected a whole number of levels from 1 to 1000000$"
	done
}

@test "an empty --filter or --exclude, or one with a newline, is an error" {
	local o
	for o in filter exclude; do
		run "$SPANSTAT" --"$o"= -- sh -c "touch $BATS_TEST_TMPDIR/ran"
		assert_rejected "invalid --$o '': expected a pattern$"
		run "$SPANSTAT" --"$o"=main --"$o"=$'a\nb' -- sh -c "touch $BATS_TEST_TMPDIR/ran"
		assert_rejected "invalid --$o 'a\\\\nb': a pattern cannot contain a newline$"
	done
}

@test "the target gets SPANSTAT_FILTER: every item, the globs verbatim and in order" {
	run_env --spans --max-depth=3 --filter='a*' --exclude='*[x]*' --filter='ns::C<int>::f(*) b' \
		--exclude='=x='
	assert_equal "$(cat filter.txt)" "depth=3
filter=a*
filter=ns::C<int>::f(*) b
exclude=*[x]*
exclude==x="
}

@test "--min-duration reaches the target in its clock's units" {
	run_env --spans --min-duration=2us --filter='a*'
	local clock min
	clock=$(cat clock.txt)
	min=$(sed -n 's/^min=//p' filter.txt)
	echo "clock $clock, 2us is min=$min"
	assert_equal "$(sed -n 2p filter.txt)" "filter=a*"
	assert_equal "$(wc -l <filter.txt)" 2 # each item ends with a newline
	case $clock in
	mono)
		assert_equal "$min" 2000
		;;
	tsc)
		# ticks of a TSC from 0.2 to 10 GHz, and 1s is 500000 times as many
		# (give or take what a calibration measured in 2 ms may differ by)
		[ "$min" -ge 400 ] && [ "$min" -le 20000 ] || fail "2us as $min ticks"
		run_env --spans --min-duration=1s
		local big
		big=$(sed -n 's/^min=//p' filter.txt)
		echo "1s is min=$big"
		[ "$big" -ge $((min * 500000 * 9 / 10)) ] &&
			[ "$big" -le $((min * 500000 * 11 / 10)) ] || fail "1s as $big ticks"
		;;
	*)
		fail "unknown SPANSTAT_CLOCK '$clock'"
		;;
	esac
}

@test "each TIME unit is scaled to ns (checked where the clock is mono)" {
	run_env --spans --min-duration=3ms
	local clock
	clock=$(cat clock.txt)
	local ms us
	ms=$(sed -n 's/^min=//p' filter.txt)
	run_env --spans --min-duration=3000us
	us=$(sed -n 's/^min=//p' filter.txt)
	if [ "$clock" = mono ]; then
		assert_equal "$ms" 3000000
		assert_equal "$us" 3000000
	else
		# the same duration, rounded up to ticks the same way
		[ -n "$ms" ] && [ "$ms" -gt 0 ] || fail "3ms as '$ms'"
		[ $((ms > us ? ms - us : us - ms)) -le $((ms / 10)) ] || fail "3ms=$ms 3000us=$us"
	fi
	run_env --spans --max-depth=1
	assert_equal "$(cat filter.txt)" "depth=1"
}

@test "no filter option: no SPANSTAT_FILTER, and one from outside does not get through" {
	run_env --spans
	assert_equal "$(cat filter.txt)" unset
	export SPANSTAT_FILTER='filter=x'
	run_env --spans
	assert_equal "$(cat filter.txt)" unset
	run_env --spans --max-depth=2
	assert_equal "$(cat filter.txt)" "depth=2"
}

@test "without span collection the filters are accepted and change nothing" {
	run_env --min-duration=1ms --max-depth=2 --filter=main --exclude='x*'
	assert_equal "$(cat filter.txt)" unset
	assert_equal "$(cat clock.txt)" unset
	run "$SPANSTAT" --max-depth=2 -- sh -c 'exit 3'
	assert_failure 3
}

# --- the filters at work, decided inside the target ---------------------------

# paths OPTIONS...: the folded stack paths (no weights) of span_filter under
# OPTIONS, sorted; the JSON of the run in f.json
paths() {
	run "$SPANSTAT" -e task-clock --folded=f.folded --json=f.json "$@" -- "$SPAN_FILTER"
	assert_success
	cut -d' ' -f1 f.folded | sort
}

# fpaths OPTIONS...: the same for the -finstrument-functions span_finstr
fpaths() {
	run "$SPANSTAT" -e task-clock --folded=f.folded "$@" -- "$SPAN_FINSTR"
	assert_success
	cut -d' ' -f1 f.folded | sort
}

setup_file() {
	export SPAN_FILTER SPAN_FINSTR
	SPAN_FILTER=$(build_workload span_filter $(span_link_flags))
	SPAN_FINSTR=$(build_workload span_finstr -finstrument-functions)
}

@test "no filter: every span arrives" {
	assert_equal "$(paths)" "$(printf '%s\n' main 'main;keep' 'main;keep;a' 'main;keep;a;b' \
		'main;long' 'main;long;lshort' 'main;short' 'main;skip' 'main;skip;x')"
	assert_equal "$(jq .spans.instants f.json)" 2
}

@test "--min-duration: short spans are not sent, their time stays in their parent" {
	# keep;a and skip hold an instant, which takes the spans around it along
	assert_equal "$(paths --min-duration=30ms)" "$(printf '%s\n' main 'main;keep' 'main;keep;a' \
		'main;long' 'main;skip')"
	# main's total still covers the two 60 ms spins and everything dropped
	assert_equal "$(jq '[.spans.merged.nodes[] | select(.name == "long")][0].count' f.json)" 2
	total=$(jq '[.spans.merged.nodes[] | select(.name == "main")][0].total_ns' f.json)
	[ "$total" -ge 120000000 ]
	assert_equal "$(jq -c '.spans.decode | [.unfinished, .unmatched, .dropped]' f.json)" '[0,0,0]'
}

@test "--max-depth: nothing deeper than N is sent" {
	assert_equal "$(paths --max-depth=2)" "$(printf '%s\n' main 'main;keep' 'main;long' \
		'main;short' 'main;skip')"
	assert_equal "$(paths --max-depth=1)" main
}

@test "--filter: only spans inside a match, the match included" {
	assert_equal "$(paths --filter=keep)" "$(printf '%s\n' keep 'keep;a' 'keep;a;b')"
	# the instant inside keep;a comes, the one inside skip does not
	assert_equal "$(jq .spans.instants f.json)" 1
	assert_equal "$(paths --filter='l*' --filter=x)" "$(printf '%s\n' long 'long;lshort' x)"
}

@test "--exclude: a match and everything under it are not sent" {
	assert_equal "$(paths --exclude=skip --exclude='?short')" "$(printf '%s\n' main \
		'main;keep' 'main;keep;a' 'main;keep;a;b' 'main;long' 'main;short')"
	assert_equal "$(jq .spans.instants f.json)" 1
}

@test "filters combine: a span is sent only when each lets it through" {
	assert_equal "$(paths --filter=main --exclude=keep --max-depth=2)" \
		"$(printf '%s\n' main 'main;long' 'main;short' 'main;skip')"
}

@test "-finstrument-functions: the filters match function names, static ones too" {
	assert_equal "$(fpaths --filter=mid)" "$(printf '%s\n' mid 'mid;leaf_b')"
	assert_equal "$(fpaths --exclude='mid' --exclude='leaf_?')" "$(printf '%s\n' main \
		'main;run' 'main;run;spin')"
	assert_equal "$(fpaths --max-depth=2)" "$(printf '%s\n' main 'main;run')"
	assert_equal "$(fpaths --min-duration=5ms)" "$(printf '%s\n' main 'main;run' 'main;run;spin')"
}

@test "the filters give the same spans whether the target aggregates or streams its events" {
	local opts
	for opts in --min-duration=30ms --max-depth=2 --filter=keep --exclude=skip \
		"--filter=main --exclude=keep --max-depth=2"; do
		# shellcheck disable=SC2086 # opts holds several options
		agg=$(paths $opts)
		# shellcheck disable=SC2086
		streamed=$(paths $opts --perfetto=f.pftrace)
		assert_equal "$streamed" "$agg"
	done
	# shellcheck disable=SC2086
	assert_equal "$(fpaths --filter=mid --perfetto=f.pftrace)" "$(printf '%s\n' mid 'mid;leaf_b')"
}

@test "--min-duration: a span held back and still open at the end is sent when it lasted long enough" {
	local heldopen how mode
	heldopen=$(build_workload span_heldopen $(span_link_flags))
	for how in exit _exit abort exec; do
		for mode in aggregate stream; do
			opts=()
			[ "$mode" = aggregate ] || opts=(--perfetto=h.pftrace)
			run "$SPANSTAT" "${opts[@]}" --spans --json=h.json -e task-clock \
				--min-duration=1ms -- "$heldopen" "$how"
			echo "$how $mode: $(jq -c '[.spans.merged.nodes[] | [.name, .count, .unfinished, .total_ns]]' h.json)"
			# whole (~200 ms) and thread-whole (100 ms) lasted long enough:
			# closed at the end and marked, as without the filter; brief not
			assert_equal "$(jq -c '[.spans.merged.nodes[] | [.name, .count, .unfinished]] | sort' h.json)" \
				'[["thread-whole",1,1],["whole",1,1]]'
			[ "$(jq '.spans.merged.nodes[] | select(.name == "whole") | .total_ns' h.json)" -ge 190000000 ]
			[ "$(jq '.spans.merged.nodes[] | select(.name == "thread-whole") | .total_ns' h.json)" -ge 95000000 ]
		done
	done
}
