#!/usr/bin/env bats
# uprobes.bats: uprobe:PATH:SYMBOL and uretprobe:PATH:SYMBOL (bpftrace's
# spelling) through the kernel's uprobe PMU, with no perf probe and no
# tracefs write, as -e and --span-events name them, through the installed
# binary.  uprobe_calls calls its own uprobe_target() exactly N times and
# malloc() M times; span_uprobe calls uprobe_target() K times inside the span
# "calls", never in "none", and once more in "outer" around them.  Counts are
# compared with what the workloads did, and with Debian's perf counting a
# probe that perf probe made on the same function.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export CALLS SPANUP
	CALLS=$(build_workload uprobe_calls)
	SPANUP=$(build_workload span_uprobe $(span_link_flags))
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	[ -r /sys/bus/event_source/devices/uprobe/type ] ||
		skip_or_fail "no uprobe PMU (/sys/bus/event_source/devices/uprobe)"
}

teardown() {
	[ -z "${OLD_PARANOID:-}" ] || echo "$OLD_PARANOID" >/proc/sys/kernel/perf_event_paranoid
	if [ -n "${PROBE_GROUP:-}" ]; then
		timeout 60 perf probe -q -d "$PROBE_GROUP:*" >/dev/null 2>&1 || true
	fi
}

# csv_count FILE NAME: the count (first field) of NAME in -x, output.
csv_count() {
	awk -F, -v n="$2" '$3 == n { print $1 }' "$1"
}

# node FILE NAME FIELD: FIELD (a jq path under the node) of the merged node NAME.
node() {
	jq "[.spans.merged.nodes[] | select(.name == \"$2\") | $3] | first" "$1"
}

@test "a target's threads and children are counted, and its fork and pthread_create work" {
	FORK=$(build_workload uprobe_fork -pthread)
	run -0 "$SPANSTAT" -x, -o s.csv \
		-e "uprobe:$FORK:uprobe_target,uretprobe:$FORK:uprobe_target" -- "$FORK" 321
	cat s.csv
	assert_equal "$(csv_count s.csv "uprobe:$FORK:uprobe_target")" 963
	assert_equal "$(csv_count s.csv "uretprobe:$FORK:uprobe_target")" 963
	# the probes spanstat made in tracefs for it are gone (others' may be
	# live meanwhile: this run's are the ones on this test's program)
	run ! grep -sF "$FORK" /sys/kernel/tracing/uprobe_events
}

@test "uprobe and uretprobe count a function's calls and returns exactly" {
	for n in 0 1 4321; do
		run -0 "$SPANSTAT" -x, -o s.csv \
			-e "uprobe:$CALLS:uprobe_target,uretprobe:$CALLS:uprobe_target" -- "$CALLS" "$n"
		cat s.csv
		assert_equal "$(csv_count s.csv "uprobe:$CALLS:uprobe_target")" "$n"
		assert_equal "$(csv_count s.csv "uretprobe:$CALLS:uprobe_target")" "$n"
	done
}

@test "a symlink, +OFFSET and a hex address name the same function" {
	ln -s "$CALLS" link
	addr=$(nm "$CALLS" | awk '$3 == "uprobe_target" { print $1 }')
	[ -n "$addr" ]
	run -0 "$SPANSTAT" -x, -o s.csv -e "uprobe:$PWD/link:uprobe_target,uprobe:$CALLS:0x$addr" \
		-e "uprobe:$CALLS:uprobe_target+0" -- "$CALLS" 77
	cat s.csv
	assert_equal "$(csv_count s.csv "uprobe:$PWD/link:uprobe_target")" 77
	assert_equal "$(csv_count s.csv "uprobe:$CALLS:0x$addr")" 77
	assert_equal "$(csv_count s.csv "uprobe:$CALLS:uprobe_target+0")" 77
}

@test "malloc in libc, named as a path or bare: the program's own calls and libc's" {
	libc=$(ldd "$CALLS" | awk '$1 ~ /^libc\.so/ { print $3 }')
	[ -n "$libc" ]
	run -0 "$SPANSTAT" -x, -o base.csv -e "uprobe:$libc:malloc" -- "$CALLS" 0 0
	base=$(csv_count base.csv "uprobe:$libc:malloc")
	run -0 "$SPANSTAT" -x, -o m.csv \
		-e "uprobe:$libc:malloc,uprobe:c:malloc,uprobe:libc:malloc,uprobe:libc.so.6:malloc" \
		-e "uretprobe:$libc:malloc" -- "$CALLS" 0 5000
	cat base.csv m.csv
	got=$(csv_count m.csv "uprobe:$libc:malloc")
	echo "malloc: $base without the program's calls, $got with 5000 of them"
	[ "$got" -ge 5000 ]
	[ "$got" -le $((5000 + base + 16)) ]
	# the bare names find the same file: the same calls
	for name in c libc libc.so.6; do
		assert_equal "$(csv_count m.csv "uprobe:$name:malloc")" "$got"
	done
	assert_equal "$(csv_count m.csv "uretprobe:$libc:malloc")" "$got"
}

