#!/usr/bin/env bats
# mcount.bats: programs built with -pg and -pg -mfentry (gcc and clang) get
# their functions as spans with no -finstrument-functions, through the span
# library's mcount, __fentry__ and return trampoline (lib/span/rec_mcount.c):
# one workload (tests/workloads/span_mcount.c: recursion, a longjmp, a tail
# call, values returned in every return register, two threads, a fork whose
# child returns through inherited frames, an exit() inside a span) gives the
# same tree, counts and unfinished spans as its -finstrument-functions build,
# aggregated in the target and streamed, in JSON and folded, with filters
# and a depth limit; C++ exceptions thrown through -pg frames
# (span_mcount_cxx.cc) unwind and leave the same tree; pthread_exit ends
# the spans as there, and runs the destructors above -pg frames; a recursion deeper
# than the library follows is counted dropped, not hidden; a SIGALRM handler
# that runs -pg code at any point keeps the tree balanced; and no gmon.out
# is written under spanstat, while gprof still works without it.  x86-64
# only (the library defines mcount nowhere else).

load helpers
bats_require_minimum_version 1.5.0

# build VAR COMPILER SRC FLAGS...: SRC (under tests/workloads) built by
# COMPILER -O2 -g with FLAGS into $BATS_FILE_TMPDIR, its path exported in VAR
build() {
	local var=$1 cc=$2 src=$3
	shift 3
	local out="$BATS_FILE_TMPDIR/$var"
	env -u CFLAGS -u CXXFLAGS -u LDFLAGS "$cc" -O2 -g "$WORKLOADS/$src" -o "$out" "$@" >&2 || return 1
	printf -v "$var" '%s' "$out"
	export "${var?}"
}

setup_file() {
	export BUILT=
	[ "$(uname -m)" = x86_64 ] || return 0
	command -v clang >/dev/null 2>&1 && command -v clang++ >/dev/null 2>&1 || return 0
	command -v g++ >/dev/null 2>&1 || return 0
	build FI gcc span_mcount.c -pthread -finstrument-functions || return 1
	build GPG gcc span_mcount.c -pthread -pg || return 1
	build GFE gcc span_mcount.c -pthread -pg -mfentry || return 1
	build CPG clang span_mcount.c -pthread -pg || return 1
	build CFE clang span_mcount.c -pthread -pg -mfentry || return 1
	build XFI g++ span_mcount_cxx.cc -finstrument-functions -pthread || return 1
	build XGPG g++ span_mcount_cxx.cc -pg -pthread || return 1
	build XGFE g++ span_mcount_cxx.cc -pg -mfentry -pthread || return 1
	build XCPG clang++ span_mcount_cxx.cc -pg -pthread || return 1
	build XCFE clang++ span_mcount_cxx.cc -pg -mfentry -pthread || return 1
	build NFI g++ span_pgnest.cc -finstrument-functions || return 1
	build NGPG g++ span_pgnest.cc -pg || return 1
	build NCFE clang++ span_pgnest.cc -pg -mfentry || return 1
	BUILT=1
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	[ "$(uname -m)" = x86_64 ] || skip "-pg builds are traced on x86-64 only"
	[ -n "$BUILT" ] || skip_or_fail "the workloads were not built (gcc, g++, clang and clang++ are needed)"
}

# paths MODE OUT.paths [OPTIONS...] -- CMD...: the run's merged tree as
# "count unfinished path" lines (span_paths) and its decode counters but
# the record count, aggregated in the target or streamed (record, report)
paths() {
	local mode=$1 out=$2
	shift 2
	local opts=()
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	if [ "$mode" = aggregate ]; then
		"$SPANSTAT" --spans "${opts[@]}" --json=run.json -- "$@" >stdout 2>stderr || return 1
	else
		"$SPANSTAT" record "${opts[@]}" -o run.rec -- "$@" >stdout 2>stderr &&
			"$SPANSTAT" report --json=run.json run.rec >report.out 2>>stderr || return 1
	fi
	{
		span_paths run.json unfinished
		jq -c '.spans.decode | del(.records)' run.json
	} >"$out"
}

