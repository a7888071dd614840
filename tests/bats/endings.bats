#!/usr/bin/env bats
# endings.bats: a process that ends without running destructors (_exit,
# _Exit, the usual end of a forked child) loses none of the spans it
# recorded, nor does one that dies of a stack overflow or of SIGKILL, and a
# vfork()ed child's _exit sends nothing of its parent's.

load helpers

setup_file() {
	export EXITW OVERFLOW
	EXITW=$(build_workload span_exit $(span_link_flags))
	OVERFLOW=$(build_workload span_overflow $(span_link_flags) -O0)
	LONGJMP=$(build_workload span_longjmp $(span_link_flags))
	LONGJMP_F=$(build_workload span_longjmp -DNO_API -D_FORTIFY_SOURCE=2 -finstrument-functions)
	export LONGJMP LONGJMP_F
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# mode_opts MODE: the options for one of the two ways spans travel:
# "aggregate" (no streaming output: each thread keeps its call tree in its
# ring slot) or "stream" (--perfetto: every event goes through the rings)
mode_opts() {
	[ "$1" != stream ] || echo "--perfetto=s.pftrace"
}

# count NAME FILE: the merged count of spans named NAME
count() {
	jq "[.spans.merged.nodes[] | select(.name == \"$1\") | .count] | add // 0" "$2"
}

@test "_exit and _Exit lose no span, and the process's end is seen" {
	local how mode
	for mode in aggregate stream; do
		for how in _exit _Exit; do
			run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock -- "$EXITW" "$how"
			assert_failure 3
			assert_equal "$(count work x.json)" 100
			assert_equal "$(jq -c '.spans.decode | [.no_exit, .unfinished, .dropped]' x.json)" "[0,0,0]"
		done
	done
}

@test "SIGKILL loses no span: every event recorded before the kill arrives" {
	local mode
	for mode in aggregate stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock -- "$EXITW" kill
		assert_failure 137
		assert_equal "$(count work x.json)" 1000
		assert_equal "$(count thread-work x.json)" 3000
		# "open" was begun and never ended: spanstat closes it, and says the
		# process's end was not seen
		assert_equal "$(count open x.json)" 1
		assert_equal "$(jq -c '.spans.decode | [.no_exit, .unfinished, .dropped, .lost_records]' x.json)" "[1,1,0,0]"
	done
}

@test "more threads alive at once than there are rings: none loses a span" {
	local mode
	for mode in aggregate stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock -- "$EXITW" threads 300
		assert_success
		assert_equal "$(count t x.json)" 3000
		assert_equal "$(jq '[.spans.threads[] | select(.nodes | length > 0)] | length' x.json)" 300
		assert_equal "$(jq -c '.spans.decode | [.no_exit, .unfinished, .dropped, .lost_records]' x.json)" "[0,0,0,0]"
	done
}

@test "a forked child that calls _exit shows its spans" {
	local mode
	for mode in aggregate stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock -- "$EXITW" fork
		assert_success
		assert_equal "$(count child x.json)" 50
		assert_equal "$(count parent x.json)" 10
		assert_equal "$(jq '.spans.decode.no_exit' x.json)" 0
		assert_equal "$(jq '[.spans.threads[].pid] | unique | length' x.json)" 2
	done
}

@test "a vfork()ed child's _exit sends nothing of its parent's" {
	local mode
	for mode in aggregate stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock -- "$EXITW" vfork
		assert_success
		assert_equal "$(count parent x.json)" 20
		assert_equal "$(jq -c '.spans.decode | [.no_exit, .unfinished, .unmatched]' x.json)" "[0,0,0]"
		assert_equal "$(jq '[.spans.threads[].pid] | unique | length' x.json)" 1
	done
}

@test "a stack overflow still sends every span it recorded (alternate signal stack)" {
	ulimit -c 0
	local mode levels
	for mode in aggregate stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock -- "$OVERFLOW"
		assert_failure 139
		assert_equal "$(jq '.exit.signal' x.json)" 11
		# the handler ran: the exit record came, and every span open at
		# the death arrived and was closed by spanstat
		levels=$(count recurse x.json)
		echo "$mode: levels: $levels"
		[ "$levels" -ge 30 ]
		assert_equal "$(count outer x.json)" 1
		assert_equal "$(jq -c '.spans.decode | [.no_exit, .unfinished - '"$levels"']' x.json)" "[0,1]"
	done
}

# tree FILE: "depth name count" of every merged node, in the JSON's order
tree() {
	jq -r '.spans.merged.nodes[] | "\(.depth) \(.name) \(.count)"' "$1"
}

@test "longjmp and siglongjmp end the spans they skip, at the jump" {
	local how
	for how in aggregate stream; do
		run "$SPANSTAT" $(mode_opts "$how") --json=ok.json --spans -e task-clock -- "$LONGJMP" ok
		assert_success
		local mode
		for mode in jump sig; do
			run "$SPANSTAT" $(mode_opts "$how") --json=x.json --spans -e task-clock -- "$LONGJMP" "$mode"
			assert_success
			# the same tree as the run without errors: "after" follows the
			# jump inside "round", not inside the levels it skipped
			assert_equal "$(tree x.json)" "$(tree ok.json)"
			assert_equal "$(tree x.json | head -3)" "$(printf '%s\n' '0 round 10' '1 level 10' '2 level 10')"
			assert_equal "$(jq -c '.spans.decode | [.unfinished, .unmatched, .dropped]' x.json)" '[0,0,0]'
			# the parents' times hold their children's: each level spins 20 us
			# before going deeper, so a level's total is at least the next
			# one's plus 10 x 20 us, and a round's at least its levels' and after's
			run jq '[.spans.merged.nodes[] | select(.name == "level") | .total_ns] as $t
				| ([range(0; 4) | $t[.] >= $t[. + 1] + 200000] | all)
				and (.spans.merged.nodes[0].total_ns >= $t[0] + ([.spans.merged.nodes[] | select(.name == "after") | .total_ns] | add))' x.json
			assert_output true
		done
	done
}

@test "a longjmp out of -finstrument-functions frames (__longjmp_chk) ends them" {
	local mode
	for mode in aggregate stream; do
		run "$SPANSTAT" $(mode_opts "$mode") --json=x.json --spans -e task-clock -- "$LONGJMP_F" jump
		assert_success
		assert_equal "$(jq -c '.spans.decode | [.unfinished, .unmatched]' x.json)" '[0,0]'
		# main -> level x5 nested, entered 10 times; spin under each level
		run jq -r '[.spans.merged.nodes[] | select(.name == "level")] | map("\(.depth) \(.count)") | join(",")' x.json
		assert_output '1 10,2 10,3 10,4 10,5 10'
	done
}
