#!/usr/bin/env bats
# What an operator debugs DST with (docs/debugging.md): the dst
# tracepoints, read through tracefs while real I/O runs, and the debugfs
# files that list what is in flight and the state of each connection.

load helpers

SRV=10.99.0.1:7000
T=/sys/kernel/tracing
DBG=/sys/kernel/debug/dst
R=$DST_CFS/remotes/r1

setup() {
	dst_load
	netns_pair
	mountpoint -q "$T" || mount -t tracefs tracefs "$T"
	echo 0 > "$T/events/dst/enable"
	echo 4096 > "$T/buffer_size_kb"
	echo > "$T/trace"
}

teardown() {
	echo 0 > "$T/events/dst/enable" 2>/dev/null || true
	echo > "$T/trace" 2>/dev/null || true
	dst_teardown
	rmdir /sys/kernel/config/nullb/nullb0 2>/dev/null || true
	rmmod null_blk 2>/dev/null || true
}

# trace_on EVENT...: enable these dst events.
trace_on() {
	local e
	for e in "$@"; do
		echo 1 > "$T/events/dst/$e/enable"
	done
}

# traced PATTERN: a line of the trace buffer matches PATTERN (grep -E).
traced() {
	grep -qE "$1" "$T/trace"
}

# slow_nullb NSEC: /dev/nullb0, 64 MiB, each request completed NSEC ns
# after it arrives (from a timer).
slow_nullb() {
	modprobe null_blk nr_devices=0
	local d=/sys/kernel/config/nullb/nullb0
	mkdir "$d"
	echo 64 > "$d/size"
	echo 2 > "$d/irqmode"
	echo "$1" > "$d/completion_nsec"
	echo 1 > "$d/power"
	wait_for 10 test -b /dev/nullb0
}

@test "tracepoints: each request a fio job sends is answered, read and answered by the export, same id, op, offset and length" {
	brd_make 16
	dst_export e1 /dev/ram0 "$SRV"
	dst_attach r1 "$SRV" export=e1 connections=2
	trace_on dst_send dst_reply dst_srv_request dst_srv_reply
	fio --name=w --filename="$DST_DEV" --direct=1 --ioengine=libaio \
		--rw=write --bs=64k --iodepth=4 --offset=2M --size=1M \
		--output="$BATS_TEST_TMPDIR/w.out" > /dev/null
	fio --name=r --filename="$DST_DEV" --direct=1 --ioengine=libaio \
		--rw=read --bs=64k --iodepth=4 --offset=2M --size=1M \
		--output="$BATS_TEST_TMPDIR/r.out" > /dev/null
	echo 0 > "$T/events/dst/enable"
	cp "$T/trace" "$BATS_TEST_TMPDIR/trace"
	# Within [2 MiB, 3 MiB): every byte written once and read once;
	# every request sent on a connection of r1 (0 or 1) is answered
	# there with status 0, and e1 read it and answered it, same fields.
	python3 - "$BATS_TEST_TMPDIR/trace" <<'EOF'
import re, sys
ev = {}
pat = re.compile(r' (dst_\w+): (.*)$')
for line in open(sys.argv[1]):
    m = pat.search(line)
    if not m:
        continue
    f = dict(kv.split('=', 1) for kv in m.group(2).split())
    if not (2 << 20) <= int(f['offset']) < (3 << 20):
        continue
    ev.setdefault(m.group(1), []).append(f)
def key(f):
    return (f['id'], f['op'], f['offset'], f['len'])
sends = ev.get('dst_send', [])
assert sends, 'no dst_send'
for op in ('WRITE', 'READ'):
    got = sorted((int(f['offset']), int(f['len'])) for f in sends
                 if f['op'] == op)
    pos = 2 << 20
    for off, ln in got:
        assert off == pos, (op, got)
        pos += ln
    assert pos == 3 << 20, (op, got)
replies = {key(f): f for f in ev.get('dst_reply', [])}
reqs = {key(f): f for f in ev.get('dst_srv_request', [])}
sreplies = {key(f): f for f in ev.get('dst_srv_reply', [])}
for s in sends:
    k = key(s)
    assert s['node'] == 'r1' and s['conn'] in ('0', '1'), s
    assert s['retries'] == '0' and s['resend'] == '0', s
    r = replies[k]
    assert r['node'] == 'r1' and r['conn'] == s['conn'], (s, r)
    assert r['status'] == '0', r
    q = reqs[k]
    assert q['node'] == 'e1' and q['peer'].startswith('10.99.0.2:'), q
    assert q['conn'] == s['conn'], (s, q)
    a = sreplies[k]
    assert a['node'] == 'e1' and a['status'] == '0', a
assert len(replies) == len(reqs) == len(sreplies) == len(sends), \
    (len(sends), len(replies), len(reqs), len(sreplies))
print('ok', len(sends))
EOF
}