@test "the counts equal perf's, counting a perf probe on the same function" {
	require_cmd perf
	PROBE_GROUP=spanstat$$
	if ! out=$(timeout 60 perf probe -q -x "$CALLS" "$PROBE_GROUP:calls=uprobe_target" 2>&1) ||
		! out=$(timeout 60 perf probe -q -x "$CALLS" "$PROBE_GROUP:rets=uprobe_target%return" 2>&1); then
		skip_or_fail "perf probe cannot add a uprobe here: $out"
	fi
	# perf probe names a return probe EVENT__return
	run -0 timeout 60 perf stat -x, -o p.csv -e "$PROBE_GROUP:calls,$PROBE_GROUP:rets__return" \
		-- "$CALLS" 2345
	run -0 "$SPANSTAT" -x, -o s.csv \
		-e "uprobe:$CALLS:uprobe_target,uretprobe:$CALLS:uprobe_target" -- "$CALLS" 2345
	cat p.csv s.csv
	assert_equal "$(csv_count p.csv "$PROBE_GROUP:calls")" 2345
	assert_equal "$(csv_count p.csv "$PROBE_GROUP:rets__return")" 2345
	assert_equal "$(csv_count s.csv "uprobe:$CALLS:uprobe_target")" 2345
	assert_equal "$(csv_count s.csv "uretprobe:$CALLS:uprobe_target")" 2345
}

@test "--span-events=uprobe: each span counts its own calls, in both transports" {
	for opts in "--perfetto=s.pftrace" ""; do
		run -0 "$SPANSTAT" $opts --spans --json=x.json -o sum.txt \
			--span-events="uprobe:$SPANUP:uprobe_target,uretprobe:$SPANUP:uprobe_target" \
			-e task-clock -- "$SPANUP" 333
		for ev in uprobe uretprobe; do
			key="$ev:$SPANUP:uprobe_target"
			echo "$opts $ev: $(node x.json calls ".metrics[\"$key\"]")"
			assert_equal "$(node x.json calls ".metrics[\"$key\"]")" 333
			assert_equal "$(node x.json none ".metrics[\"$key\"]")" 0
			assert_equal "$(node x.json outer ".metrics[\"$key\"]")" 334
		done
	done
	grep -E "uprobe:$SPANUP:uprobe_target/call" sum.txt
	grep -E '^ +1 .* 333\.0 +333\.0 +outer;calls$' sum.txt
}

@test "a target without the privilege a uprobe needs shows <not supported> per span, and null" {
	[ "$(id -u)" = 0 ] || skip "needs root to run the target as another user"
	# page-faults:u is an unprivileged user's to count up to level 2
	if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 2 ]; then
		OLD_PARANOID=$(cat /proc/sys/kernel/perf_event_paranoid)
		echo 2 >/proc/sys/kernel/perf_event_paranoid
	fi
	scratch=$(mktemp -d /tmp/spanstat-uprobes.XXXXXX)
	chmod 0755 "$scratch"
	cp "$SPANUP" "$scratch/span_uprobe"
	cp -L "$SPANSTAT_LIBDIR"/libspanstat.so.0 "$scratch/"
	chmod -R a+rX "$scratch"
	run "$SPANSTAT" --spans --json=x.json -o sum.txt \
		--span-events="uprobe:$scratch/span_uprobe:uprobe_target,page-faults:u" -- \
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env LD_LIBRARY_PATH="$scratch" "$scratch/span_uprobe" 20
	rm -rf "$scratch"
	assert_success
	cat sum.txt
	grep -E '<not supported> +[0-9.,]+ +outer;calls$' sum.txt
	assert_equal "$(node x.json calls ".metrics[\"uprobe:$scratch/span_uprobe:uprobe_target\"]")" null
	[[ "$(node x.json calls '.metrics["page-faults:u"]')" =~ ^[0-9]+$ ]]
	assert_equal "$(jq -c '[.spans.metrics[] | .supported]' x.json)" '[true,false,true]'
}

