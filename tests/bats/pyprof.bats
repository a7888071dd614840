#!/usr/bin/env bats
# pyprof.bats: Python programs with no change to them (spanstat --python),
# as installed: every call a span named module.qualname, with file:line in
# JSON, through the C profile hook; nested calls, a method, a recursion, a
# generator, an exception caught two levels up, two threads and a fork child
# that leaves through os._exit, counted exactly, aggregated in the target
# and streamed; C functions with --python=c; the program's argv, __main__,
# exit status and own sitecustomize untouched; the explicit module's C path
# and its pure-Python path (SPANSTAT_PY_PURE=1) giving the same trees.

load helpers
bats_require_minimum_version 1.5.0

APP="$WORKLOADS/pyprof_app.py"

setup() {
	cd "$BATS_TEST_TMPDIR"
	require_cmd python3
	require_cmd jq
	# the C part is built when configure finds the Python headers
	find "$STAGE" -name '_spanstat*.so' | grep -q . || skip_or_fail "no _spanstat.so (no Python headers)"
}

# py_paths FILE: "count unfinished path" for the paths of the merged tree made
# of the program's own functions (__main__.*), under the root or under a
# thread's threading.Thread.run; sorted by path
py_paths() {
	jq -r '.spans.merged.nodes as $n
		| def p($i): if $n[$i].parent == null then $n[$i].name
		             else p($n[$i].parent) + ";" + $n[$i].name end;
		$n | to_entries[] | "\(.value.count) \(.value.unfinished) \(p(.key))"' "$1" |
		awk '{ n = split($3, a, ";"); ok = 1
		       for (i = 1; i <= n; i++)
			       if (a[i] !~ /^__main__\./ && !(i == 1 && a[i] == "threading.Thread.run")) ok = 0
		       if (ok) print }' | sort -k3
}

# What pyprof_app.py calls, from its source: main's calls once each, leaf
# under them as often as their loops run, gen once per run (3 yields and the
# end), rec five deep, two threads, and the fork child's calls again under
# the <module>;main;forker it begins anew (left open by os._exit: unfinished).
EXPECTED="2 1 __main__.<module>
1 0 __main__.<module>;__main__.Shape
2 1 __main__.<module>;__main__.main
1 0 __main__.<module>;__main__.main;__main__.Shape.area
1 0 __main__.<module>;__main__.main;__main__.Shape.area;__main__.mid
2 0 __main__.<module>;__main__.main;__main__.Shape.area;__main__.mid;__main__.leaf
1 0 __main__.<module>;__main__.main;__main__.catcher
1 0 __main__.<module>;__main__.main;__main__.catcher;__main__.middle
1 0 __main__.<module>;__main__.main;__main__.catcher;__main__.middle;__main__.raiser
2 1 __main__.<module>;__main__.main;__main__.forker
1 0 __main__.<module>;__main__.main;__main__.forker;__main__.mid
3 0 __main__.<module>;__main__.main;__main__.forker;__main__.mid;__main__.leaf
4 0 __main__.<module>;__main__.main;__main__.gen
3 0 __main__.<module>;__main__.main;__main__.gen;__main__.leaf
1 0 __main__.<module>;__main__.main;__main__.main.<locals>.<listcomp>
1 0 __main__.<module>;__main__.main;__main__.mid
3 0 __main__.<module>;__main__.main;__main__.mid;__main__.leaf
1 0 __main__.<module>;__main__.main;__main__.rec
1 0 __main__.<module>;__main__.main;__main__.rec;__main__.rec
1 0 __main__.<module>;__main__.main;__main__.rec;__main__.rec;__main__.rec
1 0 __main__.<module>;__main__.main;__main__.rec;__main__.rec;__main__.rec;__main__.rec
1 0 __main__.<module>;__main__.main;__main__.rec;__main__.rec;__main__.rec;__main__.rec;__main__.rec
2 0 threading.Thread.run
2 0 threading.Thread.run;__main__.worker
2 0 threading.Thread.run;__main__.worker;__main__.mid
4 0 threading.Thread.run;__main__.worker;__main__.mid;__main__.leaf"

