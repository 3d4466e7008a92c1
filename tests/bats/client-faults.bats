#!/usr/bin/env bats
# The remote (client) side against faults it must survive without
# losing data, hanging or leaving half a frame on the wire: a server
# that never answers a write, one that drops the connection a write came
# on and keeps its slot out, one that cuts a READ reply short, a signal
# in the middle of a send, and a server gone for good during enable.
# Hostile servers are tests/proto/dstserver.py; docs/resilience.md is the
# contract.

load helpers

SRV=10.99.0.1:7000
R=$DST_CFS/remotes/r1

setup() {
	dst_load
	netns_pair
}

teardown() {
	dst_teardown
}

# sendq_at_least BYTES: the client's socket holds that much unacknowledged.
sendq_at_least() {
	in_ns dst-cli ss -tnH 'dport = :7000' |
		awk -v n="$1" '$3 >= n { ok = 1 } END { exit !ok }'
}

@test "a write out of retries fails only once its connection is fenced" {
	hostile_server swallow-writes
	dst_attach r1 "$SRV" export=e1 trans_scan_timeout=1000 \
		trans_max_retries=1
	run dd if=/dev/zero of="$DST_DEV" bs=4k count=1 oflag=direct
	assert_failure
	assert_output --partial 'Connection timed out'
	# Before the write failed, the client dropped the connection that
	# carried it (the server saw it go) and its slot came back: the
	# handshake a real server fences the old connection in.
	logged 'write 1'
	logged 'eof 1'
	logged 'hello 2'
	[ "$(stat_of "$R" timeouts)" -ge 1 ]
	klog | grep -q 'r1: .* timed out after 1 resends; dropping connection 0'
}

# count_of WORD: how many lines of the server's log start with WORD.
count_of() {
	grep -c "^$1 " "$SLOG" || true
}

# count_at_least WORD N: that many lines start with WORD.
count_at_least() {
	[ "$(count_of "$1")" -ge "$2" ]
}

# orphan_expired: the client logged that its orphaned write ran out of
# retries (and, since the fix, that it fails only once fenced).
orphan_expired() {
	klog | grep -q 'r1: WRITE of 4096 bytes at 0 timed out after 1 resends'
}

@test "an orphan out of retries fails only once its slot is back and fenced" {
	hostile_server orphan-write --release "$BATS_TEST_TMPDIR/release"
	# fail_timeout_s=-1: only the fence may end the write, however long
	# the emulated machine takes.
	dst_attach r1 "$SRV" export=e1 connections=2 trans_scan_timeout=1000 \
		trans_max_retries=1 reconnect_delay_ms=200 fail_timeout_s=-1
	dd if=/dev/zero of="$DST_DEV" bs=4k count=1 oflag=direct \
		2> "$BATS_TEST_TMPDIR/dd.err" 3>&- &
	pid=$!
	# The server took the write and closed its connection; that slot
	# cannot come back, the other connection works: each scan period
	# counts as a retry, and the write expires.
	wait_for 30 grep -q '^orphaned ' "$SLOG"
	wait_for 30 orphan_expired
	# It does not fail while the server may still hold its copy: two more
	# reconnections of its slot are refused, and the write still waits.
	wait_for 60 count_at_least refused $(( $(count_of refused) + 2 ))
	run exited "$pid"
	assert_failure
	klog | grep -q 'it fails once connection [01] is back'
	state_is "$R" degraded
	# The slot comes back (the handshake a real server fences in); then,
	# and only then, the write fails with a timeout.
	hellos=$(count_of hello)
	touch "$BATS_TEST_TMPDIR/release"
	wait_for 60 exited "$pid"
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" -ne 0 ]
	grep -q 'Connection timed out' "$BATS_TEST_TMPDIR/dd.err"
	[ "$(count_of hello)" -gt "$hellos" ]
	grep -q '^back ' "$SLOG"
	[ "$(stat_of "$R" timeouts)" -ge 1 ]
	state_is "$R" running
}

