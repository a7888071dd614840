#!/usr/bin/env bats
# cxx.bats: a C++ program built with -finstrument-functions
# (tests/workloads/span_cxx.cc and its shared library span_cxxlib.cc) shows
# its functions by name in every output: for each --demangle mode the span
# table, folded stacks (read the way flamegraph.pl reads them), JSON and
# Perfetto name the functions as expected, c++filt (binutils) being the
# reference for "full"; two functions that simplify to one text stay two
# nodes; a malformed mangled symbol and the user's own span names pass
# through; exceptions thrown through instrumented frames stay balanced; and
# functions know their file and line with -g, nothing without.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export CXX_G CXX_STD CXX_NOG
	local libs g nog
	g="$BATS_FILE_TMPDIR/g"
	nog="$BATS_FILE_TMPDIR/nog"
	libs=$(span_link_flags)
	# the shared library, with and without debug information
	build_cxx_workload g/libspan_cxxlib.so span_cxxlib -g -fPIC -shared >/dev/null || return 1
	build_cxx_workload nog/libspan_cxxlib.so span_cxxlib -fPIC -shared >/dev/null || return 1
	# libstdc++'s own headers (bits/) left uninstrumented: every name fits in
	# the span table; CXX_STD keeps them, for std::vector<std::string>
	# shellcheck disable=SC2086
	CXX_G=$(build_cxx_workload g/span_cxx span_cxx -g \
		-finstrument-functions-exclude-file-list=bits/ \
		-L"$g" -Wl,-rpath,"$g" -lspan_cxxlib $libs) || return 1
	# shellcheck disable=SC2086
	CXX_STD=$(build_cxx_workload g/span_cxx_std span_cxx -g \
		-L"$g" -Wl,-rpath,"$g" -lspan_cxxlib $libs) || return 1
	# shellcheck disable=SC2086
	CXX_NOG=$(build_cxx_workload nog/span_cxx span_cxx \
		-finstrument-functions-exclude-file-list=bits/ \
		-L"$nog" -Wl,-rpath,"$nog" -lspan_cxxlib $libs) || return 1
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	[ -n "$CXX_G" ] || skip_or_fail "the C++ workloads were not built (g++ missing?)"
	require_cmd c++filt # the reference for --demangle=full (binutils)
}

# The symbols span_cxx records (CXX_G), as --demangle=no shows them, each
# with its simple form.  _Z3badX is malformed; _ZN4user4textEv is the
# program's own spanstat_begin() name, which only looks mangled.
SIMPLE='_Z3badX	_Z3badX
_ZL3runv	run
_ZL4bumpi	bump
_ZL4workv	work
_ZN12_GLOBAL__N_16helperEi	(anonymous namespace)::helper
_ZN3app5innerEi	app::inner
_ZN3app5outerEi	app::outer
_ZN3app5twiceIdEET_S1_	app::twice
_ZN3app5twiceIiEET_S1_	app::twice
_ZN3app6Parser5depthEi	app::Parser::depth
_ZN3app6ParserC1Ev	app::Parser::Parser
_ZN3app6ParserD2Ev	app::Parser::~Parser
_ZN3appltERKNS_3VecES2_	app::operator<
_ZN3lib7measureEii	lib::measure
_ZN4user4textEv	_ZN4user4textEv
_ZNK3app3VecplERKS0_	app::Vec::operator+
_ZNK3app4LessclEii	app::Less::operator()
_ZNK3app6Parser4peekEv	app::Parser::peek
_ZNK3lib5Shape4areaEv	lib::Shape::area
_ZZL3runvENKUliE_clEi	run::{lambda(int)#1}::operator()
_ZnwmPv	operator new
main	main'

# expected MODE: the names MODE shows, sorted and unique; "full" is what
# c++filt prints for each symbol, except the user's own span name.
expected() {
	case $1 in
	no) cut -f1 <<<"$SIMPLE" ;;
	simple) cut -f2 <<<"$SIMPLE" ;;
	full)
		cut -f1 <<<"$SIMPLE" | while IFS= read -r sym; do
			if [ "$sym" = _ZN4user4textEv ]; then echo "$sym"; else c++filt -- "$sym"; fi
		done
		;;
	esac | LC_ALL=C sort -u
}

