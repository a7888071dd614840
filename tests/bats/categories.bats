#!/usr/bin/env bats
# categories.bats: a category per span name (spanstat_category, the line
# protocol's K lines, spanstat.category() in Python; issue 24): shown per
# node in the JSON, as Perfetto's slice categories and as a column of the
# span table (only when a name has one), the same aggregated in the target
# and streamed, in the report of a record, and filtered by --filter=cat:GLOB
# and --exclude=cat:GLOB inside the target, both modes agreeing, for names
# given by text and for functions (-finstrument-functions, -pg, --lib-calls)
# by their symbols' names; one a vfork()ed child declares is counted dropped
# (as its message is).

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	SPAN_CAT=$(build_workload span_cat $(span_link_flags))
	export SPAN_CAT
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# cats FILE: "depth name category count" per node of the merged tree, sorted
cats() {
	jq -r '.spans.merged.nodes[] | "\(.depth) \(.name) \(.category) \(.count)"' "$1" |
		LC_ALL=C sort
}

# what span_cat records (see its header): idle keeps the first category,
# the text "read" is the literal's name and so its category
expected_cats() {
	printf '%s\n' "0 plain null 1" "1 idle io 1" "1 read io 1" "0 read io 6" \
		"1 parse cpu 6" "0 write io 2" | LC_ALL=C sort
}

@test "categories: per node in the JSON and in the span table, aggregated and streamed" {
	local opts
	for opts in "" --perfetto=s.pftrace; do
		# shellcheck disable=SC2086 # opts is one option or none
		run -0 timeout -k 5 120 "$SPANSTAT" --spans -o sum.txt --json=s.json $opts -- "$SPAN_CAT"
		run cats s.json
		assert_output "$(expected_cats)"
		# each thread's own tree carries them too
		assert_equal "$(jq -r '[.spans.threads[].nodes[] | select(.name == "parse") | .category] | unique | join(",")' s.json)" cpu
		# the span table: a category column, "-" for a name without one
		run grep -E '^ +count .* category +path$' sum.txt
		assert_success
		run grep -E ' io +read;parse$| cpu +read;parse$' sum.txt
		assert_output --partial ' cpu '
		run grep -E ' - +plain$' sum.txt
		assert_equal "$(grep -cE ' - +plain$' sum.txt)" 2 # by path and by name
		run grep -E ' io +idle$' sum.txt
		assert_success
	done
}

@test "categories: no category, no column: the span table is as before" {
	local plain
	plain=$(build_workload span_text $(span_link_flags))
	run -0 timeout -k 5 120 "$SPANSTAT" --spans -o sum.txt --json=s.json -- "$plain"
	run grep -c category sum.txt
	assert_output 0
	assert_equal "$(jq '[.spans.merged.nodes[] | .category] | unique' -c s.json)" '[null]'
}

@test "categories: Perfetto's slices carry them, each begin of a categorized name" {
	require_cmd protoc
	run -0 timeout -k 5 120 "$SPANSTAT" --perfetto=c.pftrace -- "$SPAN_CAT"
	pf_decode c.pftrace c.txt
	# the begins with a category: read 7, write 2, idle 1 (io), parse 6 (cpu)
	run grep -c 'categories: "io"' c.txt
	assert_output 10
	run grep -c 'categories: "cpu"' c.txt
	assert_output 6
	# only begins carry them, never an end
	run awk '/type: TYPE_SLICE_END/ { e = 1 } /type: TYPE_SLICE_BEGIN/ { e = 0 }
		/categories:/ && e { bad++ } END { print bad + 0 }' c.txt
	assert_output 0
}

@test "categories: the report of a record has them, the same bytes as the live outputs" {
	local how
	for how in "" --perfetto=live.pftrace; do
		rm -f r.rec
		# shellcheck disable=SC2086 # one option or none
		run -0 timeout -k 5 120 "$SPANSTAT" --record=r.rec --spans -o live.txt \
			--json=live.json $how -- "$SPAN_CAT"
		run -0 timeout -k 5 120 "$SPANSTAT" report -o rep.txt --json=rep.json \
			--perfetto=rep.pftrace r.rec
		run cats rep.json
		assert_output "$(expected_cats)"
		cmp live.txt rep.txt
		[ -z "$how" ] || cmp live.pftrace rep.pftrace
	done
	# spanstat record: aggregated in the target
	run -0 timeout -k 5 120 "$SPANSTAT" record -o a.rec -- "$SPAN_CAT"
	run -0 timeout -k 5 120 "$SPANSTAT" report --json=a.json a.rec
	run cats a.json
	assert_output "$(expected_cats)"
}

