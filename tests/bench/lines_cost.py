"""lines_cost.py: what a span pair costs a Python program through the line
protocol's module, against its baseline in the same process: two
time.perf_counter_ns() calls and a list append.  Run under spanstat (driven by
lines-bench); prints "base NS", "pair NS" (spanstat.begin + end) and "with NS"
(a with spanstat.span block), each the best of 5 rounds, per iteration."""
import sys
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
for name, fn in (("base", base), ("pair", pair), ("with", with_)):
    best = min(fn(n) for _ in range(5))
    print("%s %.2f" % (name, (best - loop) / n))