# The -finstrument-functions build's tree, as the workload's comment says.
EXPECTED='1 0 child_work
1 0 child_work;leaf
1 1 finish
1 1 main
1 1 main;finish
1 0 main;forker
1 0 main;jumper
1 0 main;jumper;jump_a
1 0 main;jumper;jump_a;jump_b
1 0 main;recurse
1 0 main;recurse;recurse
1 0 main;recurse;recurse;recurse
1 0 main;recurse;recurse;recurse;recurse
1 0 main;recurse;recurse;recurse;recurse;recurse
1 0 main;recurse;recurse;recurse;recurse;recurse;recurse
1 0 main;tail_a
1 0 main;tail_a;tail_b
1 0 main;threads
1 0 main;values
1 0 main;values;dpair
1 0 main;values;ipair
1 0 main;values;ldouble
1 0 main;values;sumv
2 0 worker
6 0 worker;leaf'

@test "-pg and -pg -mfentry builds, gcc and clang: the -finstrument-functions build's tree, aggregated and streamed" {
	local mode v
	for mode in aggregate stream; do
		paths "$mode" ref.paths -- "$FI"
		assert_equal "$(head -n -1 ref.paths)" "$EXPECTED"
		for v in "$GPG" "$GFE" "$CPG" "$CFE"; do
			paths "$mode" pg.paths -- "$v" || fail "$mode $v: $(cat stderr)"
			run diff ref.paths pg.paths
			assert_success
			# the values returned through the trampoline were right
			refute_output --partial 'span_mcount:'
			run ! grep -q 'span_mcount:' stderr
		done
	done
}

@test "-pg builds: folded stacks as the -finstrument-functions build's, aggregated and recorded" {
	local v
	"$SPANSTAT" --spans --folded=ref.folded -- "$FI" >/dev/null 2>&1
	"$SPANSTAT" record -o ref.rec -- "$FI" >/dev/null 2>&1
	"$SPANSTAT" report --folded=refr.folded ref.rec >/dev/null 2>&1
	sed 's/ [0-9]*$//' ref.folded | sort >ref.stacks
	sed 's/ [0-9]*$//' refr.folded | sort >refr.stacks
	assert_equal "$(grep -c "" ref.stacks)" 25
	for v in "$GPG" "$GFE" "$CPG" "$CFE"; do
		"$SPANSTAT" --spans --folded=pg.folded -- "$v" >/dev/null 2>&1
		"$SPANSTAT" record -o pg.rec -- "$v" >/dev/null 2>&1
		"$SPANSTAT" report --folded=pgr.folded pg.rec >/dev/null 2>&1
		run diff ref.stacks <(sed 's/ [0-9]*$//' pg.folded | sort)
		assert_success
		run diff refr.stacks <(sed 's/ [0-9]*$//' pgr.folded | sort)
		assert_success
	done
}

@test "-pg builds: --exclude, --filter and --max-depth keep what they keep of the -finstrument-functions build" {
	local opt mode v
	for opt in --exclude=jump_a --filter=values --max-depth=2; do
		for mode in aggregate stream; do
			paths "$mode" ref.paths "$opt" -- "$FI"
			for v in "$GPG" "$GFE" "$CPG" "$CFE"; do
				paths "$mode" pg.paths "$opt" -- "$v"
				run diff ref.paths pg.paths
				assert_success
			done
		done
	done
	# the filters took effect (not a tree both builds show whole)
	paths aggregate f.paths --filter=values -- "$GPG"
	run grep -c ';' f.paths
	assert_output 4
	paths aggregate e.paths --exclude=jump_a -- "$CFE"
	run grep -c jump_ e.paths
	assert_output 0
	paths aggregate d.paths --max-depth=2 -- "$GFE"
	run grep -c 'recurse;recurse' d.paths
	assert_output 0
}

@test "-pg C++: exceptions thrown through -pg frames unwind, and leave the -finstrument-functions build's tree" {
	local mode v
	for mode in aggregate stream; do
		paths "$mode" ref.paths -- "$XFI"
		run grep -c 'main;catcher;deep;deep;deep;deep;deep$' ref.paths
		assert_output 1
		grep -q '^3 0 main;catcher;after$' ref.paths
		grep -q '^3 0 main;after$' ref.paths
		for v in "$XGPG" "$XGFE" "$XCPG" "$XCFE"; do
			paths "$mode" pg.paths -- "$v" || fail "$mode $v: $(cat stderr)"
			run diff ref.paths pg.paths
			assert_success
		done
	done
}

