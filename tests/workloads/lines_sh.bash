#!/bin/bash
# lines_sh.bash: spans from a bash script through the line protocol and
# spanstat.bash: build > 3 x step (one with a nested "inner"), a span around
# a command (its status kept), a subshell's own span, a counter, and with
# "raw" also hand-written lines (a bad one among them).
. "${SPANSTAT_SH:?not under spanstat}"
spanstat_begin build
for i in 1 2 3; do
	spanstat_begin step
	[[ $i == 2 ]] && spanstat_span inner sleep 0.005
	spanstat_end step
done
spanstat_span failing false
echo "status $?"
(spanstat_span sub true)
spanstat_counter queue 17
spanstat_end build
if [[ ${1-} == raw ]]; then
	exec {fd}>>"$SPANSTAT_LINES"
	printf 'B %d - - raw\nnot a line\nE %d - - raw\n' $$ $$ >&$fd
fi