# filtered OPTION: "name count" by name, under the filter, aggregated then
# streamed (two blocks, which must be the same)
filtered() {
	local opts
	for opts in "--spans" "--perfetto=f.pftrace"; do
		# shellcheck disable=SC2086 # one option
		timeout -k 5 120 "$SPANSTAT" $opts --json=f.json "$@" -- "$SPAN_CAT" >/dev/null 2>&1 ||
			return 1
		jq -r '[.spans.merged.nodes[]] | group_by(.name)[] | "\(.[0].name) \(map(.count) | add)"' \
			f.json | LC_ALL=C sort
		echo --
	done
}

@test "categories: --filter=cat: and --exclude=cat: decide in the target, both modes alike" {
	run -0 filtered --filter=cat:io
	assert_output "idle 1
parse 6
read 7
write 2
--
idle 1
parse 6
read 7
write 2
--"
	run -0 filtered --exclude=cat:io
	assert_output "plain 1
--
plain 1
--"
	# a glob of categories: parse (cpu) and what is under it go
	run -0 filtered --exclude='cat:c*'
	assert_output "idle 1
plain 1
read 7
write 2
--
idle 1
plain 1
read 7
write 2
--"
	# names and categories together; a name glob never matches a category
	run -0 filtered --filter=cat:cpu --filter=write
	assert_output "parse 6
write 2
--
parse 6
write 2
--"
	run -0 filtered --filter=io
	assert_output "--
--"
}

@test "categories: cat: without a pattern is refused before anything runs" {
	local opt
	for opt in --filter --exclude; do
		run -125 "$SPANSTAT" --spans "$opt=cat:" -- touch ran
		assert_output "spanstat: invalid $opt 'cat:': expected a category pattern after cat:"
		[ ! -e ran ]
	done
}

@test "categories: K lines of the line protocol, bad ones counted" {
	cat >k.sh <<'SH'
exec {fd}>>"$SPANSTAT_LINES"
printf 'K %d - - io load data\n' $$ >&$fd
printf 'K %d - - cpu crunch\n' $$ >&$fd
printf 'K %d - - net crunch\n' $$ >&$fd
printf 'B %d - - load data\nB %d - - crunch\nE %d - - crunch\nE %d - - load data\n' $$ $$ $$ $$ >&$fd
printf 'B %d - - plain\nE %d - - plain\n' $$ $$ >&$fd
printf 'K %d - - nospace\nK %d - -  empty\n' $$ $$ >&$fd
printf 'K %d - - %0256d x\n' $$ 0 >&$fd
SH
	run -0 timeout -k 5 120 "$SPANSTAT" --json=k.json -- bash k.sh
	run cats k.json
	assert_output "0 load data io 1
0 plain null 1
1 crunch cpu 1"
	assert_equal "$(jq .spans.decode.bad_lines k.json)" 3
}

@test "categories: Python's spanstat.category()" {
	require_cmd python3
	cat >c.py <<'PY'
import threading
import spanstat
spanstat.category("load", "io")
def work():
    with spanstat.span("load"):
        with spanstat.span("crunch"):
            pass
t = threading.Thread(target=work)
t.start()
t.join()
with spanstat.span("load"):
    pass
for bad in ("", "two words", "x" * 256):
    try:
        spanstat.category("x", bad)
    except ValueError:
        print("refused")
PY
	run -0 --separate-stderr timeout -k 5 120 "$SPANSTAT" --json=p.json -- python3 c.py
	assert_output "refused
refused
refused"
	run cats p.json
	assert_output "0 load io 2
1 crunch null 1"
}