@test "a READ reply cut short by the server's FIN: reconnect, resend, data read" {
	hostile_server truncate-read --at $((1 << 20))
	dst_attach r1 "$SRV" export=e1 reconnect_delay_ms=100
	run dd if="$DST_DEV" of=/dev/null bs=4k count=1 skip=256 iflag=direct
	assert_success
	logged 'truncated 1'
	logged 'hello 2'
	[ "$(stat_of "$R" reconnects)" -ge 1 ]
	[ "$(stat_of "$R" errors)" = 0 ]
	state_is "$R" running
}

@test "a signal in the middle of a send on a slow link: no half frame, no reconnect" {
	brd_make 64
	dst_export e1 /dev/ram0 "$SRV"
	dst_attach r1 "$SRV" export=e1
	pattern_file "$BATS_TEST_TMPDIR/p" 8 sig
	tc -n dst-cli qdisc add dev veth-cli root netem rate 8mbit
	# io_submit() issues its requests itself when it unplugs: fio's job
	# process is the sender, and waits for socket memory on this link.
	# (dd would not do: a synchronous direct write is issued by kblockd
	# when the writer goes to sleep.)
	fio --name=sig --filename="$DST_DEV" --direct=1 --ioengine=libaio \
		--rw=write --bs=1M --iodepth=4 --size=8M \
		--output="$BATS_TEST_TMPDIR/fio.out" > /dev/null 2>&1 &
	pid=$!
	wait_for 30 sendq_at_least 65536
	# A signal now cuts the job's send short.
	kill -INT $(pgrep -P "$pid") "$pid"
	wait "$pid" || true
	tc -n dst-cli qdisc del dev veth-cli root
	run klog
	refute_output --partial 'r1: send on connection'
	[ "$(stat_of "$R" reconnects)" = 0 ]
	[ "$(stat_of "$R" errors)" = 0 ]
	state_is "$R" running
	# The stream is in step: a whole pattern goes through and reads back.
	dd if="$BATS_TEST_TMPDIR/p" of="$DST_DEV" bs=1M oflag=direct status=none
	[ "$(checksum /dev/ram0 0 $((8 << 20)))" = \
	  "$(digest < "$BATS_TEST_TMPDIR/p")" ]
	[ "$(checksum "$DST_DEV" 0 $((8 << 20)))" = \
	  "$(digest < "$BATS_TEST_TMPDIR/p")" ]
}

# enable_in_background: "echo 1 > enable" on r1 from dst-cli, as its own
# process ($ENABLER), with fail_timeout_s=-1: I/O is held for as long as
# there is no connection.  Returns once the server vanished.
enable_in_background() {
	mkdir "$R"
	echo "$SRV" > "$R/addr"
	echo e1 > "$R/export"
	echo -1 > "$R/fail_timeout_s"
	echo 100 > "$R/reconnect_delay_ms"
	nsenter --net=/run/netns/dst-cli sh -c 'echo 1 > "$1"' sh "$R/enable" &
	ENABLER=$!
	wait_for 30 logged 'vanished 1'
}

# exited PID: PID has ended (a zombie counts: it has left the kernel).
exited() {
	! grep -q '^[^)]*) [^Z]' "/proc/$1/stat" 2>/dev/null
}

# in_time SECONDS CMD...: CMD, run in the background, ends within
# SECONDS and succeeds.  A CMD stuck on a kernel lock cannot be killed,
# so the test fails here instead of waiting with it.
in_time() {
	local secs=$1 pid
	shift
	"$@" &
	pid=$!
	wait_for "$secs" exited "$pid"
	wait "$pid"
}

@test "the server gone during enable's partition scan: enable returns; stats and disable work" {
	hostile_server vanish-on-read
	enable_in_background
	# The scan's read is held (fail_timeout_s=-1); enable does not wait
	# for it, and nothing waits on the node's lock.
	wait_for 30 exited "$ENABLER"
	wait "$ENABLER"
	state_is "$R" reconnecting
	klog | grep -q 'r1: the server went away during the partition scan'
	in_time 10 cat "$R/stats" > /dev/null
	in_time 30 cfs_write "$R/enable" 0 dst-cli
	state_is "$R" disabled
	rmdir "$R"
	no_nodes
}

