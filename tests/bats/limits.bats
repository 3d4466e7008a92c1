#!/usr/bin/env bats
# What one client can hold on an export (docs/configfs.md, "What one
# client can hold on an export"): handshakes, time in the handshake,
# request data pinned until its reply is sent, and how long a disable
# waits for a client to take its replies.  Each test plays the hostile
# client with the raw peer tests/proto/dstwire.py and then shows that a
# well-behaved client is still served.

load helpers

SRV=10.99.0.1:7000

setup() {
	dst_load
	netns_pair
	brd_make 64
}

teardown() {
	pkill -f dst-limits-peer 2>/dev/null || true
	dst_teardown
}

E=$DST_CFS/exports/e1

handshakes_are() {
	[ "$(stat_of "$E" handshakes)" -eq "$1" ]
}

# peer NS SCRIPT: a python3 peer in NS (dstwire importable), in the
# background; its name lets teardown find it.
peer() {
	in_ns "$1" python3 - "$DST_TOP/tests/proto" dst-limits-peer \
		> "$BATS_TEST_TMPDIR/peer.out" 2>&1 <<< "$2" &
	DST_PEER=$!
}

@test "idle connections from a refused host cannot keep a client out, and go after 10 s" {
	DST_ACL=none dst_export e1 /dev/ram0 0.0.0.0:7000
	acl_rule e1 cli 10.99.0.2/32 rw
	netns_client dst-bad 5
	# 40 connections from an address the list refuses, saying nothing.
	peer dst-bad '
import socket, sys, time
s = []
for i in range(40):
    try:
        s.append(socket.create_connection(("10.99.5.1", 7000), timeout=5))
    except OSError:
        pass
time.sleep(60)'
	wait_for 20 stat_at_least "$E" handshakes 1
	# At most 4 of them are let into the handshake ...
	[ "$(stat_of "$E" handshakes)" -le 4 ]
	klog | grep -q 'e1: 10.99.5.2:[0-9]*: too many refused clients in the handshake; connection refused'
	# ... so a client the list admits attaches at once, and reads.
	dst_attach r1 "$SRV" export=e1
	[ "$(checksum "$DST_DEV" 0 $((1 << 20)))" = "$(checksum /dev/ram0 0 $((1 << 20)))" ]
	# The idle ones are closed 10 s into their handshake, not kept.
	wait_for 30 handshakes_are 0
}

@test "a HELLO trickled a byte at a time is cut off after 10 s in all" {
	dst_export e1 /dev/ram0 "$SRV"
	peer dst-cli '
import socket, sys, time
sys.path.insert(0, sys.argv[1])
import dstwire as w
hello = w.HDR.pack(w.MAGIC, w.VERSION, w.CMD["HELLO"], 0, w.HELLO.size, 0, 0, 0)
s = socket.create_connection(("10.99.0.1", 7000))
t0 = time.time()
try:
    for b in hello:
        s.send(bytes([b]))
        time.sleep(0.5)        # well inside any per-read timeout
    print("whole header sent", flush=True)
    s.settimeout(60)
    s.recv(1)
except OSError:
    pass
print("closed after %.0f s" % (time.time() - t0))'
	wait_for 40 grep -q 'closed after' "$BATS_TEST_TMPDIR/peer.out"
	cat "$BATS_TEST_TMPDIR/peer.out"
	secs=$(sed -n 's/closed after \([0-9]*\) s/\1/p' "$BATS_TEST_TMPDIR/peer.out")
	[ "$secs" -ge 9 ] && [ "$secs" -le 20 ]
	run grep -q 'whole header sent' "$BATS_TEST_TMPDIR/peer.out"
	assert_failure
	wait_for 10 handshakes_are 0
}