@test "--python: every call a span, exact counts, aggregated and streamed, balanced trees" {
	local mode
	for mode in aggregate stream; do
		if [ "$mode" = aggregate ]; then
			run "$SPANSTAT" --python --json=$mode.json --folded=a.folded -- python3 "$APP"
		else
			run "$SPANSTAT" record --python -o run.rec -- python3 "$APP"
			assert_success
			run "$SPANSTAT" report --json=$mode.json run.rec
		fi
		assert_success
		run py_paths $mode.json
		assert_output "$EXPECTED"
		# only the fork child's three open calls, left by os._exit; nothing unmatched
		assert_equal "$(jq -c '.spans.decode | [.unmatched, .unfinished, .dropped]' $mode.json)" "[0,3,0]"
		# two Python processes: the program and its fork child (pyenv's shim
		# may add shell processes of its own)
		assert_equal "$(jq '[.spans.threads[] | select(any(.nodes[]; .name == "__main__.<module>")) | .pid] | unique | length' $mode.json)" 2
	done
	# live streaming (--perfetto) gives the same tree
	run "$SPANSTAT" --python --perfetto=p.pftrace --json=live.json -- python3 "$APP"
	assert_success
	[ -s p.pftrace ]
	run py_paths live.json
	assert_output "$EXPECTED"
	# folded keeps the name alone, JSON has the file and line of each function
	grep -q '^__main__.<module>;__main__.main;__main__.gen;__main__.leaf [0-9]*$' a.folded
	run grep -c $'\x1f' a.folded
	assert_output 0
	local line
	line=$(grep -n '^def leaf' "$APP" | cut -d: -f1)
	assert_equal "$(jq -r '[.spans.merged.nodes[] | select(.name == "__main__.leaf") | "\(.file):\(.line)"] | unique | join(" ")' aggregate.json)" \
		"$APP:$line"
	assert_equal "$(jq -r '[.spans.merged.nodes[] | select(.name == "__main__.Shape.area") | "\(.file):\(.line)"] | first' aggregate.json)" \
		"$APP:$(grep -n 'def area' "$APP" | cut -d: -f1)"
}

@test "--python=c: C functions called from Python are spans too; without =c they are not" {
	run "$SPANSTAT" --python=c --json=c.json -- python3 "$APP"
	assert_success
	# main's two len() calls (the threading module makes others)
	assert_equal "$(jq '.spans.merged.nodes as $n | [$n[] | select(.name == "builtins.len" and .parent != null and $n[.parent].name == "__main__.main") | .count] | add' c.json)" 2
	# the Python calls are the same with C functions among them, but for the
	# class body, now under the C function that runs it
	run py_paths c.json
	assert_output "$(grep -v ';__main__.Shape$' <<<"$EXPECTED")"
	run span_paths c.json
	assert_line "1 __main__.<module>;builtins.__build_class__;__main__.Shape"
	assert_equal "$(jq -c '.spans.decode | [.unmatched, .unfinished]' c.json)" "[0,4]"
	run "$SPANSTAT" --python --json=py.json -- python3 "$APP"
	assert_success
	assert_equal "$(jq '[.spans.merged.nodes[] | select(.name == "builtins.len")] | length' py.json)" 0
}

@test "--python: the program's argv, __main__, exit status and own sitecustomize stay" {
	mkdir own
	printf 'import os\nos.environ["OWN_SITE"] = "ran"\n' >own/sitecustomize.py
	cat >show.py <<'PY'
import os, sys
print(__name__, sys.argv[1:], os.environ.get("OWN_SITE"), [p for p in sys.path if "spanstat/python" in p])
sys.exit(3)
PY
	run env PYTHONPATH="$PWD/own" python3 show.py a b
	assert_equal "$status" 3
	local alone=$output
	run env PYTHONPATH="$PWD/own" "$SPANSTAT" --python --folded=/dev/null -o /dev/null -- python3 show.py a b
	assert_equal "$status" 3
	assert_output "$alone"
	assert_output "__main__ ['a', 'b'] ran []"
}

