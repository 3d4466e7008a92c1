#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""dstfuzz: a seeded, bounded hostile peer for DST (tests/bats/hostile.bats).

    dstfuzz.py [options] net HOST PORT EXPORT CASE[,CASE...]
    dstfuzz.py [options] cfs NODE_DIR...
    dstfuzz.py [options] cn NAME...

net: hostile clients against one export.  CASE is one of
  hello     mutated and truncated HELLOs (every field, the length, cut short)
  garbage   random bytes, some behind a valid magic
  requests  a good handshake, then well-framed hostile requests: offsets and
            lengths at and past the end, offset + len wrapping u64,
            unaligned, zero-length, unknown commands and flags, a status in
            a request, reused and duplicate in-flight ids, a huge len with
            no data, a second HELLO -- mixed with good requests
  reset     a partial frame (handshake or request), then a reset (RST)
  writerst  eight READs in flight, then a WRITE header with half its data,
            then RST -- on one session, slots reused so new connections
            fence the dying ones (a use-after-free regression test)
  slow      many READs whose replies are never read, then close
Connections are closed with FIN or RST (SO_LINGER 0) at random.

cfs: random values (bytes, huge and negative numbers, empty, long strings,
non-ASCII, near-valid values) into every writable attribute of the given
configfs node directories (and their acl/<rule>/ directories); every write
must succeed or fail with an errno, every attribute must stay readable.
With --restore the attributes are put back as they were at the start.

cn: random connector messages (tests/cn/cnraw.py layouts), mostly naming
the given nodes; every message whose lengths agree must be acknowledged.

