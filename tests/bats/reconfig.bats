#!/usr/bin/env bats
# Live reconfiguration of a remote (docs/configfs.md, the attributes
# marked live): they change while the disk is attached and in use, take
# effect at once, and lose nothing; the others still refuse with EBUSY.

load helpers

SRV=10.99.0.1:7000
E=$DST_CFS/exports/e1
R=$DST_CFS/remotes/r1

setup() {
	dst_load
	netns_pair
	brd_make 64
	dst_export e1 /dev/ram0 "$SRV"
}

teardown() {
	dst_teardown
}

same_data() {
	[ "$(checksum "$DST_DEV" 0 $((64 << 20)))" = \
	  "$(checksum /dev/ram0 0 $((64 << 20)))" ]
}

# chunk_round_trip MB: 1 MiB of new data written at MB MiB, direct, and
# read back the same through the disk and on the backing device, in
# less than a minute.
chunk_round_trip() {
	local f=$BATS_TEST_TMPDIR/chunk-$1
	pattern_file "$f" 1 "chunk-$1"
	timeout 60 dd if="$f" of="$DST_DEV" bs=1M seek="$1" oflag=direct \
		status=none
	[ "$(checksum "$DST_DEV" $(($1 << 20)) $((1 << 20)))" = "$(digest < "$f")" ]
	[ "$(checksum /dev/ram0 $(($1 << 20)) $((1 << 20)))" = "$(digest < "$f")" ]
}