# folded_frames FILE: the frames of a folded file as flamegraph.pl reads
# it (each line split at its LAST run of whitespace into stack and count,
# the stack split at ';'), percent-escapes undone, sorted and unique.
folded_frames() {
	perl -ne 'chomp; my ($stack, $n) = /^(.*)\s+?(\d+(?:\.\d*)?)$/ or die "bad line: $_\n";
		for (split /;/, $stack) { s/%([0-9A-F]{2})/chr(hex($1))/ge; print "$_\n" }' "$1" |
		LC_ALL=C sort -u
}

# table_names: the names of the "Spans by name" table in spanstat's summary
# on stdin (the name column starts after the fixed-width cells; with
# --spans=location after the location column too).
table_names() {
	local t col
	t=$(sed -n '/Spans by name:/,$p')
	# the name column starts where its header does
	col=$(awk '/ count +total +self +mean +wall / { print length($0) - 3; exit }' <<<"$t")
	sed -n '4,$p' <<<"$t" | sed '/^$/,$d' | cut -c"$col"- | LC_ALL=C sort -u
}

# loc_skip FILE: the characters before the location column of its tables,
# after the leading space (the column starts where its header does).
loc_skip() {
	awk '/ count +total +self +mean +wall / { print index($0, "location") - 2; exit }' "$1"
}

json_names() {
	jq -r '[.spans.merged | .. | objects | select(has("self_ns")) | .name] | unique[]' "$1" |
		LC_ALL=C sort -u
}

# perfetto_names TRACE: the interned event names of TRACE, decoded by protoc
# (the caller checks for protoc: a skip cannot leave $(...)).
perfetto_names() {
	pf_decode "$1" "$1.txt" || return 1
	awk '/event_names \{/ { in_en = 1 } in_en && /^ *name: / {
		sub(/^ *name: "/, ""); sub(/"$/, ""); print; in_en = 0 }' "$1.txt" | LC_ALL=C sort -u
}

@test "the default is simple: scopes and names, no parameters or template arguments" {
	run -0 "$SPANSTAT" -e task-clock --spans -o table.txt --folded=f.folded -- "$CXX_G"
	assert_equal "$(table_names <table.txt)" "$(expected simple)"
	assert_equal "$(folded_frames f.folded)" "$(expected simple)"
}

@test "--demangle=simple|full|no in the span table" {
	for mode in simple full no; do
		run -0 "$SPANSTAT" -e task-clock --spans --demangle="$mode" -o "table-$mode.txt" -- "$CXX_G"
		assert_equal "$(table_names <"table-$mode.txt")" "$(expected "$mode")"
	done
	# full is c++filt's text, parameters and qualifiers included
	grep -qF 'app::Parser::peek() const' table-full.txt
	grep -qF 'run()::{lambda(int)#1}::operator()(int) const' table-full.txt
	grep -qF '_ZN3app6Parser5depthEi' table-no.txt
}

@test "--demangle=simple|full|no in folded stacks, read with flamegraph.pl's grammar" {
	for mode in simple full no; do
		run -0 "$SPANSTAT" -e task-clock --demangle="$mode" --folded="$mode.folded" -- "$CXX_G"
		# every line is STACK COUNT split at the last space, no frame empty
		run -0 perl -ne 'chomp; /^(.*)\s+?(\d+)$/ && $2 > 0 or die "bad: $_\n";
			for (split /;/, $1, -1) { die "empty frame: $_\n" if $_ eq "" }' "$mode.folded"
		assert_equal "$(folded_frames "$mode.folded")" "$(expected "$mode")"
	done
	# names keep their spaces; ';' and '%' are the only printable escapes
	grep -qF '(anonymous namespace)::helper' simple.folded
	grep -qF 'operator new(unsigned long, void*)' full.folded
	grep -qF 'main;run;app::outer;app::inner ' simple.folded
}

