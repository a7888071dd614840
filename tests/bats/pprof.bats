#!/usr/bin/env bats
# pprof.bats: --pprof read back by its real consumer, go tool pprof: every
# stack path of the same run's JSON is a sample with its exact count, self
# wall, on- and off-CPU time and span values; names and files as the JSON
# has them; --weight picks the default sample type; the file is gzip; the
# main mapping names the target's program and build id, live and from a
# record (an older record's: its command, no build id).

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export SPAN_THREADS METRICS
	SPAN_THREADS=$(build_workload span_threads $(span_link_flags))
	METRICS=$(build_workload span_metrics $(span_link_flags))
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	require_cmd go
	export HOME="$BATS_TEST_TMPDIR" GOCACHE="$BATS_TEST_TMPDIR/gocache" GOFLAGS=-mod=mod
}

# raw_paths FILE: "path v1 v2 ..." for every sample of `go tool pprof -raw`,
# the path outermost first, joined with ';'.
raw_paths() {
	timeout 120 go tool pprof -raw "$1" 2>/dev/null | awk '
		/^Samples:/ { s = 1; next }
		/^Locations/ { s = 0; l = 1; next }
		/^Mappings/ { l = 0 }
		s && /:/ { n++; split($0, parts, ":"); vals[n] = parts[1]; ids[n] = parts[2] }
		l && /^ *[0-9]+:/ { id = $1; sub(":", "", id); name[id] = $4 }
		END {
			for (i = 1; i <= n; i++) {
				k = split(ids[i], a, " "); p = ""
				for (j = k; j >= 1; j--) p = p (p == "" ? "" : ";") name[a[j]]
				v = vals[i]; gsub(/^ +| +$/, "", v); gsub(/ +/, " ", v)
				print p, v
			}
		}' | sort
}

# json_paths FILE FIELDS: "path f1 f2 ..." for every node of the merged tree
json_paths() {
	jq -r --arg f "$2" '.spans.merged.nodes as $n
		| reduce $n[] as $x ({}; .[$x.id | tostring] =
			(if $x.parent == null then $x.name else .[$x.parent | tostring] + ";" + $x.name end))
		| . as $p | $n[] | . as $node
		| "\($p[.id | tostring]) \([$f | split(",")[] | $node[.] | tostring] | join(" "))"' "$1" | sort
}

@test "--pprof: every path a sample with the JSON's exact count and self times" {
	run "$SPANSTAT" --pprof=t.pb.gz --json=t.json -e task-clock -- "$SPAN_THREADS"
	assert_success
	run gzip -t t.pb.gz
	assert_success
	run raw_paths t.pb.gz
	assert_success
	assert_output "$(json_paths t.json count,self_ns,self_cpu_ns,self_off_cpu_ns)"
	[ "${#lines[@]}" -ge 5 ]
	# the sample types, wall the default
	run timeout 120 go tool pprof -raw t.pb.gz
	assert_line "spans/count wall/nanoseconds[dflt] cpu/nanoseconds off_cpu/nanoseconds"
}

@test "--pprof: -top by name and per value; --weight sets the default sample" {
	run "$SPANSTAT" --pprof=m.pb.gz --json=m.json --span-events=page-faults --span-allocs \
		--weight=page-faults -e task-clock -- "$METRICS"
	assert_success
	run timeout 120 go tool pprof -top m.pb.gz
	assert_success
	assert_output --partial "Type: page-faults"
	# the touch holds nearly every fault, as the JSON says
	faults=$(jq '[.spans.merged.nodes[] | select(.name == "touch") | .self_metrics["page-faults"]] | first' m.json)
	assert_line --regexp "^ +$faults +[0-9.]+% +[0-9.]+% +$faults +[0-9.]+% +touch$"
	run timeout 120 go tool pprof -top -sample_index=allocs m.pb.gz
	assert_line --regexp "^ +1000 .* mallocs$"
	run timeout 120 go tool pprof -top -sample_index=off_cpu m.pb.gz
	assert_output --regexp "(ms|s) +[0-9.]+% +[0-9.]+% .* sleep"
}

