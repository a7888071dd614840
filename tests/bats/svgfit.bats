#!/usr/bin/env bats
# svgfit.bats: every SVG spanstat draws (--flamegraph, with --folded-threads,
# --flamechart, the same from `spanstat report`, and diff --flamegraph) is
# looked at in headless Chromium at two window sizes, after its script ran,
# with names, thread names, a command and file names far too long for it:
# no text may reach out of the picture, and a frame's name may not reach out
# of its frame.  The bounds are measured by a script added to a copy of the
# picture, which writes what it found into the document's data-fit.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export LONGDIR WORK
	# a command whose argv[0] alone is longer than the picture is wide
	LONGDIR="$BATS_FILE_TMPDIR/a-directory-whose-name-goes-on-and-on-well-past-the-edge-of-any-picture-$(printf 'x%.0s' {1..60})"
	mkdir -p "$LONGDIR"
	if command -v python3 >/dev/null 2>&1; then
		ln -sf "$(python3 -c 'import sys; print(sys.executable)')" "$LONGDIR/python3-with-a-long-name"
	fi
	WORK="$BATS_FILE_TMPDIR/work.py"
	# Spans through the line protocol: nested frames as wide as the picture
	# whose names are about as long as the frame holds (at 7 px a character,
	# or a little less or more), narrower siblings with long names, and a
	# worker thread whose name is long.  SCALE stretches the times, for a
	# second run that diff compares with the first; a second argument, short,
	# keeps the names short.
	cat >"$WORK" <<'EOF'
import os, sys, threading, time
fd = os.open(os.environ["SPANSTAT_LINES"], os.O_WRONLY | os.O_APPEND)
scale = float(sys.argv[1])
short = sys.argv[2:] == ["short"]
pid, t0 = os.getpid(), time.monotonic_ns() + 1000000
def name(n, tag):
    return tag if short else (tag + "-" + "abcdefghij" * 60)[:n]
def emit(tid, base):
    out, t = [], base
    depth = [160, 166, 167, 168, 170, 180, 400]
    for d, n in enumerate(depth):
        out.append("B %d %s %d %s\n" % (pid, tid, t + d, name(n, "d%d" % d)))
    t = base + len(depth)
    for k, (n, ms) in enumerate([(40, 30), (90, 12), (14, 4), (25, 3), (200, 1)]):
        dur = int(ms * 1000000 * scale)
        out.append("B %d %s %d %s\nE %d %s %d %s\n" % (pid, tid, t, name(n, "k%d" % k),
                                                      pid, tid, t + dur, name(n, "k%d" % k)))
        t += dur
    for d, n in reversed(list(enumerate(depth))):
        t += 1
        out.append("E %d %s %d %s\n" % (pid, tid, t, name(n, "d%d" % d)))
    return out, t
lines, t = emit("-", t0)
def worker():
    tid = threading.get_native_id()
    mine, _ = emit(tid, t0 + 2000000)
    os.write(fd, ("N %d %d - %s\n" % (pid, tid, name(300, "worker"))).encode())
    os.write(fd, "".join(mine).encode())