@test "--demangle=simple|full|no in JSON; two functions of one simple name are one node, full keeps them apart" {
	require_cmd jq
	for mode in simple full no; do
		run -0 "$SPANSTAT" -e task-clock --demangle="$mode" --folded=/dev/null \
			--json="$mode.json" -- "$CXX_G"
		assert_equal "$(json_names "$mode.json")" "$(expected "$mode")"
	done
	# app::twice<int> and app::twice<double>: one text, one node that
	# counts both, in every output (no two paths that read the same)
	run -0 jq '[.spans.merged | .. | objects | select(.name? == "app::twice")] | length' simple.json
	assert_output 1
	run -0 jq '[.spans.merged.nodes[] | select(.name == "app::twice") | .count] | add' simple.json
	assert_output "$(jq '[.spans.merged.nodes[] | select(.name | strings | contains("app::twice<")) | .count] | add' full.json)"
	run -0 "$SPANSTAT" -e task-clock --folded=simple.folded -- "$CXX_G"
	assert_equal "$(sed 's/ [0-9]*$//' simple.folded | sort | uniq -d)" ""
	grep -q 'app::twice ' simple.folded
	run -0 jq -r '[.spans.merged | .. | objects | select(.name? | strings | contains("app::twice<"))
		| .name] | sort | join(",")' full.json
	assert_output 'double app::twice<double>(double),int app::twice<int>(int)'
}

@test "--demangle=simple|full|no in Perfetto's interned names" {
	require_cmd protoc
	for mode in simple full no; do
		run -0 "$SPANSTAT" -e task-clock --demangle="$mode" --perfetto="$mode.pftrace" -- "$CXX_G"
		assert_equal "$(perfetto_names "$mode.pftrace")" "$(expected "$mode")"
	done
}

@test "std::vector<std::string> from libstdc++'s headers: simple and c++filt's full" {
	run -0 "$SPANSTAT" -e task-clock --demangle=no --folded=no.folded -- "$CXX_STD"
	run -0 "$SPANSTAT" -e task-clock --folded=simple.folded -- "$CXX_STD"
	run -0 "$SPANSTAT" -e task-clock --demangle=full --folded=full.folded -- "$CXX_STD"
	folded_frames simple.folded >simple.txt
	grep -qxF 'std::vector::push_back' simple.txt
	# no template argument and no parameter list survives in simple: the
	# only '<' and '(' are in operator names, lambdas and the namespace
	run grep -E '<|\(' simple.txt
	assert_output "$(printf '%s\n' '(anonymous namespace)::helper' 'app::Less::operator()' \
		'app::operator<' 'run::{lambda(int)#1}::operator()')"
	# full: exactly c++filt's text for each symbol, the user's name aside
	folded_frames no.folded | while IFS= read -r sym; do
		if [ "$sym" = _ZN4user4textEv ]; then echo "$sym"; else c++filt -- "$sym"; fi
	done | LC_ALL=C sort -u >want.txt
	folded_frames full.folded >got.txt
	assert_equal "$(cat got.txt)" "$(cat want.txt)"
	grep -qF 'std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > >::push_back(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&&)' got.txt
}

@test "exceptions thrown through instrumented frames leave the spans balanced" {
	require_cmd jq
	run -0 "$SPANSTAT" -e task-clock --spans --json=run.json -- "$CXX_G"
	refute_output --partial 'unfinished'
	refute_output --partial 'unmatched'
	run -0 jq -r '[.spans.merged | .. | objects | select(.name? == "app::inner" or .name? == "app::outer")
		| "\(.name) \(.count) \(.unfinished)"] | sort | join(",")' run.json
	assert_output 'app::inner 20 0,app::outer 20 0'
}

