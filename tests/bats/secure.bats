#!/usr/bin/env bats
# secure.bats: libspanstat in privileged processes and the span pipe's
# descriptor across exec.  A setuid-root (setgid, file-capability) program
# linking the library, run by `nobody` with SPANSTAT_* naming a FIFO nobody
# made, sends nothing and runs as without spanstat, while the same program
# without privileges sends its spans through the same arrangement.  Through
# the installed spanstat: a process that drops the variables before an exec
# holds no descriptor of the span pipe, one that keeps them still gets it,
# and children started by posix_spawn or vfork + execv still record.

load helpers
bats_require_minimum_version 1.5.0

# The unprivileged user the privileged tests run as.
SEC_USER=(--reuid=nobody --regid=nogroup --clear-groups)

setup_file() {
	export SPAN_SETUID SEC_DIR=
	SPAN_SETUID=$(build_workload span_setuid $(span_link_flags))
	[ "$(id -u)" = 0 ] || return 0
	command -v setpriv >/dev/null || return 0
	# A directory nobody can reach, on a file system that honours set-user-ID
	# bits (the bats temp dir may be 0700, and /tmp may be nosuid).
	local base
	for base in /tmp /var/tmp "$BUILDDIR"; do
		[ -d "$base" ] || continue
		case ",$(findmnt -n -o OPTIONS -T "$base")," in *,nosuid,*) continue ;; esac
		SEC_DIR=$(mktemp -d "$base/spanstat-secure.XXXXXX") || continue
		chmod 755 "$SEC_DIR"
		# the library beside the programs, found first (their RUNPATH)
		cp -L "$SPANSTAT_LIBDIR/libspanstat.so.0" "$SEC_DIR/" &&
			chmod 644 "$SEC_DIR/libspanstat.so.0" &&
			env -u CFLAGS -u LDFLAGS ${CC%% *} -O2 -g -I"$SPANSTAT_INCLUDEDIR" \
				"$WORKLOADS/span_setuid.c" -o "$SEC_DIR/plain" \
				-Wl,-rpath,"$SEC_DIR" -L"$SEC_DIR" -l:libspanstat.so.0 >&2 &&
			chmod 755 "$SEC_DIR/plain" &&
			cp "$SEC_DIR/plain" "$SEC_DIR/setuid" && chmod 4755 "$SEC_DIR/setuid" &&
			cp "$SEC_DIR/plain" "$SEC_DIR/setgid" && chgrp root "$SEC_DIR/setgid" &&
			chmod 2755 "$SEC_DIR/setgid" &&
			cp "$SEC_DIR/plain" "$SEC_DIR/setcap" &&
			mkdir "$SEC_DIR/work" && chown nobody:nogroup "$SEC_DIR/work" &&
			setpriv "${SEC_USER[@]}" test -x "$SEC_DIR/setuid" && break
		rm -rf "$SEC_DIR"
		SEC_DIR=
	done
	[ -n "$SEC_DIR" ] || return 0
	cat >"$SEC_DIR/spy.sh" <<'EOF'
# spy.sh MODE PROG, run as the unprivileged user in a directory of theirs:
# runs PROG with fd 3 on a FIFO this user made and PROG's stdout in ./report.
# MODE spy names the FIFO in SPANSTAT_FD, SPANSTAT_PIPE and SPANSTAT_PIPE_ID;
# MODE plain sets none.  Prints "bytes=N" (what came through the FIFO), then
# PROG's report.
rm -f fifo report count
mkfifo -m 600 fifo || exit 1
wc -c <fifo >count &
reader=$!
unset SPANSTAT_FD SPANSTAT_PIPE SPANSTAT_PIPE_ID SPANSTAT_CLOCK
if [ "$1" = spy ]; then
	id=$(stat -L -c %d:%i fifo) || exit 1
	export SPANSTAT_FD=3 SPANSTAT_PIPE="$PWD/fifo" SPANSTAT_PIPE_ID="$id" SPANSTAT_CLOCK=mono
