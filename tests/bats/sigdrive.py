# sigdrive.py: drives spanstat over the sigcount workload for signals.bats:
# starts it, sends a signal the way MODE says, and prints one line per signal:
#
#   SIGNO STATUS LOG SUMMARY GONE
#
# STATUS is spanstat's exit status, LOG the signals the target received in
# order (comma-separated, "-" for none), SUMMARY 1 when the summary was
# printed, GONE 1 when the target's pid no longer exists after spanstat.
#
# usage: python3 sigdrive.py SPANSTAT SIGCOUNT MODE SIG...
# MODE: pid (kill spanstat's pid), queue (sigqueue() to spanstat's pid, with
# the value 1234, which the target must get too), die (the same, and the target dies of
# SIG, with no barrier), group (kill its process group), tty (type
# the character SIG names on the terminal spanstat runs in: INT or QUIT),
# ttyalone (the same, with the target in a process group of its own, so only
# spanstat gets the terminal's signal),
# nohup (SIG ignored when spanstat starts, then sent to its pid), pre (SIG
# pending when spanstat starts), post (SIG sent once the target is reaped,
# while spanstat is still writing), between (SIG sent between the two runs
# of -r 2, while spanstat writes the first one's last -I line), ownpipe (spanstat's -I output is a
# pipe nobody reads; no SIG is sent).
#
# Unless the signal is SIGRTMAX itself, the target ends when a barrier,
# SIGRTMAX sent to spanstat's pid, reaches it: a second copy of SIG relayed
# before the barrier is delivered before it (lower signals go first), so the
# log shows it.  Every wait is bounded; none measures time.
import ctypes
import fcntl
import json
import select
import os
import signal
import subprocess
import sys
import tempfile
import termios
import time

SPANSTAT, SIGCOUNT, MODE = sys.argv[1:4]
BARRIER = signal.SIGRTMAX


def signo(name):
    if name.isdigit():
        return int(name)
    if name.startswith("RTMIN+"):
        return signal.SIGRTMIN + int(name[6:])
    if name.startswith("RTMAX-"):
        return signal.SIGRTMAX - int(name[6:])
    return int(getattr(signal, "SIG" + name))


def wait_for(cond, what, limit=20.0):
    end = time.monotonic() + limit
    while not cond():
        if time.monotonic() > end:
            sys.exit("sigdrive: timed out waiting for " + what)
        time.sleep(0.01)


def fresh(ignore=(), pending=None, tty=False):
    """A child as a shell would start it: default dispositions, nothing
    blocked; then what the mode asks for."""

    def pre():
        for s in range(1, signal.SIGRTMAX + 1):
            try:
                signal.signal(s, signal.SIG_IGN if s in ignore else signal.SIG_DFL)
            except (OSError, ValueError):
                pass
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        if tty:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        if pending:
            signal.pthread_sigmask(signal.SIG_BLOCK, [pending])
            os.kill(os.getpid(), pending)

    return pre


def log_of(path):
    try:
        with open(path) as f:
            return [int(x) if x.isdigit() else x for x in f.read().split()]
    except FileNotFoundError:
        return []


def gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def syscw(pid):
    with open("/proc/%d/io" % pid) as f:
        for line in f:
            if line.startswith("syscw:"):
                return int(line.split()[1])
    return 0