@test "a uprobe that cannot be resolved is one line, exit 125, nothing run" {
	printf 'not elf\n' >text
	mkdir dir
	local -a bad=(
		"uprobe:/no/such/file:f|spanstat: cannot probe 'uprobe:/no/such/file:f': '/no/such/file': No such file or directory"
		"uprobe:$PWD/text:f|spanstat: cannot probe 'uprobe:$PWD/text:f': '$PWD/text' is not an ELF object"
		"uprobe:$PWD/dir:f|spanstat: cannot probe 'uprobe:$PWD/dir:f': '$PWD/dir' is not a regular file"
		"uprobe:$CALLS:uprobe_targte|spanstat: cannot probe 'uprobe:$CALLS:uprobe_targte': no function 'uprobe_targte' in '$CALLS' (did you mean 'uprobe_target'?)"
		"uprobe:$CALLS:malloc|spanstat: cannot probe 'uprobe:$CALLS:malloc': 'malloc' is not defined in '$CALLS' (it is imported: probe the library that defines it)"
		"uprobe:$CALLS:uprobe_target+100000|spanstat: cannot probe 'uprobe:$CALLS:uprobe_target+100000': offset 100000 is past the end of 'uprobe_target' (*"
		"uprobe:$CALLS:0x1|spanstat: cannot probe 'uprobe:$CALLS:0x1': address 0x1 is in no executable segment of '$CALLS'"
		"uprobe:$CALLS:f+x|spanstat: cannot probe 'uprobe:$CALLS:f+x': expected SYMBOL, SYMBOL+OFFSET or 0xADDRESS after the path, not 'f+x'"
		"uretprobe:$CALLS|spanstat: cannot probe 'uretprobe:$CALLS': expected uretprobe:PATH:SYMBOL"
		"uprobe:no_such_lib_xyz:f|spanstat: cannot probe 'uprobe:no_such_lib_xyz:f': no program 'no_such_lib_xyz' in \$PATH and no library 'no_such_lib_xyz' in the library directories"
	)
	for item in "${bad[@]}"; do
		spec=${item%%|*} want=${item#*|}
		for opt in -e --span-events; do
			run -125 "$SPANSTAT" "$opt" "$spec" -- touch ran
			assert_equal "${#lines[@]}" 1
			if [ "$opt" = -e ]; then
				[[ "$output" == $want ]] || fail "$output"
			else
				[[ "$output" == "spanstat: invalid --span-events '$spec': "${want#spanstat: } ]] ||
					fail "$output"
			fi
			assert_not_exists ran
		done
	done
}

@test "an IFUNC is refused with what to probe instead" {
	libc=$(ldd "$CALLS" | awk '$1 ~ /^libc\.so/ { print $3 }')
	readelf -W --dyn-syms "$libc" | grep -q ' IFUNC .* memcpy@@' ||
		skip "this libc's memcpy is not an IFUNC"
	run -125 "$SPANSTAT" -e "uprobe:$libc:memcpy" -- touch ran
	assert_output --regexp "^spanstat: cannot probe 'uprobe:$libc:memcpy': 'memcpy' is an indirect function \(IFUNC\)"
	assert_not_exists ran
}

@test "a FIFO named like the program in \$PATH is passed over, not waited on" {
	mkdir bin
	mkfifo bin/uprobe_fifo_name
	chmod +x bin/uprobe_fifo_name
	run -125 env PATH="$PWD/bin:$PATH" timeout -s KILL 20 "$SPANSTAT" \
		-e uprobe:uprobe_fifo_name:f -- touch ran
	assert_output "spanstat: cannot probe 'uprobe:uprobe_fifo_name:f': no program 'uprobe_fifo_name' in \$PATH and no library 'uprobe_fifo_name' in the library directories"
	assert_not_exists ran
}

@test "a process whose environment lost SPANSTAT_VALUES leaves the span sums unknown, not partial" {
	# the first run counts its 7 calls; the second, told no values, sends
	# spans without them: their sum would read 7 for 12 calls
	run -0 "$SPANSTAT" --spans --json=x.json -o sum.txt \
		--span-events="uprobe:$SPANUP:uprobe_target" -- \
		sh -c "'$SPANUP' 7 && SPANSTAT_VALUES= '$SPANUP' 5 && SPANSTAT_VALUES=junk '$SPANUP' 5"
	cat sum.txt
	assert_equal "$(node x.json calls .count)" 3
	assert_equal "$(node x.json calls ".metrics[\"uprobe:$SPANUP:uprobe_target\"]")" null
	assert_equal "$(jq -c '[.spans.metrics[] | .supported]' x.json)" '[true,false]'
	# recorded (the live run decodes no event: the replay finds them)
	run -0 "$SPANSTAT" record -o x.rec --span-events="uprobe:$SPANUP:uprobe_target" -- \
		sh -c "'$SPANUP' 7 && SPANSTAT_VALUES= '$SPANUP' 5"
	run -0 "$SPANSTAT" report --json=r.json x.rec
	assert_equal "$(node r.json calls ".metrics[\"uprobe:$SPANUP:uprobe_target\"]")" null
	assert_equal "$(jq -c '[.spans.metrics[] | .supported]' r.json)" '[true,false]'
	# and alone, the same program's values are known
	run -0 "$SPANSTAT" --spans --json=y.json -o sum.txt \
		--span-events="uprobe:$SPANUP:uprobe_target" -- sh -c "'$SPANUP' 7"
	assert_equal "$(node y.json calls ".metrics[\"uprobe:$SPANUP:uprobe_target\"]")" 7
}
