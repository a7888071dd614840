"""spanstat: spans from Python for spanstat(1), through its line protocol.

    import spanstat

    with spanstat.span("load"):          # a context manager ...
        load()

    @spanstat.span("parse")              # ... and a decorator
    def parse(): ...

    spanstat.begin("step"); step(); spanstat.end("step")
    spanstat.instant("checkpoint")
    spanstat.counter("queue", len(q))
    spanstat.thread_name("worker")
    spanstat.category("read", "io")      # spans named "read" have category io
    spanstat.message("loaded 12 files")  # a line on this thread's timeline
    spanstat.async_begin("request", 7)   # an async span, id 7: any thread
    spanstat.async_enter(7); work(); spanstat.async_exit(7)  # ... runs it
    spanstat.async_end(7)
    spanstat.arg("bytes", 4096)          # a typed argument of the open span

Run the program under spanstat (spanstat --spans -- python3 app.py): the
spans show in every output with those of the C library.  Without spanstat
around every call does nothing.  Pure standard library.

With the module's C part (_spanstat, built when configure finds the Python
headers) and spanstat's span library in the process, begin, end and span
call the library directly (spanstat_begin_text, spanstat_end_text): no
buffer, no line.  SPANSTAT_PY_PURE=1 in the environment, or no C part,
keeps everything on the line protocol, as below.  instant, counter,
thread_name and the async_* calls always write lines (the async ones at
once: see async_begin).

Each thread buffers its events and writes them as lines (spanstat-lines(5)),
whole lines only and at most 4096 bytes at a time (so that writes from many
threads and processes never tear), when the buffer fills, when the thread
ends and at exit.  Threads are told apart by their native id, processes by
their pid.  After fork() the child starts with empty buffers, and since a
child often leaves through os._exit() (multiprocessing's workers do), which
runs no exit handler, a child also writes whenever its outermost span ends;
call spanstat.flush() before an os._exit() of your own.
"""

import atexit
import functools
import os
import sys
import threading
import time

__all__ = ["span", "begin", "end", "instant", "counter", "thread_name", "flush", "enabled"]
__all__ += ["category"]
__all__ += ["message"]
__all__ += ["async_begin", "async_enter", "async_exit", "async_end", "arg"]

_MAX_WRITE = 4096
_FLUSH_COUNT = 64  # events buffered before a write

_now = time.monotonic_ns
_lock = threading.Lock()
_fd = None
_pid = 0
_forked = False  # a fork child: write at every outermost end
_buffers = []  # every thread's buffer, to flush at exit
_local = threading.local()


def _open():
    global _fd, _pid
    path = os.environ.get("SPANSTAT_LINES")
    _fd = None
    _pid = os.getpid()
    if path:
        try:
            _fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        except OSError:
            _fd = None


def enabled():
    """Whether spans go anywhere (the program runs under spanstat)."""
    return _fd is not None or _c is not None


class _Buffer(list):
    """A thread's events, as (op, time, name) tuples, turned into lines when
    written: when it holds _FLUSH_COUNT events, when the thread ends (its
    local dies), at exit."""

    __slots__ = ("prefix", "depth", "__weakref__")

    def __init__(self):
        super().__init__()
        self.prefix = " %d %d " % (_pid, threading.get_native_id())
        self.depth = 0
        with _lock:
            _buffers.append(self)

    def write(self):
        if not self:
            return
        pre = self.prefix
        lines = [
            f"{op}{pre}{ts} {nm}\n" if "\n" not in nm else f"{op}{pre}{ts} {nm.replace(chr(10), ' ')}\n"
            for op, ts, nm in self
        ]
        del self[:]
        text = "".join(lines)
        if len(text) <= _MAX_WRITE:
            _write(text)
            return
        chunk, n = [], 0  # whole lines, at most _MAX_WRITE bytes a write
        for line in lines:
            if n + len(line) > _MAX_WRITE and chunk:
                _write("".join(chunk))
                chunk, n = [], 0
            chunk.append(line)
            n += len(line)
        if chunk:
            _write("".join(chunk))

    def __del__(self):
        try:
            self.write()
        except Exception:
            pass


