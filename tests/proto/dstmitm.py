#!/usr/bin/env python3
"""A man in the middle for DST connections (tests/bats/crypto.bats).

Usage: dstmitm.py LISTEN_PORT SERVER_HOST:PORT TAG_LEN MODE STATE_DIR

Listens on LISTEN_PORT (all addresses of the namespace it runs in) and
relays every connection to the server.  On the first connection only, it
parses the client's frames (docs/protocol.md: the HELLO, the AUTH reply
when TAG_LEN > 0, then header + WRITE data + TAG_LEN bytes of tag per
frame) and tampers with the first WRITE:

  payload  flips one bit of its data
  header   flips bit 12 of its offset (a valid, different offset)
  replay   forwards it, then forwards the same bytes again

Later connections (the client's reconnection) are relayed untouched.
It writes STATE_DIR/ready once listening and STATE_DIR/tampered once it
has done its deed.  Server to client is relayed as is.
"""
import os
import socket
import struct
import sys
import threading

HDR = struct.Struct(">IBBHIIQQ")
WRITE, HELLO, AUTH, REPLY = 3, 1, 9, 0x80


def usage():
    sys.stderr.write(__doc__)
    sys.exit(2)


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def pump(src, dst):
    try:
        while True:
            b = src.recv(65536)
            if not b:
                break
            dst.sendall(b)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def tamper(cli, srv, tag_len, mode, state):
    """Client to server, frame by frame, until the first WRITE is done."""
    try:
        # The handshake: HELLO, then (keyed) the AUTH reply; no tags.
        for _ in range(2 if tag_len else 1):
            h = recv_exact(cli, HDR.size)
            n = HDR.unpack(h)[4]
            srv.sendall(h + recv_exact(cli, n))
        while True:
            h = bytearray(recv_exact(cli, HDR.size))
            cmd, length = h[5], HDR.unpack(bytes(h))[4]
            rest = bytearray(recv_exact(cli, (length if cmd == WRITE else 0)
                                        + tag_len))
            if cmd != WRITE:
                srv.sendall(bytes(h + rest))
                continue
            if mode == "payload":
                rest[100] ^= 0x01
            elif mode == "header":
                h[30] ^= 0x10
            frame = bytes(h + rest)
            srv.sendall(frame)
            if mode == "replay":
                srv.sendall(frame)
            open(os.path.join(state, "tampered"), "w").close()
            break
    except (EOFError, OSError):
        return
    pump(cli, srv)


def main():
    if len(sys.argv) != 6:
        usage()
    port = int(sys.argv[1])
    host, sport = sys.argv[2].rsplit(":", 1)
    tag_len, mode, state = int(sys.argv[3]), sys.argv[4], sys.argv[5]
    if mode not in ("payload", "header", "replay"):
        usage()
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(16)
    open(os.path.join(state, "ready"), "w").close()
    first = True
    while True:
        cli, _ = ls.accept()
        srv = socket.create_connection((host, int(sport)))
        for s in (cli, srv):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=pump, args=(srv, cli), daemon=True).start()
        if first:
            target, args = tamper, (cli, srv, tag_len, mode, state)
        else:
            target, args = pump, (cli, srv)
        first = False
        threading.Thread(target=target, args=args, daemon=True).start()


if __name__ == "__main__":
    main()
