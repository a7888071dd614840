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
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# count NAME FILE: the merged count of spans named NAME
count() {
	jq "[.spans.merged.nodes[] | select(.name == \"$1\") | .count] | add // 0" "$2"
}

@test "_exit and _Exit lose no span, and the process's end is seen" {
	local how
	for how in _exit _Exit; do
		run "$SPANSTAT" --json=x.json --spans -e task-clock -- "$EXITW" "$how"
		assert_failure 3
		assert_equal "$(count work x.json)" 100
		assert_equal "$(jq -c '.spans.decode | [.no_exit, .unfinished, .dropped]' x.json)" "[0,0,0]"
	done
}

@test "SIGKILL loses no span: every event recorded before the kill arrives" {
	run "$SPANSTAT" --json=x.json --spans -e task-clock -- "$EXITW" kill
	assert_failure 137
	assert_equal "$(count work x.json)" 1000
	assert_equal "$(count thread-work x.json)" 3000
	# "open" was begun and never ended: spanstat closes it, and says the
	# process's end was not seen
	assert_equal "$(count open x.json)" 1
	assert_equal "$(jq -c '.spans.decode | [.no_exit, .unfinished, .dropped, .lost_records]' x.json)" "[1,1,0,0]"
}

@test "more threads alive at once than there are rings: none loses a span" {
	run "$SPANSTAT" --json=x.json --spans -e task-clock -- "$EXITW" threads 300
	assert_success
	assert_equal "$(count t x.json)" 3000
	assert_equal "$(jq '[.spans.threads[] | select(.nodes | length > 0)] | length' x.json)" 300
	assert_equal "$(jq -c '.spans.decode | [.no_exit, .unfinished, .dropped, .lost_records]' x.json)" "[0,0,0,0]"
}

@test "a forked child that calls _exit shows its spans" {
	run "$SPANSTAT" --json=x.json --spans -e task-clock -- "$EXITW" fork
	assert_success
	assert_equal "$(count child x.json)" 50
	assert_equal "$(count parent x.json)" 10
	assert_equal "$(jq '.spans.decode.no_exit' x.json)" 0
	assert_equal "$(jq '[.spans.threads[].pid] | unique | length' x.json)" 2
}

@test "a vfork()ed child's _exit sends nothing of its parent's" {
	run "$SPANSTAT" --json=x.json --spans -e task-clock -- "$EXITW" vfork
	assert_success
	assert_equal "$(count parent x.json)" 20
	assert_equal "$(jq -c '.spans.decode | [.no_exit, .unfinished, .unmatched]' x.json)" "[0,0,0]"
	assert_equal "$(jq '[.spans.threads[].pid] | unique | length' x.json)" 1
}

@test "a stack overflow still sends every span it recorded (alternate signal stack)" {
	ulimit -c 0
	run "$SPANSTAT" --json=x.json --spans -e task-clock -- "$OVERFLOW"
	assert_failure 139
	assert_equal "$(jq '.exit.signal' x.json)" 11
	# the handler ran: the exit record came, and every span open at the
	# death arrived and was closed by spanstat
	local levels
	levels=$(count recurse x.json)
	echo "levels: $levels"
	[ "$levels" -ge 30 ]
	assert_equal "$(count outer x.json)" 1
	assert_equal "$(jq -c '.spans.decode | [.no_exit, .unfinished - '"$levels"']' x.json)" "[0,1]"
}