@test "a client that never reads its replies pins at most 16 MiB of request data" {
	dst_export e1 /dev/ram0 "$SRV"
	# 48 reads of 1 MiB, never a reply read.
	peer dst-cli '
import sys, time
sys.path.insert(0, sys.argv[1])
import dstwire as w
c = w.Client("10.99.0.1", 7000, "e1")
for i in range(48):
    c.read((i % 64) << 20, 1 << 20, w.make_id(gen=1, tag=i))
print("sent", flush=True)
time.sleep(60)'
	wait_for 30 grep -q sent "$BATS_TEST_TMPDIR/peer.out"
	# The export holds its budget's worth (the socket holds a few MiB
	# more, sent) and stops reading the client's requests there.
	wait_for 30 stat_at_least "$E" pinned_bytes $((15 << 20))
	local i
	for i in $(seq 20); do
		[ "$(stat_of "$E" pinned_bytes)" -le $((17 << 20)) ]
	done
	# Another client is served meanwhile.
	dst_attach r1 "$SRV" export=e1
	[ "$(checksum "$DST_DEV" 0 $((1 << 20)))" = "$(checksum /dev/ram0 0 $((1 << 20)))" ]
}

@test "disable closes a client that takes its replies too slowly, after 30 s" {
	dst_export e1 /dev/ram0 "$SRV"
	# 32 reads of 1 MiB, then a few KiB of replies read a second: each
	# send progresses (no send timeout), none ever finishes in time.
	peer dst-cli '
import sys, time
sys.path.insert(0, sys.argv[1])
import dstwire as w
c = w.Client("10.99.0.1", 7000, "e1")
for i in range(32):
    c.read(i << 20, 1 << 20, w.make_id(gen=1, tag=i))
print("sent", flush=True)
c.s.setsockopt(w.socket.SOL_SOCKET, w.socket.SO_RCVBUF, 4096)
try:
    while True:
        if not c.s.recv(4096):
            break
        time.sleep(1)
except OSError:
    pass
print("closed")'
	wait_for 30 grep -q sent "$BATS_TEST_TMPDIR/peer.out"
	wait_for 30 stat_at_least "$E" pinned_bytes $((8 << 20))
	local t0=$SECONDS
	cfs_write "$E/enable" 0 dst-srv
	local took=$((SECONDS - t0))
	echo "disable took ${took}s" >&3
	[ "$took" -le 60 ]
	klog | grep -q 'e1: 1 client(s) did not take their replies in 30000 ms; closing them'
	state_is "$E" disabled
}

@test "a keyed client on a slow link does not hold up another (crypto_threads=1)" {
	local key=00112233445566778899aabbccddeeff
	local k=(key=$key hash='hmac(sha256)' cipher='gcm(aes)')
	netns_client dst-cli2 1
	dst_export e1 /dev/ram0 0.0.0.0:7000 "${k[@]}" crypto_threads=1
	dst_attach r1 "$SRV" export=e1 "${k[@]}"
	slow=$DST_DEV
	DST_CLI_NS=dst-cli2 dst_attach r2 10.99.1.1:7000 export=e1 "${k[@]}"
	fast=$DST_DEV
	# The server's replies to r1 leave at 400 kbit/s: its sealed
	# replies wait for room in the socket most of the time.
	in_ns dst-srv tc qdisc add dev veth-srv root tbf rate 400kbit \
		burst 32kb latency 500ms
	fio --name=slow --filename="$slow" --direct=1 --ioengine=libaio \
		--rw=read --bs=1M --iodepth=8 --runtime=60 --time_based \
		> /dev/null 2>&1 &
	DST_FIO_PID=$!
	wait_for 30 stat_at_least "$E" pinned_bytes $((2 << 20))
	# The other client's reads are sealed and sent meanwhile.
	local t0=$SECONDS
	[ "$(checksum "$fast" 0 $((4 << 20)))" = "$(checksum /dev/ram0 0 $((4 << 20)))" ]
	echo "4 MiB beside the slow client: $((SECONDS - t0))s" >&3
	[ $((SECONDS - t0)) -le 20 ]
	# Lift the limit before stopping fio: the slow client's reads in
	# flight would otherwise take minutes to drain at 400 kbit/s.
	in_ns dst-srv tc qdisc del dev veth-srv root
	kill "$DST_FIO_PID"
	wait "$DST_FIO_PID" || true
	DST_FIO_PID=""
}
