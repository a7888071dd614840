#!/usr/bin/env bats
# allocators.bats: --span-allocs under whichever allocator a program uses
# (spanstat(1), SPAN VALUES): glibc's, jemalloc or tcmalloc linked, jemalloc
# preloaded.  The workloads know their own counts (alloc_any.c: every C entry
# point, jemalloc's API mixed with malloc, C++ brought in later by a library
# dlopen'ed RTLD_LOCAL; alloc_any_cxx.cc: every form of new and delete): each
# runs under spanstat exactly as alone (what every call returned, errno
# included), and every span's allocations, frees and usable bytes in the
# JSON are the ones it printed.  A program whose allocator the counter cannot
# reach gets one warning line and unknown values, never zeros.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# lib_path NAME: the installed shared library libNAME.so.*, as the compiler
# finds it; skips (fails under CI) when it is not installed.
lib_path() {
	local so
	so=$(${CC%% *} -print-file-name="lib$1.so")
	[ -e "$so" ] && [ "${so#/}" != "$so" ] ||
		{ skip_or_fail "lib$1 not installed (tests/install-deps)"; return 1; }
	readlink -f "$so"
}

# c_workload [FLAGS...]: alloc_any built with FLAGS.
c_workload() {
	build_workload alloc_any $(span_link_flags) -ldl "$@"
}

# cxx_workload NAME [FLAGS...]: alloc_any_cxx (plain g++, no instrumentation:
# its spans are its own) built with FLAGS as $BATS_FILE_TMPDIR/NAME.
cxx_workload() {
	local out="$BATS_FILE_TMPDIR/$1"
	shift
	command -v "${CXX:-g++}" >/dev/null 2>&1 || { skip_or_fail "${CXX:-g++} not installed"; return 1; }
	if [ ! -e "$out" ]; then
		local inc=()
		[ -n "${SPANSTAT_INCLUDEDIR:-}" ] && inc=(-I"$SPANSTAT_INCLUDEDIR")
		# shellcheck disable=SC2046
		env -u CXXFLAGS -u LDFLAGS "${CXX:-g++}" -O1 "${inc[@]}" "$WORKLOADS/alloc_any_cxx.cc" \
			-o "$out" $(span_link_flags) -ldl "$@" >&2 || return 1
	fi
	printf '%s\n' "$out"
}

# plugin: alloc_plugin.cc as a shared library.
plugin() {
	local out="$BATS_FILE_TMPDIR/alloc_plugin.so"
	command -v "${CXX:-g++}" >/dev/null 2>&1 || { skip_or_fail "${CXX:-g++} not installed"; return 1; }
	[ -e "$out" ] || env -u CXXFLAGS -u LDFLAGS "${CXX:-g++}" -O1 -shared -fPIC \
		"$WORKLOADS/alloc_plugin.cc" -o "$out" >&2 || return 1
	printf '%s\n' "$out"
}

# counts_match PROGRAM [ARGS...]: PROGRAM (with $PRELOAD preloaded, if set)
# alone and under spanstat --span-allocs: both succeed with no FAIL, every
# call returned the same, and each span's four values in the JSON are the
# ones the program expects.
counts_match() {
	local pre=()
	[ -z "${PRELOAD:-}" ] || pre=(env LD_PRELOAD="$PRELOAD")
	run -0 timeout 60 "${pre[@]}" "$@"
	refute_output --partial FAIL
	local alone=$output
	local cmd=("$@")
	if [ -n "${PRELOAD:-}" ] && nm -D "$SPANSTAT" 2>/dev/null | grep -q __asan_init; then
		# an ASan spanstat cannot run with another malloc preloaded: the
		# target alone gets it, after what spanstat preloads, as a user's
		# LD_PRELOAD comes after spanstat's
		pre=()
		cmd=(sh -c 'LD_PRELOAD="$LD_PRELOAD:$0" exec "$@"' "$PRELOAD" "$@")
	fi
	run -0 timeout 60 "${pre[@]}" "$SPANSTAT" --span-allocs --spans --json=x.json -e task-clock -- "${cmd[@]}"
	refute_output --partial FAIL
	refute_output --partial 'spanstat:'
	assert_equal "$(grep '^call ' <<<"$output")" "$(grep '^call ' <<<"$alone")"
	local n=0 name a f ab fb
	while read -r _ name a f ab fb; do
		assert_equal "$name $(jq -c "[.spans.merged.nodes[] | select(.name == \"$name\")
			| [.allocs, .frees, .alloc_bytes, .free_bytes]] | first" x.json)" \
			"$name [$a,$f,$ab,$fb]"
		n=$((n + 1))
	done < <(grep '^expect ' <<<"$output")
	[ "$n" -ge 5 ]
}

# throw_balanced: in x.json, span "throw" (a new that fails with bad_alloc,
# caught) freed all it allocated: the exception object, and nothing else.
throw_balanced() {
	assert_equal "$(jq -c '[.spans.merged.nodes[] | select(.name == "throw")
		| [.allocs == .frees, .alloc_bytes == .free_bytes, .allocs <= 2]] | first' x.json)" \
		'[true,true,true]'
	grep -qx caught <<<"$output"
}