@test "-pg C++: destructors that throw and catch while an exception unwinds -pg frames: the -finstrument-functions build's tree" {
	local mode v
	for mode in aggregate stream; do
		paths "$mode" ref.paths -- "$NFI" 10
		grep -q '^10 0 main;level1;level2;Guard::~Guard;inner_throw$' ref.paths
		grep -q '^10 0 main;level1;Guard::~Guard;inner_throw$' ref.paths
		for v in "$NGPG" "$NCFE"; do
			# before: the nested catch hijacked the frames the first
			# exception still had to unwind, and the program aborted
			paths "$mode" pg.paths -- "$v" 10 || fail "$mode $v: $(cat stderr)"
			assert_equal "$(cat stdout)" "caught 10"
			run diff ref.paths pg.paths
			assert_success
		done
	done
}

@test "-pg builds: pthread_exit from -pg functions ends the thread's spans as with -finstrument-functions" {
	local mode v
	for mode in aggregate stream; do
		paths "$mode" ref.paths -- "$FI" pexit
		run grep -E '^1 1 exiter;exit_inner$' ref.paths
		assert_success
		grep -q '^1 0 main;leaf$' ref.paths
		for v in "$GPG" "$GFE" "$CPG" "$CFE"; do
			paths "$mode" pg.paths -- "$v" pexit || fail "$mode $v: $(cat stderr)"
			run diff ref.paths pg.paths
			assert_success
		done
	done
}

@test "-pg C++: pthread_exit unwinds through -pg frames, running the destructors above them" {
	local mode v
	for mode in aggregate stream; do
		for v in "$XGPG" "$XGFE" "$XCPG" "$XCFE"; do
			# exit status 1: exiter's destructor did not run
			paths "$mode" pg.paths -- "$v" pexit || fail "$mode $v: $(cat stderr)"
			# the functions that never returned end with the thread
			run grep -E '^1 1 exiter;exit_inner$' pg.paths
			assert_success
		done
	done
}

@test "-pg builds: a recursion deeper than the library follows is counted as dropped, the rest balanced" {
	paths aggregate deep.paths -- "$GPG" deep 600
	# recurse 601 deep: 511 levels under main, 90 not followed (a begin and
	# an end each); main and finish stay open at exit()
	assert_equal "$(tail -1 deep.paths | jq -c '[.dropped, .unmatched, .unfinished]')" "[180,0,2]"
	assert_equal "$(grep -c 'recurse' deep.paths)" 511
	grep -q 'events dropped by the target' stderr
}

@test "-pg builds: a thread's -pg stack is made at its first -pg function and given back at its end" {
	# every thread of every target once carried the stack in its static
	# TLS (12 KB), -pg or not: the library's TLS is small now
	run timeout 10 readelf -lW "$SPANSTAT_LIBDIR/libspanstat.so.0"
	assert_success
	local tls
	tls=$(awk '$1 == "TLS" { print $6 }' <<<"$output")
	[ -n "$tls" ] && [ "$((tls))" -lt 1024 ] || fail "static TLS of $((tls)) bytes"
	# 400 threads, 4 at a time, each 12 -pg functions deep: each takes a
	# stack, a later one takes it again; then main 301 deep (past the first
	# page of its stack); the tree is exact
	cat >thr.c <<'C'
#include <pthread.h>
#include <stdio.h>
__attribute__((noinline)) int down(int n)
{
	if (!n)
		return 0;
	int r = down(n - 1);
	__asm__ volatile("" : "+r"(r)); /* a real recursion, not a loop */
	return r + 1;
}
__attribute__((noinline)) void *worker(void *arg) { (void)arg; return (void *)(long)down(11); }
int main(void)
{
	long sum = 0;
	for (int i = 0; i < 100; i++) {
		pthread_t t[4];
		void *r;
		for (int k = 0; k < 4; k++)
			pthread_create(&t[k], NULL, worker, NULL);
		for (int k = 0; k < 4; k++) {
			pthread_join(t[k], &r);
			sum += (long)r;
		}
	}
	sum += down(300);
	printf("%ld\n", sum);
	return 0;
}
C
	gcc -O2 -pg -pthread thr.c -o thr
	local mode
	for mode in aggregate stream; do
		paths "$mode" thr.paths -- ./thr
		assert_equal "$(cat stdout)" 4700
		assert_equal "$(grep -c '^400 0 worker' thr.paths)" 13
		assert_equal "$(grep -c '^1 0 main;down' thr.paths)" 301
		assert_equal "$(tail -1 thr.paths | jq -c '[.dropped, .unmatched, .unfinished]')" "[0,0,0]"
	done
}

