#!/usr/bin/env python3
"""readdrive.py: drives `spanstat report` (and diff) over inputs that
change or wait under it, for reportin.bats.  Every wait is bounded; none
measures time.

  grow IN OUT MB        OUT: the record IN with its span-event records
                        repeated until it holds MB megabytes (CRCs intact)
  signal SIG PATH CMD...
                        runs CMD, waits until it has PATH open (or has read
                        4 MiB of it and closed it), sends SIG;
                        prints "STATUS" (negative: killed by that signal)
  truncate SIZE PATH CMD...
                        runs CMD, waits until it has PATH open or mapped
                        (or has ended), cuts PATH to SIZE bytes; prints
                        "STATUS" and then CMD's standard error
"""
import os
import signal
import struct
import subprocess
import sys
import time


def grow(src, dst, mb):
    data = open(src, "rb").read()
    recs, off = [], 16
    while off + 12 <= len(data):
        _, ln, _ = struct.unpack_from("<III", data, off)
        recs.append(data[off : off + 12 + ln])
        off += 12 + ln
    events = [r for r in recs if struct.unpack_from("<I", r)[0] in (4, 14)]
    if not events:
        sys.exit("readdrive: no span events in " + src)
    first = recs.index(events[0])
    with open(dst, "wb") as f:
        f.write(data[:16])
        for r in recs[:first]:
            f.write(r)
        size, block = 0, b"".join(events)
        while size < mb << 20:
            f.write(block)
            size += len(block)
        for r in recs[first:]:
            if r not in events:
                f.write(r)


def uses(pid, path):
    """Whether pid has path open or mapped (False once it is gone)."""
    want = os.path.realpath(path)
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == want:
                    return True
            except OSError:
                pass
        with open("/proc/%d/maps" % pid) as m:
            return any(line.rstrip("\n").endswith(" " + want) for line in m)
    except OSError:
        return False


def has_read(pid, nbytes):
    """Whether pid has read nbytes or more (a large file it had open)."""
    try:
        with open("/proc/%d/io" % pid) as io:
            for line in io:
                if line.startswith("rchar:"):
                    return int(line.split()[1]) >= nbytes
    except OSError:
        pass
    return False


def start(cmd, path, also_ended):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    end = time.monotonic() + 20
    # a large file may be read and closed between two looks: then it has
    # read more than its shared libraries hold
    while not uses(p.pid, path) and not has_read(p.pid, 4 << 20):
        if p.poll() is not None and also_ended:
            break
        if p.poll() is not None or time.monotonic() > end:
            p.kill()
            sys.exit("readdrive: %s never opened %s" % (cmd[0], path))
    return p


def main():
    mode = sys.argv[1]
    if mode == "grow":
        grow(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif mode == "signal":
        sig, path, cmd = sys.argv[2], sys.argv[3], sys.argv[4:]
        p = start(cmd, path, False)
        p.send_signal(getattr(signal, "SIG" + sig))
        try:
            _, err = p.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            sys.exit("readdrive: %s did not end on SIG%s" % (cmd[0], sig))
        print(p.returncode)
        sys.stdout.write(err.decode(errors="replace"))
    elif mode == "truncate":
        size, path, cmd = int(sys.argv[2]), sys.argv[3], sys.argv[4:]
        p = start(cmd, path, True)
        os.truncate(path, size)
        try:
            _, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            sys.exit("readdrive: %s never ended" % cmd[0])
        print(p.returncode)
        sys.stdout.write(err.decode(errors="replace"))
    else:
        sys.exit("readdrive: unknown mode " + mode)


main()
