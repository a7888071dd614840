#!/usr/bin/env bats
# speedscope.bats: --pprof and --folded read by speedscope, the npm package
# that tests/install-deps pins, as a person would open them: its own page in
# headless Chromium, offline (file:// only), handed the file the way its
# command line `speedscope FILE` hands it.  What it imported (its Export:
# every frame, and every stack with its weight) and what its Sandwich view
# shows (each name's total and self) are checked against the same run's
# JSON.  --perfetto is not among speedscope's formats (spanstat(1) says so),
# so it is not opened here.

load helpers
bats_require_minimum_version 1.5.0

: "${SPEEDSCOPE_DIR:=/usr/local/lib/speedscope/node_modules/speedscope/dist/release}"

setup_file() {
	export DEMO
	DEMO=$(build_workload demo -finstrument-functions)
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	require_cmd chromium
	require_cmd jq
	[ -f "$SPEEDSCOPE_DIR/index.html" ] ||
		skip_or_fail "speedscope not installed in $SPEEDSCOPE_DIR (sh tests/install-deps)"
}

# speedscope_open FILE: opens FILE in speedscope and prints what
# speedscope-probe.js read off the page (JSON: log, alerts, exported, rows,
# blocked).  As `speedscope FILE` does, a script beside FILE hands its bytes
# to speedscope.loadFileFromBase64, and the page loads it through
# #localProfilePath.  The page is speedscope's index.html with, before its
# bundle (found through <base>), a Content-Security-Policy that lets it load
# files and nothing from a network, and the probe; no host name resolves.
speedscope_open() {
	local file=$1 dir=$BATS_TEST_TMPDIR
	printf 'speedscope.loadFileFromBase64("%s", "%s")\n' "$file" "$(base64 -w0 "$file")" >"$file.js"
	local csp="default-src file: blob: data: 'unsafe-inline' 'unsafe-eval'"
	sed "s|<head>|<head><meta http-equiv=\"Content-Security-Policy\" content=\"$csp\"><base href=\"file://$SPEEDSCOPE_DIR/\"><script src=\"file://$SRCDIR/tests/bats/speedscope-probe.js\"></script>|" \
		"$SPEEDSCOPE_DIR/index.html" >"$file.html"
	# speedscope draws with WebGL and loads nothing without it: SwiftShader's,
	# in software.  The DOM is dumped when 40 s of the page's time have passed
	# (a clock that runs ahead while the page is idle).  On a machine
	# busy with other work the page was once dumped before its import had
	# ended (no profile exported): then it is opened once more.
	local try
	for try in 1 2; do
		timeout 120 chromium --headless --no-sandbox --disable-gpu --enable-unsafe-swiftshader \
			--no-first-run --disable-background-networking --disable-component-update \
			--disable-sync --host-resolver-rules='MAP * ~NOTFOUND' --lang=en-US \
			--window-size=1280,1024 --virtual-time-budget=40000 \
			--enable-logging=stderr --v=0 --user-data-dir="$dir/profile-$file-$try" \
			--dump-dom "file://$dir/$file.html#localProfilePath=$dir/$file.js&view=sandwich" \
			2>"chromium-$file.log" >"$file.dom" || return 1
		sed -n 's|.*<pre id="speedscope-probe">\([^<]*\)</pre>.*|\1|p' "$file.dom" |
			base64 -d >"$file.seen"
		jq -e '.exported.profiles | length > 0' "$file.seen" >/dev/null 2>&1 && break
	done
	cat "$file.seen"
}

# stacks: "path weight" per stack of speedscope's Export (the first
# profile), frames joined with ';', from its opens and closes
stacks() {
	jq -r '.exported | .shared.frames as $f | .profiles[0]
		| reduce .events[] as $e ({stack: [], at: .startValue, w: {}};
			(if (.stack | length) > 0
			 then .w[.stack | map($f[.].name) | join(";")] += $e.at - .at else . end)
			| .at = $e.at
			| if $e.type == "O" then .stack += [$e.frame] else .stack |= .[:-1] end)
		| .w | to_entries[] | select(.value > 0) | "\(.key) \(.value)"' | sort
}

# json_stacks FILE: "path self_ns" per node of the run's merged tree with
# self time
json_stacks() {
	jq -r '.spans.merged.nodes as $n
		| reduce $n[] as $x ({}; .[$x.id | tostring] =
			(if $x.parent == null then $x.name else .[$x.parent | tostring] + ";" + $x.name end))
		| . as $p | $n[] | select(.self_ns > 0) | "\($p[.id | tostring]) \(.self_ns)"' "$1" | sort
}