w = threading.Thread(target=worker)
w.start()
w.join()
os.write(fd, "".join(lines).encode())
time.sleep(max(0, (t - time.monotonic_ns()) / 1e9) + 0.01)
EOF
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# fit SVG FRAGMENT WIDTH,HEIGHT: loads a copy of SVG with a measuring script
# added in Chromium at that window size and prints "N texts" and, for each
# visible text that does not fit, what it is and where it reaches.
fit() {
	local svg=$1 frag=$2 size=$3 copy
	copy="fit-$(basename "$svg" .svg)-${size/,/x}.svg"
	sed '$d' "$svg" >"$copy"
	[ "$(tail -n 1 "$svg")" = '</svg>' ] || return 1
	cat >>"$copy" <<'EOF'
<script type="text/ecmascript"><![CDATA[
window.addEventListener('load', function () {
  var svg = document.documentElement, box = svg.getBoundingClientRect(), n = 0, bad = [];
  var vb = svg.viewBox.baseVal;
  Array.prototype.forEach.call(document.querySelectorAll('text'), function (t) {
    if (!t.textContent.trim() || !t.getClientRects().length) return;
    var r = t.getBoundingClientRect();
    if (!(r.width > 0)) return;
    n++;
    var g = t.parentNode, f = g.classList && g.classList.contains('f') ? g.querySelector('rect') : null;
    var fr = f ? f.getBoundingClientRect() : box, e = 0.5;
    var b = t.getBBox(), m = t.getCTM();
    var lx = m.a * b.x + m.e, rx = m.a * (b.x + b.width) + m.e;
    if (r.left < fr.left - e || r.right > fr.right + e || r.top < box.top - e ||
        r.bottom > box.bottom + e || lx < vb.x - e || rx > vb.x + vb.width + e)
      bad.push((f ? 'frame ' : 'text ') + JSON.stringify(t.textContent.slice(0, 40)) +
               ' at ' + r.left.toFixed(1) + '..' + r.right.toFixed(1) + ' of ' +
               fr.left.toFixed(1) + '..' + fr.right.toFixed(1) + ' (window ' + innerWidth + ')');
  });
  svg.setAttribute('data-fit', n + ' texts' + (bad.length ? ': ' + bad.join('; ') : ''));
});
]]></script>
</svg>
EOF
	timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size="$size" --user-data-dir="$BATS_TEST_TMPDIR/profile" \
		--dump-dom "file://$PWD/$copy$frag" 2>chromium.log |
		sed -n -E 's/.*data-fit="([^"]*)".*/\1/p' | sed 's/&quot;/"/g'
	! grep -qi 'uncaught\|syntaxerror' chromium.log
}

# fits SVG: every visible text of SVG fits, as drawn and after a zoom into
# the first frame of the narrow span with the 200-character name (stretched
# to the full width) with a search, at two window sizes.
fits() {
	local svg=$1 frag size k
	k=$(grep -o '<g class="f"[^>]* data-n="[^"]*"' "$svg" | grep -n -E 'data-n="k4[-"]' | head -n 1 | cut -d: -f1)
	[ -n "$k" ]
	for frag in '' "#zoom=$((k - 1))&search=d"; do
		for size in 800,600 1920,1080; do
			run fit "$svg" "$frag" "$size"
			assert_success
			assert_output --regexp '^[0-9]+ texts$'
			[ "${output%% *}" -ge 3 ]
		done
	done
}

@test "--flamegraph and --flamechart: titles, labels and headings stay inside" {
	require_cmd chromium
	require_cmd python3
	run -0 "$SPANSTAT" --flamegraph=g.svg --flamechart=c.svg -e task-clock -- \
		"$LONGDIR/python3-with-a-long-name" "$WORK" 1
	run -0 "$SPANSTAT" --flamegraph=t.svg --folded-threads -e task-clock -- \
		"$LONGDIR/python3-with-a-long-name" "$WORK" 1
	for f in g.svg c.svg t.svg; do
		fits "$f"
	done
}

@test "report --flamegraph and --flamechart of a record: everything stays inside" {
	require_cmd chromium
	require_cmd python3
	run -0 "$SPANSTAT" record -o run.rec -- "$LONGDIR/python3-with-a-long-name" "$WORK" 1
	run -0 "$SPANSTAT" report --flamegraph=rg.svg --flamechart=rc.svg run.rec
	fits rg.svg
	fits rc.svg
}

@test "diff --flamegraph: the title fits, with short file names and with long ones" {
	require_cmd chromium
	require_cmd python3
	# ordinary file and span names: the title is the longest text
	run -0 "$SPANSTAT" --spans --json=a.json -e task-clock -- python3 "$WORK" 1 short
	run -0 "$SPANSTAT" --spans --json=b.json -e task-clock -- python3 "$WORK" 1.5 short
	# one run a side: no verdict (2), but the picture is drawn
	run -2 "$SPANSTAT" diff --flamegraph=s.svg a.json b.json
	fits s.svg
	# long file names and long span names
	old="the-run-before-the-change-$(printf 'o%.0s' {1..40}).json"
	new="the-run-after-the-change-$(printf 'n%.0s' {1..40}).json"
	run -0 "$SPANSTAT" --spans --json="$old" -e task-clock -- python3 "$WORK" 1
	run -0 "$SPANSTAT" --spans --json="$new" -e task-clock -- python3 "$WORK" 1.5
	run -2 "$SPANSTAT" diff --flamegraph=d.svg "$old" "$new"
	fits d.svg
	grep -q '<title>Differential flame graph: the-run-before-the-change-o*\.json → the-run-after' d.svg
}
