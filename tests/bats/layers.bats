#!/usr/bin/env bats
# layers.bats: the source tree's folders are its layers (doc/ARCHITECTURE.md)
# and the build fences them.  Each layer under lib/ is compiled with an
# include path that names its own folder and the layers below it only
# (`make layer-flags` prints them as the build uses them); a header of any
# other layer is then not found, and this suite proves it by compiling.  It
# also reads every quoted #include of lib/ and cmd/ and checks that none
# reaches a layer that is not below its own, nor names a path; and since a
# path in <...> or "../" reaches around any include path, it reads the
# compiler's own dependency lists as the build does after every build
# (tests/layers.sh), which see every header whatever its spelling.

load helpers
bats_require_minimum_version 1.5.0

# Which layers each layer may include (itself too): the rows of
# doc/ARCHITECTURE.md, in tests/layers.sh (LAYER_ALLOWED), which the build
# also runs.  cmd/ wires everything and may include any of them.
source "$SRCDIR/tests/layers.sh"
declare -gn ALLOWED=LAYER_ALLOWED
# one header of each layer, to include from the others
declare -gA PROBE=(
	[base]=cause.h [wire]=wire.h [arch]=arch.h [perf]=evlist.h [spans]=spantree.h
	[run]=session.h [out]=writer.h [span]=spanstat.h
)

setup() {
	[ -f "$BUILDDIR/Makefile" ] || skip "no build tree at BUILDDIR"
	cd "$BUILDDIR"
	run -0 make -s layer-flags
	FLAGS=$output
}

flags_of() {
	awk -v l="$1" '$1 == l { $1 = ""; print }' <<<"$FLAGS"
}

allowed() { # allowed LAYER TARGET
	[[ " ${ALLOWED[$1]} " == *" $2 "* ]]
}

@test "ls lib shows the layers, and each has a row here" {
	for d in "$SRCDIR"/lib/*/; do
		d=$(basename "$d")
		case $d in python | shell) continue ;; esac # no C: the line protocol's helpers
		[ -n "${ALLOWED[$d]:-}" ] || fail "lib/$d is no layer of doc/ARCHITECTURE.md"
		[ -n "$(flags_of "$d")" ] || fail "the build has no include path for lib/$d"
	done
}

@test "each layer's include path names only the layers it may use" {
	for l in "${!ALLOWED[@]}"; do
		f=$(flags_of "$l")
		[ -n "$f" ] || fail "no flags for $l"
		for dir in $(grep -oE 'lib/[a-z]+' <<<"$f" | sort -u); do
			allowed "$l" "${dir#lib/}" || fail "$l's include path names $dir: $f"
		done
	done
}

@test "a header of a layer above does not compile: the fence, compiled" {
	local bad=0 good=0
	for l in "${!PROBE[@]}" cmd; do
		f=$(flags_of "$l")
		for m in "${!PROBE[@]}"; do
			printf '#include "config.h"\n#include "%s"\n' "${PROBE[$m]}" >"$BATS_TEST_TMPDIR/p.c"
			# shellcheck disable=SC2086
			if "${CC:-cc}" -std=gnu11 -I. $f $(pkg-config --cflags libcjson) -fsyntax-only \
				"$BATS_TEST_TMPDIR/p.c" 2>"$BATS_TEST_TMPDIR/err"; then
				allowed "$l" "$m" || fail "$l includes ${PROBE[$m]} (lib/$m) and it compiles"
				good=$((good + 1))
			else
				! allowed "$l" "$m" ||
					fail "$l cannot include ${PROBE[$m]} (lib/$m): $(cat "$BATS_TEST_TMPDIR/err")"
				grep -q "${PROBE[$m]}: No such file" "$BATS_TEST_TMPDIR/err" ||
					fail "$l's include of ${PROBE[$m]} failed for another reason: $(cat "$BATS_TEST_TMPDIR/err")"
				bad=$((bad + 1))
			fi
		done
	done
	# the rule broken before the layers: acquisition reaching analysis
	printf '#include "config.h"\n#include "analysis.h"\n' >"$BATS_TEST_TMPDIR/p.c"
	# shellcheck disable=SC2086
	run ! "${CC:-cc}" -std=gnu11 -I. $(flags_of run) -fsyntax-only "$BATS_TEST_TMPDIR/p.c"
	assert_output --partial "analysis.h: No such file"
	[ "$bad" -gt 20 ] && [ "$good" -gt 20 ]
}

@test "no include in lib/ or cmd/ runs back up a layer, nor names a path" {
	local edges=0
	while IFS= read -r src; do
		rel=${src#"$SRCDIR"/}
		case $rel in
		cmd/*) l=cmd ;;
		lib/*) l=${rel#lib/} l=${l%%/*} ;;
		esac
		while IFS= read -r inc; do
			[ "$inc" = config.h ] && continue
			[[ $inc != */* ]] || fail "$rel includes \"$inc\": a path, around the fence"
			[ -e "$(dirname "$src")/$inc" ] && continue
			hit=
			for m in "${!PROBE[@]}"; do
				[ -e "$SRCDIR/lib/$m/$inc" ] && hit=$m
			done
			[ -n "$hit" ] || fail "$rel includes \"$inc\", which no layer has"
			allowed "$l" "$hit" || fail "$rel ($l) includes $inc of lib/$hit"
			edges=$((edges + 1))
		done < <(sed -n 's/^#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$src")
	done < <(find "$SRCDIR/lib" "$SRCDIR/cmd" -name '*.[ch]')
	[ "$edges" -gt 20 ]
}

@test "the compiler's own dependency lists show no header of a layer it may not use" {
	run layers_check_deps "$SRCDIR" "$BUILDDIR"
	[ "$status" -ne 2 ] || skip_or_fail "the build wrote no dependency lists (--disable-dependency-tracking)"
	assert_success
	assert_output ''
	# a path or "../" reaches around the include path: the lists still see it
	local b=$BATS_TEST_TMPDIR/b
	mkdir -p "$b/lib/spans/.deps"
	printf '#include "config.h"\n#include <../out/outfile.h>\n#include <lib/run/launch.h>\n' >"$b/p.c"
	# spans' flags made absolute, compiled from $b as make compiles from the build tree
	local f abs=()
	for f in $(flags_of spans); do
		case $f in -I/*) abs+=("$f") ;; -I*) abs+=("-I$BUILDDIR/${f#-I}") ;; *) abs+=("$f") ;; esac
	done
	(cd "$b" && "${CC:-cc}" -std=gnu11 -I"$SRCDIR" "${abs[@]}" -fsyntax-only -MD \
		-MF lib/spans/.deps/libspans_la-p.Plo -MT p.lo p.c)
	run layers_check_deps "$SRCDIR" "$b"
	assert_failure 1
	assert_line --partial "lib/spans (libspans_la-p) includes lib/out/outfile.h, of lib/out"
	assert_line --partial "includes lib/run/launch.h, of lib/run"
}
