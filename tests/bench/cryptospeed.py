#!/usr/bin/env python3
"""How fast this guest's kernel hashes and encrypts: the ceiling keyed
DST works under (docs/benchmarks.md, "The crypto limit").

Through AF_ALG, the kernel's own hmac(sha256) and gcm(aes) (the
implementations DST's keyed connections get, generic or accelerated as
the CPU offers), one CPU, on buffers of 4 KiB (a 4k request) and 64 KiB
(the segments a large request is sealed in; AF_ALG takes at most its
socket buffer in one message).  Each is timed for SECONDS (default 1).

Prints one line per measurement: "crypto ALG BYTES BYTES_PER_SECOND".

usage: cryptospeed.py [SECONDS]
"""
import os
import socket
import sys
import time

KEY = bytes(range(32))


def rate(step, size, secs):
    """Bytes per second of step(buf) over buffers of size bytes."""
    buf = os.urandom(size)
    done = 0
    t0 = time.perf_counter()
    while True:
        step(buf)
        done += size
        t = time.perf_counter() - t0
        if t >= secs:
            return done / t


def hmac_sha256(size, secs):
    with socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0) as s:
        s.bind(("hash", "hmac(sha256)"))
        s.setsockopt(socket.SOL_ALG, socket.ALG_SET_KEY, KEY)
        op, _ = s.accept()
        with op:
            def step(buf):
                op.sendall(buf)
                op.recv(32)
            return rate(step, size, secs)


def gcm_aes(size, secs):
    with socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0) as s:
        s.bind(("aead", "gcm(aes)"))
        s.setsockopt(socket.SOL_ALG, socket.ALG_SET_KEY, KEY)
        s.setsockopt(socket.SOL_ALG, socket.ALG_SET_AEAD_AUTHSIZE, None, 16)
        op, _ = s.accept()
        iv = bytes(12)
        with op:
            def step(buf):
                op.sendmsg_afalg([buf], op=socket.ALG_OP_ENCRYPT, iv=iv,
                                 assoclen=0)
                op.recv(len(buf) + 16)
            return rate(step, size, secs)


def main():
    if len(sys.argv) > 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        sys.exit(2)
    try:
        secs = float(sys.argv[1]) if len(sys.argv) == 2 else 1.0
    except ValueError:
        print("cryptospeed: SECONDS must be a number, not '%s'" % sys.argv[1],
              file=sys.stderr)
        sys.exit(2)
    for name, fn in (("hmac(sha256)", hmac_sha256), ("gcm(aes)", gcm_aes)):
        for size in (4096, 65536):
            try:
                r = fn(size, secs)
            except OSError as e:
                print("cryptospeed: %s on %d bytes: %s" % (name, size, e),
                      file=sys.stderr)
                sys.exit(1)
            print("crypto %s %d %.0f" % (name, size, r))


main()