The seed is printed first (seed=N); $DST_FUZZ_SEED or -s sets it, so a run
reproduces the same sequence of actions per worker (thread interleavings
and the kernel's timing still vary).  Bounds: -n connections/operations,
-t seconds, whichever comes first.  Exit 1 on a protocol violation by the
kernel (a reply it must not send, wrong data from a read-only export, an
unacknowledged connector message); errors of our own hostile sockets are
expected and only counted.
"""
import argparse
import errno
import os
import random
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "cn"))
import dstwire as w  # noqa: E402

HDR = w.HDR
HELLO = w.HELLO
MAGIC = w.MAGIC
R, WR, FLUSH, DISC, WZ, PING, BYE = (w.CMD[c] for c in (
    "READ", "WRITE", "FLUSH", "DISCARD", "WRITE_ZEROES", "PING", "BYE"))
HELLO_CMD = w.CMD["HELLO"]
U64 = (1 << 64) - 1
ST_OK, ST_PERM = 0, 2

violations = []
vlock = threading.Lock()
counts = {}
clock = threading.Lock()


def violation(msg):
    with vlock:
        violations.append(msg)
    sys.stderr.write("VIOLATION: %s\n" % msg)


def count(key, n=1):
    with clock:
        counts[key] = counts.get(key, 0) + n


def hdr(cmd, id=0, offset=0, length=0, flags=0, status=0, magic=MAGIC,
        version=1):
    return HDR.pack(magic & 0xFFFFFFFF, version & 0xFF, cmd & 0xFF,
                    flags & 0xFFFF, length & 0xFFFFFFFF, status & 0xFFFFFFFF,
                    id & U64, offset & U64)


def hello_payload(export, features=0x1e, max_io=1 << 20, session=0, slot=0,
                  nq=1, qd=128, vmin=1, vmax=1):
    return HELLO.pack(vmin & 0xFFFF, vmax & 0xFFFF, features & 0xFFFFFFFF,
                      max_io & 0xFFFFFFFF, export, session & U64,
                      slot & 0xFFFF, nq & 0xFFFF, qd & 0xFFFF)


def rst(s):
    """Close with a reset: SO_LINGER 0."""
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     struct.pack("ii", 1, 0))
    except OSError:
        pass
    s.close()


class Conn:
    """One hostile connection: what we sent, so replies can be judged."""

    def __init__(self, fz, rng, timeout=3):
        self.fz = fz
        self.rng = rng
        self.s = socket.create_connection((fz.host, fz.port), timeout=timeout)
        self.s.settimeout(timeout)
        self.sent = {}          # id -> [(cmd, offset, len, cls)]
        self.buf = b""
        self.welcomed = False
        self.session = 0
        self.nq = 1
        self.qd = 128
        self.dead = False

    def send(self, data):
        if self.dead:
            return False
        try:
            self.s.sendall(data)
            return True
        except (OSError, socket.timeout):
            count("send_errors")
            self.dead = True
            return False

    def handshake(self, session=None, slot=None, nq=None, qd=None,
                  features=None):
        rng = self.rng
        self.session = rng.choice([0, rng.getrandbits(64) | 1]) \
            if session is None else session
        self.nq = nq or rng.choice([1, 2, 4])
        self.qd = qd or rng.choice([1, 8, 128, 1024])
        slot = rng.randrange(self.nq) if slot is None else slot
        if features is None:
            features = rng.choice([0x1e, 0x1f, 0x02, 0])
        p = hello_payload(self.fz.export, features=features,
                          session=self.session, slot=slot, nq=self.nq,
                          qd=self.qd)
        if not self.send(hdr(HELLO_CMD, length=len(p)) + p):
            return False
        try:
            h = self.recv_exact(HDR.size)
            f = dict(zip(("magic", "version", "cmd", "flags", "len",
                          "status", "id", "offset"), HDR.unpack(h)))
            if f["magic"] != MAGIC or f["cmd"] != HELLO_CMD | w.REPLY:
                violation("bad HELLO reply header %r" % f)
                return False
            if f["status"]:
                count("hello_refused")
                return False
            g = w.WELCOME.unpack(self.recv_exact(f["len"]))
        except (OSError, EOFError, socket.timeout, struct.error):
            count("hello_lost")
            return False
        self.welcomed = True
        self.geo = dict(zip(("version", "features", "size", "lbs", "pbs",
                             "max_io", "max_discard", "max_write_zeroes"), g))
        self.ro = bool(self.geo["features"] & 1)
        if self.fz.ro and not self.ro:
            violation("read-only export granted a writable connection")
        count("welcomed")
        return True

    def recv_exact(self, n):
        while len(self.buf) < n:
            c = self.s.recv(65536)
            if not c:
                raise EOFError
            self.buf += c
        d, self.buf = self.buf[:n], self.buf[n:]
        return d

    def id(self, valid=True):
        """An id: inside the declared tag space when valid and keyed."""
        rng = self.rng
        if self.session and valid:
            return w.make_id(gen=rng.randrange(1, 1 << 32),
                             tag=rng.randrange(self.qd),
                             queue=rng.randrange(self.nq))
        if self.session:
            return w.make_id(gen=rng.randrange(1, 1 << 32),
                             tag=self.qd + rng.randrange(1000),
                             queue=rng.randrange(self.nq))
        return rng.getrandbits(64)

    def request(self, cmd, offset, length, cls, id=None, flags=0,
                data=None, status=0, magic=MAGIC, version=1):
        """Send a request; cls says what the server owes it:
        'valid' an answer with OK (PERM for a write on a ro connection),
        'invalid' anything but OK (it must drop the connection),
        'any' no expectation."""
        if id is None:
            id = self.id(cls != "invalid")
        self.sent.setdefault(id, []).append((cmd & 0xFF, offset & U64,
                                             length & 0xFFFFFFFF, cls))
        frame = hdr(cmd, id, offset, length, flags, status, magic, version)
        if data is not None:
            frame += data
        count("requests_" + cls)
        return self.send(frame)

    def drain(self, secs):
        """Read what the server sends for up to secs (or to EOF) and
        judge every complete reply."""
        end = time.monotonic() + secs
        try:
            while True:
                left = end - time.monotonic()
                if left <= 0:
                    break
                self.s.settimeout(left)
                c = self.s.recv(1 << 20)
                if not c:
                    count("closed_by_server")
                    break
                self.buf += c
                self.judge()
        except socket.timeout:
            pass
        except OSError:
            count("recv_errors")
        self.judge()

    def judge(self):
        while len(self.buf) >= HDR.size:
            f = dict(zip(("magic", "version", "cmd", "flags", "len",
                          "status", "id", "offset"),
                         HDR.unpack_from(self.buf)))
            # A server sends replies, and in a keyed handshake AUTH (9).
            if f["magic"] != MAGIC or f["version"] != 1 or \
                    not (f["cmd"] & w.REPLY or f["cmd"] == 9):
                violation("malformed frame from the server: %r" % f)
                self.buf = b""
                return
            cmd = f["cmd"] & 0x7F
            need = HDR.size
            if cmd in (R, HELLO_CMD, 9) and f["status"] == ST_OK:
                need += f["len"]
            if len(self.buf) < need:
                return
            data = self.buf[HDR.size:need]
            self.buf = self.buf[need:]
            count("replies")
            if cmd in (HELLO_CMD, 9):
                # The answer to a HELLO we built by hand: only a good
                # HELLO may be welcomed, and nothing follows a refusal.
                count("hello_status_%d" % f["status"])
                if f["status"] == ST_OK:
                    self.welcomed_raw = True
                continue
            self.check(f, cmd, data)

    def check(self, f, cmd, data):
        cands = self.sent.get(f["id"], [])
        for i, (c, off, ln, cls) in enumerate(cands):
            if c == cmd and off == f["offset"] and ln == f["len"]:
                break
        else:
            if cmd == PING:
                return
            violation("reply %r matches no request sent with that id, "
                      "cmd, offset and len (sent %r)" % (f, cands))
            return
        del cands[i]
        st = f["status"]
        writes = cmd in (WR, DISC, WZ)
        if cls == "invalid" and st == ST_OK:
            violation("an invalid request was answered OK: %r" % f)
        if cls == "valid":
            want = ST_PERM if writes and self.ro else ST_OK
            if st != want:
                violation("a valid request got status %d, want %d: %r"
                          % (st, want, f))
        if writes and self.ro and st == ST_OK:
            violation("a write on a read-only connection answered OK: %r"
                      % f)
        if cmd == R and st == ST_OK and self.fz.expect is not None:
            if data != self.fz.expect[f["offset"]:f["offset"] + f["len"]]:
                violation("READ %d bytes at %d: data differ from the "
                          "read-only export's backing device"
                          % (f["len"], f["offset"]))
        count("checked")

    def close(self, how=None):
        if how is None:
            how = self.rng.choice(["rst", "fin", "bye"])
        if how == "bye" and self.welcomed:
            self.send(hdr(BYE))
        if how == "rst":
            rst(self.s)
        else:
            try:
                self.s.close()
            except OSError:
                pass
        count("close_" + how)


class Fuzzer:
    def __init__(self, args, rng):
        self.host, self.port = args.host, args.port
        self.export = args.export.encode()
        self.ro = args.ro
        self.expect = None
        if args.expect:
            with open(args.expect, "rb") as f:
                self.expect = f.read()
        # Learn the geometry with one good handshake.
        end = time.monotonic() + 20
        while True:
            try:
                c = Conn(self, rng)
                if c.handshake(session=0, features=0x1e):
                    break
            except OSError:
                pass
            if time.monotonic() > end:
                raise SystemExit("dstfuzz: cannot attach to %s:%d %s"
                                 % (self.host, self.port, args.export))
            time.sleep(0.5)
        self.geo = c.geo
        c.close("bye")
        self.size = self.geo["size"]
        self.lbs = self.geo["lbs"]
        self.max_io = self.geo["max_io"]

    # Good and hostile geometry.
    def good_range(self, rng, maxlen=None):
        maxlen = min(maxlen or self.max_io, self.max_io, self.size)
        blocks = rng.choice([1, 1, 2, 8, maxlen // self.lbs])
        ln = max(1, min(blocks, maxlen // self.lbs)) * self.lbs
        off = rng.randrange((self.size - ln) // self.lbs + 1) * self.lbs
        return off, ln

    def bad_range(self, rng):
        """(offset, len): each breaks a rule of docs/protocol.md."""
        S, L, M = self.size, self.lbs, self.max_io
        return rng.choice([
            (S, L),                     # at the end
            (S - L, 2 * L),             # across the end
            (S + 4096, 4096),           # past the end
            (U64 - L + 1, 2 * L),       # offset + len wraps u64
            (U64 & ~(L - 1), L),        # the last block of u64
            (1 << 63, L),
            (0, 0),                     # zero length
            (S - L, 0),
            (1, L),                     # unaligned offset
            (0, L + 1),                 # unaligned length
            (L // 2, 3 * L // 2),
            (0, M + L),                 # longer than max_io
            (0, 0xFFFFFFFF),            # huge
            (0, 0x80000000),
            (S - M, M + 4096),
            (rng.getrandbits(64), rng.getrandbits(32)),
        ])

    def payload(self, rng, n):
        return rng.randbytes(n) if n <= (1 << 20) else b""

    # The cases: one connection each.
    def case_hello(self, rng):
        c = Conn(self, rng)
        nq, qd = rng.choice([(1, 128), (0, 1), (1, 0), (256, 256),
                             (65535, 65535), (2, 32768), (1, 65535)])
        p = bytearray(hello_payload(
            self.export, features=rng.choice([0x1e, 0x20, 0x3f, U64, 0,
                                              rng.getrandbits(32)]),
            max_io=rng.choice([1 << 20, 0, 1, 511, 4095, 0xFFFFFFFF,
                               rng.getrandbits(32)]),
            session=rng.choice([0, 1, U64, rng.getrandbits(64)]),
            slot=rng.choice([0, 1, 0xFFFF]), nq=nq, qd=qd,
            vmin=rng.choice([1, 0, 2, 0xFFFF]),
            vmax=rng.choice([1, 0, 2, 0xFFFF]),
        ))
        mut = rng.choice(["name", "flip", "fields", "len", "cmd", "magic",
                          "version", "truncate", "extra", "auth"])
        length = len(p)
        cmd, magic, version, status, flags = HELLO_CMD, MAGIC, 1, 0, 0
        if mut == "name":
            p[16:48] = rng.choice([
                b"x" * 32,                              # no NUL
                b"\0" * 32,                             # empty
                rng.randbytes(32),
                b"../" * 10 + b"\0\0",
                self.export + b"\0" + b"\xff" * (31 - len(self.export)),
                b"\xc3\xbc\0".ljust(32, b"\0"),
            ])
        elif mut == "flip":
            for _ in range(rng.randrange(1, 8)):
                i = rng.randrange(len(p))
                p[i] ^= 1 << rng.randrange(8)
        elif mut == "fields":
            p[12:16] = rng.randbytes(4)                 # reserved
            p[62:64] = rng.randbytes(2)
        elif mut == "len":
            length = rng.choice([0, 1, 63, 65, 192, 4096, 0xFFFFFFFF,
                                 rng.getrandbits(32)])
        elif mut == "cmd":
            cmd = rng.choice([0, R, WR, PING, BYE, 9, 0x81, 0xFF,
                              rng.randrange(256)])
        elif mut == "magic":
            magic = rng.getrandbits(32)
        elif mut == "version":
            version = rng.choice([0, 2, 0xFF])
        elif mut == "auth":
            # AUTH offered: a keyed HELLO against an unkeyed export,
            # with a random or absent keyed part.
            p[4:8] = struct.pack(">I", 0x3e)
            p += rng.choice([b"", rng.randbytes(128),
                             b"\0" * 32 + b"hmac(sha256)".ljust(32, b"\0")
                             + b"\0" * 64])
            length = rng.choice([len(p), 192])
        if rng.random() < 0.3:
            status = rng.getrandbits(32)
        if rng.random() < 0.3:
            flags = rng.getrandbits(16)
        frame = hdr(cmd, rng.getrandbits(64) if rng.random() < 0.3 else 0,
                    rng.getrandbits(64) if rng.random() < 0.3 else 0,
                    length, flags, status, magic, version) + bytes(p)
        if mut == "truncate":
            frame = frame[:rng.randrange(len(frame))]
        elif mut == "extra":
            frame += rng.randbytes(rng.randrange(1, 512))
        c.send(frame)
        if rng.random() < 0.5:
            # whatever the answer, follow with a request
            c.request(R, 0, self.lbs, "any", id=1)
        c.drain(rng.choice([0, 0.05, 0.3]))
        c.close()

    def case_garbage(self, rng):
        c = Conn(self, rng)
        n = rng.choice([1, 31, 32, 33, 96, 4096, rng.randrange(1, 65536)])
        data = rng.randbytes(n)
        if rng.random() < 0.5:
            data = struct.pack(">I", MAGIC) + data
        if rng.random() < 0.3 and c.handshake():
            pass            # garbage after a good handshake
        c.send(data)
        c.drain(rng.choice([0, 0.05, 0.2]))
        c.close()

    def hostile_request(self, c, rng):
        kind = rng.randrange(16)
        if kind == 0:       # out of range, every command
            off, ln = self.bad_range(rng)
            cmd = rng.choice([R, WR, DISC, WZ])
            data = self.payload(rng, ln) if cmd == WR and \
                ln <= self.max_io and rng.random() < 0.5 else None
            c.request(cmd, off, ln, "invalid", data=data)
            return False
        if kind == 1:       # unknown command
            cmd = rng.choice([0, 10, 11, 0x7F, 0x80, 0x82, 0x83, 0xFF,
                              rng.randrange(10, 256)])
            c.request(cmd, 0, rng.choice([0, self.lbs]), "invalid")
            return False
        if kind == 2:       # unknown flags
            cmd = rng.choice([R, WR])
            off, ln = self.good_range(rng, 4096)
            fl = rng.choice([0x4, 0x8, 0x8000, 0xFFFF]) | \
                rng.getrandbits(16)
            c.request(cmd, off, ln, "invalid" if fl & ~3 else "any",
                      flags=fl, data=self.payload(rng, ln)
                      if cmd == WR else None)
            return False
        if kind == 3:       # a status, a bad magic or version in a request
            off, ln = self.good_range(rng, 4096)
            if rng.random() < 0.5:
                c.request(R, off, ln, "any", status=rng.getrandbits(32))
            else:
                c.request(R, off, ln, "invalid",
                          magic=rng.getrandbits(32),
                          version=rng.choice([0, 2, 0xFF]))
                return False
            return True
        if kind == 4:       # a WRITE with a huge len and no data
            c.request(WR, 0, rng.choice([self.max_io, self.max_io // 2]),
                      "any")
            return False
        if kind == 5:       # a second HELLO, an AUTH, a BYE
            cmd = rng.choice([HELLO_CMD, 9, BYE])
            c.request(cmd, 0, rng.choice([0, 64]), "invalid",
                      data=rng.randbytes(64) if rng.random() < 0.5 else None)
            return False
        if kind == 6:       # duplicate in-flight ids
            id = c.id()
            for _ in range(rng.randrange(2, 6)):
                off, ln = self.good_range(rng, 65536)
                if rng.random() < 0.5 or self.ro:
                    c.request(R, off, ln, "any", id=id)
                else:
                    c.request(WR, off, ln, "any", id=id,
                              data=self.payload(rng, ln))
            return True
        if kind == 7:       # FLUSH, DISCARD, WRITE_ZEROES (not granted)
            cmd = rng.choice([FLUSH, DISC, WZ])
            off, ln = self.good_range(rng)
            if cmd == FLUSH:
                off, ln = 0, 0
            c.request(cmd, off, ln, "any",
                      flags=rng.choice([0, 1, 2, 3]))
            return True
        if kind == 8:
            c.request(PING, 0, 0, "any", id=rng.getrandbits(64))
            return True
        # the rest: good requests
        off, ln = self.good_range(rng)
        if rng.random() < 0.5:
            c.request(R, off, ln, "valid")
        else:
            c.request(WR, off, ln, "valid", data=self.payload(rng, ln),
                      flags=rng.choice([0, 0, 1]) if not c.ro else 0)
        return True

    def case_requests(self, rng):
        c = Conn(self, rng)
        if not c.handshake():
            c.close()
            return
        for _ in range(rng.randrange(1, 40)):
            # A frame the server must drop the connection for ends what
            # we send, mostly: bytes after it would be read as its data.
            if not self.hostile_request(c, rng) or c.dead:
                break
        c.drain(rng.choice([0.05, 0.3, 1.0]))
        c.close()

    def case_reset(self, rng):
        c = Conn(self, rng)
        if rng.random() < 0.3:
            p = hello_payload(self.export)
            frame = hdr(HELLO_CMD, length=len(p)) + p
            c.send(frame[:rng.randrange(1, len(frame))])
        else:
            if not c.handshake():
                c.close("rst")
                return
            for _ in range(rng.randrange(0, 8)):
                off, ln = self.good_range(rng, 65536)
                c.request(R, off, ln, "valid")
            off, ln = self.good_range(rng)
            cmd = WR if not c.ro or rng.random() < 0.3 else R
            frame = hdr(cmd, c.id(), off, ln) + \
                (self.payload(rng, ln) if cmd == WR else b"")
            c.send(frame[:rng.randrange(1, len(frame))])
        if rng.random() < 0.5:
            c.drain(0.02)
        c.close("rst")

    def case_writerst(self, rng, session=None, slot=None):
        c = Conn(self, rng)
        if not c.handshake(session=session, slot=slot, nq=4, qd=128):
            c.close("rst")
            return
        ids = set()
        while len(ids) < 8:
            ids.add(c.id())
        for id in ids:
            off, ln = self.good_range(rng, 131072)
            c.request(R, off, ln, "valid", id=id)
        if rng.random() < 0.5:
            off, ln = self.good_range(rng, 65536)
            c.request(WR, off, ln, "valid", data=self.payload(rng, ln))
        if rng.random() < 0.3:
            c.drain(0.01)
        off, ln = self.good_range(rng, self.max_io)
        ln = max(ln, 2 * self.lbs)
        off = min(off, self.size - ln)
        c.send(hdr(WR, c.id(), off, ln) +
               self.payload(rng, ln)[:rng.randrange(1, ln // 2 + 1)])
        return c    # the caller resets it, now or after a fence

    def case_slow(self, rng):
        c = Conn(self, rng, timeout=2)
        if not c.handshake():
            c.close()
            return
        n = rng.choice([64, 256, 1024, 2000])
        big = rng.random() < 0.5
        batch = b""
        for i in range(n):
            off, ln = self.good_range(rng, self.max_io if big else 65536)
            batch += hdr(R, c.id(), off, ln)
            if len(batch) > 32768:
                if not c.send(batch):
                    break
                batch = b""
        if batch:
            c.send(batch)
        count("slow_reads", n)
        c.close(rng.choice(["fin", "rst"]))


def run_net(args, seed):
    rng0 = random.Random(seed)
    fz = Fuzzer(args, rng0)
    print("geometry: size=%d lbs=%d max_io=%d features=%#x"
          % (fz.size, fz.lbs, fz.max_io, fz.geo["features"]), flush=True)
    cases = args.case.split(",")
    deadline = time.monotonic() + args.time
    per_worker = max(1, args.n // args.workers)

    def worker(k):
        rng = random.Random("%d-%d" % (seed, k))
        session = rng.getrandbits(64) | 1
        pending = []        # writerst connections not yet reset
        for i in range(per_worker):
            if time.monotonic() > deadline:
                count("stopped_by_time")
                break
            case = cases[i % len(cases)]
            count("conn_" + case)
            try:
                if case == "writerst":
                    # One session: the next connection often takes the
                    # slot of one still half-written, which fences it.
                    c = fz.case_writerst(rng, session=session,
                                         slot=rng.randrange(4))
                    if c:
                        pending.append(c)
                    while pending and (len(pending) > 2 or
                                       rng.random() < 0.6):
                        rst(pending.pop(0).s)
                else:
                    getattr(fz, "case_" + case)(rng)
            except (OSError, EOFError, socket.timeout) as e:
                count("conn_errors")
                if isinstance(e, ConnectionRefusedError):
                    count("refused")
        for c in pending:
            rst(c.s)

    ts = [threading.Thread(target=worker, args=(k,))
          for k in range(args.workers)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


# Control plane: configfs.
def values(rng):
    """A hostile or near-valid attribute value (bytes, no newline added
    half of the time)."""
    v = rng.choice([
        b"", b"\n", b"0", b"1", b"-1", b"2", b"512", b"4096", b"65536",
        b"18446744073709551615", b"18446744073709551616",
        b"-9223372036854775808", b"4294967296", b"99999999999999999999999",
        b"0x10", b"1e3", b" 1", b"1 ", b"+1", b"01", b"y", b"on",
        b"%s%n%x", b"\0", b"\0" * 8, b"1\0garbage",
        "\u00fc\u00e9\u4e2d".encode(), b"\xff\xfe\xfd", b"\xc3",
        b"a" * 31, b"a" * 32, b"x" * 255, b"y" * 4095, b"z" * 4096,
        b"w" * 5000,
        b"10.99.0.1:7000", b"0.0.0.0:1", b"[::]:7000", b"[fd99::1]:0",
        b"10.99.0.1", b"10.99.0.1:65536", b"[::1", b"256.1.1.1:1",
        b"/dev/ram0", b"/dev/ram1", b"/dev/null", b"ram1", b"/",
        b"/dev/" + b"r" * 300,
        b"hmac(sha256)", b"sha256", b"gcm(aes)", b"aes", b"nonexistent(x)",
        b"hmac(" * 20,
        b"0" * 32, b"ab" * 16, b"ab" * 64, b"ab" * 65, b"zz" * 16, b"abc",
        b"ro", b"rw", b"RW", b"0.0.0.0/0", b"::/0", b"10.0.0.0/33",
        b"fd99::/129", b"10.1.2.3/8", b"::ffff:10.0.0.1/96",
        b"e1", b"r1", b"..", b"a/b",
        rng.randbytes(rng.randrange(1, 64)),
        str(rng.getrandbits(64)).encode(),
        str(-rng.getrandbits(31)).encode(),
        str(rng.randrange(1 << 20)).encode(),
    ])
    if rng.random() < 0.5:
        v += b"\n"
    return v


def attrs_of(d):
    """(path, writable, readable) of a node's attributes and rules'."""
    out = []
    for root, dirs, files in os.walk(d):
        for f in sorted(files):
            p = os.path.join(root, f)
            m = os.stat(p).st_mode
            out.append((p, bool(m & 0o222), bool(m & 0o444)))
    return out


def cfs_write(p, v):
    fd = os.open(p, os.O_WRONLY)
    try:
        os.write(fd, v)
        return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    finally:
        os.close(fd)


def run_cfs(args, seed):
    rng = random.Random(seed)
    saved = {}
    for d in args.dirs:
        for p, wr, rd in attrs_of(d):
            if wr and rd and os.path.basename(p) not in ("enable", "key"):
                with open(p, "rb") as f:
                    saved[p] = f.read().rstrip(b"\n")
    targets = [p for d in args.dirs for p, wr, rd in attrs_of(d)
               if wr and (args.enable or os.path.basename(p) != "enable")]
    if not targets:
        raise SystemExit("dstfuzz: no writable attribute in %s" % args.dirs)
    deadline = time.monotonic() + args.time
    results = {}
    for i in range(args.n):
        if time.monotonic() > deadline:
            break
        p = rng.choice(targets)
        v = values(rng)
        if os.path.basename(p) == "enable":
            v = rng.choice([b"0", b"1", b"2", b"-1", b"", b"yes", b"x"])
        try:
            r = cfs_write(p, v)
        except OSError as e:        # open itself failed
            violation("%s: open for writing failed: %s" % (p, e))
            continue
        results[r] = results.get(r, 0) + 1
        if r in ("EFAULT", "EIO", "ENOMEM"):
            print("unusual: %s <- %r: %s" % (p, v[:40], r), flush=True)
        # Every attribute stays readable.
        for q, wr, rd in attrs_of(os.path.dirname(p)):
            if rd:
                try:
                    with open(q, "rb") as f:
                        f.read()
                except OSError as e:
                    violation("%s unreadable after %r -> %s: %s"
                              % (q, v[:40], p, e))
    print("results: " + " ".join("%s=%d" % kv for kv in
                                 sorted(results.items())), flush=True)
    if args.restore:
        for d in args.dirs:
            en = os.path.join(d, "enable")
            if os.path.exists(en):
                r = cfs_write(en, b"0")
                if r != "OK":
                    violation("%s: disabling failed: %s" % (en, r))
        # Order: algorithms before the key, so no hash is left without it.
        for p in sorted(saved, key=lambda p: os.path.basename(p) == "key"):
            r = cfs_write(p, saved[p] + b"\n")
            if r != "OK":
                violation("%s: restoring %r failed: %s" % (p, saved[p], r))
        for d in args.dirs:
            k = os.path.join(d, "key")
            if os.path.exists(k):
                r = cfs_write(k, b"\n")
                if r != "OK":
                    violation("%s: removing the key failed: %s" % (k, r))


# Control plane: the connector.
def run_cn(args, seed):
    import cnraw as cn
    rng = random.Random(seed)
    names = args.names + ["fz%d" % i for i in range(3)]
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM,
                      cn.NETLINK_CONNECTOR)
    s.bind((0, 0))
    s.settimeout(10)
    deadline = time.monotonic() + args.time
    results = {}

    def name(rng):
        r = rng.random()
        if r < 0.7:
            return rng.choice(names).encode().ljust(32, b"\0")
        if r < 0.8:
            return rng.randbytes(32)
        if r < 0.9:
            return b"".join(bytes([rng.choice(b"abcXYZ019._-")])
                            for _ in range(rng.randrange(1, 32))
                            ).ljust(32, b"\0")
        return rng.choice([b"\0" * 32, b"x" * 32, b".a".ljust(32, b"\0"),
                           b"a/b".ljust(32, b"\0")])

    def saddr(rng):
        if rng.random() < 0.7:
            return rng.choice([cn.saddr_in("127.0.0.1", 7300),
                               cn.saddr_in("127.0.0.1", 7301),
                               cn.saddr_in6("::1", 7302)])
        return rng.choice([
            cn.saddr_in("127.0.0.1", rng.choice([7300, 7301, 0, 65535])),
            cn.saddr_in("10.99.0.1", 7000),
            cn.saddr_in6("::1", 7302),
            cn.saddr_in(family=rng.choice([0, 1, 10, 0xFFFF]),
                        dlen=rng.choice([0, 16, 28, 128, 0xFFFF])),
            cn.saddr_in6(dlen=rng.choice([16, 28, 130])),
            rng.randbytes(132),
        ])

    def payload(rng, cmd):
        r = rng.random()
        if r < 0.08:
            return rng.randbytes(rng.randrange(0, 600))
        if cmd == cn.ADD_EXPORT:
            p = pick(rng, b"/dev/ram0", [b"/dev/ram1", b"/dev/null",
                                         b"ram0", b"/" * 32,
                                         rng.randbytes(32)]
                           ).ljust(32, b"\0")[:32] + \
                struct.pack("<II", pick(rng, 1, [2, 5]),
                            pick(rng, 6, [0, 17])) + saddr(rng)
        elif cmd == cn.ADD_REMOTE:
            p = struct.pack("<II", pick(rng, 1, [2]),
                            pick(rng, 0, [6, 17])) + saddr(rng)
            if rng.random() < 0.5:      # dst_remote_ctl
                p += rng.choice([b"st", b"e1", rng.randbytes(32)]
                                ).ljust(32, b"\0")
        elif cmd == cn.SECURITY:
            p = struct.pack("<I", pick(rng, rng.choice([1, 3]),
                                       [0, 2, 0xFFFFFFFF])) + saddr(rng)
        elif cmd == cn.CRYPTO:
            hk, ck = rng.choice([(0, 0), (32, 0), (0, 32), (16, 16),
                                 (64, 64), (65, 0), (15, 0),
                                 (0xFFFFFFFF, 1)])
            keys = rng.randbytes(min(hk, 200)) + rng.randbytes(min(ck, 200))
            p = cn.crypto(hk, ck, keys,
                          cipher=rng.choice([b"", b"gcm(aes)", b"aes",
                                             b"x" * 32]),
                          hash_=rng.choice([b"", b"hmac(sha256)",
                                            b"sha256", b"h" * 32]),
                          attached=rng.choice([0, 0, 4]),
                          threads=rng.choice([0, 1, 64, 65, -1]))
        else:
            p = b""
        if rng.random() < 0.08 and p:
            p = p[:rng.randrange(len(p))]
        elif rng.random() < 0.05:
            p += rng.randbytes(rng.randrange(1, 16))
        return p

    def pick(rng, good, bad):
        """Mostly the good value, so that messages get past the first
        check and reach the deeper ones."""
        return good if rng.random() < 0.85 else rng.choice(bad)

    seq = rng.randrange(1 << 16)
    for i in range(args.n):
        if time.monotonic() > deadline:
            break
        cmd = pick(rng, rng.randrange(6), [6, 7, 0xFFFFFFFF,
                                           rng.getrandbits(32)])
        flags = 0
        if cmd == cn.SECURITY and rng.random() < 0.5:
            flags = cn.SEC_PREFIX | rng.choice([0, 8, 24, 32, 64, 128])
        adds = cmd in (cn.ADD_EXPORT, cn.ADD_REMOTE)
        body = struct.pack("<32sIIIIIIQ", name(rng),
                           pick(rng, flags, [0x100 | rng.randrange(130),
                                             rng.getrandbits(32)]),
                           cmd,
                           pick(rng, rng.choice([0, 1, 1024]) if adds
                                else 0, [1025, 0xFFFFFFFF]),
                           pick(rng, rng.choice([0, 100]) if adds else 0,
                                [99, 0xFFFFFFFF]),
                           pick(rng, rng.choice([0, 5]) if adds else 0,
                                [1001]),
                           pick(rng, 0, [1]),
                           pick(rng, rng.choice([0, 512 << 10]) if adds
                                else 0, [511, U64, rng.getrandbits(64)]))
        if rng.random() < 0.05:
            body = body[:rng.randrange(64)]
        else:
            body += payload(rng, cmd & 0xFF if cmd < 8 else cmd)
        seq = (seq + 1) & 0xFFFFFFFF
        cnh = struct.pack("=IIIIHH", cn.CN_DST_IDX, cn.CN_DST_VAL, seq, 0,
                          len(body), 0)
        lie = rng.random() < 0.05
        if lie:
            # cn_msg.len beyond the netlink message: the connector
            # itself drops it, no answer is owed.
            cnh = cnh[:16] + struct.pack("=H", len(body) + 100) + cnh[18:]
        msg = cnh + body
        s.send(struct.pack("=IHHII", 16 + len(msg), cn.NLMSG_DONE, 0, 0,
                           0) + msg)
        if lie:
            continue
        try:
            while True:
                reply = s.recv(4096)
                idx, val, rseq, rack = struct.unpack_from("=IIII", reply, 16)
                if (idx, val, rack) == (cn.CN_DST_IDX, cn.CN_DST_VAL,
                                        (seq + 1) & 0xFFFFFFFF):
                    err = struct.unpack_from("=i", reply, 36)[0]
                    break
        except socket.timeout:
            violation("no ack within 10 s for message %d (cmd %#x, "
                      "%d bytes)" % (i, cmd, len(body)))
            continue
        r = "OK" if err == 0 else errno.errorcode.get(-err, str(err))
        results[r] = results.get(r, 0) + 1
        if err > 0 or (err < 0 and -err not in errno.errorcode):
            violation("ack with a value that is no errno: %d" % err)
    print("results: " + " ".join("%s=%d" % kv for kv in
                                 sorted(results.items())), flush=True)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-s", "--seed", type=int,
                    default=int(os.environ["DST_FUZZ_SEED"])
                    if os.environ.get("DST_FUZZ_SEED") else None)
    ap.add_argument("-n", type=int, default=300,
                    help="connections (net) or operations (cfs, cn)")
    ap.add_argument("-t", "--time", type=float, default=60)
    ap.add_argument("-w", "--workers", type=int, default=4)
    sub = ap.add_subparsers(dest="mode", required=True)
    n = sub.add_parser("net")
    n.add_argument("--ro", action="store_true",
                   help="the export is read-only: no write may succeed")
    n.add_argument("--expect", help="the export's content, to check reads")
    n.add_argument("host")
    n.add_argument("port", type=int)
    n.add_argument("export")
    n.add_argument("case")
    c = sub.add_parser("cfs")
    c.add_argument("--restore", action="store_true")
    c.add_argument("--enable", action="store_true",
                   help="fuzz enable too (the node is enabled)")
    c.add_argument("dirs", nargs="+")
    k = sub.add_parser("cn")
    k.add_argument("names", nargs="*")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else \
        random.SystemRandom().randrange(1 << 32)
    if os.environ.get("DST_DEBUG") == "1":
        args.n = max(1, args.n // 4)
    print("seed=%d mode=%s n=%d t=%gs" % (seed, args.mode, args.n,
                                          args.time), flush=True)
    start = time.monotonic()
    {"net": run_net, "cfs": run_cfs, "cn": run_cn}[args.mode](args, seed)
    print("counts: " + " ".join("%s=%d" % kv for kv in
                                sorted(counts.items())), flush=True)
    print("took %.1fs, %d violation(s)" % (time.monotonic() - start,
                                           len(violations)), flush=True)
    if violations:
        print("seed=%d FAILED: %s" % (seed, violations[0]), flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
