#!/usr/bin/env python3
"""A raw DST v1 protocol peer for tests (docs/protocol.md).

Speaks the wire format directly, so tests can do what the kernel client
never does on purpose: reuse a session and slot, resend an id, send
malformed frames.  Used as a module by the suites' inline scripts:

    import dstwire
    c = dstwire.Client("10.99.0.1", 7000, "e1", session=5, slot=0)
    c.write(0, b"x" * 4096, id=dstwire.make_id(gen=1, tag=3))
    hdr = c.reply()
"""
import socket
import struct

MAGIC = 0x44535450
VERSION = 1
CMD = {"HELLO": 1, "READ": 2, "WRITE": 3, "FLUSH": 4, "DISCARD": 5,
       "WRITE_ZEROES": 6, "PING": 7, "BYE": 8, "AUTH": 9, "RESIZE": 10}
REPLY = 0x80
ST_BUSY = 9                            # HELLO: try again later
FEAT_RESIZE = 0x40                     # the client takes RESIZE notices
FEAT_UUID = 0x80                       # the welcome names the export
HDR = struct.Struct(">IBBHIIQQ")        # 32 bytes
HELLO = struct.Struct(">HHII4x32sQHHH2x")  # 64 bytes
WELCOME = struct.Struct(">H2xIQIIIII4x24x")  # 64 bytes


def make_id(gen, tag, queue=0):
    return (gen << 32) | (queue << 16) | tag


class Client:
    def __init__(self, host, port, export, session=0, slot=0,
                 nr_queues=1, queue_depth=128, features=0x1e,
                 max_io=1 << 20, timeout=20):
        self.s = socket.create_connection((host, port), timeout=timeout)
        payload = HELLO.pack(1, 1, features, max_io, export.encode(),
                             session, slot, nr_queues, queue_depth)
        self.send(CMD["HELLO"], payload=payload)
        h = self.reply()
        if h["status"]:
            raise OSError("HELLO refused: status %d" % h["status"])
        if h["cmd"] != CMD["HELLO"] | REPLY or h["len"] != WELCOME.size:
            raise OSError("bad welcome header %r" % h)
        w = WELCOME.unpack(self.recv(WELCOME.size))
        self.geometry = dict(zip(("version", "features", "size", "lbs",
                                  "pbs", "max_io", "max_discard",
                                  "max_write_zeroes"), w))

    def recv(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.s.recv(n - len(buf))
            if not chunk:
                raise EOFError("connection closed after %d of %d bytes"
                               % (len(buf), n))
            buf += chunk
        return buf

    def send(self, cmd, id=0, offset=0, length=None, payload=b"", flags=0):
        if length is None:
            length = len(payload)
        self.s.sendall(HDR.pack(MAGIC, VERSION, cmd, flags, length, 0, id,
                                offset) + payload)

    def write(self, offset, data, id):
        self.send(CMD["WRITE"], id=id, offset=offset, payload=data)

    def read(self, offset, length, id):
        self.send(CMD["READ"], id=id, offset=offset, length=length)

    def reply(self):
        f = HDR.unpack(self.recv(HDR.size))
        h = dict(zip(("magic", "version", "cmd", "flags", "len", "status",
                      "id", "offset"), f))
        if h["magic"] != MAGIC:
            raise OSError("bad magic in reply")
        if h["cmd"] == CMD["READ"] | REPLY and h["status"] == 0:
            h["data"] = self.recv(h["len"])
        return h

    def closed_by_peer(self, timeout=20):
        """True once the server has closed this connection."""
        self.s.settimeout(timeout)
        try:
            return self.s.recv(1) == b""
        except ConnectionResetError:
            return True
