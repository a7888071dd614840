#!/usr/bin/env bats
# messages.bats: text lines on a thread's timeline (spanstat_message and
# spanstat_message_text, the line protocol's M lines, spanstat.message() in
# Python; issue 24): each thread's first 64 with their times in the JSON and
# the count of all, every one an instant named by its text in Perfetto, a
# footer under the span table; the same aggregated in the target and
# streamed, and in the report of a record.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	SPAN_MSG=$(build_workload span_msg $(span_link_flags))
	export SPAN_MSG
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# per_thread FILE: "thread count kept" per thread with messages, sorted
per_thread() {
	jq -r '.spans.threads[] | select(.message_count > 0)
		| "\(if .pid == .tid then "main" else .thread_name end) \(.message_count) \(.messages | length)"' \
		"$1" | LC_ALL=C sort
}

# texts FILE THREAD: the kept messages of THREAD (main: the main thread),
# one a line
texts() {
	jq -r --arg t "$2" '.spans.threads[]
		| select(if $t == "main" then .pid == .tid else .thread_name == $t end)
		| .messages[].text' "$1"
}

@test "messages: per thread in the JSON, 64 kept and all counted, aggregated and streamed" {
	local opts big
	big=$(printf 'x%.0s' $(seq 1024))
	for opts in "" --perfetto=s.pftrace; do
		# shellcheck disable=SC2086 # opts is one option or none
		run -0 timeout -k 5 120 "$SPANSTAT" --spans -o sum.txt --json=s.json $opts -- \
			"$SPAN_MSG"
		run per_thread s.json
		assert_output "chatty 70 64
main 5 5
quiet 1 1"
		assert_equal "$(jq .spans.messages s.json)" 76
		# texts as given: cut at len, at a NUL, at 1024 bytes
		run texts s.json main
		assert_output "start
in work
cut
nul
$big"
		run texts s.json chatty
		assert_output "$(for i in $(seq 0 63); do echo "line $i"; done)"
		# times: after the session began, in the order the thread said them
		run jq '[.spans.threads[] | select(.thread_name == "chatty") | .messages[].monotonic_ns]
			| (. == sort) and (.[0] > 0)' s.json
		assert_output true
		run jq --argjson s "$(jq .start.monotonic_ns s.json)" \
			'[.spans.threads[].messages[].monotonic_ns | select(. < $s)] | length' s.json
		assert_output 0
		# the footer of the span table
		run grep -x ' 76 messages from 3 threads (--json lists each thread.s first 64, --perfetto all)' sum.txt
		assert_success
	done
}

@test "messages: a fork child's are its own; no messages, no footer" {
	run -0 timeout -k 5 120 "$SPANSTAT" --spans -o sum.txt --json=s.json -- "$SPAN_MSG" fork
	assert_equal "$(jq '[.spans.threads[] | select(.messages[0].text == "child") | .pid] | length' s.json)" 1
	assert_equal "$(jq '[.spans.threads[] | select(.messages[0].text == "child") | .pid != .tid] | any' s.json)" false
	grep -q '^ 77 messages from 4 threads' sum.txt
	local plain
	plain=$(build_workload span_text $(span_link_flags))
	run -0 timeout -k 5 120 "$SPANSTAT" --spans -o none.txt --json=none.json -- "$plain"
	run grep -c message none.txt
	assert_output 0
	assert_equal "$(jq '.spans.messages, ([.spans.threads[].messages | length] | add)' -c none.json | tr '\n' ' ')" "0 0 "
}

@test "messages: Perfetto instants named by their texts, each on its thread" {
	require_cmd protoc
	run -0 timeout -k 5 120 "$SPANSTAT" --perfetto=m.pftrace -- "$SPAN_MSG"
	pf_decode m.pftrace m.txt
	# every message, none kept back: 70 + 1 + 5
	run grep -c 'name: "message"' m.txt
	assert_output 76
	run grep -c 'name: "line [0-9]*"' m.txt
	assert_output 70
	# "bye" is on quiet's sequence: the one whose track names the thread quiet
	run awk '/trusted_packet_sequence_id:/ { seq = $2 }
		/thread_name: "quiet"/ { q = seq }
		/name: "bye"/ { b = seq }
		END { print (q != "" && q == b) ? "same" : "apart " q " " b }' m.txt
	assert_output same
}

