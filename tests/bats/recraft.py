#!/usr/bin/env python3
"""recraft.py IN OUT OP...: a record file (spanstat-record(5)) rewritten
with hostile but well-framed contents: every record keeps a CRC that holds,
so the reader has to judge what is inside.  OPs, in order:

  add:TYPE:ITEM,...   append a record of TYPE whose payload is the ITEMs:
                      a number is a varint, s=TEXT a string
  ev:FIELD=N          set FIELD (depth, pid, tid, name, value, dur) of every
                      span event that has it
  head:old            the HEAD as the first files have it: cut after the span
                      values (without the program and its build id)
  end:N               the END's span stream counts cut to the first N, as a
                      file written before the later ones were kept has them
                      (and without the processes' names, kept later still)
  type:FROM=TO        the first record of type FROM becomes of type TO (its
                      payload and CRC unchanged: the type is outside the CRC)
  raw:junk            the first RAW block ends in an item of an unknown tag
  raw:setup           the first RAW block ends in a second setup item
  raw:drop, raw:dup   the largest RAW block is left out, or written twice
  raw:drop=N          the Nth RAW block (from 0) is left out
  raw:swap            the largest RAW block and the next one change places
  strings:drop=N      the Nth STRINGS record (from 0; -1 the last) is left out
  raw:noanswer        the first answer item (tags 7 to 10: a symbol's name or
                      place, a process's start or name) is left out of its
                      RAW block, as a replay that lost a block before may
                      find an answer missing where it asks
  v3                  the file as version 3 wrote it: RAW states (item 19)
                      without their threads' names, END with 25 counts,
                      version 3 in the header
  raw:layout=N        every RAW block's setup with N as its layout (its
                      11th varint); raw:layout=cut: the varint cut short
  v2                  the file as version 2 wrote it: RAW blocks without
                      their numbers and states (items 18 and 19), END
                      without its count of strings, version 2 in the header
"""
import struct
import sys
import zlib


