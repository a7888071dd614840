#!/usr/bin/env bats
# libcalls.bats: --lib-calls makes the library calls of a program built the
# ordinary way (tests/workloads/libcalls.c, libcalls_cxx.cc: no API, no
# -finstrument-functions) spans named by the function, with the call
# counts the program itself prints, alike aggregated in the target (--json)
# and streamed (record, then report --json): under lazy and eager binding
# (-z now, full RELRO), in threads, a fork child and an exec'd image, with
# calls that never return (exit), that a longjmp, pthread_exit or a C++
# throw leaves, a signal handler's calls inside a call in flight, tail calls
# through a PLT, and dlopen'ed objects (--lib-calls-all); every tree stays
# balanced (nothing unfinished but what never returned); objects loaded past
# the slots followed at once are counted and said.  GLOB picks the
# functions, the filters apply, bad input is refused, and the counts agree
# with uftrace's when it is installed.

load helpers

setup_file() {
	local d="$BATS_FILE_TMPDIR/lc"
	mkdir -p "$d"
	cc -O2 -fPIC -shared "$WORKLOADS/libcalls_lib.c" -o "$d/liblibcalls_lib.so" || return 1
	cc -O2 -fPIC -shared "$WORKLOADS/libcalls_plug.c" -o "$d/plug.so" || return 1
	cc -O2 -fPIC -shared -DPLUG_CALL=getpid "$WORKLOADS/libcalls_plug.c" -o "$d/plug2.so" ||
		return 1
	export LC LC_NOW LC_PLUG LC_PLUG2 LC_CXX
	LC_PLUG="$d/plug.so"
	LC_PLUG2="$d/plug2.so"
	LC=$(build_workload libcalls -L"$d" -Wl,-rpath,"$d" -llibcalls_lib -ldl) || return 1
	LC_NOW=$(build_workload libcalls -L"$d" -Wl,-rpath,"$d" -llibcalls_lib -ldl \
		-Wl,-z,now -Wl,-z,relro) || return 1
	if command -v "${CXX:-g++}" >/dev/null 2>&1; then
		"${CXX:-g++}" -O1 -fPIC -shared "$WORKLOADS/libcalls_cxxlib.cc" \
			-o "$d/liblibcalls_cxxlib.so" || return 1
		LC_CXX="$d/libcalls_cxx"
		"${CXX:-g++}" -O1 "$WORKLOADS/libcalls_cxx.cc" -o "$LC_CXX" -L"$d" -Wl,-rpath,"$d" \
			-llibcalls_cxxlib || return 1
	fi
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# lc_run MODE [OPTION...] -- CMD...: the run's JSON in out.json, with the
# target aggregating (MODE aggregate) or streaming (stream: record, then
# report --json); the command's output in stdout
lc_run() {
	local mode=$1
	shift
	local opts=()
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	if [ "$mode" = aggregate ]; then
		timeout 60 "$SPANSTAT" "${opts[@]}" --json=out.json -- "$@" >stdout 2>stderr
	else
		timeout 60 "$SPANSTAT" record "${opts[@]}" -o run.rec -- "$@" >stdout 2>stderr &&
			"$SPANSTAT" report --json=out.json run.rec >report.out 2>>stderr
	fi
}

# paths: "count unfinished path" of every node of out.json's merged tree
paths() {
	jq -r '.spans.merged.nodes as $n
		| def p($i): if $n[$i].parent == null then $n[$i].name
		             else p($n[$i].parent) + ";" + $n[$i].name end;
		$n | to_entries[] | select(.value.count > 0)
		| "\(.value.count) \(.value.unfinished) \(p(.key))"' out.json | sort -k3
}

# count PATH: the merged count of the spans at PATH ("a;b"), 0 when none
count() {
	paths | awk -v p="$1" '$3 == p { n = $1 } END { print n + 0 }'
}

# named NAME: the merged count of the spans named NAME, on every path
named() {
	jq '[.spans.merged.nodes[] | select(.name == $n) | .count] | add // 0' --arg n "$1" out.json
}

# said NAME: the count the program printed for NAME
said() {
	awk -v k="$1" '$1 == k { print $2 }' stdout
}

# unfinished: the paths with unfinished spans, "n path" each
unfinished() {
	paths | awk '$2 > 0 { print $2, $3 }'
}

# balanced: no span left open, no end without its begin
balanced() {
	[ -z "$(unfinished)" ] || fail "unfinished: $(unfinished)"
	[ "$(jq .spans.decode.unmatched out.json)" = 0 ] || fail "unmatched ends"
}

@test "lazy and eager binding: each call a span, the program's own counts" {
	for bin in "$LC" "$LC_NOW"; do
		for mode in aggregate stream; do
			lc_run "$mode" --lib-calls -- "$bin" plain 1000
			[ "$(said getppid)" = 1000 ]
			[ "$(count getppid)" = 1000 ]
			[ "$(count strtol)" = 1 ]
			[ "$(count printf)" = 1 ]
			balanced
		done
	done
	# the eager build really is bound at start, its GOT read-only
	run readelf -d "$LC_NOW"
	assert_output --regexp 'BIND_NOW|FLAGS.*NOW'
}

@test "threads: each thread's calls in its own tree" {
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls -- "$LC" threads 4 250
		[ "$(count getppid)" = 1000 ]
		[ "$(count pthread_create)" = "$(said pthread_create)" ]
		[ "$(count pthread_join)" = 4 ]
		# four worker threads with their calls, and main
		[ "$(jq '[.spans.threads[] | select(any(.nodes[]; .name == "getppid"))] | length' out.json)" = 4 ]
		balanced
	done
}

@test "exit inside a call: the calls it never returns from end with the process" {
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls -- "$LC" exit 5
		[ "$(count getppid)" = 5 ]
		[ "$(count 'qsort;getppid')" = 1 ]
		[ "$(count qsort)" = 1 ]
		[ "$(count 'qsort;exit')" = 1 ]
		[ "$(unfinished)" = "1 qsort
1 qsort;exit" ]
		[ "$(jq .spans.decode.unmatched out.json)" = 0 ]
	done
}

@test "longjmp out of a library call (a qsort callback) ends it there" {
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls -- "$LC" longjmp 20
		[ "$(said qsort)" = 20 ]
		[ "$(count qsort)" = 20 ]
		[ "$(count 'qsort;getppid')" = 20 ]
		[ "$(count getppid)" = 20 ] # after the jumps: at the root again
		balanced
	done
}

@test "pthread_exit inside a library call ends the calls it leaves" {
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls -- "$LC" pexit 7
		[ "$(count qsort)" = 1 ]
		[ "$(count 'qsort;getppid')" = 1 ]
		[ "$(count getppid)" = 7 ]
		balanced
	done
}

@test "fork and exec: the child and the new image are followed" {
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls -- "$LC" fork 300
		[ "$(said getppid)" = 600 ]
		[ "$(count getppid)" = 600 ]
		# 300 in each of the two processes
		[ "$(jq '[.spans.threads[] | [.nodes[] | select(.name == "getppid") | .count] | add // 0] | sort' -c out.json)" = '[300,300]' ]
		balanced
		lc_run "$mode" --lib-calls -- "$LC" exec 300
		[ "$(said getppid)" = 300 ]
		[ "$(count getppid)" = 300 ]
		balanced
	done
}

@test "a signal handler's calls inside a call in flight nest under it" {
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls -- "$LC" signal 20
		[ "$(said write)" = 40 ]
		[ "$(count 'sigsuspend;write')" = 20 ]
		[ "$(count 'raise;write')" = 20 ]
		[ "$(count raise)" = 20 ]
		balanced
	done
}

@test "tail calls through a PLT: the program's, and a library's with --lib-calls-all" {
	# both really are jumps to a PLT slot
	run objdump -d "$BATS_FILE_TMPDIR/lc/liblibcalls_lib.so"
	assert_output --regexp 'jmp +[0-9a-f]+ <getppid@plt>'
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls -- "$LC" tail 50
		[ "$(count lc_tail)" = 50 ]
		[ "$(count getppid)" = 50 ] # own_tail's, at the root
		balanced
		lc_run "$mode" --lib-calls --lib-calls-all -- "$LC" tail 50
		[ "$(count lc_tail)" = 50 ]
		[ "$(count 'lc_tail;getppid')" = 50 ]
		[ "$(count getppid)" = 50 ]
		balanced
	done
}

@test "dlopen: the loaded object's calls with --lib-calls-all, not without" {
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls --lib-calls-all -- "$LC" dlopen 40 "$LC_PLUG"
		[ "$(said getppid)" = 40 ]
		[ "$(count getppid)" = 40 ]
		[ "$(count dlopen)" = 1 ]
		balanced
		lc_run "$mode" --lib-calls -- "$LC" dlopen 40 "$LC_PLUG"
		[ "$(count getppid)" = 0 ]
		# not a span without --lib-calls-all: the dynamic linker answers
		# dlopen and dlsym by their caller's object
		[ "$(count dlopen)" = 0 ]
	done
}

@test "dlopen of a bare name still searches the program's RUNPATH" {
	local d="$BATS_TEST_TMPDIR/rpdir"
	mkdir -p "$d"
	cp "$LC_PLUG" "$d/libplugrp.so"
	cat >rp.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(void)
{
	void *h = dlopen("libplugrp.so", RTLD_NOW);
	if (!h) {
		printf("dlopen failed: %s\n", dlerror());
		return 1;
	}
	printf("found\n");
	return 0;
}
C
	cc rp.c -o rp -ldl -Wl,--enable-new-dtags,-rpath,"$d"
	./rp
	run "$SPANSTAT" --lib-calls --json=out.json -- ./rp
	assert_success
	assert_line found
}

@test "dlclose, then another object where it was: its calls under their own names" {
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls --lib-calls-all -- "$LC" cycle 20 "$LC_PLUG" "$LC_PLUG2"
		[ "$(said getppid)" = 10 ]
		[ "$(said getpid)" = 10 ]
		[ "$(count getppid)" = 10 ]
		[ "$(count getpid)" = 10 ]
		balanced
	done
}

@test "a library dlopen'ed and dlclose'd 2,000 times: every load's calls, exactly" {
	# each load is patched; the stubs of an unloaded one are given back
	# (there were once 256 of them in all: the 254th load on went unseen)
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls --lib-calls-all -- "$LC" reload 2000 "$LC_PLUG"
		[ "$(said getppid)" = 2000 ]
		[ "$(count getppid)" = 2000 ]
		[ "$(count dlopen)" = 2000 ]
		[ "$(count dlclose)" = 0 ] # interposed: never a span
		balanced
	done
}

@test "threads that dlopen and dlclose at once: no deadlock, every load's calls, exactly" {
	# a dlopen's scan once called dlsym and dladdr inside dl_iterate_phdr:
	# they wait for the dynamic linker's load lock, which a dlopen in
	# another thread holds while it waits for dl_iterate_phdr's (hung 3 runs in 4)
	local i
	for mode in aggregate stream; do
		for i in 1 2; do
			lc_run "$mode" --lib-calls --lib-calls-all -- "$LC" dlthreads 500 "$LC_PLUG" "$LC_PLUG2"
			[ "$(said getppid)" = 1000 ]
			[ "$(said getpid)" = 1000 ]
			[ "$(named getppid)" = 1000 ]
			[ "$(named getpid)" = 1000 ]
			[ "$(named dlopen)" = 2000 ]
			balanced
		done
	done
}

@test "a library whose GOT the program rewrites keeps its stubs while it stays loaded" {
	# a PLT hook (the slot pointed at a function of the program's that calls
	# what the slot held: our stub) is no unload: the stub must stay
	# mapped, and its own, at each later dlopen's scan (once, it was given
	# back, then reused for the hook itself: the hook called itself forever)
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls --lib-calls-all -- "$LC" rehook 200 "$LC_PLUG" "$LC_PLUG2"
		[ "$(said hooked)" = 200 ]
		[ "$(said getppid)" = 200 ]
		# each call through the plugin's slot, the hook's call through the saved stub inside it
		[ "$(count getppid)" = 200 ]
		[ "$(count 'getppid;getppid')" = 200 ]
		balanced
	done
}

@test "--lib-calls=GLOB --lib-calls-all: what dlopen loads is followed though GLOB leaves dlopen out" {
	# dlopen is hooked all the same (its return patches what it loaded), as
	# no span: once, no object dlopen'ed was ever patched under such a glob
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls='getppid' --lib-calls-all -- "$LC" reload 300 "$LC_PLUG"
		[ "$(said getppid)" = 300 ]
		[ "$(count getppid)" = 300 ]
		[ "$(named dlopen)" = 0 ]
		[ "$(jq .spans.decode.dropped out.json)" = 0 ]
		balanced
	done
}

@test "a C++ exception thrown through library calls leaves the trees balanced" {
	[ -n "$LC_CXX" ] || skip_or_fail "${CXX:-g++} not installed"
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls -- "$LC_CXX" 30
		[ "$(said caught)" = 30 ]
		[ "$(count lc_throw)" = 30 ]
		[ "$(count lc_each)" = 1 ]
		# caught in a callback of a library call in flight: that call goes on
		[ "$(count 'lc_each;lc_throw')" = 30 ]
		[ "$(count getppid)" = 30 ]
		balanced
		lc_run "$mode" --lib-calls --lib-calls-all -- "$LC_CXX" 30
		[ "$(count 'lc_throw;getppid')" = 30 ]
		[ "$(count 'lc_each;lc_throw;getppid')" = 30 ]
		[ "$(count getppid)" = 30 ]
		balanced
	done
}

@test "C++ cleanups during a throw (_Unwind_Resume through the PLT) and -pg frames: the program runs as without spanstat" {
	[ -n "$LC_CXX" ] || skip_or_fail "${CXX:-g++} not installed"
	local bin
	# destructors on the unwound frames: their landing pads call
	# _Unwind_Resume through the PLT, which unwinds from its caller's frame
	"${CXX:-g++}" -O1 -pthread "$WORKLOADS/span_mcount_cxx.cc" -o plain
	"${CXX:-g++}" -O1 -pg -pthread "$WORKLOADS/span_mcount_cxx.cc" -o pg
	for bin in ./plain ./pg; do
		for mode in aggregate stream; do
			lc_run "$mode" --lib-calls -- "$bin" || fail "$bin $mode failed: $(cat stderr)"
			balanced
			[ "$(named _Unwind_Resume)" = 0 ]
			[ "$(named __cxa_allocate_exception)" = 6 ]
			lc_run "$mode" --lib-calls -- "$bin" pexit || fail "$bin pexit $mode failed"
		done
	done
}

@test "a catch inside a destructor while an exception leaves a library call" {
	[ -n "$LC_CXX" ] || skip_or_fail "${CXX:-g++} not installed"
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls -- "$LC_CXX" 20 nested
		[ "$(said caught)" = 20 ]
		[ "$(count lc_each)" = 20 ]
		[ "$(count getppid)" = 20 ]
		balanced
	done
}

@test "std::rethrow_exception through a library call" {
	[ -n "$LC_CXX" ] || skip_or_fail "${CXX:-g++} not installed"
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls -- "$LC_CXX" 20 rethrow
		[ "$(said caught)" = 20 ]
		[ "$(count lc_each)" = 20 ]
		[ "$(count getppid)" = 20 ]
		balanced
	done
}

@test "GLOB picks the functions, and the span filters apply" {
	lc_run aggregate --lib-calls='q*' -- "$LC" longjmp 10
	[ "$(paths)" = "10 0 qsort" ]
	lc_run aggregate --lib-calls='get*' -- "$LC" plain 10
	[ "$(paths)" = "10 0 getppid" ]
	lc_run aggregate --lib-calls --exclude=getppid -- "$LC" plain 10
	[ "$(count getppid)" = 0 ]
	[ "$(count strtol)" = 1 ]
	lc_run aggregate --lib-calls --filter=qsort -- "$LC" longjmp 10
	[ "$(paths)" = "10 0 qsort
10 0 qsort;getppid" ]
}

@test "the counts agree with uftrace's" {
	require_cmd uftrace
	lc_run aggregate --lib-calls -- "$LC" plain 500
	timeout 60 uftrace record --force -d ud "$LC" plain 500 >/dev/null
	run timeout 60 uftrace report -d ud -f call
	assert_success
	local uf
	for f in getppid strtol printf; do
		uf=$(awk -v f="$f" '$2 == f { print $1 }' <<<"$output")
		[ "$uf" = "$(count "$f")" ]
	done
}

@test "bad --lib-calls input: one line, 125, nothing run" {
	for args in "--lib-calls= --spans" "--lib-calls-all --spans" "--lib-calls" \
		"--lib-calls --no-spans" "--lib-calls=$(printf 'x%.0s' {1..300}) --spans"; do
		# shellcheck disable=SC2086
		run -125 "$SPANSTAT" $args -- touch ran
		[ "${#lines[@]}" = 1 ]
		assert_output --regexp '^spanstat: .*lib-calls.*'
		[ ! -e ran ]
	done
	run -125 "$SPANSTAT" --lib-calls --spans -p $$
	[ "${#lines[@]}" = 1 ]
}

# many_build N: libmany.so defines f0..f4095, user.so calls each of them
# once through its PLT (call_all: 4,096 slots, bound at load), N copies of
# it (u1.so...: objects of their own) and ./many, which dlopens its
# arguments, calls call_all in each, dlcloses the last $1 and loads them
# again, calling call_all in each once more
# plt_build N LIB USER: libLIB.so defines f0..fN-1, USER.so calls each of
# them once through its PLT (call_all: N slots, bound at load)
plt_build() {
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "int f%d(void) { return %d; }\n", i, i }' \
		>"$2.c"
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "int f%d(void);\n", i
		print "int call_all(void) { int s = 0;"
		for (i = 0; i < n; i++) printf "s += f%d();\n", i
		print "return s; }" }' >"$3.c"
	cc -O1 -fPIC -shared "$2.c" -o "lib$2.so"
	cc -O1 -fPIC -shared "$3.c" -L. -l"$2" -Wl,-rpath,"$PWD" -Wl,-z,now -o "$3.so"
}

many_build() {
	plt_build 4096 many user
	cat >many_main.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
static int load(const char *path, void **h)
{
	*h = dlopen(path, RTLD_NOW);
	int (*f)(void) = *h ? (int (*)(void))dlsym(*h, "call_all") : NULL;
	return f && f() == 4096 * 4095 / 2;
}
int main(int argc, char **argv)
{
	int again = atoi(argv[1]), n = argc - 2, calls = 0;
	void *h[256];
	for (int i = 0; i < n && i < 256; i++)
		calls += load(argv[2 + i], &h[i]);
	for (int i = n - again; i < n; i++)
		dlclose(h[i]);
	for (int i = n - again; i < n; i++)
		calls += load(argv[2 + i], &h[i]);
	printf("calls %d\n", calls);
	return 0;
}
C
	cc many_main.c -o many -ldl
	local i
	for ((i = 1; i <= $1; i++)); do
		cp user.so "u$i.so"
	done
}

# decoded FIELD: .spans.decode.FIELD of out.json
decoded() {
	jq ".spans.decode.$1" out.json
}

@test "objects beyond the 262,144 slots followed at once: counted and said, each load once" {
	# 70 objects of 4,096 slots each: the last few find no room left
	many_build 70
	local objs=() i
	for ((i = 1; i <= 70; i++)); do
		objs+=("$PWD/u$i.so")
	done
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls --lib-calls-all -- ./many 0 "${objs[@]}"
		grep -qx "calls 70" stdout
		local lost slots
		lost=$(decoded unfollowed_objects)
		slots=$(decoded unfollowed_slots)
		# a few, each counted once however many scans found it again
		[ "$lost" -ge 1 ] && [ "$lost" -le 10 ]
		[ "$slots" = $((lost * 4096)) ]
		# every call_all's calls are spans but for the objects said
		[ "$(count f0)" = $((70 - lost)) ]
		[ "$(count f4095)" = $((70 - lost)) ]
		# unloaded and loaded again: new loads, counted again; those
		# followed before take back the room they gave
		lc_run "$mode" --lib-calls --lib-calls-all -- ./many 10 "${objs[@]}"
		grep -qx "calls 80" stdout
		[ "$(decoded unfollowed_objects)" = $((2 * lost)) ]
		[ "$(decoded unfollowed_slots)" = $((2 * slots)) ]
		[ "$(count f0)" = $((80 - 2 * lost)) ]
	done
	# the summary says it in a line
	timeout 60 "$SPANSTAT" --lib-calls --lib-calls-all --spans -- ./many 0 "${objs[@]}" \
		>stdout 2>stderr
	local grouped
	grouped=$(sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$slots")
	grep -qx " lib calls: $lost loaded objects\? not followed, with $grouped PLT slots the glob matched (--lib-calls follows at most 16,384 objects and 262,144 slots at once): none of their calls are spans" stderr
	# within the limits: none, and no line
	lc_run aggregate --lib-calls --lib-calls-all -- ./many 0 "${objs[@]:0:20}"
	[ "$(decoded unfollowed_objects)" = 0 ]
	[ "$(decoded unfollowed_slots)" = 0 ]
	[ "$(count f0)" = 20 ]
	timeout 60 "$SPANSTAT" --lib-calls --lib-calls-all --spans -- ./many 0 "${objs[@]:0:20}" \
		>stdout 2>stderr
	grep -q "Spans by name" stderr
	run grep -c "lib calls:" stderr
	assert_output 0
}

@test "calls after the exit path (a late exit handler's) are counted as late, aggregated and streamed" {
	local prog
	prog=$(build_workload libcalls_late)
	for mode in aggregate stream; do
		lc_run "$mode" --lib-calls=getppid -- "$prog"
		echo "$mode"
		[ "$(named getppid)" = 5 ]
		# the 7 calls of the handler: their begins and ends, counted
		[ "$(jq '.spans.decode.late' out.json)" = 14 ]
		[ "$(jq -c '.spans.decode | [.no_exit, .unfinished, .dropped]' out.json)" = "[0,0,0]" ]
	done
}

# storm_build N: ./storm OBJ...: 4 threads dlopen the objects (plt_build's
# users of N slots) at once and call call_all in each; prints "calls K",
# the objects whose sum came right
storm_build() {
	cat >storm.c <<C
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
static char **objs;
static int nobj, calls;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static void *loader(void *arg)
{
	for (int i = (int)(long)arg; i < nobj; i += 4) {
		void *h = dlopen(objs[i], RTLD_NOW);
		int (*f)(void) = h ? (int (*)(void))dlsym(h, "call_all") : NULL;
		int ok = f && f() == $1 * ($1 - 1) / 2;
		pthread_mutex_lock(&mu);
		calls += ok;
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}
int main(int argc, char **argv)
{
	objs = argv + 1;
	nobj = argc - 1;
	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, loader, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("calls %d\n", calls);
	return 0;
}
C
	cc -O1 -pthread storm.c -o storm -ldl
}

# storm_check RUNS PREFIX N: RUNS runs of ./storm over PREFIX1.so ..
# PREFIXN.so with --lib-calls-all: each succeeds, every object's calls
# right and followed, each once its dlopen was done
storm_check() {
	local objs=() i
	for ((i = 1; i <= $3; i++)); do
		objs+=("./$2$i.so")
	done
	for ((i = 1; i <= $1; i++)); do
		run timeout 120 "$SPANSTAT" --json=out.json --lib-calls --lib-calls-all -- ./storm "${objs[@]}"
		assert_success
		assert_line "calls $3"
		[ "$(jq '[.spans.merged.nodes[] | select(.name == "f0") | .count] | add' out.json)" = "$3" ]
		[ "$(decoded unfollowed_objects)" = 0 ]
	done
}

@test "threads that dlopen large objects at once: none patched before it is relocated" {
	# a scan made by one thread's dlopen patched (and made read-only
	# again) the GOT of an object another thread's dlopen had listed but
	# not relocated yet: the dynamic linker then faulted relocating it
	# (SIGSEGV in half the runs of 4 threads and 20 objects)
	many_build 20
	storm_build 4096
	storm_check 6 u 20
}

@test "a function whose name is longer than 4,096 bytes: its calls are spans, and the slots after it" {
	local long
	long=$(printf 'a%.0s' $(seq 5000))
	{
		echo "int ${long}(void) { return 1; }"
		echo "int after(void) { return 2; }"
	} >lib.c
	{
		echo "int ${long}(void); int after(void);"
		echo "int main(void) { int s = 0; for (int i = 0; i < 3; i++) s += ${long}() + after(); return s != 9; }"
	} >main.c
	cc -O1 -fPIC -shared lib.c -o liblong.so
	cc -O1 main.c -L. -llong -Wl,-rpath,"$PWD" -o main
	run timeout 60 "$SPANSTAT" --json=out.json --lib-calls -- ./main
	assert_success
	# before, the copy of the long name failed and the object's later
	# slots were left unpatched, nothing said
	[ "$(jq '[.spans.merged.nodes[] | select(.name | startswith("aaaa")) | .count] | add' out.json)" = 3 ]
	[ "$(jq '[.spans.merged.nodes[] | select(.name == "after") | .count] | add' out.json)" = 3 ]
}

@test "threads that dlopen small objects at once: a RELRO of less than a page waits too" {
	# glibc makes read-only the pages from the one RELRO begins in: a small
	# object's RELRO (less than a page, ending on a page's end) is its whole
	# first page, which the scans took for nothing protected, and patched
	# while another thread's dlopen relocated it (SIGSEGV in a run of 4)
	plt_build 440 small suser
	# the case: a RELRO shorter than a page, that begins inside one
	local relro
	relro=($(readelf -lW suser.so | awk '$1 == "GNU_RELRO" { print $3, $6 }'))
	[ $((relro[1])) -lt 4096 ] && [ $((relro[0] % 4096)) -ne 0 ]
	storm_build 440
	local i
	for ((i = 1; i <= 60; i++)); do
		cp suser.so "s$i.so"
	done
	storm_check 20 s 60
}
