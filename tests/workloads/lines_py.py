"""lines_py.py: spans from Python through the line protocol, with a known
structure: main > 2 x work > inner in the main thread, 3 x work > inner in a
thread named "worker", a forked child's "child" span, 4 pool workers'
"square" spans (20 in all), an instant, a counter.
usage: python3 lines_py.py [noop]   (noop: check that nothing is written)"""
import multiprocessing
import os
import sys
import threading
import time

import spanstat


@spanstat.span("work")
def work(n):
    with spanstat.span("inner"):
        time.sleep(0.002)
    return n


@spanstat.span
def square(x):
    return x * x


def worker():
    spanstat.thread_name("worker")
    for i in range(3):
        work(i)


if __name__ == "__main__":
    if sys.argv[1:] == ["noop"]:
        work(1)
        print("enabled" if spanstat.enabled() else "disabled")
        sys.exit(0)
    with spanstat.span("main"):
        t = threading.Thread(target=worker)
        t.start()
        for i in range(2):
            work(i)
        t.join()
        spanstat.instant("checkpoint")
        spanstat.counter("items", 42)
        pid = os.fork()
        if pid == 0:
            with spanstat.span("child"):
                time.sleep(0.002)
            os._exit(0)
        os.waitpid(pid, 0)
        with multiprocessing.Pool(2) as p:
            total = sum(p.map(square, range(20)))
    print(total)
