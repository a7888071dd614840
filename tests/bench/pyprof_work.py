"""pyprof_work.py N: a call-heavy Python loop for pyprof-bench: N rounds of
three nested calls (outer -> middle -> inner), timed in the process with
perf_counter_ns around the loop only (start-up and the profiler's set-up
left out).  Prints "calls C" and "ns T"."""
import sys
import time


def inner(x):
    return x + 1


def middle(x):
    return inner(x) + 1


def outer(x):
    return middle(x) + 1


def run(n):
    t = time.perf_counter_ns()
    for i in range(n):
        outer(i)
    return time.perf_counter_ns() - t


n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
best = min(run(n) for _ in range(3))
print("calls %d" % (3 * n))
print("ns %d" % best)