@test "tracepoints: resends, then a timeout that drops the connection, and its reconnection" {
	# A server that never answers a write: one resend after a second,
	# then the connection goes and comes back before the write fails.
	hostile_server swallow-writes
	dst_attach r1 "$SRV" export=e1 connections=1 trans_scan_timeout=1000 \
		trans_max_retries=1 reconnect_delay_ms=100
	trace_on dst_send dst_resend dst_timeout dst_conn_down dst_reconnect \
		dst_conn_up
	run dd if=/dev/zero of="$DST_DEV" bs=4k count=1 seek=3 oflag=direct
	assert_failure
	echo 0 > "$T/events/dst/enable"
	logged 'hello 2'
	local n='node=r1 conn=0' rq='id=0x[0-9a-f]+ op=WRITE offset=12288 len=4096'
	traced "dst_send: $n $rq retries=0 resend=0"
	traced "dst_resend: $n $rq retries=1 status=0"
	traced "dst_send: $n $rq retries=1 resend=1"
	traced "dst_timeout: $n $rq retries=1 drop_conn=1"
	traced "dst_conn_down: $n epoch=0 err=-?[0-9]+ requests=1"
	traced "dst_reconnect: $n attempt=1 err=0"
	traced "dst_conn_up: $n epoch=1 err=0 requests=0"
}

@test "tracepoints: an export fences the connection a client replaced" {
	# A client (dstwire.py) comes back on session 77, slot 0 while its
	# first connection is still open: the export fences that one.
	brd_make 16
	dst_export e1 /dev/ram0 "$SRV"
	trace_on dst_fence dst_srv_request
	in_ns dst-cli python3 - "$DST_TOP/tests/proto" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import dstwire as w

a = w.Client("10.99.0.1", 7000, "e1", session=77, slot=0)
a.read(0, 4096, w.make_id(gen=1, tag=5))
assert a.reply()["status"] == 0
b = w.Client("10.99.0.1", 7000, "e1", session=77, slot=0)
assert a.closed_by_peer()
b.read(4096, 4096, w.make_id(gen=1, tag=6))
assert b.reply()["status"] == 0
EOF
	echo 0 > "$T/events/dst/enable"
	local p='node=e1 peer=10\.99\.0\.2:[0-9]+ conn=0'
	traced "dst_srv_request: $p id=0x100000005 op=READ offset=0 len=4096 status=0"
	traced "dst_fence: $p session=0x4d fenced=1 drained=1"
	traced "dst_srv_request: $p id=0x100000006 op=READ offset=4096 len=4096 status=0"
}

@test "debugfs lists a request held by a slow backing device, on both sides, then no longer" {
	slow_nullb 3000000000
	dst_export e1 /dev/nullb0 "$SRV"
	dst_attach r1 "$SRV" export=e1 connections=1
	dd if="$DST_DEV" of=/dev/null bs=4k count=1 skip=256 iflag=direct &
	local dd=$!
	local rq='op READ offset 1048576 len 4096'
	wait_for 20 grep -q "id 0x[0-9a-f]* $rq conn 0 epoch 0 retries 0 age_ms [0-9]* state inflight$" \
		"$DBG/remotes/r1/inflight"
	grep -q "peer 10.99.0.2:[0-9]* slot 0 id 0x[0-9a-f]* $rq age_ms [0-9]* state submitted$" \
		"$DBG/exports/e1/inflight"
	grep -q '^link running live 1/1 ' "$DBG/remotes/r1/connections"
	grep -q '^conn 0 live epoch 0 ' "$DBG/remotes/r1/connections"
	grep -q '^peer 10.99.0.2:[0-9]* slot 0 .* established inflight 1 ' \
		"$DBG/exports/e1/connections"
	wait "$dd"
	wait_for 20 eval "! grep -q '$rq' '$DBG/remotes/r1/inflight'"
	wait_for 20 eval "! grep -q '$rq' '$DBG/exports/e1/inflight'"
	# A node's directory lives while it runs.
	echo 0 > "$R/enable"
	[ ! -e "$DBG/remotes/r1" ]
	[ -e "$DBG/exports/e1/inflight" ]
}