def _encode(text):
    """text's bytes: surrogateescape's escapes (os.fsdecode's) are the bytes
    they stand for; any other lone surrogate, which UTF-8 cannot hold, is
    U+FFFD instead of an exception that loses the line and its buffer."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return "".join(
            "\ufffd" if "\ud800" <= c <= "\udfff" and not "\udc80" <= c <= "\udcff" else c
            for c in text
        ).encode("utf-8", "surrogateescape")


def _write(text):
    fd = _fd
    if fd is None:
        return
    data = _encode(text)
    try:
        os.write(fd, data[:_MAX_WRITE] if len(data) > _MAX_WRITE else data)
    except OSError:
        pass


def _buffer():
    try:
        return _local.buf
    except AttributeError:
        _local.buf = b = _Buffer()
        return b


def _forked_end(b):
    """In a fork child: write when the outermost span ends."""
    b.depth -= 1
    if b.depth <= 0:
        b.depth = 0
        b.write()


def begin(name, _now=_now, _str=str):
    """A span named name begins in this thread."""
    if _fd is None:
        return
    try:
        b = _local.buf
    except AttributeError:
        b = _buffer()
    b.append(("B", _now(), name if name.__class__ is _str else _str(name)))
    if _forked:
        b.depth += 1
    if len(b) >= 64:  # _FLUSH_COUNT
        b.write()


def end(name, _now=_now, _str=str):
    """The span named name ends in this thread."""
    if _fd is None:
        return
    try:
        b = _local.buf
    except AttributeError:
        b = _buffer()
    b.append(("E", _now(), name if name.__class__ is _str else _str(name)))
    if _forked:
        _forked_end(b)
    elif len(b) >= 64:  # _FLUSH_COUNT
        b.write()


def _put(op, name, extra=""):
    if _fd is None:
        return
    b = _buffer()
    b.append((op, _now(), extra + str(name)))
    if len(b) >= _FLUSH_COUNT:
        b.write()


def instant(name):
    """A point event."""
    _put("I", name)


def counter(name, value):
    """A counter's value now (an integer)."""
    _put("C", name, "%d " % int(value))


def thread_name(name):
    """Names this thread in every output."""
    _put("N", name)


def category(name, cat):
    """Spans, instants and counters named name have category cat (one word
    of at most 255 bytes, no spaces), in every output; the first category a
    name gets holds.  Written at once: call it before the name's first span."""
    cat = str(cat)
    if not cat or len(cat.encode("utf-8", "surrogateescape")) > 255 or any(c.isspace() for c in cat):
        raise ValueError("a category is one word of 1 to 255 bytes: %r" % cat)
    _put("K", name, cat + " ")
    flush()


def message(text):
    """Puts text (newlines become spaces, cut at a NUL and at 1024 bytes)
    on this thread's timeline now."""
    if _fd is None:
        return
    t = str(text).split("\0", 1)[0].replace("\n", " ")  # cut at a NUL, as in C
    if len(_encode(t)) > 1024:
        t = _encode(t)[:1024].decode("utf-8", "ignore")
    _put("M", t)


def _async(op, aid, name=None):
    aid = int(aid)
    if not 0 < aid < 1 << 64:
        raise ValueError("an async span's id is 1 to 2**64 - 1: %r" % aid)
    if _fd is None:
        return
    if name is None:
        _put(op, "%d" % aid)
    else:
        t = str(name).split("\0", 1)[0]  # cut at a NUL, as in C
        if len(_encode(t)) > 1024:
            t = _encode(t)[:1024].decode("utf-8", "ignore")
        _put(op, t, "%d " % aid)
    flush()  # at once, so that every thread's async lines keep their order


def async_begin(name, aid):
    """Begins the async span aid (an integer, 1 to 2**64 - 1, unique in the
    process while it is open) named name; any thread may then enter and exit
    it, and end it (spanstat(3)).  Each call writes its line at once."""
    _async("b", aid, name)


def async_enter(aid):
    """This thread runs the async span aid from now."""
    _async("n", aid)


def async_exit(aid):
    """This thread stops running the async span aid."""
    _async("x", aid)


def async_end(aid):
    """Ends the async span aid."""
    _async("e", aid)


