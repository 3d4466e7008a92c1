#!/usr/bin/env python3
"""A hostile DST v1 server for the client's fault tests (docs/protocol.md).

It answers the handshake like an export (no key, no fencing) and
serves READs with zeroes and PINGs, then misbehaves as --mode says:

  swallow-writes  reads WRITEs and never answers them (a server whose
                  backing device hangs: the client runs out of retries)
  truncate-read   answers the first READ at offset --at with its header
                  and all but the last byte of its data, then closes
                  (the FIN rides in the same segment); later connections
                  are served normally
  vanish-on-read  on the first READ, closes its listening socket and
                  the connection without answering: a server gone for
                  good, every reconnection refused
  orphan-write    reads the first WRITE, never answers it and closes
                  the connection it came on, so the client orphans it;
                  refuses (BUSY) every later HELLO for that connection's
                  slot until the file --release exists; serves the rest
  resize          grants RESIZE (when offered) and, after answering the
                  first READ, sends one RESIZE frame to --size-to bytes
                  (once for the server's life); serves the rest
  resize-ungranted  the same, without granting RESIZE
  resize-late     as resize, then a second, late RESIZE to --late-to
                  bytes (less than --size-to) on every other connection:
                  what a client sees when the export grew twice and its
                  connections told the two sizes in the other order
  impostor        a well-behaved server of another export that looks
                  like the real one: the geometry given by --geometry
                  (features,size,lbs,pbs,max_io,max_discard,max_wz, as
                  dstwire.Client reads it from the real export) and
                  identity --uuid (32 hex digits), granting UUID

Events go to --log, one line each, flushed at once, so a test can tell
what the server saw before the client's I/O ended:

  listening | hello N | write N | truncated N | vanished N | eof N |
  closed N | orphaned N slot S | refused N | back N slot S | resized N |
  late N

N counts connections from 1.  Usage:

  dstserver.py --port 7000 --mode swallow-writes --log FILE
"""
import argparse
import os
import socket
import threading
import time

import dstwire as w

SIZE = 64 << 20