@test "the server gone during enable's partition scan: rmdir alone detaches" {
	hostile_server vanish-on-read
	enable_in_background
	wait_for 30 exited "$ENABLER"
	in_time 30 rmdir "$R"
	no_nodes
}

# disk_bytes_are BYTES: the size of $DST_DEV as the kernel has it.
disk_bytes_are() {
	[ $(( $(cat "/sys/class/block/${DST_DEV#/dev/}/size") * 512 )) = "$1" ]
}

# said_since MARK TEXT: the kernel said TEXT after log_mark gave MARK.
said_since() {
	log_since "$1" | grep -qF -- "$2"
}

# resize_case MODE TO WHY: a hostile server in MODE sends RESIZE to TO
# bytes after the first READ; WHY is the client's protocol error, or -
# for a RESIZE it must take.
resize_case() {
	local mode=$1 to=$2 why=$3 mark
	mark=$(log_mark)
	hostile_server "$mode" --size-to "$to"
	dst_attach r1 "$SRV" export=e1 reconnect_delay_ms=200
	# Sent after the first READ (the partition scan's).
	wait_for 20 logged "resized 1"
	if [ "$why" = - ]; then
		wait_for 20 disk_bytes_are "$to"
		[ "$(cat "$R/size")" = "$to" ]
		[ "$(stat_of "$R" reconnects)" = 0 ]
	else
		wait_for 20 said_since "$mark" \
			"r1: protocol error from $SRV on connection 0: $why"
		# The server sends one RESIZE in its life: the next connection
		# is welcomed with the old size, and kept.
		wait_for 30 logged "hello 2"
		wait_for 30 state_is "$R" running
		disk_bytes_are $((64 << 20))
	fi
	dd if="$DST_DEV" of=/dev/null bs=4k count=1 iflag=direct status=none
	echo 0 > "$R/enable"
	rmdir "$R"
	kill "$DST_SERVER_PID"
	wait "$DST_SERVER_PID" 2>/dev/null || true
	DST_SERVER_PID=""
	rm "$SLOG"
}

@test "RESIZE from a server: larger grows the disk; smaller, misaligned or not granted end the connection, size kept" {
	resize_case resize $((128 << 20)) -
	resize_case resize $((64 << 20)) -
	resize_case resize $((32 << 20)) "RESIZE to a smaller size"
	resize_case resize $(( (64 << 20) + 100 )) "malformed RESIZE"
	resize_case resize-ungranted $((128 << 20)) "malformed RESIZE"
}

# conn_sizes_are "A B": the remote's connections (debugfs) last heard
# the export's size as A and B bytes, in either order.
conn_sizes_are() {
	local got
	got=$(awk '$1 == "conn" { for (i = 2; i < NF; i++)
		if ($i == "size") print $(i + 1) }' \
		/sys/kernel/debug/dst/remotes/r1/connections | sort -n | xargs)
	[ "$got" = "$(printf '%s\n' $1 | sort -n | xargs)" ]
}

# The export grew twice and the two connections told the sizes in the
# other order: the late, smaller notice on the second is no shrink (that
# connection last heard 64 MiB), so it is ignored, not a protocol error.
@test "a late RESIZE, smaller than another connection's, is ignored: the disk keeps the larger size and every connection" {
	local mark
	mark=$(log_mark)
	hostile_server resize-late --size-to $((128 << 20)) \
		--late-to $((96 << 20))
	dst_attach r1 "$SRV" export=e1 connections=2
	wait_for 20 grep -q '^late ' "$SLOG"
	wait_for 20 disk_bytes_are $((128 << 20))
	# Each connection read the notice it was sent: debugfs shows the
	# size each last heard, the larger on one, the late one on the other.
	wait_for 20 conn_sizes_are "$((128 << 20)) $((96 << 20))"
	disk_bytes_are $((128 << 20))
	[ "$(cat "$R/size")" = $((128 << 20)) ]
	[ "$(stat_of "$R" reconnects)" = 0 ]
	[ "$(log_since "$mark" | grep -c 'protocol error' || true)" = 0 ]
	echo 0 > "$R/enable"
	rmdir "$R"
}
