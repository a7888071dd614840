#!/usr/bin/env bats
# json.bats: --json through the real binary: every field spanstat-json(5)
# documents is present with a documented type, the values agree with the
# text summary, --folded and --perfetto of the same run, repeated runs,
# intervals and exit statuses come through, numbers stay numbers in any
# locale, and files are written whole or not at all.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export THREADS DIE SPIN DEEP
	THREADS=$(build_workload span_threads $(span_link_flags))
	DEEP=$(build_workload span_deep $(span_link_flags))
	DIE=$(build_workload span_die $(span_link_flags))
	SPIN=$(build_workload spin)
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# The installed schema page, or the source one when nothing was installed.
schema_page() {
	local page="${SPANSTAT_MANDIR:-/nonexistent}/man5/spanstat-json.5"
	[ -f "$page" ] || page="$SRCDIR/man/spanstat-json.5"
	printf '%s\n' "$page"
}

# schema_fields: "path<TAB>types" for every documented field, types as the
# page gives them ("number or null").
schema_fields() {
	grep -A1 '^\.TP' "$(schema_page)" | sed -n 's/^\\fB\(\.[^\\]*\)\\fR (\(.*\))$/\1\t\2/p'
}

# schema_check DOC...: one jq pass per document over every documented field,
# printing "path<TAB>present<TAB>types seen<TAB>values" lines.  "present" is
# whether every parent object has the key.
schema_check() {
	local prog
	prog=$(schema_fields | awk -F'\t' '
	{
		path = $1
		if (!match(path, /\.[a-z_]+(\[\])?$/)) { print "unparsable path " path > "/dev/stderr"; exit 1 }
		parent = substr(path, 1, RSTART - 1); key = substr(path, RSTART + 1)
		sub(/\[\]$/, "", key)
		if (parent == "") parent = "."
		printf "\"%s\\t\" + ([%s | has(\"%s\")] | all | tostring) + \"\\t\" + ([%s] | map(type) | unique | join(\",\")) + \"\\t\" + ([%s] | length | tostring)\n",
			path, parent, key, path, path
	}') || return 1
	# jq compiles a program to at most 64 KiB: 100 fields to a program
	local doc part
	for doc in "$@"; do
		while IFS= read -r part; do
			jq -r "$part" "$doc" || return 1
		done < <(printf '%s\n' "$prog" | awk '{ printf "%s%s", (NR % 100 == 1 ? "" : ", "), $0 } NR % 100 == 0 { print "" } END { if (NR % 100) print "" }')
	done
}

# A directory of extra locales and a comma-decimal locale name in it, built
# with localedef when the system has none; empty when neither is possible.
comma_locale() {
	local l
	for l in $(locale -a 2>/dev/null); do
		if [ "$(LC_ALL=$l /usr/bin/printf '%.1f' 1.5 2>/dev/null)" = "1,5" ]; then
			printf '%s\t%s\n' "" "$l"
			return
		fi
	done
	local dir="$BATS_FILE_TMPDIR/locales"
	if [ -d "$dir/de_DE.UTF-8" ] || { command -v localedef >/dev/null &&
		mkdir -p "$dir" && localedef -i de_DE -f UTF-8 "$dir/de_DE.UTF-8" >/dev/null 2>&1; }; then
		if [ "$(LOCPATH=$dir LC_ALL=de_DE.UTF-8 /usr/bin/printf '%.1f' 1.5 2>/dev/null)" = "1,5" ]; then
			printf '%s\t%s\n' "$dir" "de_DE.UTF-8"
		fi
	fi
}

# tree TSV: "path count total_ns self_ns unfinished" for every node of the
# merged span tree of a document (paths joined with ;), rebuilt from the
# flat node list through the parent ids.
tree() {
	jq -r '.spans.merged.nodes as $n
		| reduce $n[] as $x ({}; .[$x.id | tostring] =
			(if $x.parent == null then $x.name else .[$x.parent | tostring] + ";" + $x.name end))
		| . as $path | $n[]
		| [$path[.id | tostring], .count, .total_ns, .self_ns, .unfinished] | @tsv' "$1"
}

# summary_value EVENT FILE: the count column of EVENT's line in a summary,
# thousands separators removed.
summary_value() {
	awk -v e="$2" '/Performance counter stats/ { on = 1 }
		on && ($2 == e || $3 == e) { gsub(",", "", $1); print $1; exit }' "$1"
}

@test "every documented field is present with a documented type in real runs" {
	# a run that fills nearly everything: two runs, intervals, spans in
	# threads, an unsupported event, derived metrics
	run "$SPANSTAT" --json=full.json -r 2 -I 100 --spans -e task-clock,page-faults,cycles \
		--span-events=page-faults,cycles --span-allocs -- "$THREADS"
	assert_success
	# one run, killed with spans open (--folded turns spans on): the values
	# that are null or unset above are filled here
	run "$SPANSTAT" --json=died.json --folded=died.folded --no-off-cpu -e task-clock -- "$DIE" term
	assert_failure 143
	# spans off (attached: --json alone collects spans of a COMMAND it
	# starts), perf stat's default events: empty arrays, collected false
	sleep 5 3>&- &
	run "$SPANSTAT" --json=plain.json -p $! -- sleep 0.1
	kill $!
	assert_success
	# split per core, with intervals and metrics: the units' fields
	run "$SPANSTAT" --json=units.json --per-core -a -I 50 -e task-clock -- sleep 0.12
	assert_success
	# the ranks of a job: two record files reported together
	for r in 0 1; do
		OMPI_COMM_WORLD_RANK=$r run -0 "$SPANSTAT" record -o "job.$r.rec" -e task-clock,cycles -- "$THREADS"
	done
	run -0 "$SPANSTAT" report --json=job.json job.0.rec job.1.rec
	# messages (spanstat_message) on the threads' timelines
	run -0 "$SPANSTAT" --json=msg.json -- "$(build_workload span_msg $(span_link_flags))"
	# async spans (spanstat_async_begin), one left open
	run -0 "$SPANSTAT" --json=async.json -- "$(build_workload span_async $(span_link_flags))" open
	run -0 "$SPANSTAT" --span-args --json=args.json -- "$(build_workload span_args $(span_link_flags))"
	fields=$(schema_fields)
	nfields=$(wc -l <<<"$fields")
	echo "$nfields documented fields in $(schema_page)"
	[ "$nfields" -ge 100 ]
	run schema_check full.json died.json plain.json job.json units.json msg.json async.json args.json
	assert_success
	# every field present in every document, with only documented types
	run awk -F'\t' '
		NR == FNR { doc[$1] = $2; gsub(/ or /, ",", doc[$1]); next }
		$2 != "true" { print "missing: " $1 }
		{
			n = split($3, seen, ",")
			for (i = 1; i <= n; i++)
				if (index("," doc[$1] ",", "," seen[i] ",") == 0) print "type " seen[i] " of " $1 " not in (" doc[$1] ")"
			if ($4 > 0) filled[$1] = 1
		}
		END { for (p in doc) if (!(p in filled)) print "never filled: " p }' <(echo "$fields") <(echo "$output")
	assert_output ""
	# and the null variants actually occur where documented
	assert_equal "$(jq '.events[0].mean' died.json)" null
	assert_equal "$(jq '.exit.signal' full.json)" null
	assert_equal "$(jq '.exit.signal' died.json)" 15
	assert_equal "$(jq '[.spans.threads, .intervals] | map(length)' -c plain.json)" "[0,0]"
	assert_equal "$(jq '.spans.collected' plain.json)" false
	assert_equal "$(jq -c '[.ranks.ranks, .ranks.spans, .ranks.elapsed_ns.max]' plain.json)" '[[],[],null]'
}

@test "every field in the output is documented in spanstat-json(5)" {
	run "$SPANSTAT" --json=full.json -r 2 -I 100 --spans -e task-clock,page-faults,cycles -- "$THREADS"
	assert_success
	run "$SPANSTAT" --json=died.json --spans -e task-clock -- "$DIE" abort
	run jq -rs '[.[] | paths | map(if type == "number" then "[]" else "." + . end) | join("")] | unique[]' full.json died.json
	assert_success
	seen=$(sed -e 's/\.\[\]/[]/g' <<<"$output" | sort -u)
	run comm -23 <(echo "$seen") <(schema_fields | cut -f1 | sort -u)
	assert_output ""
}

@test "--json alone collects spans, as --spans and --folded do; attached it counts without them" {
	run "$SPANSTAT" --json=a.json -e task-clock -- "$THREADS"
	assert_success
	assert_equal "$(jq -c '[.spans.collected, (.spans.threads | length), .spans.merged.count]' a.json)" "[true,5,5]"
	sleep 5 3>&- &
	run -0 "$SPANSTAT" --json=p.json -e task-clock -p $! -- sleep 0.1
	kill $!
	assert_equal "$(jq -c '[.spans.collected, (.spans.threads | length), .spans.merged.count]' p.json)" "[false,0,0]"
	# --no-spans: counts only, the target without the span library
	run -0 "$SPANSTAT" --no-spans --json=n.json -e task-clock -- sh -c 'printf "%s\n" "${LD_PRELOAD:-none}"'
	assert_line --index 0 none
	assert_equal "$(jq -c '[.spans.collected, (.spans.threads | length), .spans.merged.count]' n.json)" "[false,0,0]"
	run -0 "$SPANSTAT" record --no-spans -o n.rec -e task-clock -- "$THREADS"
	run -0 "$SPANSTAT" report --json=nr.json n.rec
	assert_equal "$(jq -c '[.spans.collected, (.spans.threads | length)]' nr.json)" "[false,0]"
	for opt in --spans --folded=x.txt --span-events=page-faults --span-allocs --weight=cpu --compensate; do
		run -125 "$SPANSTAT" --no-spans --json=x.json "$opt" -- true
		assert_output --regexp "^spanstat: --no-spans cannot be combined with (a span output|--)"
		[ ! -e x.json ] && [ ! -e x.txt ]
	done
	run "$SPANSTAT" --json=b.json --spans -e task-clock -- "$THREADS"
	assert_success
	assert_equal "$(jq -c '[.spans.collected, (.spans.threads | length), .spans.merged.count]' b.json)" "[true,5,5]"
	run "$SPANSTAT" --json=c.json --folded=c.folded -e task-clock -- "$THREADS"
	assert_success
	assert_equal "$(jq -c '[.spans.collected, (.spans.threads | length), .spans.merged.count]' c.json)" "[true,5,5]"
}

@test "the JSON agrees with the text summary of the same run" {
	run "$SPANSTAT" --json=r.json -o sum.txt --spans -e task-clock,page-faults,cycles -- "$THREADS"
	assert_success
	cat sum.txt
	# events: task-clock as the summary rounds it, page-faults exactly
	tc=$(jq '.events[] | select(.name == "task-clock") | .value' r.json)
	assert_equal "$(summary_value sum.txt task-clock)" "$(LC_ALL=C printf '%.2f' "$tc")"
	assert_equal "$(summary_value sum.txt page-faults)" \
		"$(jq '.events[] | select(.name == "page-faults") | .value' r.json)"
	# rusage, to the nanosecond / KiB / count
	ns9() { jq -r "$1 | \"\\(. / 1e9 | floor).\\(. % 1e9 + 1e9 | tostring | .[1:])\"" r.json; }
	assert_equal "$(awk '/seconds time elapsed/ { print $1 }' sum.txt)" "$(ns9 .rusage.elapsed_ns)"
	assert_equal "$(awk '/seconds user/ { print $1 }' sum.txt)" "$(ns9 .rusage.user_ns)"
	assert_equal "$(awk '/seconds sys/ { print $1 }' sum.txt)" "$(ns9 .rusage.sys_ns)"
	assert_equal "$(awk '/KiB max RSS/ { gsub(",", "", $1); print $1 }' sum.txt)" "$(jq .rusage.max_rss_kib r.json)"
	assert_equal "$(awk '/page faults \(minor/ { gsub(",", ""); print $1, $3 }' sum.txt)" \
		"$(jq -r '.rusage | "\(.minor_faults) \(.major_faults)"' r.json)"
	assert_equal "$(awk '/context switches \(vol/ { gsub(",", ""); print $1, $3 }' sum.txt)" \
		"$(jq -r '.rusage | "\(.voluntary_csw) \(.involuntary_csw)"' r.json)"
	assert_equal "$(jq .exit.exit_code r.json)" 0
	# spans: every path of the --spans table, with its count, total and self
	# as the table rounds them
	table=$(awk '/Spans by stack path/ { on = 1; next } /Spans by name/ { on = 0 }
		/ count +total +self +mean +wall / { col = length($0) - 3; next }
		on && NF >= 9 && $1 ~ /^[0-9,]+$/ { p = substr($0, col); gsub(",", "", $1); print p, $1, $2, $3, $4, $5 }' sum.txt | sort)
	assert_equal "$(wc -l <<<"$table")" 8
	run awk '
		function ns(v, u) { return v * (u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "us" ? 1e3 : 1) }
		function near(v, u, want) { return u == "ns" ? v == want : (v - want / ns(1, u)) ^ 2 <= 0.0051 ^ 2 }
		NR == FNR { c[$1] = $2; t[$1] = $3; s[$1] = $4; next }
		!($1 in c) { print "not in JSON: " $1; next }
		$2 != c[$1] { print $1 ": count " $2 " vs " c[$1] }
		!near($3, $4, t[$1]) { print $1 ": total " $3 " " $4 " vs " t[$1] " ns" }
		!near($5, $6, s[$1]) { print $1 ": self " $5 " " $6 " vs " s[$1] " ns" }
		{ seen[$1] = 1 }
		END { for (p in c) if (!(p in seen)) print "not in the table: " p }' <(tree r.json) <(echo "$table")
	assert_output ""
	# the exact counts the workload emits
	run tree r.json
	assert_line --regexp $'^work;outer;inner;scoped\t4000\t'
	assert_line --regexp $'^main;sleep\t1\t'
}

@test "an event that cannot be opened: supported false, a reason, value null" {
	run "$SPANSTAT" --json=n.json -o sum.txt -e task-clock,cycles,instructions -- true
	assert_success
	grep -q '<not supported> *cycles' sum.txt
	run jq -c '.events[] | select(.name == "cycles" or .name == "instructions")
		| [.supported, .state, (.reason | type), (.reason | length > 0), .value, .mean]' n.json
	assert_output '[false,"not supported","string",true,null,null]
[false,"not supported","string",true,null,null]'
	run jq -c '.events[] | select(.name == "task-clock") | [.supported, .state, .reason, (.value | type)]' n.json
	assert_output '[true,"ok",null,"number"]'
}

@test "-r 3: three runs, and the mean and stddev of them" {
	run "$SPANSTAT" --json=r.json -o sum.txt -r 3 -e task-clock,page-faults -- "$SPIN" 30
	assert_success
	assert_equal "$(jq -c '[.runs_requested, .runs_completed, [.runs[].run]]' r.json)" "[3,3,[0,1,2]]"
	# mean, sample stddev and perf's relative stddev of the mean, from runs[]
	run jq -r '.events[] as $e | [.runs[].events[] | select(.name == $e.name) | .value] as $v
		| ($v | add / length) as $m
		| (($v | map((. - $m) * (. - $m)) | add) / ($v | length - 1) | sqrt) as $sd
		| [$e.name, ($e.mean - $m | fabs < 1e-6 * $m),
		   ($e.value == $e.mean), ($e.stddev - $sd | fabs < 1e-6 * ($sd + 1)),
		   ($e.rel_stddev_pct - (if $m == 0 then 0 else $sd / ($v | length | sqrt) / $m * 100 end) | fabs < 1e-6)] | @tsv' r.json
	assert_output $'task-clock\ttrue\ttrue\ttrue\ttrue\npage-faults\ttrue\ttrue\ttrue\ttrue'
	run jq -r '[.runs[].rusage.elapsed_ns] as $v | ($v | add / length) as $m | (.elapsed.mean_ns - $m | fabs) < 1' r.json
	assert_output true
	# the summary's ( +- x.xx% ) is the same number (perf leaves it out
	# when the runs agree exactly)
	for e in task-clock page-faults; do
		pct=$(jq --arg e "$e" '.events[] | select(.name == $e) | .rel_stddev_pct' r.json)
		line=$(grep -E " $e( |\$)" sum.txt)
		echo "$line / $pct"
		if [ "$pct" = 0 ]; then
			[[ $line != *"( +-"* ]]
		else
			[[ $line =~ \(\ \+-\ +$(LC_ALL=C printf '%.2f' "$pct")%\ \) ]]
		fi
	done
	grep -q '(3 runs)' sum.txt
}

@test "-I 100: interval samples that add up to the run's counts" {
	run --separate-stderr "$SPANSTAT" --json=i.json -I 100 -e task-clock,page-faults -- "$SPIN" 350
	assert_success
	assert_equal "$(jq .interval_ms i.json)" 100
	n=$(jq '.intervals | length' i.json)
	echo "$n intervals"
	[ "$n" -ge 3 ]
	# as many as the text printed, in time order, in run 0
	assert_equal "$(grep -c 'msec task-clock' <<<"$stderr")" "$((n + 1))"
	assert_equal "$(jq -c '[.intervals[].run] | unique' i.json)" "[0]"
	assert_equal "$(jq '[.intervals[].t_ns] | . == sort' i.json)" true
	assert_equal "$(jq '[.intervals[] | .length_ns > 0] | all' i.json)" true
	# per interval, not cumulative: the raw counts add up to the total
	run jq -r '.events[] as $e | [$e.name, $e.raw, ([.intervals[].events[] | select(.name == $e.name) | .raw] | add)] | @tsv' i.json
	assert_output --regexp $'^task-clock\t([0-9]+)\t\\1\npage-faults\t([0-9]+)\t\\2$'
}

@test "the target's exit status and a signal death show in the JSON and as spanstat's status" {
	run "$SPANSTAT" --json=e.json -e task-clock -- sh -c 'exit 7'
	assert_failure 7
	assert_equal "$(jq -c '.exit, .runs[0].exit' e.json)" '{"exit_code":7,"signal":null,"core_dumped":false}
{"exit_code":7,"signal":null,"core_dumped":false}'
	run "$SPANSTAT" --json=t.json -e task-clock -- "$DIE" term
	assert_failure 143
	assert_equal "$(jq -c '.exit' t.json)" '{"exit_code":143,"signal":15,"core_dumped":false}'
	ulimit -c 0
	run "$SPANSTAT" --json=a.json -e task-clock -- "$DIE" abort
	assert_failure 134
	assert_equal "$(jq -c '.exit' a.json)" '{"exit_code":134,"signal":6,"core_dumped":false}'
	# spans open at the death are counted as unfinished
	run "$SPANSTAT" --json=s.json --spans -e task-clock -- "$DIE" segv
	assert_failure 139
	assert_equal "$(jq -c '[.exit.signal, .spans.decode.unfinished]' s.json)" "[11,2]"
	# children come sorted by total time, which varies: compare sorted
	local q='.spans.merged.nodes[0]' inner done
	inner=$(jq -r ".spans.merged.nodes[] | select(.name == \"inner\") | \"\\(.total_ns)\t\\(.self_ns)\"" s.json)
	done=$(jq -r ".spans.merged.nodes[] | select(.name == \"done\") | \"\\(.total_ns)\t\\(.self_ns)\"" s.json)
	run bash -c "$(declare -f tree); tree s.json | LC_ALL=C sort"
	assert_output "$(printf 'outer\t1\t%s\t%s\t1\nouter;done\t1\t%s\t0\nouter;inner\t1\t%s\t1' \
		"$(jq "$q.total_ns" s.json)" "$(jq "$q.self_ns" s.json)" "$done" "$inner")"
}

@test "numbers are JSON numbers, in the C locale, whatever LC_ALL says" {
	run "$SPANSTAT" --json=c.json -e task-clock,page-faults -- "$SPIN" 30
	assert_success
	# never strings: every number-like leaf is a number
	run jq -r 'del(.command, .spanstat_version) | [paths(scalars) as $p | getpath($p) | select(type == "string" and test("^-?[0-9.,]+$"))] | length' c.json
	assert_output 0
	assert_equal "$(jq '.events[0].value | type' c.json)" '"number"'
	IFS=$'\t' read -r locpath loc < <(comma_locale) || true
	[ -n "$loc" ] || skip "no comma-decimal locale here and none could be built with localedef"
	export LOCPATH=$locpath
	[ -n "$locpath" ] || unset LOCPATH
	LC_ALL=$loc run "$SPANSTAT" --json=l.json -r 2 -I 10 -e task-clock,page-faults -- "$SPIN" 30
	assert_success
	echo "locale $loc (LOCPATH=$locpath)"
	# the document parses, a fractional value is still a number
	assert_equal "$(jq '.events[] | select(.name == "task-clock") | .value | type' l.json)" '"number"'
	assert_equal "$(jq '.events[] | select(.name == "task-clock") | .value | . != floor' l.json)" true
	refute grep -E '[0-9],[0-9]{1,2}[^0-9]' l.json
	run jq -r 'del(.command, .spanstat_version) | [paths(scalars) as $p | getpath($p) | select(type == "string" and test("^-?[0-9.,]+$"))] | length' l.json
	assert_output 0
}

@test "--json=- writes the document to stdout, the summary to stderr" {
	mkdir w && cd w
	run --separate-stderr "$SPANSTAT" --json=- -e task-clock -- "$SPIN" 20
	assert_success
	assert_equal "$(jq -s 'length' <<<"$output")" 1
	assert_equal "$(jq -r '.events[0].name' <<<"$output")" task-clock
	[[ $stderr == *"Performance counter stats"* ]]
	[[ $stderr != *'"schema_version"'* ]]
	run ls -A
	assert_output ""
}

@test "--json, --folded, --perfetto and the summary of one run describe the same run" {
	run "$SPANSTAT" --json=a.json --folded=f.txt --perfetto=t.pftrace -o sum.txt --spans \
		-I 20 -e task-clock,page-faults -- "$THREADS"
	assert_success
	# span counts: the JSON tree against the --spans table
	run awk '/Spans by stack path/ { on = 1; next } /Spans by name/ { on = 0 }
		/ count +total +self +mean +wall / { col = length($0) - 3; next }
		on && NF >= 9 && $1 ~ /^[0-9,]+$/ { p = substr($0, col); gsub(",", "", $1); print p, $1 }' sum.txt
	assert_equal "$(sort <<<"$output")" "$(tree a.json | cut -f1,2 | tr '\t' ' ' | sort)"
	# self time per stack: folded against the JSON tree, to the nanosecond
	assert_equal "$(sort f.txt)" "$(tree a.json | awk -F'\t' '$4 > 0 { print $1, $4 }' | sort)"
	# event values: the summary and the trace's final counter samples
	tc=$(jq '.events[] | select(.name == "task-clock") | .value' a.json)
	pf=$(jq '.events[] | select(.name == "page-faults") | .value' a.json)
	assert_equal "$(summary_value sum.txt task-clock)" "$(LC_ALL=C printf '%.2f' "$tc")"
	assert_equal "$(summary_value sum.txt page-faults)" "$pf"
	require_cmd protoc
	pf_decode t.pftrace t.txt
	# the counter tracks' samples add up to the run's values, with a non-zero
	# sample for each interval in which the JSON has a non-zero count
	run awk '/^  track_descriptor \{/ { d = 1 } /^  \}/ { d = 0 }
		d && /^    uuid:/ { id = $2 } d && /^    name:/ { tn[id] = $2 }
		/^    track_uuid:/ { t = $2 }
		/^    (double_)?counter_value:/ { sum[tn[t]] += $2; if ($2 != 0) n[tn[t]]++ }
		END { printf "%.6f %d %d %d\n", sum["\"task-clock\""], sum["\"page-faults\""],
			n["\"task-clock\""], n["\"page-faults\""] }' t.txt
	read -r ptc ppf ntc npf <<<"$output"
	echo "trace: task-clock $ptc ($ntc samples) page-faults $ppf ($npf); JSON: $tc $pf"
	awk -v a="$ptc" -v b="$tc" -v c="$ppf" -v d="$pf" 'BEGIN { exit !((a - b) ^ 2 < 1e-10 && c == d) }'
	assert_equal "$ntc $npf" "$(jq -r '[.intervals[].events[] | select(.value != null and .value != 0) | .name]
		| "\(map(select(. == "task-clock")) | length) \(map(select(. == "page-faults")) | length)"' a.json)"
	# slices per name in the trace against the JSON tree's counts per name
	run awk '/^      iid:/ { i = $2 } /^      name: "/ && i != "" { nm[i] = $2; i = "" }
		/TYPE_SLICE_BEGIN/ { b = 1 } /^    name_iid:/ && b { c[$2]++; b = 0 }
		END { for (k in c) { n = nm[k]; gsub(/"/, "", n); print n, c[k] } }' t.txt
	assert_equal "$(sort <<<"$output")" \
		"$(tree a.json | awk -F'\t' '{ n = split($1, p, ";"); c[p[n]] += $2 } END { for (k in c) print k, c[k] }' | sort)"
}

@test "an unwritable --json path fails with 125 before the target starts, leaving nothing" {
	run "$SPANSTAT" --json=no/such/dir/x.json -- sh -c "touch $BATS_TEST_TMPDIR/ran"
	assert_failure 125
	assert_output --regexp "^spanstat: cannot write 'no/such/dir/x.json': No such file or directory$"
	mkdir adir
	run "$SPANSTAT" --json=adir -- sh -c "touch $BATS_TEST_TMPDIR/ran"
	assert_failure 125
	assert_output --regexp "^spanstat: cannot write 'adir': Is a directory$"
	run ls -A
	assert_output "adir"
	run ls -A adir
	assert_output ""
}

@test "no temporary files after success, a failing target, a signal or a failed exec" {
	run "$SPANSTAT" --json=ok.json -e task-clock -- true
	assert_success
	run "$SPANSTAT" --json=seven.json -e task-clock -- sh -c 'exit 7'
	assert_failure 7
	run "$SPANSTAT" --json=term.json --spans -e task-clock -- "$DIE" term
	assert_failure 143
	run -127 "$SPANSTAT" --json=missing.json -e task-clock -- ./no-such-command
	assert_failure 127
	run ls -A
	assert_output "ok.json
seven.json
term.json"
	# each file left is a whole document
	for f in ok.json seven.json term.json; do
		jq -e .schema_version "$f" >/dev/null
	done
}

@test "a 4,000-deep recursion: flat nodes any parser reads, nesting and size bounded" {
	run "$SPANSTAT" --json=deep.json --spans -e task-clock -- "$DEEP" 4000
	assert_success
	run "$SPANSTAT" --json=flat.json --spans -e task-clock -- "$DEEP" 1
	assert_success
	# jq 1.6 and Python's json both read it
	assert_equal "$(jq '.spans.merged.nodes | length' deep.json)" 4001
	run python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(len(d["spans"]["threads"][0]["nodes"]))' deep.json
	assert_success
	assert_output 4001
	# the tree is all there: "level" at depths 0..3999, "leaf" under the last
	assert_equal "$(jq -c '[.spans.merged.nodes[] | .depth] | [min, max]' deep.json)" "[0,4000]"
	assert_equal "$(jq -c '.spans.merged.nodes[-1] | [.name, .depth, .parent]' deep.json)" '["leaf",4000,3999]'
	assert_equal "$(jq '[.spans.merged.nodes[] | select(.parent != null and .parent != .id - 1)] | length' deep.json)" 0
	# the document nests no deeper than for a flat run
	assert_equal "$(jq '[paths | length] | max' deep.json)" "$(jq '[paths | length] | max' flat.json)"
	# and its size grows with the node count only (a nested document grew
	# with depth squared): at most 600 bytes a node over the flat run's
	# size, indentation included, thread trees and the merged one counted
	# (a node has some 26 keys, its values among them: about 500 bytes),
	# besides the paths, which stop at 4096 bytes of names (3 more counted
	# for each): here the first 512 nodes' paths of 8 bytes a level
	# ("level",) in each tree
	local big small nodes paths
	big=$(stat -c %s deep.json)
	small=$(stat -c %s flat.json)
	nodes=$(jq '[.spans.threads[].nodes, .spans.merged.nodes | length] | add' deep.json)
	echo "deep $big bytes for $nodes nodes, flat $small bytes"
	[ "$nodes" -eq 8002 ]
	paths=$((2 * 8 * 512 * 513 / 2))
	[ $(((big - small - paths) / nodes)) -le 600 ]
}

@test "names and arguments that are not UTF-8 are written as reversible UTF-8" {
	run "$SPANSTAT" --json=bytes.json --spans -e task-clock -- "$DEEP" bytes $'arg\xff%'
	assert_success
	# a strict UTF-8 decoder accepts the whole document
	run python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8", "strict")' bytes.json
	assert_success
	run jq -r '[.spans.merged.nodes[].name] | sort | .[]' bytes.json
	assert_output "$(printf '%s\n' 'bad%FF%FE' $'caf\xc3\xa9' 'pct%2541' 'trunc%E2%82')"
	assert_equal "$(jq -r '.spans.threads[0].thread_name' bytes.json)" "t%80x"
	assert_equal "$(jq -r '.command[2]' bytes.json)" "arg%FF%25"
	# undoing %XX gives back the exact bytes
	run python3 -c '
import json, sys, urllib.parse
d = json.load(open(sys.argv[1]))
names = sorted(urllib.parse.unquote_to_bytes(n["name"]) for n in d["spans"]["merged"]["nodes"])
print(names == sorted([b"bad\xff\xfe", b"trunc\xe2\x82", b"pct%41", "caf\u00e9".encode()]))
print(urllib.parse.unquote_to_bytes(d["command"][2]) == b"arg\xff%")' bytes.json
	assert_output $'True\nTrue'
}

@test "deeper than spanstat follows: the same spans kept and refused, aggregated or streamed" {
	local opts
	for opts in "" --perfetto=deep.pftrace; do
		# shellcheck disable=SC2086 # opts is one option or none
		run "$SPANSTAT" --json=deep.json --spans $opts -e task-clock -- "$DEEP" 10000
		assert_success
		# 4096 open spans are followed per thread; the rest are refused,
		# counted, and their ends do not unbalance what was kept
		assert_equal "$(jq -c '[(.spans.merged.nodes | length), .spans.decode.spans,
			.spans.decode.over_limit, .spans.decode.unmatched, .spans.decode.unfinished]' deep.json)" \
			'[4096,4096,5905,0,0]'
	done
}

@test "--json: memory per distinct span path stays under a kilobyte, as in the other outputs" {
	local out rss limit=200000
	# ASan's redzones and quarantine: four times as much (the old --json
	# took 1.15 GB without them)
	if nm -D "$SPANSTAT" 2>/dev/null | grep -q __asan_init; then
		limit=800000
	fi
	for out in --json=n.json --folded=n.folded --perfetto=n.pftrace; do
		# the largest RSS of spanstat (and its target) over the run, in KiB
		rss=$(python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
			"$SPANSTAT" --spans "$out" -- python3 "$SRCDIR/tests/workloads/lines_names.py" 200000)
		[ "$rss" -le "$limit" ] || fail "$out: $rss KiB for 200,000 span paths"
	done
	assert_equal "$(jq '.spans.merged.nodes | length' n.json)" 200000
}

# node_paths DOC: "self_ns<TAB>a;b;c" for every merged node, its path made
# by following the parent ids (not the nodes' own path)
node_paths() {
	python3 -c '
import json, sys
nodes = json.load(open(sys.argv[1]))["spans"]["merged"]["nodes"]
path = {}
for n in nodes:
    path[n["id"]] = (path[n["parent"]] + ";" if n["parent"] is not None else "") + n["name"]
for n in nodes:
    print("%d\t%s" % (n["self_ns"], path[n["id"]]))' "$1"
}

@test "every node carries its path; a deep one past 4096 bytes of names has null" {
	run -0 "$SPANSTAT" --json=t.json -- "$THREADS"
	# the path is the names from the root, as the parent ids give them
	assert_equal "$(jq -r '.spans.merged.nodes[] | "\(.self_ns)\t\(.path | join(";"))"' t.json)" \
		"$(node_paths t.json)"
	assert_equal "$(jq -c '[.spans.threads[].nodes[] | select(.path[-1] != .name or (.path | length) != .depth + 1)] | length' t.json)" 0
	# "level" is 5 bytes, 8 counted: paths hold up to 512 of them; the rest
	# are null
	run -0 "$SPANSTAT" --json=deep.json -- "$DEEP" 4000
	assert_equal "$(jq -c '[.spans.merged.nodes[] | select(.path != null) | .depth] | max' deep.json)" 511
	assert_equal "$(jq -c '.spans.merged.nodes[511].path | [length, unique]' deep.json)" '[512,["level"]]'
	assert_equal "$(jq -c '[.spans.merged.nodes[512:][] | .path] | unique' deep.json)" '[null]'
	# the man page's examples read such a document too, a deep node as ...;name
	mkdir ex && cp deep.json ex/spans.json && cd ex
	run -0 --separate-stderr bash -c "$(ex_query "$(man_example "$(schema_page)" "The five span paths with the most self time")")"
	[ "${#lines[@]}" -eq 5 ]
	assert_line --regexp $'^[0-9]+\t\.\.\.;(level|leaf)$'
}

@test "--json alone collects spans; --span-events, --span-allocs and --weight take it" {
	run -0 "$SPANSTAT" --json=t.json -- "$THREADS"
	assert_equal "$(jq -c '.spans | [.collected, .weight, (.merged.nodes | length)]' t.json)" '[true,"wall",8]'
	assert_equal "$(jq '[.spans.merged.nodes[] | select(.self_weight != .self_ns)] | length' t.json)" 0
	run -0 "$SPANSTAT" --json=v.json --span-events=page-faults,cycles --span-allocs --weight=cpu \
		-- "$THREADS"
	assert_equal "$(jq -c '.spans | [.weight, [.metrics[].name]]' v.json)" \
		'["cpu",["off_cpu_ns","page-faults","cycles","allocs","frees","alloc_bytes","free_bytes"]]'
	assert_equal "$(jq '[.spans.merged.nodes[] | select(.self_weight != .self_cpu_ns)] | length' v.json)" 0
	# a weight this machine cannot count: the document is whole, its
	# self_weight null (unknown), never 0
	if ! "$SPANSTAT" -e cycles -x, -- true 2>&1 | grep -q '^[0-9]'; then
		run -0 "$SPANSTAT" --json=c.json --span-events=cycles --weight=cycles -- "$THREADS"
		assert_equal "$(jq -c '[.spans.weight, ([.spans.merged.nodes[].self_weight] | unique)]' c.json)" \
			'["cycles",[null]]'
	fi
	# attached, asking for span values is refused as for any span output
	for opt in --span-events=page-faults --weight=cpu; do
		run -125 "$SPANSTAT" --json=p.json "$opt" -p 1 -- sleep 0.1
		assert_output "spanstat: span collection needs a COMMAND that spanstat starts, not -p, -t, -a or -C"
		[ ! -e p.json ]
	done
}

@test "spanstat-json(5)'s examples run as printed, and say what they claim" {
	page=$(schema_page)
	ln -s "$THREADS" app
	ln -s "$THREADS" bench
	export PATH="$(dirname "$SPANSTAT"):$PATH"
	[ "$(command -v spanstat)" = "$SPANSTAT" ]
	ex=$(man_example "$page" "Counts and the exit status")
	bash -c "$(ex_setup "$ex")" >/dev/null 2>&1
	run -0 --separate-stderr bash -c "$(ex_query "$ex")"
	assert_line --regexp $'^task-clock\t[0-9.]+\tmsec$'
	assert_line --index 2 0
	[ "${#lines[@]}" -eq 3 ]
	run -0 --separate-stderr bash -c "$(man_example "$page" "Events that could not be counted")"
	# the five paths with the most self time: the top of all paths, made
	# from the parent ids
	ex=$(man_example "$page" "The five span paths with the most self time")
	bash -c "$(ex_setup "$ex")" >/dev/null 2>&1
	run -0 --separate-stderr bash -c "$(ex_query "$ex")"
	assert_equal "$output" "$(node_paths spans.json | sort -t$'\t' -k1,1nr | head -n 5)"
	# worker-0's spans: its four paths, with span_threads' counts
	run -0 --separate-stderr bash -c "$(man_example "$page" "The spans of one thread")"
	assert_equal "$(cut -f1,3 <<<"$output" | sort)" "$(printf '%s\n' $'1\twork' \
		$'1000\twork;outer' $'1000\twork;outer;inner' $'1000\twork;outer;inner;scoped')"
	# one path's values over the four workers
	run -0 --separate-stderr bash -c "$(man_example "$page" "The values of one span path")"
	assert_equal "$(jq -c '[.count, (.total_ns > .self_ns), (.cpu_ns + .off_cpu_ns == .total_ns), .metrics]' <<<"$output")" \
		'[4000,true,true,{}]'
	run -0 --separate-stderr bash -c "$(man_example "$page" "Relative spread of each event")"
	assert_equal "$(jq -sc 'map(.name)' <<<"$output")" '["task-clock"]'
}