def arg(key, value):
    """A typed argument of this thread's innermost open span (of the thread
    outside every span), by value's type: bool, int (int64, or uint64 past
    it; beyond both: OverflowError), float, or else str(value) (cut at a
    NUL and at 255 bytes, newlines made spaces).  key is one word of 1 to
    255 bytes without a NUL (ValueError otherwise)."""
    if _fd is None:
        return
    k = str(key)
    if not k or len(_encode(k)) > 255 or any(c.isspace() or c == "\0" for c in k):
        raise ValueError("an argument's key is one word of 1 to 255 bytes: %r" % k)
    if isinstance(value, bool):
        _put("A", "1" if value else "0", "b %s " % k)
    elif isinstance(value, int):
        if -(1 << 63) <= value < (1 << 63):
            _put("A", "%d" % value, "i %s " % k)
        elif (1 << 63) <= value < (1 << 64):
            _put("A", "%d" % value, "u %s " % k)
        else:
            raise OverflowError("an integer argument is an int64 or a uint64: %d" % value)
    elif isinstance(value, float):
        _put("A", repr(value), "f %s " % k)
    else:
        t = str(value).split("\0", 1)[0].replace("\n", " ")
        if len(_encode(t)) > 255:
            t = _encode(t)[:255].decode("utf-8", "ignore")
        _put("A", t, "s %s " % k)


def flush():
    """Writes this thread's buffered lines now."""
    if _fd is not None:
        _buffer().write()


class span:
    """A span as a context manager (with span("x"): ...) or a decorator
    (@span("x"), or @span for the function's qualified name)."""

    __slots__ = ("name",)

    def __new__(cls, name=None):
        if callable(name):  # @span without arguments
            return cls(name.__qualname__)(name)
        return super().__new__(cls)

    def __init__(self, name=None):
        self.name = name

    def __enter__(self):  # begin(), inlined: a with block is the common case
        if _fd is not None:
            try:
                b = _local.buf
            except AttributeError:
                b = _buffer()
            b.append(("B", _now(), self.name if self.name.__class__ is str else str(self.name)))
            if _forked:
                b.depth += 1
            if len(b) >= 64:  # _FLUSH_COUNT
                b.write()
        return self

    def __exit__(self, *exc):
        if _fd is not None:
            end(self.name)
        return False

    def __call__(self, fn):
        name = self.name if self.name is not None else fn.__qualname__

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if _fd is None and _c is None:
                return fn(*args, **kwargs)
            begin(name)
            try:
                return fn(*args, **kwargs)
            finally:
                end(name)

        return wrapper


def _at_exit():
    with _lock:
        buffers = list(_buffers)
    for b in buffers:
        b.write()


def _after_fork():
    global _buffers, _local, _forked
    # the parent writes what it had buffered: the copies here are dropped
    for b in _buffers:
        del b[:]
    _buffers = []
    _local = threading.local()
    _forked = True
    if _fd is not None:
        try:
            os.close(_fd)
        except OSError:
            pass
    _open()
    mp = sys.modules.get("multiprocessing.util")
    if mp is not None:  # its workers end through os._exit after its finalizers
        mp.Finalize(None, _at_exit, exitpriority=-100)


_open()
atexit.register(_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


# The C fast path: begin, end and span straight into the span library.
_c = None
if os.environ.get("SPANSTAT_PY_PURE", "") in ("", "0"):
    try:
        import _spanstat

        if _spanstat.available():
            _c = _spanstat
    except ImportError:
        pass
if _c is not None:
    begin = _c.begin
    end = _c.end
    _arg_lines = arg

    def arg(key, value, _arg=_c.arg):  # noqa: F811 (the C part's, checked as the lines')
        """A typed argument of this thread's innermost open span (see above)."""
        k = str(key)
        if not k or len(_encode(k)) > 255 or any(c.isspace() or c == "\0" for c in k):
            raise ValueError("an argument's key is one word of 1 to 255 bytes: %r" % k)
        if isinstance(value, int) and not isinstance(value, bool) and not -(1 << 63) <= value < (1 << 64):
            raise OverflowError("an integer argument is an int64 or a uint64: %d" % value)
        _arg(k, value)

    def _c_enter(self, _begin=_c.begin):
        _begin(self.name)
        return self

    def _c_exit(self, *exc, _end=_c.end):
        _end(self.name)
        return False

    span.__enter__ = _c_enter
    span.__exit__ = _c_exit