@test "--python: bad input is refused before anything runs" {
	run -125 "$SPANSTAT" --python=go --spans -- touch ran
	assert_output "spanstat: invalid --python 'go': expected --python or --python=c"
	run -125 "$SPANSTAT" --python -- touch ran
	assert_output --regexp '^spanstat: --python needs a COMMAND and a span output: '
	run -125 "$SPANSTAT" --python --no-spans -- touch ran
	assert_line --index 0 --regexp '^spanstat: '
	[ ! -e ran ]
}

@test "explicit module: the C path and the pure-Python path give the same tree; a no-op outside spanstat" {
	cat >ex.py <<'PY'
import sys
import spanstat
print(spanstat.enabled(), spanstat._c is not None)

@spanstat.span
def step():
    with spanstat.span("inner"):
        pass

for _ in range(3):
    spanstat.begin("outer")
    step()
    spanstat.end("outer")
spanstat.begin(42)
spanstat.end(42)
PY
	run "$SPANSTAT" --json=c.json -- python3 ex.py
	assert_success
	assert_line --index 0 "True True"
	run env SPANSTAT_PY_PURE=1 "$SPANSTAT" --json=pure.json -- python3 ex.py
	assert_success
	assert_line --index 0 "True False"
	run span_paths c.json
	assert_output "1 42
3 outer
3 outer;step
3 outer;step;inner"
	assert_equal "$(span_paths pure.json)" "$output"
	# the C path writes no line; the pure one writes them all
	assert_equal "$(jq '.spans.decode.lines' c.json)" 0
	[ "$(jq '.spans.decode.lines' pure.json)" -eq 20 ]
	# outside spanstat: imports, does nothing
	local dir
	dir=$(dirname "$(find "$STAGE" -name spanstat.py | head -1)")
	[ -f "$dir/_spanstat.so" ]
	run env PYTHONPATH="$dir" python3 ex.py
	assert_success
	assert_output "False False"
}

@test "--python: Debian's /usr/bin/python3 as well as the python3 first in PATH" {
	[ -x /usr/bin/python3 ] || skip_or_fail "no /usr/bin/python3"
	# the C part is built for one Python version (configure's $PYTHON)
	local built
	built=$(python3 -c 'import sys; print(sys.version_info[:2])')
	[ "$(/usr/bin/python3 -c 'import sys; print(sys.version_info[:2])')" = "$built" ] ||
		skip "/usr/bin/python3 is not Python $built, which the C part was built for"
	run "$SPANSTAT" --python --json=deb.json -- /usr/bin/python3 "$APP"
	assert_success
	run py_paths deb.json
	assert_output "$EXPECTED"
}

@test "--python counts every function's calls as cProfile does, by file and line" {
	cat >cp.py <<'PY'
import json, sys

def leaf(x):
    return x * 2

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def squares(n):
    for i in range(n):
        yield leaf(i)

class Box:
    def __init__(self, v):
        self.v = v
    def get(self):
        return leaf(self.v)

def fails(k):
    if k % 3 == 0:
        raise KeyError(k)
    return k

def main():
    fib(12)
    sum(squares(7))
    [Box(i).get() for i in range(5)]
    for k in range(10):
        try:
            fails(k)
        except KeyError:
            pass
    json.dumps({"a": [1, 2]})

main()
PY
	# cProfile's calls of each function of cp.py, as "file:line count"
	python3 -m cProfile -o cp.prof "$PWD/cp.py"
	python3 -c '
import pstats, sys
st = pstats.Stats("cp.prof").stats
for (f, line, fn), (cc, nc, tt, ct, callers) in st.items():
    if f.endswith("/cp.py") and fn != "<module>":
        print("%s:%d %d" % (f, line, nc))' | sort >cprofile.txt
	[ "$(wc -l <cprofile.txt)" -ge 9 ]
	run "$SPANSTAT" --python --json=cp.json -- python3 "$PWD/cp.py"
	assert_success
	jq -r '[.spans.merged.nodes[] | select(.file != null and (.file | endswith("/cp.py")) and (.name | endswith(".<module>") | not))]
		| group_by("\(.file):\(.line)") | .[] | "\(.[0].file):\(.[0].line) \(map(.count) | add)"' cp.json | sort >spanstat.txt
	run diff cprofile.txt spanstat.txt
	assert_success
}

