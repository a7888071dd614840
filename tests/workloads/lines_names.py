"""lines_names.py: N spans of N distinct names through the line protocol
(spanstat-lines(5)), for the test that memory grows with distinct span paths
by at most a kilobyte each in every output.
Usage: python3 lines_names.py N  (default 200000). Does nothing outside
spanstat (no SPANSTAT_LINES)."""
import os
import sys
import time

path = os.environ.get("SPANSTAT_LINES")
n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
if path:
    fd = os.open(path, os.O_WRONLY)
    pid = os.getpid()
    t = time.monotonic_ns()
    buf = []
    for i in range(n):
        buf.append(f"B {pid} - {t + 2 * i} n{i}\nE {pid} - {t + 2 * i + 1} n{i}\n")
        if len(buf) >= 1000:
            os.write(fd, "".join(buf).encode())
            buf = []
    os.write(fd, "".join(buf).encode())