@test "--pprof: C++ names demangled as the other outputs show them, with their source lines" {
	local g="$BATS_FILE_TMPDIR/g" bin
	build_cxx_workload g/libspan_cxxlib.so span_cxxlib -g -fPIC -shared >/dev/null || return 1
	# shellcheck disable=SC2046
	bin=$(build_cxx_workload g/span_cxx span_cxx -g -finstrument-functions-exclude-file-list=bits/ \
		-L"$g" -Wl,-rpath,"$g" -lspan_cxxlib $(span_link_flags)) || return 1
	run "$SPANSTAT" --pprof=c.pb.gz --json=c.json -e task-clock -- "$bin"
	assert_success
	run timeout 120 go tool pprof -raw c.pb.gz
	assert_output --partial "app::Parser::depth"
	# a function's file and line as the JSON has them
	file=$(jq -r '[.spans.merged.nodes[] | select(.name == "app::Parser::depth") | .file] | first' c.json)
	line=$(jq -r '[.spans.merged.nodes[] | select(.name == "app::Parser::depth") | .line] | first' c.json)
	assert_output --regexp "app::Parser::depth ${file//./\\.}:$line"
}

# build_id FILE: the GNU build id readelf finds in FILE
build_id() {
	readelf -n "$1" | awk '/Build ID:/ { print $3 }'
}

@test "--pprof: the main mapping is the target's program, by its absolute path and build id" {
	require_cmd readelf
	local exe id
	exe=$(readlink -f "$SPAN_THREADS")
	id=$(build_id "$exe")
	[ -n "$id" ]
	# found on PATH through a symbolic link: named as it runs, links resolved
	mkdir bin
	ln -s "$SPAN_THREADS" bin/app
	PATH="$PWD/bin:$PATH" run -0 "$SPANSTAT" --pprof=t.pb.gz -- app
	run --separate-stderr -0 timeout 120 go tool pprof -raw t.pb.gz
	assert_line --partial "1: 0x0/0x0/0x0 $exe $id ["
	[[ "$stderr" != *"Main binary filename not available"* ]]
	[ -z "$stderr" ]
	run --separate-stderr -0 timeout 120 go tool pprof -top t.pb.gz
	assert_line "File: $(basename "$exe")"
	assert_line "Build ID: $id"
	[ -z "$stderr" ]
}

@test "--pprof: report names the program the record holds, not the file there now" {
	require_cmd readelf
	local id
	cp "$SPAN_THREADS" app
	id=$(build_id app)
	run -0 "$SPANSTAT" --record=r.rec --pprof=live.pb.gz -- ./app
	# another program in its place: the record's build id stays
	rm app && cp /bin/true app
	[ "$(build_id app)" != "$id" ]
	run -0 "$SPANSTAT" report --pprof=rep.pb.gz r.rec
	cmp live.pb.gz rep.pb.gz
	run --separate-stderr -0 timeout 120 go tool pprof -raw rep.pb.gz
	assert_line --partial "1: 0x0/0x0/0x0 $(readlink -f .)/app $id ["
	[ -z "$stderr" ]
}

@test "--pprof: report of a record written before the program was kept: its command, no build id" {
	require_cmd readelf
	cp "$SPAN_THREADS" app
	run -0 "$SPANSTAT" record -o r.rec -- ./app
	[ -n "$(build_id app)" ]
	python3 "$BATS_TEST_DIRNAME/recraft.py" r.rec old.rec head:old
	[ "$(stat -c %s old.rec)" -lt "$(stat -c %s r.rec)" ]
	# read as before, every other output the same
	run -0 "$SPANSTAT" report --json=new.json r.rec
	run -0 "$SPANSTAT" report --json=old.json --pprof=old.pb.gz old.rec
	cmp new.json old.json
	run --separate-stderr -0 timeout 120 go tool pprof -raw old.pb.gz
	assert_line --partial "1: 0x0/0x0/0x0 ./app  ["
	[ -z "$stderr" ]
}