@test "explicit module: a name from os.fsdecode (not UTF-8) is a span in both paths, not an exception" {
	cat >fs.py <<'PY'
import os
import spanstat
name = os.fsdecode(b"file\xff.txt")
with spanstat.span(name):
    spanstat.begin(name)
    spanstat.end(name)
print("done")
PY
	run "$SPANSTAT" --json=c.json -o /dev/null -- python3 fs.py
	assert_success
	assert_output "done"
	run env SPANSTAT_PY_PURE=1 "$SPANSTAT" --json=pure.json -o /dev/null -- python3 fs.py
	assert_success
	assert_output "done"
	run span_paths c.json
	assert_output "1 file%FF.txt
1 file%FF.txt;file%FF.txt"
	assert_equal "$(span_paths pure.json)" "$output"
}

@test "explicit module: a name with a newline is the same span in both paths" {
	cat >nl.py <<'PY'
import spanstat
with spanstat.span("two\nlines"):
    spanstat.begin("a\nb\n")
    spanstat.end("a\nb\n")
PY
	run "$SPANSTAT" --json=c.json -o /dev/null -- python3 nl.py
	assert_success
	run env SPANSTAT_PY_PURE=1 "$SPANSTAT" --json=pure.json -o /dev/null -- python3 nl.py
	assert_success
	run span_paths pure.json
	assert_output "1 two lines
1 two lines;a b "
	assert_equal "$(span_paths c.json)" "$output"
}

@test "--python: the program's own sitecustomize raising stops neither the program nor the spans" {
	mkdir own
	printf 'raise RuntimeError("own site broke")\n' >own/sitecustomize.py
	printf 'def f():\n    pass\n\nf()\nprint("ran")\n' >b.py
	run --separate-stderr env PYTHONPATH="$PWD/own" python3 b.py
	assert_success
	local out=$output err=$stderr
	assert_equal "$err" "Error in sitecustomize; set PYTHONVERBOSE for traceback:
RuntimeError: own site broke"
	run --separate-stderr env PYTHONPATH="$PWD/own" "$SPANSTAT" --python --json=b.json -o /dev/null -- python3 b.py
	assert_success
	assert_output "$out"
	assert_equal "$stderr" "$err"
	assert_equal "$(jq '[.spans.merged.nodes[] | select(.name == "__main__.f") | .count] | add' b.json)" 1
}

@test "--python=c: a C method is named by the type that defines it, whatever types come and go" {
	cat >cf.py <<'PY'
import gc

def use(i):
    t = type("T%d" % i, (dict,), {"__module__": "mod%d" % i})()
    t.get(1)

for i in range(50):
    use(i)
    gc.collect()
PY
	run "$SPANSTAT" --python=c --json=cf.json -o /dev/null -- python3 cf.py
	assert_success
	# 50 classes made and freed, their addresses reused: each call is dict.get
	assert_equal "$(jq -r '.spans.merged.nodes as $n | [$n[] | select(.parent != null and $n[.parent].name == "__main__.use" and (.name | endswith(".get"))) | "\(.name) \(.count)"] | join(",")' cf.json)" \
		"builtins.dict.get 50"
}