def uv(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zz(v):
    return uv(((v << 1) ^ (v >> 63)) & (2**64 - 1))


class Rd:
    def __init__(self, p):
        self.p, self.i = p, 0

    def u(self):
        v = sh = 0
        while True:
            b = self.p[self.i]
            self.i += 1
            v |= (b & 0x7F) << sh
            sh += 7
            if not b & 0x80:
                return v

    def z(self):
        v = self.u()
        return (v >> 1) ^ -(v & 1)

    def s(self):
        n = self.u()
        self.i += n
        return self.p[self.i - n : self.i]


def head_rd(head):
    """A reader of head, at its span values' count."""
    r = Rd(head)
    r.s()
    for _ in range(r.u()):
        r.s()
    for _ in range(3):
        r.u()
    r.s()
    for _ in range(3):
        r.u()
    for _ in range(6):
        r.s()
    r.z(), r.z(), r.u(), r.u(), r.u()
    for _ in range(r.u()):
        r.s(), r.u(), r.u(), r.u(), r.u(), r.u(), r.z(), r.u(), r.s(), r.u()
    return r


def nval(head):
    return head_rd(head).u()


def head_old(head):
    r = head_rd(head)
    n = r.u()
    r.z(), r.u()
    for _ in range(n):
        r.u(), r.s(), r.u()
    return head[: r.i]


def end_cut(end, keep):
    r = Rd(end)
    vals = [r.u() for _ in range(r.u())]
    rest = r.i
    r.u()  # the cost per event
    for _ in range(r.u()):  # the metrics' supported flags
        r.u()
    for _ in range(4):  # runs, the start (s, ns) and its monotonic time
        r.u()
    # what follows (the processes' names) came later than any count cut
    return uv(keep) + b"".join(uv(v) for v in vals[:keep]) + end[rest : r.i]


def items(p):
    """A RAW block's items: (where it starts, where it ends, tag, body)."""
    r = Rd(p)
    while r.i < len(p):
        at, tag = r.i, p[r.i]
        r.i += 1
        body = r.s()
        yield at, r.i, tag, body


def raw_v2(p):
    return b"".join(p[a:e] for a, e, tag, _ in items(p) if tag not in (18, 19))


def raw_noanswer(p):
    """p without its first answer item, and whether it had one."""
    for a, e, tag, _ in items(p):
        if 7 <= tag <= 10:
            return p[:a] + p[e:], True
    return p, False


def state_v3(st):
    """A RAW state without the thread names version 4 appended."""
    if not st:
        return st
    r = Rd(st)
    for _ in range(r.u()):  # the processes
        r.s()  # its HELLO
        r.u(), r.u()  # values, cost per event
        for _ in range(2 * r.u()):  # its names' pairs
            r.u()
    return st[: r.i]


def raw_v3(p):
    return b"".join(
        p[a:e] if tag != 19 else b"\x13" + uv(len(state_v3(b))) + state_v3(b)
        for a, e, tag, b in items(p)
    )


def end_v3(end):
    r = Rd(end)
    n = r.u()
    vals = [r.u() for _ in range(n)]
    return uv(25) + b"".join(uv(v) for v in vals[:25]) + end[r.i :]


def end_v2(end):
    r = Rd(end)
    for _ in range(r.u()):  # the counts
        r.u()
    r.u()  # the cost per event
    for _ in range(r.u()):  # the metrics' supported flags
        r.u()
    for _ in range(4):  # runs, the start (s, ns) and its monotonic time
        r.u()
    for _ in range(r.u()):  # the processes' names
        r.u()
    return end[: r.i]


def raw_layout(p, to):
    """A RAW block whose first item, its setup, says layout to (or "cut")."""
    assert p[0] == 1
    r = Rd(p)
    r.i = 1
    n = r.u()
    q = Rd(p[r.i : r.i + n])
    vals = [q.u() for _ in range(10)]
    setup = b"".join(uv(v) for v in vals) + (b"\x80" if to == "cut" else uv(int(to, 0)))
    return b"\x01" + uv(len(setup)) + setup + p[r.i + n :]


# kinds: process, thread, begin, end, instant, counter, process end
DEPTH, VALUE, DUR = (2, 3, 4, 5), (0, 5, 6), (3,)


def events(p, n, field, val):
    r, out = Rd(p), bytearray()
    while r.i < len(p):
        f = p[r.i]
        r.i += 1
        k = f & 7
        out.append(f)
        if f & 16:
            pid, tid = r.u(), r.u()
            out += uv(val if field == "pid" else pid) + uv(val if field == "tid" else tid)
        out += zz(r.z())
        name = r.u()
        out += uv(val if field == "name" else name)
        if k in DEPTH:
            d = r.u()
            out += uv(val if field == "depth" else d)
        if k in VALUE:
            v = r.z()
            out += zz(val if field == "value" else v)
        if k in DUR:
            d = r.u()
            out += uv(val if field == "dur" else d)
        if f & 64:
            out += b"".join(uv(r.u()) for _ in range(n))
        if f & 32:
            out += b"".join(zz(r.z()) for _ in range(n))
    return bytes(out)


def main():
    data = open(sys.argv[1], "rb").read()
    recs, off = [], 16
    while off + 12 <= len(data):
        t, ln, _ = struct.unpack_from("<III", data, off)
        recs.append((t, data[off + 12 : off + 12 + ln]))
        off += 12 + ln
    n = nval(recs[0][1])
    for op in sys.argv[3:]:
        if op.startswith("add:"):
            _, t, items = op.split(":", 2)
            p = b""
            for it in items.split(",") if items else []:
                if it.startswith("s="):
                    p += uv(len(it[2:].encode())) + it[2:].encode()
                else:
                    p += uv(int(it, 0))
            recs.append((int(t), p))
        elif op == "head:old":
            recs = [(t, head_old(p) if t == 1 else p) for t, p in recs]
        elif op.startswith("end:"):
            recs = [(t, end_cut(p, int(op[4:])) if t == 8 else p) for t, p in recs]
        elif op.startswith("type:"):
            a, b = (int(x) for x in op[5:].split("="))
            i = next(i for i, (t, _) in enumerate(recs) if t == a)
            recs[i] = (b, recs[i][1])
        elif op.startswith("ev:"):
            field, val = op[3:].split("=")
            recs = [(t, events(p, n, field, int(val, 0)) if t == 4 else p) for t, p in recs]
        elif op in ("raw:junk", "raw:setup"):
            item = b"\xff\x00" if op == "raw:junk" else b"\x01" + uv(10) + bytes(10)
            i = next(i for i, (t, _) in enumerate(recs) if t == 14)
            recs[i] = (14, recs[i][1] + item)
        elif op in ("raw:drop", "raw:dup"):
            i = max((i for i, (t, _) in enumerate(recs) if t == 14), key=lambda i: len(recs[i][1]))
            recs[i : i + 1] = [] if op == "raw:drop" else [recs[i], recs[i]]
        elif op == "v3":
            recs = [(t, raw_v3(p) if t == 14 else end_v3(p) if t == 8 else p) for t, p in recs]
            data = data[:8] + struct.pack("<I", 3) + data[12:16]
        elif op.startswith("raw:layout="):
            recs = [(t, raw_layout(p, op[11:]) if t == 14 else p) for t, p in recs]
        elif op == "v2":
            recs = [(t, raw_v2(p) if t == 14 else end_v2(p) if t == 8 else p) for t, p in recs]
            data = data[:8] + struct.pack("<I", 2) + data[12:16]
        elif op.startswith("raw:drop="):
            i = [i for i, (t, _) in enumerate(recs) if t == 14][int(op[9:])]
            del recs[i]
        elif op == "raw:swap":
            raw = [i for i, (t, _) in enumerate(recs) if t == 14]
            i = max(raw[:-1], key=lambda i: len(recs[i][1]))
            j = raw[raw.index(i) + 1]
            recs[i], recs[j] = recs[j], recs[i]
        elif op == "raw:noanswer":
            for i, (t, p) in enumerate(recs):
                if t == 14:
                    q, found = raw_noanswer(p)
                    if found:
                        recs[i] = (14, q)
                        break
            else:
                sys.exit("recraft.py: no answer item in any RAW block")
        elif op.startswith("strings:drop="):
            i = [i for i, (t, _) in enumerate(recs) if t == 2][int(op[13:])]
            del recs[i]
        else:
            sys.exit("recraft.py: unknown op " + op)
    with open(sys.argv[2], "wb") as f:
        f.write(data[:16])
        for t, p in recs:
            f.write(struct.pack("<III", t, len(p), zlib.crc32(p) & 0xFFFFFFFF) + p)


main()