fi
"$2" 3>fifo >report
st=$?
wait $reader
echo "bytes=$(tr -d ' ' <count)"
cat report
exit $st
EOF
}

teardown_file() {
	if [ -n "${SEC_DIR:-}" ]; then
		rm -rf "$SEC_DIR"
	fi
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# need_root: these tests install a set-user-ID root program.
need_root() {
	[ "$(id -u)" = 0 ] || skip "needs root to install a set-user-ID program (CI runs as root)"
	require_cmd setpriv
	[ -n "$SEC_DIR" ] || fail "no directory nobody can reach on a file system without nosuid"
}

# spy MODE PROG: runs $SEC_DIR/PROG as nobody through spy.sh (see setup_file).
spy() {
	run timeout 60 setpriv "${SEC_USER[@]}" sh -c 'cd "$1" && exec sh ../spy.sh "$2" "$3"' \
		sh "$SEC_DIR/work" "$1" "$SEC_DIR/$2"
	assert_success
}

# field NAME: the value of NAME= in the report in $output.
field() {
	grep -o -- "\<$1=[^ ]*" <<<"$output" | head -1 | cut -d= -f2
}

# The control: the arrangement works and the test can fail.
@test "unprivileged, SPANSTAT_* naming the user's own FIFO: the spans arrive" {
	need_root
	spy spy plain
	[ "$(field secure)" = 0 ] || fail "not expected to be AT_SECURE: $output"
	assert_equal "$(field euid)" 65534
	assert_equal "$(field on)" 1
	assert_equal "$(field sigterm)" handler
	[ "$(field bytes)" -gt 0 ] || fail "no bytes came through the FIFO: $output"
	# the inherited descriptor was made close-on-exec
	[[ ",$(field fds)," == *,3c,* ]] || fail "fd 3 not close-on-exec: $output"
}

# check_off PROG: PROG, privileged, sends nothing, opens nothing, installs no
# handler: its descriptors are those of the same run without SPANSTAT_*.
check_off() {
	spy plain "$1"
	local plain_fds
	plain_fds=$(field fds)
	assert_equal "$(field bytes)" 0
	spy spy "$1"
	assert_equal "$(field secure)" 1
	assert_equal "$(field bytes)" 0
	assert_equal "$(field on)" 0
	assert_equal "$(field sigterm)" dfl
	assert_equal "$(field fds)" "$plain_fds"
}

@test "setuid root, run by nobody with SPANSTAT_* naming nobody's FIFO: nothing arrives" {
	need_root
	check_off setuid
	assert_equal "$(field euid)" 0
}

@test "setgid, run by nobody with SPANSTAT_* naming nobody's FIFO: nothing arrives" {
	need_root
	check_off setgid
	assert_equal "$(field egid)" 0
	assert_equal "$(field euid)" 65534
}

@test "file capabilities, run by nobody with SPANSTAT_* naming nobody's FIFO: nothing arrives" {
	need_root
	require_cmd setcap
	setcap cap_net_bind_service=ep "$SEC_DIR/setcap" ||
		fail "setcap failed (no extended attributes on $SEC_DIR?)"
	check_off setcap
	assert_equal "$(field euid)" 65534
}

# --- the span pipe's descriptor across exec, through spanstat ------------------

# pipe_lines: the lines of `ls -l /proc/self/fd` in $output that are the span
# pipe, whose identity the target printed as "id=DEV:INO".
pipe_lines() {
	local id
	id=$(grep -o -m1 'id=[0-9]*:[0-9]*' <<<"$output" | cut -d: -f2)
	[ -n "$id" ] || {
		echo "no pipe identity printed" >&2
		return 1
	}
	grep -F -- "-> pipe:[$id]" <<<"$output" || true
}

# The command prints the pipe's identity and the descriptor number first.
SHOW='echo "id=$SPANSTAT_PIPE_ID fd=$SPANSTAT_FD"'
UNSET='unset SPANSTAT_FD SPANSTAT_PIPE SPANSTAT_PIPE_ID SPANSTAT_CLOCK'

@test "an exec'd image that keeps the variables holds the pipe at SPANSTAT_FD" {
	run "$SPANSTAT" --spans -- sh -c "$SHOW; exec ls -l /proc/self/fd"
	assert_success
	fd=$(grep -o -m1 ' fd=[0-9]*' <<<"$output" | cut -d= -f2)
	run -0 pipe_lines
	assert_output --regexp " $fd -> pipe:"
}

@test "unset the variables, then exec: no descriptor of the span pipe" {
	run "$SPANSTAT" --spans -- sh -c "$SHOW; $UNSET; exec ls -l /proc/self/fd"
	assert_success
	assert_output --partial ' 0 -> '
	run -0 pipe_lines
	assert_output ''
}

@test "env -u the variables: the command it execs holds no descriptor of the span pipe" {
	run "$SPANSTAT" --spans -- sh -c "$SHOW; exec env -u SPANSTAT_FD -u SPANSTAT_PIPE \
		-u SPANSTAT_PIPE_ID -u SPANSTAT_CLOCK ls -l /proc/self/fd"
	assert_success
	assert_output --partial ' 0 -> '
	run -0 pipe_lines
	assert_output ''
}

@test "unset the variables, then fork and exec: the child holds no descriptor of the pipe" {
	run "$SPANSTAT" --spans -- sh -c "$SHOW; $UNSET; ls -l /proc/self/fd; true"
	assert_success
	assert_output --partial ' 0 -> '
	run -0 pipe_lines
	assert_output ''
}

@test "a failed exec leaves the descriptor close-on-exec, as it was" {
	require_cmd bash
	# bash with execfail survives a failed exec; the one after drops the variables
	run "$SPANSTAT" --spans -- bash -c "shopt -s execfail; $SHOW
		exec /nonexistent/spanstat-test 2>/dev/null; $UNSET; exec ls -l /proc/self/fd"
	assert_success
	run -0 pipe_lines
	assert_output ''
}

@test "the descriptor closed by the target: an exec that keeps the variables gets it back" {
	require_cmd bash
	run "$SPANSTAT" --spans -- bash -c "$SHOW; eval \"exec \$SPANSTAT_FD>&-\"
		exec ls -l /proc/self/fd"
	assert_success
	fd=$(grep -o -m1 ' fd=[0-9]*' <<<"$output" | cut -d= -f2)
	run -0 pipe_lines
	assert_output --regexp " $fd -> pipe:"
}

@test "the descriptor closed, then a failed exec: the number is free again" {
	require_cmd bash
	run "$SPANSTAT" --spans -- bash -c "shopt -s execfail; $SHOW
		eval \"exec \$SPANSTAT_FD>&-\"; exec /nonexistent/spanstat-test 2>/dev/null
		$UNSET; exec ls -l /proc/self/fd"
	assert_success
	run -0 pipe_lines
	assert_output ''
}

@test "a chain of processes that keep the variables: every exec'd image records" {
	run "$SPANSTAT" --spans -- sh -c 'sh -c "exec \"\$0\"" "$1"; exec "$1"' sh "$SPAN_SETUID"
	assert_success
	assert_equal "$(grep -cE ' on=[1-9] ' <<<"$output")" 2
	assert_line --regexp '^ +6 .* outer;inner$'
}

@test "children started by posix_spawn and by vfork + execv record" {
	# posix_spawn's exec is not wrapped: that child holds no descriptor of the
	# pipe and reconnects through SPANSTAT_PIPE; the vfork child's is wrapped
	SPAN_SPAWN=$(build_workload span_spawn $(span_link_flags))
	run "$SPANSTAT" --spans -- "$SPAN_SPAWN"
	assert_success
	assert_line --regexp '^ +1 .* parent$'
	assert_line --regexp '^ +2 .* spawned$'
	assert_line --regexp '^ +4 .* spawned;spawn-step$'
}