# json_names FILE: "name total self" per span name of the run, in
# nanoseconds, as speedscope's Sandwich counts them: total, the self time
# of every stack the name is in (once per stack); self, of the stacks it ends
json_names() {
	json_stacks "$1" | awk '
		{ n = split($1, f, ";"); delete in_stack
		  for (i = 1; i <= n; i++) if (!(f[i] in in_stack)) { in_stack[f[i]] = 1; total[f[i]] += $2 }
		  self[f[n]] += $2 }
		END { for (name in total) print name, total[name], self[name] + 0 }' | sort
}

# shown_names UNIT: "name total self" per row of the Sandwich view, its
# values as shown less their share: "12,345" with UNIT none, "1.23ms" (two
# decimals of ns, µs, ms or s) with UNIT time
shown_names() {
	jq -r --arg unit "$1" '
		def value: sub(" \\(.*\\)$"; "") | if $unit == "none" then gsub(","; "")
			else capture("^(?<v>[0-9.]+)(?<u>ns|µs|ms|s)$") | "\(.v) \(.u)" end;
		.rows[] | "\(.[2]) \(.[0] | value) \(.[1] | value)"' | sort
}

# near: reads "name total self" shown with two decimals of a time unit,
# then (FILE) the exact nanoseconds; fails unless every shown value is the
# exact one rounded, the names the same
near() {
	awk 'function ns(u) { return u == "ns" ? 1 : u == "µs" ? 1e3 : u == "ms" ? 1e6 : 1e9 }
		function bad(v, u, want) { d = v * ns(u) - want; if (d < 0) d = -d; return d > 0.0051 * ns(u) }
		FILENAME == "-" { t[$1] = $2; tu[$1] = $3; s[$1] = $4; su[$1] = $5; next }
		{ seen[$1] = 1
		  if (!($1 in t)) { print "not shown: " $1; err = 1; next }
		  if (bad(t[$1], tu[$1], $2) || bad(s[$1], su[$1], $3)) {
			print "shown " $1 " " t[$1] tu[$1] " " s[$1] su[$1] ", spanstat: " $2 " " $3; err = 1 } }
		END { for (n in t) if (!(n in seen)) { print "shown, not in the run: " n; err = 1 }
		      exit err }' - "$1"
}

# The run both files come from, and its JSON: the demo of README's quick start
run_demo() {
	run "$SPANSTAT" --pprof=demo.pb.gz --folded=demo.folded --json=demo.json -- "$DEMO"
	assert_success
}

@test "speedscope reads --folded: the same stacks and weights, the same names and totals shown" {
	run_demo
	run speedscope_open demo.folded
	assert_success
	echo "$output" >seen.json
	# read as what it is, with no complaint, and nothing asked of a network
	run jq -r '.log[]' seen.json
	assert_line "Importing as collapsed stack format"
	run jq -r '.alerts[], .blocked[]' seen.json
	assert_output ""
	# every stack with its self time, as spanstat counted it, and the total
	run stacks <seen.json
	assert_output "$(json_stacks demo.json)"
	assert_output "$(sort demo.folded)"
	run jq '.exported.profiles[0] | .endValue - .startValue' seen.json
	assert_output "$(jq '[.spans.merged.nodes[].self_ns] | add' demo.json)"
	run jq -r '[.exported.shared.frames[].name] | sort | join(" ")' seen.json
	assert_output "$(jq -r '[.spans.merged.nodes[].name] | unique | join(" ")' demo.json)"
	# the Sandwich view: every name with its total and self, unit-less
	run shown_names none <seen.json
	assert_output "$(json_names demo.json)"
	[ "${#lines[@]}" -ge 5 ]
}

@test "speedscope reads --pprof: the same stacks in nanoseconds, names with their files and lines" {
	run_demo
	run speedscope_open demo.pb.gz
	assert_success
	echo "$output" >seen.json
	run jq -r '.log[]' seen.json
	assert_line "Importing as protobuf encoded pprof file"
	run jq -r '.alerts[], .blocked[]' seen.json
	assert_output ""
	# the default sample, self wall time (with no default, speedscope would
	# take the last, off-CPU time): every stack, exactly
	run jq -r '.exported.profiles[0].unit' seen.json
	assert_output nanoseconds
	run stacks <seen.json
	assert_output "$(json_stacks demo.json)"
	run jq '.exported.profiles[0] | .endValue - .startValue' seen.json
	assert_output "$(jq '[.spans.merged.nodes[].self_ns] | add' demo.json)"
	# each function where the JSON puts it
	jq -r '.exported.shared.frames[] | "\(.name) \(.file):\(.line)"' seen.json | sort >frames.txt
	run cat frames.txt
	assert_output "$(jq -r '.spans.merged.nodes[] | "\(.name) \(.file):\(.line)"' demo.json | sort -u)"
	# the Sandwich view: every name, its total and self rounded as shown
	json_names demo.json >names.txt
	run near names.txt < <(shown_names time <seen.json)
	assert_success
	[ "$(wc -l <names.txt)" -ge 5 ]
}