class Server:
    def __init__(self, args):
        self.args = args
        self.log_lock = threading.Lock()
        self.count = 0
        self.truncated = False
        self.held_slot = None       # orphan-write: the slot refused
        self.resized = False        # resize: the one RESIZE is sent
        self.send_lock = threading.Lock()   # resize-late writes to others
        self.socks = {}             # resize-late: N -> welcomed socket

    def log(self, line):
        with self.log_lock:
            with open(self.args.log, "a") as f:
                f.write(line + "\n")

    def recv(self, s, n):
        buf = b""
        while len(buf) < n:
            chunk = s.recv(n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return buf

    def reply(self, s, h, status=0, data=b""):
        with self.send_lock:
            s.sendall(w.HDR.pack(w.MAGIC, w.VERSION, h["cmd"] | w.REPLY, 0,
                                 h["len"], status, h["id"], h["offset"]) +
                      data)

    def resize(self, s, size):
        with self.send_lock:
            s.sendall(w.HDR.pack(w.MAGIC, w.VERSION, w.CMD["RESIZE"],
                                 0, 0, 0, 0, size))

    def header(self, s):
        f = w.HDR.unpack(self.recv(s, w.HDR.size))
        return dict(zip(("magic", "version", "cmd", "flags", "len",
                         "status", "id", "offset"), f))

    def welcome(self, s, n):
        """Answer HELLO; returns the client's slot, or None if refused."""
        h = self.header(s)
        body = self.recv(s, h["len"])
        slot = -1
        if self.args.mode == "orphan-write" and len(body) >= w.HELLO.size:
            slot = w.HELLO.unpack(body[:w.HELLO.size])[6]
        if slot >= 0 and slot == self.held_slot:
            if not os.path.exists(self.args.release):
                self.log("refused %d" % n)
                s.sendall(w.HDR.pack(w.MAGIC, w.VERSION,
                                     w.CMD["HELLO"] | w.REPLY, 0, 0,
                                     w.ST_BUSY, 0, 0))
                return None
            self.log("back %d slot %d" % (n, slot))
        self.log("hello %d" % n)
        features = 0
        if (self.args.mode in ("resize", "resize-late") and
                len(body) >= w.HELLO.size):
            features = w.HELLO.unpack(body[:w.HELLO.size])[2] & w.FEAT_RESIZE
        if self.args.mode == "impostor":
            g = [int(x) for x in self.args.geometry.split(",")]
            payload = w.WELCOME.pack(1, g[0] | w.FEAT_UUID, *g[1:])
            payload = payload[:40] + bytes.fromhex(self.args.uuid) + \
                payload[56:]
        else:
            payload = w.WELCOME.pack(1, features, SIZE, 512, 512, 1 << 20,
                                     0, 0)
        s.sendall(w.HDR.pack(w.MAGIC, w.VERSION, w.CMD["HELLO"] | w.REPLY,
                             0, len(payload), 0, 0, 0) + payload)
        with self.send_lock:
            self.socks[n] = s
        return slot

    def serve(self, s, n):
        slot = self.welcome(s, n)
        if slot is None:
            return
        while True:
            h = self.header(s)
            op = h["cmd"]
            if op == w.CMD["WRITE"]:
                self.recv(s, h["len"])
                if self.args.mode == "swallow-writes":
                    self.log("write %d" % n)
                    continue
                if (self.args.mode == "orphan-write" and
                        self.held_slot is None):
                    self.held_slot = slot
                    self.log("orphaned %d slot %d" % (n, slot))
                    return
                self.reply(s, h)
            elif op == w.CMD["READ"] and self.args.mode == "vanish-on-read":
                self.log("vanished %d" % n)
                self.ls.shutdown(socket.SHUT_RDWR)
                self.ls.close()
                return
            elif op == w.CMD["READ"]:
                if (self.args.mode == "truncate-read" and
                        not self.truncated and h["offset"] == self.args.at):
                    self.truncated = True
                    self.log("truncated %d" % n)
                    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
                    self.reply(s, h, data=bytes(h["len"] - 1))
                    s.shutdown(socket.SHUT_WR)
                    return
                self.reply(s, h, data=bytes(h["len"]))
                if self.args.mode.startswith("resize") and not self.resized:
                    self.resized = True
                    self.resize(s, self.args.size_to)
                    self.log("resized %d" % n)
                    if self.args.mode == "resize-late":
                        # Let the client take the larger size first.
                        time.sleep(1)
                        with self.send_lock:
                            others = [(m, o) for m, o in self.socks.items()
                                      if m != n]
                        for m, o in others:
                            self.resize(o, self.args.late_to)
                            self.log("late %d" % m)
            elif op == w.CMD["BYE"]:
                return
            else:
                self.reply(s, h)

    def connection(self, s, n):
        try:
            self.serve(s, n)
            self.log("closed %d" % n)
        except (EOFError, ConnectionError):
            self.log("eof %d" % n)
        finally:
            with self.send_lock:
                self.socks.pop(n, None)
            s.close()

    def run(self):
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind((self.args.addr, self.args.port))
        ls.listen(16)
        self.ls = ls
        self.log("listening")
        while True:
            try:
                s, _ = ls.accept()
            except OSError:
                # vanish-on-read shut the listening socket: stay, so
                # the test still has a process to stop.
                threading.Event().wait()
            self.count += 1
            threading.Thread(target=self.connection, args=(s, self.count),
                             daemon=True).start()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--addr", default="0.0.0.0")
    p.add_argument("--port", type=int, default=7000)
    p.add_argument("--mode", required=True,
                   choices=("swallow-writes", "truncate-read",
                            "vanish-on-read", "orphan-write", "resize",
                            "resize-ungranted", "resize-late",
                            "impostor"))
    p.add_argument("--geometry", default="0,%d,512,512,%d,0,0" % (SIZE, 1 << 20))
    p.add_argument("--uuid", default="00" * 16)
    p.add_argument("--at", type=int, default=1 << 20)
    p.add_argument("--size-to", type=int, default=2 * SIZE)
    p.add_argument("--late-to", type=int, default=SIZE + (32 << 20))
    p.add_argument("--release", default="/nonexistent")
    p.add_argument("--log", required=True)
    Server(p.parse_args()).run()


if __name__ == "__main__":
    main()