@test "categories and messages a vfork()ed child makes before it exits are counted dropped, never its parent's" {
	local bin mode
	bin=$(build_workload span_vfork $(span_link_flags))
	for mode in aggregate stream; do
		if [ "$mode" = aggregate ]; then
			timeout 60 "$SPANSTAT" --spans --json=v.json -- "$bin" _exit side >stdout 2>stderr
		else
			timeout 60 "$SPANSTAT" record -o v.rec -- "$bin" _exit side >stdout 2>stderr
			# record decodes no event, yet says what the target dropped
			grep -q "^\[ spanstat record: wrote .* to 'v.rec'; the target dropped 12 events \]$" stderr
			"$SPANSTAT" report --json=v.json v.rec >report.out 2>>stderr
		fi
		assert_equal "$(cat stdout)" "child 0"
		# 5 "child" spans (10 events), the category and the message
		assert_equal "$(jq -c '[.spans.decode.dropped, .spans.messages]' v.json)" "[12,0]"
		assert_equal "$(jq -c '[.spans.merged.nodes[] | .category] | unique' v.json)" "[null]"
	done
}

@test "categories: --filter=cat: and --exclude=cat: select -finstrument-functions functions, in every mode" {
	local fn mode
	fn=$(build_workload span_cat_fn -O1 -finstrument-functions $(span_link_flags))
	# fcats MODE FILE OPTIONS...: the merged tree of span_cat_fn run under
	# OPTIONS, aggregated in the target, streamed (--perfetto) or recorded
	# and reported, into FILE
	fcats() {
		local mode=$1 out=$2
		shift 2
		case $mode in
		agg) timeout -k 5 120 "$SPANSTAT" --json="$out" "$@" -- "$fn" ;;
		stream) timeout -k 5 120 "$SPANSTAT" --perfetto=s.pftrace --json="$out" "$@" -- "$fn" ;;
		record)
			timeout -k 5 120 "$SPANSTAT" record -o r.rec "$@" -- "$fn" &&
				timeout -k 5 120 "$SPANSTAT" report --json="$out" r.rec
			;;
		esac
	}
	for mode in agg stream record; do
		# the outputs show the categories of the functions' names ...
		run -0 fcats "$mode" a.json
		run cats a.json
		assert_output "0 main null 1
1 crunch cpu 3
2 load io 3"
		# ... and the filters select by them, as they do for names given by text
		run -0 fcats "$mode" f.json --filter=cat:io
		run cats f.json
		assert_output "0 load io 3"
		run -0 fcats "$mode" e.json --exclude=cat:cpu
		run cats e.json
		assert_output "0 main null 1"
		# a category glob, and an exclude inside a filter
		run -0 fcats "$mode" g.json --filter='cat:c*'
		run cats g.json
		assert_output "0 crunch cpu 3
1 load io 3"
		run -0 fcats "$mode" x.json --filter='cat:c*' --exclude=cat:io
		run cats x.json
		assert_output "0 crunch cpu 3"
	done
}

@test "categories: --filter=cat: and --exclude=cat: select -pg functions and --lib-calls calls" {
	local pg
	pg=$(build_workload span_cat_fn -O1 -pg $(span_link_flags))
	run -0 timeout -k 5 120 "$SPANSTAT" --json=a.json -- "$pg"
	run cats a.json
	assert_output "0 main null 1
1 crunch cpu 3
2 load io 3"
	run -0 timeout -k 5 120 "$SPANSTAT" --json=f.json --filter=cat:io -- "$pg"
	run cats f.json
	assert_output "0 load io 3"
	run -0 timeout -k 5 120 "$SPANSTAT" --perfetto=s.pftrace --json=e.json --exclude=cat:cpu -- "$pg"
	run cats e.json
	assert_output "0 main null 1"
	# a library call's span has the category of the function's name
	run -0 timeout -k 5 120 "$SPANSTAT" --lib-calls=getppid --json=l.json --filter=cat:sys -- "$pg"
	run cats l.json
	assert_output "0 getppid sys 2"
	run -0 timeout -k 5 120 "$SPANSTAT" --lib-calls=getppid --json=x.json --exclude=cat:sys -- "$pg"
	run cats x.json
	assert_output "0 main null 1
1 crunch cpu 3
2 load io 3"
}