@test "-pg builds: a thread cancelled inside -pg functions runs its C cleanup handlers; its calls end unfinished" {
	# the documented limit (spanstat(1)): the C library's forced unwind
	# stops at the return trampoline, so only C++ destructors are missed
	cat >cancel.c <<'C'
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void cleanup(void *a) { printf("cleanup %s\n", (const char *)a); }
__attribute__((noinline)) void wait_here(void)
{
	pthread_cleanup_push(cleanup, "inner");
	for (;;)
		usleep(100);
	pthread_cleanup_pop(0);
}
__attribute__((noinline)) void *worker(void *a)
{
	pthread_cleanup_push(cleanup, "worker");
	wait_here();
	pthread_cleanup_pop(0);
	return a;
}
__attribute__((noinline)) int after(int i) { __asm__ volatile("" ::: "memory"); return i; }
int main(void)
{
	pthread_t t;
	void *r;
	pthread_create(&t, NULL, worker, NULL);
	usleep(50000);
	pthread_cancel(t);
	pthread_join(t, &r);
	int n = 0;
	for (int i = 0; i < 3; i++)
		n += after(1);
	printf("%d %d\n", r == PTHREAD_CANCELED, n);
	return 0;
}
C
	gcc -O2 -pg -pthread cancel.c -o cancel
	local mode
	for mode in aggregate stream; do
		paths "$mode" cancel.paths -- ./cancel
		assert_equal "$(cat stdout)" "$(printf 'cleanup inner\ncleanup worker\n1 3')"
		grep -qE '^1 1 worker;wait_here$' cancel.paths
		grep -qE '^1 1 worker$' cancel.paths
		grep -qE '^3 0 main;after$' cancel.paths
		assert_equal "$(tail -1 cancel.paths | jq -c '[.dropped, .unmatched, .unfinished]')" "[0,0,2]"
	done
}

@test "-pg builds: a SIGALRM handler running -pg functions at any point keeps the tree balanced" {
	local v
	for v in "$GPG" "$GFE" "$CPG" "$CFE"; do
		paths aggregate sig.paths -- "$v" sig 20000 || fail "$v: $(cat stderr)"
		run grep -v on_prof sig.paths
		assert_line '20000 0 main;ticks;tick'
		assert_line '20000 0 main;ticks;tick;leaf'
		assert_line '1 1 main;finish'
		# the handler ran, and each of its spans ended
		run grep -E '^[0-9]+ 0 .*on_prof;leaf$' sig.paths
		assert_success
		run jq -c '[.dropped, .unmatched, .unfinished]' <(tail -1 sig.paths)
		assert_output '[0,0,2]'
	done
}

@test "-pg builds: no gmon.out under spanstat; gprof's still written without it, the library preloaded" {
	command -v gprof >/dev/null 2>&1 || skip_or_fail "gprof not installed (binutils)"
	"$SPANSTAT" --spans --json=x.json -- "$GPG" >/dev/null 2>&1
	assert_file_not_exist gmon.out
	# the library loaded but not recording: the C library's mcount counts
	LD_PRELOAD="$SPANSTAT_LIBDIR/libspanstat.so" "$GPG" >/dev/null
	assert_file_exist gmon.out
	run gprof -b -q "$GPG" gmon.out
	assert_success
	assert_output --partial 'recurse'
	assert_output --partial 'tail_b'
}

@test "-pg -O0: gcc calls mcount on a stack 8 bytes off alignment in a function it takes for a leaf; the target does not crash" {
	# leaf's prologue subtracts 24 after pushing rbp, then calls mcount:
	# the hook must not run C on that stack as gcc left it
	printf '%s\n' '__attribute__((noinline)) int leaf(int x) { volatile int y = x; return y; }' \
		'int main(void) { int s = 0; for (int i = 0; i < 3; i++) s += leaf(i); return s != 3; }' >o0.c
	env -u CFLAGS -u LDFLAGS gcc -O0 -g -pg o0.c -o o0
	run -0 "$SPANSTAT" -o /dev/null --folded=o0.folded -- ./o0
	run -0 "$SPANSTAT" -o /dev/null --perfetto=o0.pftrace --folded=o0s.folded -- ./o0
	run -0 sed 's/ [0-9]*$//' o0.folded
	assert_output $'main\nmain;leaf'
	cmp <(sed 's/ [0-9]*$//' o0s.folded) <(printf 'main\nmain;leaf\n')
}