@test "--spans=location: file:line with debug information, '-' without" {
	local depth_line area_line
	depth_line=$(grep -n 'int depth(int n)' "$WORKLOADS/span_cxx.cc" | cut -d: -f1)
	area_line=$(grep -n 'int Shape::area() const$' "$WORKLOADS/span_cxxlib.cc" | cut -d: -f1)
	run -0 "$SPANSTAT" -e task-clock --spans=location -o g.txt -- "$CXX_G"
	sed -n '/Spans by name:/,$p' g.txt >by-name.txt
	skip_=$(loc_skip g.txt)
	grep -qE "^ .{$skip_}span_cxx\.cc:$depth_line +app::Parser::depth$" by-name.txt
	grep -qE "^ .{$skip_}span_cxxlib\.cc:$area_line +lib::Shape::area$" by-name.txt
	grep -qE "^ .{$skip_}- +_ZN4user4textEv$" by-name.txt
	assert_equal "$(table_names <g.txt)" "$(expected simple)"
	# plain --spans has no location column
	run -0 "$SPANSTAT" -e task-clock --spans -o plain.txt -- "$CXX_G"
	run ! grep -q 'location' plain.txt
	# without -g: every row '-'
	run -0 "$SPANSTAT" -e task-clock --spans=location -o nog.txt -- "$CXX_NOG"
	sed -n '/Spans by name:/,$p' nog.txt | sed -n '4,$p' | sed '/^$/,$d' >rows.txt
	[ "$(wc -l <rows.txt)" -ge 20 ]
	run grep -vE "^ .{$(loc_skip nog.txt)}- " rows.txt
	assert_output ''
	assert_equal "$(table_names <nog.txt)" "$(expected simple)"
}

@test "--demangle and --spans reject what they do not know" {
	run -125 "$SPANSTAT" --demangle=yes -- true
	assert_output "spanstat: invalid --demangle 'yes': expected simple, full or no"
	run -125 "$SPANSTAT" --demangle= -- true
	assert_output "spanstat: invalid --demangle '': expected simple, full or no"
	run -125 "$SPANSTAT" --spans=where -- true
	assert_output "spanstat: invalid --spans 'where': expected --spans or --spans=location"
	run -125 "$SPANSTAT" --demangle
	assert_output "spanstat: option '--demangle' needs an argument"
}

@test "JSON nodes carry file and line with debug information, null without" {
	require_cmd jq
	local depth_line area_line
	depth_line=$(grep -n 'int depth(int n)' "$WORKLOADS/span_cxx.cc" | cut -d: -f1)
	area_line=$(grep -n 'int Shape::area() const$' "$WORKLOADS/span_cxxlib.cc" | cut -d: -f1)
	run -0 "$SPANSTAT" -e task-clock --demangle=full --json=g.json --folded=/dev/null -- "$CXX_G"
	# every node of every tree has both keys
	run -0 jq '[.spans.threads[].nodes[], .spans.merged.nodes[] | has("file") and has("line")] | all' g.json
	assert_output true
	run -0 jq -r '[.spans.merged.nodes[] | select(.name == "app::Parser::depth(int)")
		| "\(.file) \(.line)"] | unique[]' g.json
	assert_output "$WORKLOADS/span_cxx.cc $depth_line"
	run -0 jq -r '.spans.merged.nodes[] | select(.name == "lib::Shape::area() const") | "\(.file) \(.line)"' g.json
	assert_output "$WORKLOADS/span_cxxlib.cc $area_line"
	# the program's own span has no location; every function here has one
	run -0 jq -r '[.spans.merged.nodes[] | select(.file == null) | .name] | unique | join(",")' g.json
	assert_output '_ZN4user4textEv'
	run -0 jq '[.spans.merged.nodes[] | select(.file != null) | .line | numbers | select(. > 0)] | length > 20' g.json
	assert_output true
	# without -g: no node has a location, and the names are the same
	run -0 "$SPANSTAT" -e task-clock --demangle=full --json=nog.json --folded=/dev/null -- "$CXX_NOG"
	run -0 jq '[.spans.merged.nodes[] | select(.file != null or .line != null)] | length' nog.json
	assert_output 0
	assert_equal "$(json_names nog.json)" "$(expected full)"
}
