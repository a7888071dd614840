"""lines_cost.py: what a span pair costs a Python program through the line
protocol's module, against its baseline in the same process: two
time.perf_counter_ns() calls and a list append.  Run under spanstat (driven by
lines-bench); prints "base NS", "pair NS" (spanstat.begin + end), "with NS"
(a with spanstat.span block), and the floors of any pure-Python pair: "floor NS"
(two calls appending a clock reading each) and "floor_named NS" (the same
with the name and a buffer per thread, the least a span needs), and "cpair
NS" (the C part's begin + end, when it is built), each the best of 5 rounds,
per iteration.  lines-bench runs it with SPANSTAT_PY_PURE=1, so that "pair"
and "with" stay the pure-Python path's."""
import sys
import threading
import time

import spanstat


def base(n):
    clock, out = time.perf_counter_ns, []
    add = out.append
    t = clock()
    for _ in range(n):
        a = clock()
        b = clock()
        add(b - a)
    return clock() - t


def pair(n):
    clock, begin, end = time.perf_counter_ns, spanstat.begin, spanstat.end
    t = clock()
    for _ in range(n):
        begin("work")
        end("work")
    return clock() - t


def with_(n):
    clock, span = time.perf_counter_ns, spanstat.span
    t = clock()
    for _ in range(n):
        with span("work"):
            pass
    return clock() - t


# The floor of any pure-Python begin/end: two calls that each only append a
# clock reading to a list (no name, no thread, nothing written), and the same
# with what a span needs at least, the name and a buffer per thread.
_floor_buf = []


def _fbegin(name, _now=time.perf_counter_ns, _add=_floor_buf.append):
    _add(_now())


def _fend(name, _now=time.perf_counter_ns, _add=_floor_buf.append):
    _add(_now())


def floor(n):
    clock = time.perf_counter_ns
    t = clock()
    for _ in range(n):
        _fbegin("work")
        _fend("work")
    t = clock() - t
    del _floor_buf[:]
    return t


_tl = threading.local()


def _tbegin(name, _now=time.perf_counter_ns):
    try:
        b = _tl.b
    except AttributeError:
        b = _tl.b = []
    b.append(name)
    b.append(_now())
    if len(b) >= 1024:
        del b[:]


def _tend(name, _now=time.perf_counter_ns):
    try:
        b = _tl.b
    except AttributeError:
        b = _tl.b = []
    b.append(None)
    b.append(_now())
    if len(b) >= 1024:
        del b[:]


def floor_named(n):
    clock = time.perf_counter_ns
    t = clock()
    for _ in range(n):
        _tbegin("work")
        _tend("work")
    return clock() - t


# The C part's pair (what spanstat.begin and end are when it is there):
# _spanstat.begin/end, straight into the span library.
try:
    import _spanstat
except ImportError:
    _spanstat = None


def cpair(n):
    clock, begin, end = time.perf_counter_ns, _spanstat.begin, _spanstat.end
    t = clock()
    for _ in range(n):
        begin("work")
        end("work")
    return clock() - t


def empty(n):
    clock = time.perf_counter_ns
    t = clock()
    for _ in range(n):
        pass
    return clock() - t


n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
if not spanstat.enabled():
    print("lines_cost: not under spanstat", file=sys.stderr)
    sys.exit(2)
loop = min(empty(n) for _ in range(5))
for name, fn in (("base", base), ("pair", pair), ("with", with_), ("floor", floor),
                 ("floor_named", floor_named), ("cpair", cpair)):
    if fn is cpair and (_spanstat is None or not _spanstat.available()):
        continue
    best = min(fn(n) for _ in range(5))
    print("%s %.2f" % (name, (best - loop) / n))
