#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""cnraw: send one hand-built DST connector message and print the errno
name the module acknowledges with (OK for 0), so a test can check that
each malformed message gets its documented answer.

usage: cnraw.py CASE NODE [ARG]   (cnraw.py --list shows the cases)

The layouts are those of include/uapi/linux/dst.h, written out here
independently so that a mistake in the header is caught too.
"""
import errno
import os
import socket
import struct
import sys

NETLINK_CONNECTOR = 11
NLMSG_DONE = 3
CN_DST_IDX, CN_DST_VAL = 0x6, 0x1
DEL_NODE, ADD_REMOTE, ADD_EXPORT, CRYPTO, SECURITY, START = range(6)
SEC_PREFIX = 0x100


def ctl(name, cmd, flags=0, max_pages=0, scan=0, retries=0, pad=0, size=0,
        raw_name=None):
    """struct dst_ctl, 64 bytes."""
    n = raw_name if raw_name is not None else name.encode().ljust(32, b"\0")
    return struct.pack("<32sIIIIIIQ", n, flags, cmd, max_pages, scan,
                       retries, pad, size)


def saddr_in(ip="10.99.0.1", port=7000, family=socket.AF_INET, dlen=16):
    """struct dst_saddr holding a sockaddr_in, 132 bytes."""
    data = struct.pack(">H4s", port, socket.inet_aton(ip))
    return struct.pack("<H128sH", family, data, dlen)


def saddr_in6(ip="fd99::1", port=7000, dlen=28):
    data = struct.pack(">HI16sI", port, 0,
                       socket.inet_pton(socket.AF_INET6, ip), 0)
    return struct.pack("<H128sH", socket.AF_INET6, data, dlen)


def network(sa=None, stype=socket.SOCK_STREAM, proto=6):
    """struct dst_network_ctl, 140 bytes."""
    return struct.pack("<II", stype, proto) + (sa or saddr_in())


def export_ctl(dev=b"/dev/ram1", sa=None):
    """struct dst_export_ctl, 172 bytes."""
    return dev.ljust(32, b"\0")[:32] + network(sa)


def secure(perm=3, sa=None):
    """struct dst_secure_user, 136 bytes."""
    return struct.pack("<I", perm) + (sa or saddr_in("10.99.0.0", 0))


def crypto(hks, cks, keys=b"", cipher=b"", hash_=b"hmac(sha256)", attached=0,
           threads=0):
    """struct dst_crypto_ctl, 80 bytes, and the keys."""
    return struct.pack("<32s32sIIIi", cipher, hash_, cks, hks, attached,
                       threads) + keys


# name -> (function of node -> dst_ctl + payload bytes)
CASES = {
    # A well-formed message of each kind, for comparison.
    "valid-export": lambda n: ctl(n, ADD_EXPORT) + export_ctl(),
    "valid-security": lambda n: ctl(n, SECURITY, SEC_PREFIX | 24) + secure(),
    "valid-crypto": lambda n: ctl(n, CRYPTO) + crypto(32, 0, b"k" * 32),
    "valid-del": lambda n: ctl(n, DEL_NODE),
    "valid-start": lambda n: ctl(n, START),
    # Malformed.
    "empty": lambda n: b"",
    "short-ctl": lambda n: ctl(n, START)[:40],
    "cmd-out-of-range": lambda n: ctl(n, 6),
    "cmd-huge": lambda n: ctl(n, 0xFFFFFFFF),
    "name-no-nul": lambda n: ctl(n, START, raw_name=b"x" * 32),
    "name-bad-chars": lambda n: ctl(n, ADD_EXPORT, raw_name=b"a/b".ljust(32, b"\0")) + export_ctl(),
    "name-dotdot": lambda n: ctl(n, ADD_EXPORT, raw_name=b"..".ljust(32, b"\0")) + export_ctl(),
    "flags-on-start": lambda n: ctl(n, START, flags=1),
    "pad-nonzero": lambda n: ctl(n, START, pad=1),
    "param-on-start": lambda n: ctl(n, START, max_pages=8),
    "payload-on-start": lambda n: ctl(n, START) + b"\0" * 4,
    "export-short": lambda n: ctl(n, ADD_EXPORT) + export_ctl()[:-1],
    "export-long": lambda n: ctl(n, ADD_EXPORT) + export_ctl() + b"\0",
    "export-device-no-nul": lambda n: ctl(n, ADD_EXPORT) + export_ctl(b"/" * 32),
    "export-device-relative": lambda n: ctl(n, ADD_EXPORT) + export_ctl(b"ram1"),
    "export-remote-param": lambda n: ctl(n, ADD_EXPORT, max_pages=8) + export_ctl(),
    "export-family-unix": lambda n: ctl(n, ADD_EXPORT) + export_ctl(sa=saddr_in(family=socket.AF_UNIX)),
    "export-family-huge": lambda n: ctl(n, ADD_EXPORT) + export_ctl(sa=saddr_in(family=0xFFFF)),
    "export-addrlen-wrong": lambda n: ctl(n, ADD_EXPORT) + export_ctl(sa=saddr_in(dlen=128)),
    "export-addrlen-v6-short": lambda n: ctl(n, ADD_EXPORT) + export_ctl(sa=saddr_in6(dlen=16)),
    "export-port-zero": lambda n: ctl(n, ADD_EXPORT) + export_ctl(sa=saddr_in(port=0)),
    "remote-udp": lambda n: ctl(n, ADD_REMOTE) + network(stype=socket.SOCK_DGRAM),
    "remote-proto-udp": lambda n: ctl(n, ADD_REMOTE) + network(proto=17),
    "remote-bad-param": lambda n: ctl(n, ADD_REMOTE, scan=1) + network(),
    "remote-size-odd": lambda n: ctl(n, ADD_REMOTE) + network() + b"\0" * 8,
    "remote-export-no-nul": lambda n: ctl(n, ADD_REMOTE) + network() + b"e" * 32,
    "security-short": lambda n: ctl(n, SECURITY) + secure()[:-2],
    "security-write-only": lambda n: ctl(n, SECURITY) + secure(perm=2),
    "security-no-perm": lambda n: ctl(n, SECURITY) + secure(perm=0),
    "security-prefix-33": lambda n: ctl(n, SECURITY, SEC_PREFIX | 33) + secure(),
    "security-unknown-flag": lambda n: ctl(n, SECURITY, 0x200) + secure(),
    "security-family-unix": lambda n: ctl(n, SECURITY) + secure(sa=saddr_in(family=socket.AF_UNIX)),
    "crypto-short": lambda n: ctl(n, CRYPTO) + crypto(0, 0)[:-4],
    "crypto-key-overflow": lambda n: ctl(n, CRYPTO) + crypto(0xFFFFFFFF, 0xFFFFFFFF),
    "crypto-key-wrap": lambda n: ctl(n, CRYPTO) + crypto(0xFFFFFFF0, 0x20),
    "crypto-key-too-big": lambda n: ctl(n, CRYPTO) + crypto(65, 0, b"k" * 65),
    "crypto-size-mismatch": lambda n: ctl(n, CRYPTO) + crypto(32, 16, b"k" * 40),
    "crypto-algo-no-nul": lambda n: ctl(n, CRYPTO) + crypto(0, 0, hash_=b"h" * 32),
    "crypto-attached": lambda n: ctl(n, CRYPTO) + crypto(0, 0, attached=4),
    "crypto-threads": lambda n: ctl(n, CRYPTO) + crypto(0, 0, threads=-1),
}


def send(data, timeout=10):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_CONNECTOR)
    s.bind((0, 0))
    s.settimeout(timeout)
    seq = os.getpid() & 0xFFFF
    cn = struct.pack("=IIIIHH", CN_DST_IDX, CN_DST_VAL, seq, 0, len(data), 0)
    body = cn + data
    nlh = struct.pack("=IHHII", 16 + len(body), NLMSG_DONE, 0, 0, 0)
    s.send(nlh + body)
    while True:
        reply = s.recv(4096)
        idx, val, rseq, rack, rlen = struct.unpack_from("=IIIIH", reply, 16)
        if (idx, val, rack) == (CN_DST_IDX, CN_DST_VAL, seq + 1):
            return struct.unpack_from("=i", reply, 36)[0]


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--list":
        print("\n".join(CASES))
        return 0
    if len(sys.argv) != 3 or sys.argv[1] not in CASES:
        sys.stderr.write(__doc__)
        return 2
    err = send(CASES[sys.argv[1]](sys.argv[2]))
    names = dict(errno.errorcode)
    names[errno.EOPNOTSUPP] = "EOPNOTSUPP"  # not its alias ENOTSUP
    print("OK" if err == 0 else names.get(-err, str(err)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
