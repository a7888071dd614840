#!/usr/bin/env bash
# tests/layers.sh: the layers' rules (doc/ARCHITECTURE.md), once, for the
# build and for tests/bats/layers.bats.  Sourced, it defines LAYER_ALLOWED
# (which layers each layer may include) and layers_check_deps.  Run as
#   bash tests/layers.sh check SRCDIR BUILDDIR
# (make does after every build) it reads the dependency lists the compiler
# wrote for every object of every layer library (.deps/*.Plo: each header
# really included, however it was spelled: a path, "../", <...>, a macro)
# and fails, naming the file and the header, when one comes from a layer
# its row does not allow.

declare -gA LAYER_ALLOWED=(
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

# The dependency files of layer $1's library objects (not stale ones).
layers_deps_of() {
	local dir=$1/lib/$2/.deps
	case $2 in
	span) ls "$dir"/libspanstat_la-*.Plo "$dir"/libspanstat_alloc_la-*.Plo 2>/dev/null ;;
	*) ls "$dir"/lib"$2"_la-*.Plo 2>/dev/null ;;
	esac
}

# layers_check_deps SRCDIR BUILDDIR: prints each violation; status 1 if
# any, 2 when the build wrote no dependency lists (nothing to check).
layers_check_deps() {
	local src build lib l dep f h hl bad=0 seen=0
	src=$(cd "$1" && pwd -P) || return 2
	build=$(cd "$2" && pwd -P) || return 2
	lib=$src/lib
	for l in "${!LAYER_ALLOWED[@]}"; do
		[ "$l" = cmd ] && continue
		while IFS= read -r dep; do
			[ -s "$dep" ] || continue
			grep -q '^# dummy' "$dep" && continue
			seen=1
			# every path after the first ':' of each rule, continuation lines joined
			while IFS= read -r h; do
				case $h in /*) f=$h ;; *) f=$build/$h ;; esac
				f=$(realpath -m "$f")
				case $f in "$lib"/*/*) ;; *) continue ;; esac
				hl=${f#"$lib"/}
				hl=${hl%%/*}
				[[ " ${LAYER_ALLOWED[$l]} " == *" $hl "* ]] && continue
				echo "lib/$l ($(basename "$dep" .Plo)) includes ${f#"$src"/}, of lib/$hl"
				bad=1
			done < <(sed -e 's/\\$//' "$dep" | tr -s ' \t' '\n\n' | grep -vE ':$|^$')
		done < <(layers_deps_of "$build" "$l")
	done
	[ "$bad" = 1 ] && return 1
	[ "$seen" = 1 ] || return 2
	return 0
}

if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = check ]; then
	out=$(layers_check_deps "$2" "$3")
	rc=$?
	if [ $rc = 1 ]; then
		printf '%s\n' "$out" | sed 's/^/layers: /' >&2
		echo "layers: a layer includes a header it may not (doc/ARCHITECTURE.md)" >&2
		exit 1
	fi
	exit 0
fi
