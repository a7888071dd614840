# spanstat.bash: spans from bash scripts, through spanstat's line protocol
# (spanstat-lines(5)).  Under spanstat, SPANSTAT_SH names this file:
#
#     . "${SPANSTAT_SH:-/dev/null}"    # nothing happens without spanstat
#     spanstat_begin build
#     spanstat_span compile make -j4   # runs the command inside a span
#     spanstat_instant "tests start"
#     spanstat_counter queue 17
#     spanstat_end build
#
# Every call is one printf, a bash builtin, to a descriptor opened once:
# no process is started per span.  Each (sub)shell is a process of its own
# ($BASHPID) with one thread.  Times are $EPOCHREALTIME (bash 5) or, without
# it, the time spanstat reads the line.  Without spanstat (no
# SPANSTAT_LINES) every function does nothing.
if [[ -n ${SPANSTAT_LINES-} ]] && { exec {_spanstat_fd}>>"$SPANSTAT_LINES"; } 2>/dev/null; then
	# _spanstat_line OP NAME [VALUE]: one line, the name on one line
	_spanstat_line() {
		local t=-
		[[ -n ${EPOCHREALTIME-} ]] && t=@$EPOCHREALTIME
		if [[ $1 == C ]]; then
			printf 'C %d - %s %d %s\n' "$BASHPID" "$t" "$3" "${2//$'\n'/ }" >&"$_spanstat_fd"
		else
			printf '%s %d - %s %s\n' "$1" "$BASHPID" "$t" "${2//$'\n'/ }" >&"$_spanstat_fd"
		fi
	}
else
	_spanstat_line() { :; }
fi
spanstat_begin() { _spanstat_line B "$1"; }
spanstat_end() { _spanstat_line E "$1"; }
spanstat_instant() { _spanstat_line I "$1"; }
spanstat_counter() { _spanstat_line C "$1" "$2"; }
spanstat_thread_name() { _spanstat_line N "$1"; }
# spanstat_span NAME COMMAND [ARGS...]: runs COMMAND inside a span named
# NAME; returns its status.
spanstat_span() {
	local name=$1 rc
	shift
	_spanstat_line B "$name"
	"$@"
	rc=$?
	_spanstat_line E "$name"
	return $rc
}