# disk_inflight_gt0: the block layer counts a request of the disk in
# flight (held by the driver while no connection is up).
disk_inflight_gt0() {
	[ "$(awk '{ print $1 + $2 }' "/sys/block/${DST_DEV#/dev/}/inflight")" -gt 0 ]
}

# in_d_state PID: PID waits in the kernel (uninterruptible).
in_d_state() {
	grep -q '^State:[[:space:]]*D' "/proc/$1/status"
}

@test "timing attributes change under fio verify: read back, 0 errors; queue_depth stays EBUSY" {
	dst_attach r1 "$SRV" export=e1 connections=2
	fio_verify_start "$DST_DEV" --size=$(scaled 16)M --bsrange=4k-64k \
		--iodepth=16 --rate=4m
	wait_for 30 stat_at_least "$R" write_ops 20
	for kv in keepalive_ms=1000 keepalive_ms=0 keepalive_ms=3000 \
		  reconnect_delay_ms=100 fail_timeout_s=-1 fail_timeout_s=60 \
		  trans_scan_timeout=5000 trans_max_retries=10; do
		[ "$(cfs_errno "$R/${kv%%=*}" "${kv#*=}")" = OK ]
		[ "$(cat "$R/${kv%%=*}")" = "${kv#*=}" ]
	done
	# Out of range: refused, the value stays.
	[ "$(cfs_errno "$R/keepalive_ms" -5)" = EINVAL ]
	[ "$(cat "$R/keepalive_ms")" = 3000 ]
	# Not live.
	[ "$(cfs_errno "$R/queue_depth" 64)" = EBUSY ]
	[ "$(cfs_errno "$R/max_pages" 64)" = EBUSY ]
	fio_verify_wait
	[ "$(stat_of "$R" errors)" = 0 ]
	same_data
}

@test "fail_timeout_s lowered while the link is down and I/O held: it fails at once" {
	dst_attach r1 "$SRV" export=e1 fail_timeout_s=-1 keepalive_ms=500 \
		reconnect_delay_ms=200
	ip -n dst-cli link set veth-cli down
	wait_for 20 state_is "$R" reconnecting
	dd if=/dev/zero of="$DST_DEV" bs=4k count=1 oflag=direct \
		> "$BATS_TEST_TMPDIR/dd.out" 2>&1 &
	pid=$!
	# Held: -1 waits for the server however long it takes.
	wait_for 20 in_d_state "$pid"
	state_is "$R" reconnecting
	# The time already spent without a connection counts: held I/O
	# fails within a second of this write, not a second after the next
	# reconnection attempt.
	echo 1 > "$R/fail_timeout_s"
	rc=0
	wait_for 15 sh -c "! kill -0 $pid 2>/dev/null"
	wait "$pid" || rc=$?
	[ "$rc" -ne 0 ]
	grep -q 'Input/output error' "$BATS_TEST_TMPDIR/dd.out"
	state_is "$R" failed

	ip -n dst-cli link set veth-cli up
	wait_for 60 state_is "$R" running
	pattern_file "$BATS_TEST_TMPDIR/p" 1 back
	dd if="$BATS_TEST_TMPDIR/p" of="$DST_DEV" bs=1M oflag=direct status=none
	[ "$(checksum /dev/ram0 0 $((1 << 20)))" = \
	  "$(digest < "$BATS_TEST_TMPDIR/p")" ]
}

# conns_are LIVE/ALL: the remote's connections, as stats says them.
conns_are() {
	[ "$(stat_of "$R" connections)" = "$1" ]
}

# clients_are N: the export has N client connections.
clients_are() {
	[ "$(grep -c . "$E/clients")" = "$1" ]
}

# hw_queues: the disk's blk-mq hardware queues.
hw_queues() {
	ls -d "/sys/block/${DST_DEV#/dev/}/mq/"[0-9]* | wc -l
}

@test "connections 1 -> 4 -> 2 under fio verify: queues and connections follow, 0 errors" {
	dst_attach r1 "$SRV" export=e1
	fio_verify_start "$DST_DEV" --size=$(scaled 16)M --bsrange=4k-64k \
		--iodepth=16 --rate=2m
	wait_for 30 stat_at_least "$R" write_ops 20
	local n
	for n in 4 2; do
		[ "$(cfs_errno "$R/connections" "$n")" = OK ]
		[ "$(cat "$R/connections")" = "$n" ]
		# blk-mq gives a disk at most a queue per CPU.
		[ "$(hw_queues)" = $(( n < $(nproc) ? n : $(nproc) )) ]
		wait_for 20 conns_are "$n/$n"
		# I/O goes on over the new connections: a write of our own
		# past fio's area, read back (fio's own writes may be over:
		# make check-debug scales its size down).
		chunk_round_trip $(( 40 + n ))
	done
	fio_verify_wait
	[ "$(stat_of "$R" errors)" = 0 ]
	same_data
	# The export sees two clients' connections, no more.
	wait_for 20 clients_are 2
}

@test "connections cannot change while a connection is down: EBUSY at once, held I/O kept, nothing changed" {
	dst_attach r1 "$SRV" export=e1 connections=2 fail_timeout_s=-1 \
		keepalive_ms=500 reconnect_delay_ms=200
	ip -n dst-cli link set veth-cli down
	wait_for 20 state_is "$R" reconnecting
	# A write held for the server: the refusal must not wait for it to
	# drain (it cannot), nor fail it.
	pattern_file "$BATS_TEST_TMPDIR/data" 1 held
	dd if="$BATS_TEST_TMPDIR/data" of="$DST_DEV" bs=64k oflag=direct \
		status=none &
	dd_pid=$!
	wait_for 20 disk_inflight_gt0
	t0=$(date +%s%N)
	[ "$(cfs_errno "$R/connections" 4)" = EBUSY ]
	t1=$(date +%s%N)
	echo "# refused in $(( (t1 - t0) / 1000000 )) ms with a write held" >&3
	# Not after the 30 s drain bound (ETIMEDOUT).
	[ $(( (t1 - t0) / 1000000000 )) -lt 10 ]
	[ "$(cat "$R/connections")" = 2 ]
	[ "$(hw_queues)" = $(( 2 < $(nproc) ? 2 : $(nproc) )) ]
	ip -n dst-cli link set veth-cli up
	wait_for 60 state_is "$R" running
	wait "$dd_pid"
	[ "$(checksum /dev/ram0 0 $((1 << 20)))" = "$(digest < "$BATS_TEST_TMPDIR/data")" ]
}