@test "glibc: every C entry point counted exactly, the program as it runs alone" {
	counts_match "$(c_workload)" plugin "$(plugin)"
	# 1000 mallocs of 100 bytes: 104 usable each
	assert_line 'expect mallocs 1000 0 104000 0'
	assert_line 'expect frees 0 1000 0 104000'
	# new and delete of a library dlopen'ed RTLD_LOCAL, with libstdc++ it brought
	assert_line --regexp '^expect plugin 100 100 [0-9]+ [0-9]+$'
}

@test "glibc: aligned_alloc(3, 10), overflows and realloc(p, 0) return what glibc returns" {
	local w
	w=$(c_workload)
	run -0 "$w"
	local alone=$output
	run -0 "$SPANSTAT" --span-allocs --spans -e task-clock -- "$w"
	for call in 'aligned_alloc(3,10)' 'reallocarray(NULL,huge,3)' 'calloc(huge,3)' \
		'realloc(p,0)' 'posix_memalign(24,10)'; do
		line=$(grep -F "call $call ->" <<<"$alone")
		[ -n "$line" ]
		assert_line "$line"
	done
	# the overflows fail with ENOMEM, as glibc's own do
	assert_line 'call reallocarray(NULL,huge,3) -> null errno=12'
	assert_line 'call calloc(huge,3) -> null errno=12'
}

@test "glibc: C++ new and delete, every variant, counted exactly" {
	counts_match "$(cxx_workload axx)"
	throw_balanced
	assert_line 'expect new 100 0 4000 0'
	assert_line 'expect delete 0 100 0 4000'
}

@test "jemalloc linked: C, jemalloc's own API mixed with malloc, and C++" {
	lib_path jemalloc >/dev/null
	counts_match "$(c_workload -DALLOC_JEMALLOC -ljemalloc)" plugin "$(plugin)"
	assert_line --regexp '^expect jemalloc 7 7 [0-9]+ [0-9]+$'
	# jemalloc refuses what glibc 2.36 rounds up: its answer is kept
	assert_line 'call aligned_alloc(3,10) -> null errno=22'
	counts_match "$(cxx_workload axx-je -ljemalloc)"
	throw_balanced
}

@test "tcmalloc linked, full and minimal: C and C++ new and delete counted" {
	for lib in tcmalloc tcmalloc_minimal; do
		lib_path "$lib" >/dev/null
		counts_match "$(c_workload -l"$lib")" plugin "$(plugin)"
		counts_match "$(cxx_workload "axx-$lib" -l"$lib")"
		throw_balanced
		assert_line --regexp '^expect new 100 0 [0-9]+ 0$'
	done
}

@test "jemalloc preloaded (LD_PRELOAD): C and C++" {
	PRELOAD=$(lib_path jemalloc)
	# glibc's pvalloc, which jemalloc lacks, would hand jemalloc a block of
	# glibc's: the program leaves it out, as it must without spanstat too
	counts_match "$(c_workload -DALLOC_NO_PVALLOC)" plugin "$(plugin)"
	counts_match "$(cxx_workload axx-pre)"
	throw_balanced
}