@test "messages: the report of a record has them, the same bytes as the live outputs" {
	local how
	for how in "" --perfetto=live.pftrace; do
		rm -f r.rec
		# shellcheck disable=SC2086 # one option or none
		run -0 timeout -k 5 120 "$SPANSTAT" --record=r.rec --spans -o live.txt \
			--json=live.json $how -- "$SPAN_MSG" fork
		run -0 timeout -k 5 120 "$SPANSTAT" report -o rep.txt --json=rep.json \
			--perfetto=rep.pftrace r.rec
		cmp live.txt rep.txt
		[ -z "$how" ] || cmp live.pftrace rep.pftrace
		assert_equal "$(jq -S -c .spans.threads live.json)" "$(jq -S -c .spans.threads rep.json)"
	done
	run -0 timeout -k 5 120 "$SPANSTAT" record -o a.rec -- "$SPAN_MSG"
	run -0 timeout -k 5 120 "$SPANSTAT" report --json=a.json a.rec
	run per_thread a.json
	assert_output "chatty 70 64
main 5 5
quiet 1 1"
}

@test "messages: M lines of the line protocol, an over-long one counted bad" {
	cat >m.sh <<'SH'
exec {fd}>>"$SPANSTAT_LINES"
printf 'B %d - - step\nM %d - - half way there\nE %d - - step\n' $$ $$ $$ >&$fd
printf 'M %d - - \n' $$ >&$fd
printf 'M %d - - %01025d\n' $$ 0 >&$fd
SH
	run -0 timeout -k 5 120 "$SPANSTAT" --json=m.json -- bash m.sh
	run jq -r '.spans.threads[].messages[] | "[\(.text)]"' m.json
	assert_output "[half way there]
[]"
	assert_equal "$(jq .spans.decode.bad_lines m.json)" 1
}

@test "messages: an over-long M line makes no thread or process of its own" {
	cat >m.sh <<'SH'
exec {fd}>>"$SPANSTAT_LINES"
printf 'B %d - - step\nE %d - - step\n' $$ $$ >&$fd
printf 'M %d 777777 - %01025d\n' $$ 0 >&$fd
printf 'M 888888 - - %01025d\n' 0 >&$fd
SH
	run -0 timeout -k 5 120 "$SPANSTAT" --json=m.json -- bash m.sh
	assert_equal "$(jq .spans.decode.bad_lines m.json)" 2
	run jq -c '[.spans.threads[] | select(.tid == 777777 or .pid == 888888)] | length' m.json
	assert_output 0
}

@test "messages: Python's spanstat.message()" {
	require_cmd python3
	cat >m.py <<'PY'
import threading
import spanstat
spanstat.message("hello\nworld")
def work():
    spanstat.thread_name("w")
    spanstat.message(42)
t = threading.Thread(target=work)
t.start()
t.join()
spanstat.message("é" * 600)
PY
	run -0 --separate-stderr timeout -k 5 120 "$SPANSTAT" --json=p.json -- python3 m.py
	run jq -r '.spans.threads[] | select(.message_count > 0) | "\(.thread_name): \(.messages | map(.text | length) | join(" ")) \(.messages[0].text[:11])"' p.json
	assert_output "python3: 11 512 hello world
w: 2 42"
}

@test "messages: Python's spanstat.message() of a lone surrogate or a NUL neither raises nor is lost" {
	require_cmd python3
	cat >m.py <<'PY'
import spanstat
spanstat.message("lone \ud800 surrogate")
spanstat.message("before\0after")
spanstat.message("last")
PY
	run -0 timeout -k 5 120 "$SPANSTAT" -o sum.txt --json=p.json -- python3 m.py
	refute_output --partial Traceback
	run jq -r '.spans.threads[].messages[].text' p.json
	assert_output "lone � surrogate
before
last"
	assert_equal "$(jq .spans.decode.bad_lines p.json)" 0
}

@test "messages: those the full pipe could not take are counted as dropped, never lost silently" {
	# the program stops spanstat, says 100000 messages into a pipe that holds
	# a few thousand, then lets it go on
	cat >flood.c <<'C'
#include <signal.h>
#include <spanstat.h>
#include <stdio.h>
#include <unistd.h>
int main(void)
{
	kill(getppid(), SIGSTOP);
	for (int i = 0; i < 100000; i++)
		spanstat_message("flood");
	kill(getppid(), SIGCONT);
	return 0;
}
C
	cc flood.c -o flood -I"$SPANSTAT_INCLUDEDIR" $(span_link_flags)
	run timeout 120 "$SPANSTAT" --json=f.json -- ./flood
	assert_success
	local said dropped
	said=$(jq .spans.messages f.json)
	dropped=$(jq .spans.decode.dropped f.json)
	[ "$said" -lt 100000 ] || skip "the pipe took every message here"
	assert_equal $((said + dropped)) 100000
}