def run(sig):
    d = tempfile.mkdtemp(dir=os.environ.get("BATS_TEST_TMPDIR"))
    log, ready = os.path.join(d, "log"), os.path.join(d, "ready")
    stop = sig if sig == BARRIER or MODE == "die" else BARRIER
    how = "die"
    args = [SPANSTAT, "-e", "task-clock"]
    kw = {"stderr": subprocess.PIPE, "stdin": subprocess.DEVNULL}
    ignore, pending, master = (), None, None
    reader = -1
    env = dict(os.environ)
    if MODE == "nohup":
        ignore = (sig,)
        env["SIGCOUNT_ALL"] = "1"  # the target counts it if it comes
    elif MODE == "pre":
        pending = sig
    elif MODE == "post":
        stop, how = 0, "7"
        args += ["--json", os.path.join(d, "out.json")]
    elif MODE == "between":
        stop, how = 0, "0"
        args += ["-r", "2", "-I", "60000"]
    elif MODE == "group":
        kw["start_new_session"] = True
    elif MODE == "ownpipe":
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        # read end first (it opens without waiting): spanstat refuses a FIFO
        # that nobody reads
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        args += ["-I", "10", "-o", fifo]
    elif MODE in ("tty", "ttyalone"):
        master, slave = os.openpty()
        kw.update(stdin=slave, stdout=slave, start_new_session=True)
    cmd = args + ["--", SIGCOUNT, log, ready, str(stop), how]
    if MODE in ("post", "between"):
        cmd.append("fill")
    if MODE == "ttyalone":
        cmd.append("setpgid")
    p = subprocess.Popen(
        cmd, env=env, preexec_fn=fresh(ignore, pending, master is not None), **kw
    )
    if master is not None:
        os.close(slave)
    if MODE != "pre":
        wait_for(lambda: os.path.exists(ready), "the target to be ready")
    tpid = int(open(ready).read().split()[0]) if os.path.exists(ready) else 0
    if MODE in ("pid", "die", "nohup"):
        os.kill(p.pid, sig)
    elif MODE == "queue":
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.sigqueue(p.pid, sig, ctypes.c_void_p(1234)) != 0:
            sys.exit("sigdrive: sigqueue: " + os.strerror(ctypes.get_errno()))
    elif MODE == "group":
        os.killpg(p.pid, sig)
    elif master is not None:
        os.write(master, {signal.SIGINT: b"\x03", signal.SIGQUIT: b"\x1c"}[sig])
    elif MODE in ("post", "between"):
        # spanstat has reaped the target and blocks writing the summary (or
        # the last -I line) to the pipe the target filled
        wait_for(lambda: gone(tpid), "spanstat to reap the target")
        os.kill(p.pid, sig)
    elif MODE == "ownpipe":
        # interval lines come: they are being written
        wait_for(lambda: select.select([reader], [], [], 0.1)[0], "spanstat's -I output")
        os.close(reader)
        before = syscw(p.pid)
        # the next write fails with EPIPE and queues spanstat's own SIGPIPE
        wait_for(lambda: syscw(p.pid) > before, "spanstat to write again")
    if MODE in ("pid", "queue", "group", "tty") and sig != stop:
        # a group's second copy is merged with the first when it comes
        # before that one is handled, except for real-time signals
        want = 2 if MODE == "group" and sig >= signal.SIGRTMIN else 1
        mark = "%d:1234" % sig if MODE == "queue" else sig
        wait_for(lambda: log_of(log).count(mark) >= want, "the target to get the signal")
    if MODE != "pre" and MODE != "post" and stop == BARRIER:
        os.kill(p.pid, BARRIER)
    err = p.communicate(timeout=30)[1].decode(errors="replace")
    if master is not None:
        os.close(master)
    summary = "task-clock" in err
    if MODE == "post":
        # the JSON is whole, says the target's status, and no temporary
        # file is left beside it
        with open(os.path.join(d, "out.json")) as f:
            summary = summary and json.load(f)["exit"]["exit_code"] == 7
        summary = summary and sorted(os.listdir(d)) == ["log", "out.json", "ready"]
    if MODE == "pre":
        sys.stderr.write(err)
    got = ",".join(str(x) for x in log_of(log)) or "-"
    if MODE == "between":
        # the second run never started: its target would have been ready
        summary = summary and int(open(ready).read().split()[0]) == tpid
    print(sig, p.returncode, got, int(summary), int(gone(tpid) if tpid else True))
    sys.stdout.flush()


for name in sys.argv[4:]:
    run(signo(name))