@test "a program with a malloc of its own: one warning, unknown values, the program as alone" {
	local w
	w=$(build_workload alloc_own $(span_link_flags))
	run -0 --separate-stderr "$SPANSTAT" --span-allocs --spans --json=x.json -e task-clock -- "$w"
	# its own allocator served the span's 1000 mallocs, as alone
	assert_output 'own mallocs 1000'
	printf '%s\n' "$stderr" >err.txt
	assert_equal "$(grep -c 'spanstat:' err.txt)" 1
	assert_equal "$(head -1 err.txt)" \
		"spanstat: --span-allocs: cannot count the allocations of '$w': it has a malloc of its own; their values are unknown"
	assert_equal "$(jq -c '[.spans.merged.nodes[] | select(.name == "mallocs")
		| [.count, .allocs, .frees, .alloc_bytes, .free_bytes]] | first' x.json)" '[1,null,null,null,null]'
	assert_equal "$(jq -c '[.spans.metrics[] | select(.kind == "allocs") | .supported]' x.json)" '[false]'
	grep -E '<not supported> +<not supported> +<not supported> +<not supported> +mallocs$' err.txt
	# an output weighed by allocations cannot be made (status 125); the others are
	run -125 "$SPANSTAT" --span-allocs --folded=f.txt --weight=allocs --json=y.json \
		-e task-clock -- "$w"
	assert_output --partial "spanstat: cannot write --folded 'f.txt': --weight=allocs cannot be counted here"
	assert_file_not_exists f.txt
	assert_file_exists y.json
}

@test "a statically linked program, and a script whose interpreter has its own malloc: said" {
	command -v "${CC%% *}" >/dev/null
	local st="$BATS_FILE_TMPDIR/spin-static"
	[ -x "$st" ] || ${CC%% *} -static -O2 "$WORKLOADS/spin.c" -o "$st" 2>/dev/null ||
		skip_or_fail "no static C library (libc6-dev)"
	run -0 "$SPANSTAT" --span-allocs --spans -e task-clock -- "$st" 10
	assert_line "spanstat: --span-allocs: cannot count the allocations of '$st': it is linked statically; their values are unknown"
	local w
	w=$(build_workload alloc_own $(span_link_flags))
	printf '#!%s\n' "$w" >script
	chmod +x script
	run -0 "$SPANSTAT" --span-allocs --spans -e task-clock -- ./script
	assert_line "spanstat: --span-allocs: cannot count the allocations of './script': its interpreter '$w' has a malloc of its own; their values are unknown"
	# a script run by an ordinary interpreter is counted, with no word said
	printf '#!/bin/sh\nexit 0\n' >plain
	chmod +x plain
	run -0 "$SPANSTAT" --span-allocs --spans -e task-clock -- ./plain
	refute_output --partial 'spanstat:'
}

@test "a program with a malloc of its own that the command starts: the counter says so there" {
	local w
	w=$(build_workload alloc_own $(span_link_flags))
	printf '#!/bin/sh\nexec "%s"\n' "$w" >wrap
	chmod +x wrap
	run -0 --separate-stderr "$SPANSTAT" --span-allocs --spans -e task-clock -- ./wrap
	assert_output 'own mallocs 1000'
	printf '%s\n' "$stderr" >err.txt
	assert_equal "$(grep -c 'spanstat:' err.txt)" 1
	grep -E "^spanstat: --span-allocs: cannot count the allocations of '$w' \(pid [0-9]+\): it has a malloc of its own; its values read 0$" err.txt
}

@test "jemalloc's API reached through weak references with no jemalloc loaded works, counted, never aborts" {
	local w
	w=$(build_workload alloc_weakx $(span_link_flags))
	run "$w"
	assert_success
	assert_output 'jemalloc api: absent'
	run "$SPANSTAT" --spans --span-allocs --json=w.json -- "$w"
	assert_success
	assert_line ok
	assert_equal "$(jq -c '[.spans.merged.nodes[] | select(.name == "x") | .allocs, .frees] ' w.json)" "[2,2]"
}
