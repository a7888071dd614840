#!/usr/bin/env bats
# layers.bats: the source tree's folders are its layers (doc/ARCHITECTURE.md)
# and the build fences them.  Each layer under lib/ is compiled with an
# include path that names its own folder and the layers below it only
# (`make layer-flags` prints them as the build uses them); a header of any
# other layer is then not found, and this suite proves it by compiling.  It
# also reads every quoted #include of lib/ and cmd/ and checks that none
# reaches a layer that is not below its own, nor names a path.

load helpers
bats_require_minimum_version 1.5.0

# Which layers each layer may include (itself too): the rows of
# doc/ARCHITECTURE.md.  cmd/ wires everything and may include any of them.
declare -gA ALLOWED=(
	[base]="base"
	[wire]="wire"
	[arch]="arch"
	[perf]="base perf"
	[spans]="base wire spans"
	[run]="base wire arch perf spans run"
	[out]="base perf spans out"
	[span]="wire arch span"
	[cmd]="base wire arch perf spans run out cmd"
)
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
