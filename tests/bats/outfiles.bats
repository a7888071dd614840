#!/usr/bin/env bats
# outfiles.bats: what every output option (-o, --json, --perfetto, --folded)
# does to the file system: bad and unwritable paths fail before the target
# starts, symlinks and hard links are kept, two spellings of one file and
# COMMAND's own executable are refused, --append appends in place, FIFOs
# never hang, and no temporary file outlives spanstat.

load helpers
bats_require_minimum_version 1.5.0

OPTS=(-o --json --folded --perfetto)

setup() {
	cd "$BATS_TEST_TMPDIR"
	SCRATCH=
}

teardown() {
	cd /
	[ -z "$SCRATCH" ] || rm -rf "$SCRATCH"
}

# A target that leaves a mark when it runs.
MARK=(sh -c ': > "$0"/ran')

needs_root() {
	[ "$(id -u)" = 0 ] || skip "needs root to create files as another user (CI runs as root)"
}

as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

# nobody_dir: cd into a world-writable directory the user nobody can reach
# (the bats temporary directories are private to root), and set NSPANSTAT
# to a spanstat nobody can run: a copy of the staged install when the build
# tree is private too.
nobody_dir() {
	SCRATCH=$(mktemp -d /tmp/spanstat-outfiles.XXXXXX)
	chmod 0755 "$SCRATCH"
	mkdir -m 0777 "$SCRATCH/w"
	NSPANSTAT=$SPANSTAT
	if ! as_nobody test -x "$SPANSTAT"; then
		[ -n "${STAGE:-}" ] && [ "${SPANSTAT#"$STAGE"}" != "$SPANSTAT" ] ||
			fail "the user nobody cannot run $SPANSTAT and there is no \$STAGE to copy"
		cp -a "$STAGE" "$SCRATCH/stage"
		chmod -R a+rX "$SCRATCH/stage"
		NSPANSTAT=$SCRATCH/stage${SPANSTAT#"$STAGE"}
	fi
	cd "$SCRATCH/w"
}

@test "an empty path is an error before the target starts" {
	local opt
	for opt in "${OPTS[@]}"; do
		run "$SPANSTAT" "$opt" '' -- "${MARK[@]}" "$PWD"
		assert_failure 125
		local name=$opt
		[ "$opt" = -o ] && name=--output
		assert_output "spanstat: invalid $name '': expected a file name, or - for standard output"
		assert_not_exists ran
	done
	run ls -A
	assert_output ""
}

@test "a read-only file is not replaced, even where the directory would allow it" {
	needs_root
	nobody_dir
	echo keep > mine
	chown nobody:nogroup mine
	chmod 0444 mine
	echo keep > roots
	chmod 0644 roots
	local opt f
	for opt in "${OPTS[@]}"; do
		for f in mine roots; do
			run as_nobody "$NSPANSTAT" "$opt" "$f" -- "${MARK[@]}" "$PWD"
			assert_failure 125
			assert_output "spanstat: cannot write '$f': Permission denied"
			assert_not_exists ran
			assert_equal "$(cat "$f")" keep
		done
		run as_nobody "$NSPANSTAT" -o roots --append -- "${MARK[@]}" "$PWD"
		assert_failure 125
		assert_output "spanstat: cannot write 'roots': Permission denied"
	done
	run ls -A
	assert_output $'mine\nroots'
}

@test "a shell's > and spanstat agree on the same read-only file" {
	needs_root
	nobody_dir
	echo keep > roots
	run as_nobody sh -c 'echo x > roots'
	assert_failure
	run as_nobody "$NSPANSTAT" -o roots -e task-clock -- true
	assert_failure 125
	assert_output "spanstat: cannot write 'roots': Permission denied"
	# a file nobody may write is no error (whether nobody may count events
	# depends on perf_event_paranoid)
	as_nobody touch its
	as_nobody sh -c 'echo x > its'
	run as_nobody "$NSPANSTAT" -o its -e task-clock -- true
	refute_output --partial "cannot write"
}

@test "replacing a file keeps its mode, owner and group" {
	needs_root
	local opt
	for opt in "${OPTS[@]}"; do
		echo old > out
		chown nobody:nogroup out
		chmod 0640 out
		run "$SPANSTAT" "$opt" out -e task-clock -- true
		assert_success
		assert_equal "$(stat -c '%a %U %G' out)" "640 nobody nogroup"
		[ "$(cat out)" != old ] || fail "$opt did not replace out"
	done
}

@test "a symlinked output stays a link and the file it points to gets the output" {
	mkdir real
	local opt
	for opt in "${OPTS[@]}"; do
		echo old > real/target
		rm -f link
		ln -s real/target link
		run "$SPANSTAT" "$opt" link -e task-clock -- true
		assert_success
		assert_link_exists link
		assert_equal "$(readlink link)" real/target
		# (--folded of a run without spans is empty)
		[ "$(cat real/target)" != old ] || fail "$opt: target not written"
		run ls -A real
		assert_output target
	done
	# a dangling link: the file it names is created
	ln -s real/new dangling
	run "$SPANSTAT" -o dangling -e task-clock -- true
	assert_success
	assert_link_exists dangling
	grep -q task-clock real/new
}

@test "a hard-linked output keeps its links and every name sees the output" {
	local opt ino
	for opt in "${OPTS[@]}"; do
		rm -f out other
		echo old > out
		ln out other
		ino=$(stat -c %i out)
		run "$SPANSTAT" "$opt" out -e task-clock -- true
		assert_success
		assert_equal "$(stat -c '%i %h' out)" "$ino 2"
		assert_equal "$(stat -c %i other)" "$ino"
		[ "$(cat other)" != old ] || fail "$opt: the other name still has the old contents"
	done
	run ls -A
	assert_output $'other\nout'
}

# same_file OPT1 PATH1 OPT2 PATH2: spanstat refuses, naming both options in
# the order of --help (-o, --folded, --json, --perfetto), before the target starts, and leaves the directory as it was.
same_file() {
	local before
	before=$(ls -A; cat x 2>/dev/null || :)
	run "$SPANSTAT" "$1" "$2" "$3" "$4" -- "${MARK[@]}" "$PWD"
	assert_failure 125
	assert_equal "${#lines[@]}" 1
	local o1=${1/#-o/--output} o2=${3/#-o/--output}
	if [ "$2" = "$4" ]; then
		assert_output "spanstat: $o1 and $o2 name the same file '$2'"
	else
		assert_output "spanstat: $o1 '$2' and $o2 '$4' name the same file"
	fi
	assert_not_exists ran
	assert_equal "$(ls -A; cat x 2>/dev/null || :)" "$before"
}

@test "two outputs naming one file in any spelling fail before the target starts" {
	mkdir d
	local pass
	for pass in missing existing; do
		same_file -o x --json x
		same_file -o ./x --json x
		same_file --folded "$PWD//x" --json x
		same_file --folded d/../x --perfetto x
		same_file -o x --perfetto "$PWD/d/../x"
	done
	echo old > x
	ln -s x sl
	same_file -o sl --json x
	ln x hard
	same_file --json x --perfetto hard
	same_file --folded sl --json hard
}

@test "- and /dev/stdout are one file; the null device may be named twice" {
	run "$SPANSTAT" --json - --folded /dev/stdout -- "${MARK[@]}" "$PWD"
	assert_failure 125
	assert_output "spanstat: --folded '/dev/stdout' and --json '-' name the same file"
	assert_not_exists ran
	run "$SPANSTAT" --json - --folded - -- true
	assert_failure 125
	assert_output "spanstat: --folded and --json cannot both write to standard output"
	run "$SPANSTAT" -o /dev/null --json /dev/null --folded /dev/null -e task-clock -- true
	assert_success
	assert_output ""
}

@test "/dev/stdout and /proc/self/fd/N write to the file behind the descriptor" {
	"$SPANSTAT" --json /dev/stdout -e task-clock -- true > out.json
	jq -e '.command == ["true"]' out.json >/dev/null
	# a deleted file has no name to rename over: it is written in place
	local fd
	exec {fd}<>gone
	rm gone
	run "$SPANSTAT" -o "/proc/self/fd/$fd" -e task-clock -- true
	assert_success
	run cat "/proc/self/fd/$fd"
	exec {fd}>&-
	assert_output --partial "task-clock"
	run ls -A
	assert_output out.json
}

@test "an output that is the file on spanstat's stdout or stderr keeps what the target wrote" {
	# the target writes through the same descriptor first: replacing the
	# file would throw its output away
	"$SPANSTAT" --json /dev/stdout -e task-clock -- sh -c 'echo target-out' > out
	assert_equal "$(head -n 1 out)" target-out
	tail -n +2 out | jq -e '.command[0] == "sh"' >/dev/null
	"$SPANSTAT" -o /dev/stderr -e task-clock -- sh -c 'echo target-err >&2' 2> err
	assert_equal "$(head -n 1 err)" target-err
	grep -q task-clock err
	"$SPANSTAT" -o log -e task-clock -- sh -c 'echo target-log' > log
	assert_equal "$(head -n 1 log)" target-log
	grep -q task-clock log
}

@test "a file the directory does not let spanstat replace is written in place, as a shell's > would" {
	needs_root
	nobody_dir
	# a sticky directory: only the owner may rename over the file
	chmod 1777 .
	echo keep > roots
	chmod 0666 roots
	as_nobody sh -c 'echo x > roots'
	run as_nobody "$NSPANSTAT" -o roots -e task-clock -- "${MARK[@]}" "$PWD"
	assert_success
	grep -q task-clock roots
	assert_equal "$(stat -c %U roots)" root
	# a read-only directory
	mkdir -m 0755 ro
	echo keep > ro/f
	chmod 0666 ro/f
	as_nobody sh -c 'echo x > ro/f'
	run as_nobody "$NSPANSTAT" --json ro/f -e task-clock -- true
	assert_success
	jq -e '.command == ["true"]' ro/f >/dev/null
	run ls -A ro
	assert_output f
	# a bind-mounted file cannot be renamed over at all
	echo keep > src
	touch mnt
	mount --bind src mnt || fail "cannot bind-mount a file"
	run "$SPANSTAT" -o mnt -e task-clock -- true
	umount mnt
	assert_success
	grep -q task-clock src
}

@test "an output that is COMMAND's own executable fails before the target starts" {
	cp "$(type -P true)" prog
	ln -s prog proglink
	cp prog saved
	local opt
	for opt in "${OPTS[@]}"; do
		run "$SPANSTAT" "$opt" prog -- ./prog
		assert_failure 125
		assert_output "spanstat: cannot write 'prog': it is the executable of './prog'"
		run env PATH="$PWD:$PATH" "$SPANSTAT" "$opt" proglink -- prog
		assert_failure 125
		assert_output "spanstat: cannot write 'proglink': it is the executable of 'prog'"
		cmp prog saved
	done
	# a different program of the same name elsewhere on PATH is not it
	mkdir bin
	cp prog bin/prog
	run env PATH="$PWD/bin:$PATH" "$SPANSTAT" -o prog -e task-clock -- prog
	assert_success
	grep -q task-clock prog
}

@test "--append: concurrent runs appending to one log all appear, whole" {
	local i pids=()
	for i in $(seq 20); do
		"$SPANSTAT" -o log --append -e task-clock,page-faults -- true &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i"
	done
	assert_equal "$(grep -c "Performance counter stats for 'true'" log)" 20
	assert_equal "$(grep -c ' task-clock ' log)" 20
	assert_equal "$(grep -c ' page-faults ' log)" 20
	assert_equal "$(grep -c 'seconds time elapsed' log)" 20
	# each summary whole: its lines in order, never another's in between
	run awk '/Performance counter stats/ { if (state) bad = 1; state = 1 }
		state == 1 && / task-clock / { state = 2 }
		state == 2 && / page-faults / { state = 3 }
		state == 3 && /seconds time elapsed/ { state = 0; n++ }
		END { print (bad ? "interleaved" : n) }' log
	assert_output 20
	run ls -A
	assert_output log
}

@test "--append through a symlink keeps the link, and a failed run appends nothing" {
	mkdir logs
	echo first > logs/run.log
	ln -s logs/run.log log
	run "$SPANSTAT" -o log --append -e task-clock -- true
	assert_success
	assert_link_exists log
	assert_equal "$(head -n1 logs/run.log)" first
	grep -q task-clock logs/run.log
	cp logs/run.log before
	run -127 "$SPANSTAT" -o log --append -e task-clock -- ./no-such-command
	assert_failure 127
	cmp before logs/run.log
	run -127 "$SPANSTAT" -o new.log --append -e task-clock -- ./no-such-command
	assert_failure 127
	assert_not_exists new.log
	run ls -A logs
	assert_output run.log
}

@test "--append to a 2 GB sparse log writes at its end and does not rewrite it" {
	truncate -s 2G big.log
	local ino size
	ino=$(stat -c %i big.log)
	size=$(stat -c %s big.log)
	run "$SPANSTAT" -o big.log --append -e task-clock -- true
	assert_success
	assert_equal "$(stat -c %i big.log)" "$ino"
	[ "$(stat -c %s big.log)" -gt "$size" ] || fail "nothing appended"
	# still sparse: a rewrite would allocate 2 GB
	[ "$(du -k big.log | cut -f1)" -lt 1024 ] || fail "big.log was rewritten: $(du -k big.log)"
	tail -c 2000 big.log | grep -q task-clock
	run ls -A
	assert_output big.log
}

@test "a FIFO with no reader fails at once with 125, before the target starts" {
	mkfifo fifo
	local opt
	for opt in "${OPTS[@]}"; do
		run timeout 60 "$SPANSTAT" "$opt" fifo -- "${MARK[@]}" "$PWD"
		assert_failure 125
		assert_output "spanstat: cannot write 'fifo': no process is reading the FIFO"
		assert_not_exists ran
	done
	[ -p fifo ] || fail "fifo is no longer a FIFO"
}

@test "a FIFO with a reader gets the output" {
	mkfifo fifo
	local fd
	# read-write keeps a reader open without blocking
	exec {fd}<>fifo
	run "$SPANSTAT" -o fifo -e task-clock -- true
	assert_success
	run dd iflag=nonblock bs=65536 count=1 status=none <&"$fd"
	exec {fd}>&-
	assert_output --partial "Performance counter stats for 'true'"
	assert_output --partial "task-clock"
	[ -p fifo ] || fail "fifo is no longer a FIFO"
}

@test "renaming the output's directory under spanstat leaves no temporary file" {
	mkdir d
	run "$SPANSTAT" -o d/out.txt --json d/out.json -e task-clock -- mv d e
	assert_success
	assert_not_exists d
	run ls -A e
	assert_output $'out.json\nout.txt'
	grep -q task-clock e/out.txt
	mkdir d
	echo first > d/log
	run "$SPANSTAT" -o d/log --append -e task-clock -- mv d f
	assert_success
	assert_not_exists d
	run ls -A f
	assert_output log
	grep -q task-clock f/log
}

@test "no temporary file outlives spanstat when a relayed signal ends it" {
	ulimit -c 0
	local sig
	for sig in INT TERM HUP QUIT USR1 USR2 ALRM PIPE VTALRM XCPU; do
		mkdir "$sig"
		(
			cd "$sig"
			run "$SPANSTAT" -o out.txt --json out.json --perfetto out.pftrace \
				--folded out.folded -e task-clock -- sh -c "kill -$sig \$PPID; sleep 5"
			run ls -A
			assert_output $'out.folded\nout.json\nout.pftrace\nout.txt'
			grep -q task-clock out.txt
		)
	done
}

@test "the outputs are anonymous while the target runs, so SIGKILL leaves nothing" {
	# the target lists its directory: an O_TMPFILE output has no name there;
	# where this file system lacks O_TMPFILE, try tmpfs
	local d
	for d in "$BATS_TEST_TMPDIR" /dev/shm; do
		[ -d "$d" ] || continue
		SCRATCH=$(mktemp -d "$d/spanstat-kill.XXXXXX") # removed by teardown
		cd "$SCRATCH"
		run "$SPANSTAT" -o out.txt --json out.json -e task-clock -- ls -A
		assert_success
		[ -n "$output" ] || break
		echo "# no O_TMPFILE in $d: $output" >&3
		cd / && rm -rf "$SCRATCH"
	done
	if [ -n "$output" ]; then
		skip_or_fail "no O_TMPFILE here: spanstat named its temporary files"
	fi
	rm -f out.txt out.json
	run "$SPANSTAT" -o out.txt --json out.json --perfetto out.pftrace --folded out.folded \
		-e task-clock -- sh -c 'kill -KILL $PPID; sleep 1'
	assert_failure 137
	run ls -A
	assert_output ""
}

@test "output names take the job's coordinates: %r %l %h %p %j %%" {
	run env OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_LOCAL_RANK=1 PMI_RANK=9 \
		"$SPANSTAT" --json=r%r.l%l.json -o 's%h.%%.txt' -e task-clock -- true
	assert_success
	assert_file_exists r3.l1.json
	assert_file_exists "s$(hostname).%.txt"
	# the first variable set wins, then the next
	run env PMI_RANK=5 MPI_LOCALRANKID=2 "$SPANSTAT" --json=p%r.%l.json -e task-clock -- true
	assert_file_exists p5.2.json
	run env -u OMPI_COMM_WORLD_RANK -u PMI_RANK SLURM_PROCID=7 SLURM_LOCALID=4 SLURM_JOB_ID=42 \
		"$SPANSTAT" --folded=f%r.%l.%j.txt -- true
	assert_file_exists f7.4.42.txt
	# outside a job: rank 0, and the job is the start time
	run env -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u SLURM_PROCID -u SLURM_JOB_ID -u PBS_JOBID \
		"$SPANSTAT" --json=o%r.%j.json -e task-clock -- true
	assert_success
	run ls
	assert_output --regexp 'o0\.[0-9]{8}-[0-9]{6}\.json'
	# %p: spanstat's own pid, not the command's
	run "$SPANSTAT" --json=pid%p.json -e task-clock -- sh -c 'echo $$'
	cmdpid=$(tail -1 <<<"$output")
	run ls pid*.json
	refute_output "pid$cmdpid.json"
	assert_output --regexp '^pid[0-9]+\.json$'
}

@test "an unknown or dangling %-sequence in an output name is refused before the command runs" {
	run -125 "$SPANSTAT" --json=x%q.json -- touch ran
	assert_output "spanstat: invalid --json 'x%q.json': unknown %-sequence (expected %r, %l, %h, %p, %j or %%)"
	run -125 "$SPANSTAT" --perfetto=x% -- touch ran
	assert_output "spanstat: invalid --perfetto 'x%': a '%' ends it (write %% for a '%')"
	assert_file_not_exists ran
	# the expanded name is the one the same-file check sees
	run -125 env OMPI_COMM_WORLD_RANK=2 "$SPANSTAT" --json=a2.json --folded=a%r.json -- true
	assert_output --partial "a2.json"
}

# full_outputs PATH: runs every file output of a live run, of a report and
# of a diff into PATH, each alone, and checks that each failure names the
# full device or disk (ENOSPC), never "Input/output error".
full_outputs() {
	local p=$1 o
	for o in --output --json --folded --perfetto --pprof --flamegraph --flamechart --record; do
		run --separate-stderr "$SPANSTAT" "$o=$p" --spans -- "$DEMO" 20000
		# the summary goes to standard error instead, with the target's status
		[ "$status" -ne 0 ] || [ "$o" = --output ] || fail "$o=$p: status 0"
		[[ $stderr == *"'$p': No space left on device"* ]] || fail "$o: $stderr"
	done
	for o in --output --json --folded --perfetto --pprof --flamegraph --flamechart; do
		run --separate-stderr "$SPANSTAT" report "$o=$p" t.rec
		[ "$status" -eq 125 ] || [ "$o" = --output ] || fail "report $o: status $status"
		[[ $stderr == *"'$p': No space left on device"* ]] || fail "report $o: $stderr"
	done
	for o in --json --folded --flamegraph; do
		run --separate-stderr "$SPANSTAT" diff "$o=$p" a.json a.json
		[ "$status" -eq 125 ] || fail "diff $o: status $status"
		[[ $stderr == *"'$p': No space left on device"* ]] || fail "diff $o: $stderr"
	done
}

@test "a full disk or device is said as such by every output, never as an I/O error" {
	DEMO=$(build_workload demo -finstrument-functions)
	timeout 60 "$SPANSTAT" record -o t.rec -- "$DEMO" 2000 >/dev/null 2>&1
	"$SPANSTAT" --json=a.json --spans -- "$DEMO" 2000 >/dev/null 2>&1
	[ -w /dev/full ] || skip "no /dev/full"
	full_outputs /dev/full # written in place
	# a file system with no room left: the output's temporary file fails
	[ "$(id -u)" = 0 ] || return 0
	mkdir mnt
	mount -t tmpfs -o size=4k tmpfs mnt 2>/dev/null || return 0
	head -c 4096 /dev/zero >mnt/fill 2>/dev/null || true
	local r=0
	full_outputs "$PWD/mnt/x" || r=1
	[ "$(ls mnt)" = fill ] || r=1 # nothing left behind
	umount mnt
	[ "$r" -eq 0 ]
}

@test "report: an output on standard output by any name moves the summary to standard error" {
	THREADS=$(build_workload span_threads $(span_link_flags))
	timeout 60 "$SPANSTAT" record -o t.rec -- "$THREADS" >/dev/null 2>&1
	"$SPANSTAT" report --perfetto=alone.pf t.rec >/dev/null 2>&1
	for p in - /dev/stdout /proc/self/fd/1; do
		# stdout a regular file, then a pipe
		"$SPANSTAT" report --perfetto="$p" t.rec >out.pf 2>err.txt
		cmp out.pf alone.pf
		grep -q 'Performance counter stats' err.txt
		"$SPANSTAT" report --perfetto="$p" t.rec 2>err.txt | cat >piped.pf
		cmp piped.pf alone.pf
		grep -q 'Performance counter stats' err.txt
	done
	# the file stdout goes to, by its own name
	"$SPANSTAT" report --perfetto=same.pf t.rec >same.pf 2>err.txt
	cmp same.pf alone.pf
	grep -q 'Performance counter stats' err.txt
	# no other output there: the summary on stdout as before
	run --separate-stderr -0 "$SPANSTAT" report --perfetto=x.pf t.rec
	assert_output --partial 'Performance counter stats'
}

@test "an output that fails at a -I sample fails alone: the others and the -I lines go on" {
	[ -w /dev/full ] || skip "no /dev/full"
	THREADS=$(build_workload span_threads $(span_link_flags))
	run --separate-stderr -125 timeout 60 "$SPANSTAT" -I 20 -e task-clock --perfetto=/dev/full \
		--json=x.json -- sh -c "sleep 0.2; $THREADS"
	grep -qx "spanstat: cannot write --perfetto '/dev/full': No space left on device" <<<"$stderr"
	# every sample, to the end: the summary's -I lines and the JSON's
	[ "$(grep -c task-clock <<<"$stderr")" -ge 5 ]
	jq -e '(.intervals | length) >= 5 and (.spans.threads | length) > 0' x.json >/dev/null
	# the target's own failure outranks it
	run --separate-stderr -3 timeout 60 "$SPANSTAT" -I 20 -e task-clock --perfetto=/dev/full \
		-- sh -c 'sleep 0.1; exit 3'
}

@test "--append on a full disk appends no part of the summary, and creates no log" {
	[ "$(id -u)" = 0 ] || skip "needs root to mount a small tmpfs"
	mkdir full
	mount -t tmpfs -o size=8k tmpfs full || skip "cannot mount a tmpfs here"
	# the log's one page has room for part of a summary, then the disk is full
	head -c 4000 /dev/zero | tr '\0' x >full/log
	dd if=/dev/zero of=full/fill bs=1k count=8 status=none 2>/dev/null || true
	cp full/log before
	local r=0
	run --separate-stderr -3 "$SPANSTAT" -o full/log --append -e task-clock -- sh -c 'exit 3'
	cmp -s before full/log || r=1
	[[ "$stderr" == "spanstat: cannot write --output 'full/log': No space left on device; the summary follows on standard error"$'\n'*"Performance counter stats"* ]] || r=2
	run --separate-stderr -0 "$SPANSTAT" -o full/new.log --append -e task-clock -- true
	[ ! -e full/new.log ] || r=3
	ls -A full >list
	umount full
	[ "$r" -eq 0 ] || fail "check $r failed: $(cat list)"
}

@test "a hard-linked output on a disk with no room for it keeps its old contents; the line names the option" {
	[ "$(id -u)" = 0 ] || skip "needs root to mount a small tmpfs"
	DEMO=$(build_workload demo -finstrument-functions)
	"$SPANSTAT" record -o t.rec -- "$DEMO" 2000 >/dev/null 2>&1
	"$SPANSTAT" report --json=ref.json t.rec 2>/dev/null # the same bytes every time
	local pages=$((($(stat -c %s ref.json) + 4095) / 4096))
	[ "$pages" -ge 2 ] || fail "the JSON is too small to fill the disk with"
	mkdir full
	# room for the temporary file, not for the copy into the linked file too
	mount -t tmpfs -o size=$(((pages + 1 + pages / 2) * 4))k tmpfs full || skip "cannot mount a tmpfs here"
	echo old >full/out
	ln full/out full/other
	local r=0
	run --separate-stderr "$SPANSTAT" report --json=full/out t.rec
	[ "$status" -eq 125 ] && [ "$stderr" = "spanstat: cannot write --json 'full/out': No space left on device" ] || r=1
	[ "$(cat full/other)" = old ] || r=2
	# spanstat record's -o is named as the user gave it
	head -c 1M /dev/zero >full/fill 2>/dev/null || true
	[ $r -ne 0 ] || run --separate-stderr "$SPANSTAT" record -o full/x.rec -e task-clock -- true
	[ $r -ne 0 ] || { [ "$status" -eq 125 ] && [ "$stderr" = "spanstat: cannot write --output 'full/x.rec': No space left on device" ]; } || r=3
	umount full
	[ "$r" -eq 0 ] || fail "check $r failed: $stderr"
}

@test "-I lines reach a FIFO or a pipe as they come; a reader that goes away costs neither the run nor its status" {
	mkfifo fifo
	local fd
	# a reader from the start (read-write: opening blocks on nothing); the
	# first sample is read while the target still runs (it waits for it)
	exec {fd}<>fifo
	(IFS= read -r head && IFS= read -r first && echo "$first" >first) <&"$fd" 3>&- &
	run -3 timeout 60 "$SPANSTAT" -o fifo -I 100 -e task-clock -- \
		sh -c 'for i in $(seq 100); do [ -s first ] && exit 3; sleep 0.05; done; exit 9'
	exec {fd}>&-
	grep -q task-clock first
	# standard output's reader goes away while -I lines are written: the
	# target runs on, its status stays, the line says which output failed
	local o
	for o in "" -x,; do
		run bash -c '"$0" -I 10 $1 -o - -e task-clock,page-faults -- sh -c "sleep 1; exit 3" 2>err |
			head -c 10 >/dev/null; echo "${PIPESTATUS[0]}"; cat err' "$SPANSTAT" "$o"
		[ "${lines[0]}" = 3 ] || fail "$o: status: $output"
		[ "${lines[1]}" = "spanstat: cannot write --output to standard output: Broken pipe" ] || fail "$o: $output"
	done
}
