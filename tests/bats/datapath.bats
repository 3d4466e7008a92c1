#!/usr/bin/env bats
# The data path: an export in namespace dst-srv served over veth to remotes
# in other namespaces.  Data read back equals data written, on the backing
# device and through DST; errors are the documented errnos.

load helpers

SRV=10.99.0.1:7000

klog_has() {
	klog | grep -q -- "$1"
}

# listening NS ADDR: something listens on ADDR in NS.
listening() {
	in_ns "$1" ss -ltn | grep -q -- "$2"
}

setup() {
	dst_load
	netns_pair
	brd_make 64
}

teardown() {
	dst_teardown
}

@test "64 MiB written with O_DIRECT lands on the backing device and reads back" {
	dst_export e1 /dev/ram0 "$SRV"
	dst_attach r1 "$SRV" export=e1
	[ "$(cat $DST_CFS/remotes/r1/size)" = $((64 << 20)) ]
	[ "$(blockdev --getsize64 $DST_DEV)" = $((64 << 20)) ]
	[ "$(checksum $DST_DEV 0 $((64 << 20)))" = "$BRD_SUM" ]

	pattern_file "$BATS_TEST_TMPDIR/p" 64 other
	want=$(digest < "$BATS_TEST_TMPDIR/p")
	dd if="$BATS_TEST_TMPDIR/p" of="$DST_DEV" bs=1M oflag=direct status=none
	[ "$(checksum /dev/ram0 0 $((64 << 20)))" = "$want" ]
	[ "$(checksum $DST_DEV 0 $((64 << 20)))" = "$want" ]
}

@test "fio crc32c verify, 512 B..256 KiB, iodepth 32, 2 connections" {
	dst_export e1 /dev/ram0 "$SRV"
	dst_attach r1 "$SRV" export=e1 connections=2
	# A hardware queue per connection, at most one per CPU (make check
	# may give a guest one vCPU).
	[ "$(ls /sys/block/${DST_DEV#/dev/}/mq | wc -l)" = $(( $(nproc) < 2 ? 1 : 2 )) ]
	run fio --name=verify --filename="$DST_DEV" --direct=1 \
		--ioengine=libaio --iodepth=32 --rw=randwrite \
		--bsrange=512-256k --size=$(scaled 32)M --verify=crc32c \
		--verify_fatal=1 --do_verify=1 --randrepeat=0 --output-format=terse
	assert_success
	reads_above "${DST_DEV#/dev/}" 0
}

# fio_polled DEV ARGS...: crc32c-verified random writes, polled (io_uring
# with IORING_SETUP_IOPOLL: fio's --hipri), succeed on DEV.  (6.1 polls
# only asynchronous direct I/O: a preadv2() with RWF_HIPRI is not.)
fio_polled() {
	local dev=$1
	shift
	fio --name=polled --filename="$dev" --direct=1 --ioengine=io_uring \
		--hipri=1 --rw=randwrite --verify=crc32c --verify_fatal=1 \
		--do_verify=1 --randrepeat=0 --size=$(scaled 8)M "$@" \
		--output="$BATS_TEST_TMPDIR/fio.out" > /dev/null 2>&1 || {
		cat "$BATS_TEST_TMPDIR/fio.out" >&2
		return 1
	}
}

@test "poll queues: polled I/O goes through them and verifies, also after connections change" {
	dst_export e1 /dev/ram0 "$SRV"
	dst_attach r1 "$SRV" export=e1 poll_queues=2
	local r=$DST_CFS/remotes/r1 d=${DST_DEV#/dev/}
	local dbg=/sys/kernel/debug/block/${DST_DEV#/dev/}
	[ "$(cat /sys/block/$d/queue/io_poll)" = 1 ]
	# The connection's queue, then the two poll queues (a queue no CPU
	# maps to, as the second with one vCPU, shows "default").
	[ "$(cat $dbg/hctx0/type)" = default ]
	[ "$(cat $dbg/hctx1/type)" = poll ]
	[ "$(nproc)" -lt 2 ] || [ "$(cat $dbg/hctx2/type)" = poll ]
	[ ! -e $dbg/hctx3 ]
	[ "$(cfs_errno $r/poll_queues 1)" = EBUSY ]		# not live
	[ "$(stat_of $r polled_ops)" = 0 ]
	# Each job writes n blocks of 4 KiB, then reads them back: 2n
	# requests, fewer only where blk-mq merged neighbours.
	local n=$(( $(scaled 8) * 256 ))
	fio_polled "$DST_DEV" --iodepth=16 --bs=4k
	stat_at_least $r polled_ops $n
	# One at a time: each request is answered and ended alone.
	before=$(stat_of $r polled_ops)
	fio_polled "$DST_DEV" --iodepth=1 --bs=4k
	stat_at_least $r polled_ops $((before + n))
	# Without --hipri nothing is polled.
	before=$(stat_of $r polled_ops)
	dd if="$DST_DEV" of=/dev/null bs=4k count=256 iflag=direct status=none
	[ "$(stat_of $r polled_ops)" = "$before" ]

	# More connections: their queues come first, the poll queues after.
	echo 2 > $r/connections
	wait_for 30 grep -qx 'connections 2/2' $r/stats
	[ "$(cat /sys/block/$d/queue/io_poll)" = 1 ]
	[ "$(cat $dbg/hctx0/type)" = default ]
	[ "$(cat $dbg/hctx1/type)" = default ]
	[ "$(cat $dbg/hctx2/type)" = poll ]
	[ "$(nproc)" -lt 2 ] || [ "$(cat $dbg/hctx3/type)" = poll ]
	[ ! -e $dbg/hctx4 ]
	before=$(stat_of $r polled_ops)
	fio_polled "$DST_DEV" --iodepth=16 --bsrange=4k-64k
	stat_at_least $r polled_ops $((before + 1))
	# The data is on the backing device.
	[ "$(checksum $DST_DEV 0 $((64 << 20)))" = "$(checksum /dev/ram0 0 $((64 << 20)))" ]
}

# spares_are N: the export e1 keeps exactly N pages for reuse.
spares_are() {
	[ "$(stat_of "$DST_CFS/exports/e1" spare_pages)" = "$1" ]
}

# drop_spares: what "echo 2 > drop_caches" does is run every shrinker.
drop_spares() {
	echo 2 > /proc/sys/vm/drop_caches
	spares_are 0
}

@test "pages kept for reuse stay correct, go under memory pressure and with the client" {
	dst_export e1 /dev/ram0 "$SRV"
	dst_attach r1 "$SRV" export=e1
	e=$DST_CFS/exports/e1
	# 1 MiB reads leave their segments with the connection ...
	[ "$(checksum $DST_DEV 0 $((64 << 20)))" = "$BRD_SUM" ]
	stat_at_least "$e" spare_pages 16
	# ... which the next requests fill, and nothing of the old shows.
	pattern_file "$BATS_TEST_TMPDIR/p" 64 spares
	want=$(digest < "$BATS_TEST_TMPDIR/p")
	dd if="$BATS_TEST_TMPDIR/p" of="$DST_DEV" bs=1M oflag=direct status=none
	[ "$(checksum /dev/ram0 0 $((64 << 20)))" = "$want" ]
	[ "$(checksum $DST_DEV 0 $((64 << 20)))" = "$want" ]
	dd if="$DST_DEV" of=/dev/null bs=4k count=256 iflag=direct status=none
	# The kernel short of memory takes them back.
	wait_for 30 drop_spares
	[ "$(checksum $DST_DEV 0 $((64 << 20)))" = "$want" ]
	stat_at_least "$e" spare_pages 16
	# So does a client that leaves.
	rmdir "$DST_CFS/remotes/r1"
	wait_for 30 spares_are 0
}

@test "ext4 on DST: mkfs, files, fsck clean, files intact after remount" {
	dst_export e1 /dev/ram0 "$SRV"
	dst_attach r1 "$SRV" export=e1
	mkfs.ext4 -q -F "$DST_DEV"
	mnt=$BATS_TEST_TMPDIR/mnt
	mkdir -p "$mnt"
	mount "$DST_DEV" "$mnt"
	pattern_file "$mnt/a" 8 a
	pattern_file "$mnt/b" 3 b
	sums=$(cd "$mnt" && sha256sum a b)
	umount "$mnt"
	run fsck.ext4 -fn "$DST_DEV"
	assert_success
	mount "$DST_DEV" "$mnt"
	[ "$(cd "$mnt" && sha256sum a b)" = "$sums" ]
	umount "$mnt"
}

@test "IPv6 export and attach" {
	dst_export e6 /dev/ram0 "[fd99::1]:7006"
	dst_attach r6 "[fd99::1]:7006" export=e6
	[ "$(cat $DST_CFS/remotes/r6/addr)" = "[fd99::1]:7006" ]
	[ "$(checksum $DST_DEV 0 $((64 << 20)))" = "$BRD_SUM" ]
	grep -q '^\[fd99::2\]:' $DST_CFS/exports/e6/clients
}

@test "two remotes in two namespaces share one export; two exports at once" {
	netns_client dst-cli2 1
	dst_export e1 /dev/ram0 0.0.0.0:7000
	dst_export e2 /dev/ram1 10.99.1.1:7001
	dst_attach r1 "$SRV" export=e1
	dev1=$DST_DEV
	DST_CLI_NS=dst-cli2 dst_attach r2 10.99.1.1:7000 export=e1
	dev2=$DST_DEV
	DST_CLI_NS=dst-cli2 dst_attach r3 10.99.1.1:7001 export=e2
	dev3=$DST_DEV
	[ "$(wc -l < $DST_CFS/exports/e1/clients)" = 2 ]
	[ "$(checksum $dev1 0 $((64 << 20)))" = "$BRD_SUM" ] &
	p1=$!
	[ "$(checksum $dev2 0 $((64 << 20)))" = "$BRD_SUM" ]
	wait $p1
	# ram1 is zero-filled: so is what r3 reads.
	[ "$(checksum $dev3 0 $((64 << 20)))" = "$(checksum /dev/ram1 0 $((64 << 20)))" ]
	cmp -n $((1 << 20)) "$dev3" /dev/zero
}

@test "read-only export: client disk is read-only, writes fail, backing unchanged" {
	dst_export ro /dev/ram0 "$SRV" read_only=1
	dst_attach r1 "$SRV" export=ro
	[ "$(blockdev --getro $DST_DEV)" = 1 ]
	run dd if=/dev/zero of="$DST_DEV" bs=4k count=1 oflag=direct status=none
	assert_failure
	[ "$(checksum /dev/ram0 0 $((64 << 20)))" = "$BRD_SUM" ]
	grep -q ' ro$' $DST_CFS/exports/ro/clients
	[ "$(checksum $DST_DEV 0 $((1 << 20)))" = "$(checksum /dev/ram0 0 $((1 << 20)))" ]
}

@test "a read-only remote of a writable export is read-only on both sides" {
	dst_export e1 /dev/ram0 "$SRV"
	dst_attach r1 "$SRV" export=e1 read_only=1
	[ "$(blockdev --getro $DST_DEV)" = 1 ]
	grep -q ' ro$' $DST_CFS/exports/e1/clients
}

@test "the remote's disk is a child of its dst bus device; device names it" {
	dst_export e1 /dev/ram0 "$SRV"
	dst_attach r1 "$SRV" export=e1
	disk=${DST_DEV#/dev/}
	[ "$(basename "$(readlink -f /sys/block/$disk/device)")" = dst-r1 ]
	[ "$(cat /sys/block/$disk/device/name)" = r1 ]
	[ "$(cat /sys/bus/dst/devices/dst-r1/type)" = "$SRV" ]
	[ "$(cat /sys/bus/dst/devices/dst-e1/local)" = /dev/ram0 ]
	[ "$(cat /sys/bus/dst/devices/dst-r1/state)" = running ]
	read -r name majmin < $DST_CFS/remotes/r1/device
	[ "$name" = "$disk" ]
	[ "$majmin" = "$(cat /sys/block/$disk/dev)" ]
	# largest I/O well above NBD's 128 KiB
	[ "$(cat /sys/block/$disk/queue/max_hw_sectors_kb)" -ge 1024 ]
}

@test "the partitions of the export are there when enable returns" {
	printf 'label: gpt\n,8M\n,\n' | sfdisk -q /dev/ram0
	dst_export e1 /dev/ram0 "$SRV"
	local d=$DST_CFS/remotes/r1 disk
	mkdir "$d"
	echo "$SRV" > "$d/addr"
	echo e1 > "$d/export"
	cfs_write "$d/enable" 1 dst-cli
	# No waiting: the scan ran before the write returned.
	disk=$(cut -d' ' -f1 "$d/device")
	[ -e "/sys/block/$disk/${disk}p1" ]
	[ -e "/sys/block/$disk/${disk}p2" ]
	[ "$(cat "/sys/block/$disk/${disk}p1/size")" = $((8 << 11)) ]
}

@test "no discard or write-zeroes is offered when the backing device has none" {
	dst_export e1 /dev/ram0 "$SRV"
	dst_attach r1 "$SRV" export=e1
	disk=${DST_DEV#/dev/}
	[ "$(cat /sys/block/$disk/queue/discard_max_bytes)" = 0 ]
	[ "$(cat /sys/block/$disk/queue/write_zeroes_max_bytes)" = 0 ]
	[ "$(cat /sys/block/$disk/queue/write_cache)" = "write through" ]
}

# nullb_make MB: a memory-backed null_blk with discard and a volatile cache.
nullb_make() {
	modprobe null_blk nr_devices=0
	DST_MADE_NULLB=1
	local d=/sys/kernel/config/nullb/nullb0
	mkdir "$d"
	echo "$1" > "$d/size"
	echo 1 > "$d/memory_backed"
	echo 1 > "$d/discard"
	echo 16 > "$d/cache_size"
	echo 1 > "$d/power"
	wait_for 10 test -b /dev/nullb0
}

nullb_teardown() {
	dst_teardown
	rmdir /sys/kernel/config/nullb/nullb0 2>/dev/null || true
	rmmod null_blk 2>/dev/null || true
}

@test "discard, flush and FUA reach the backing device" {
	teardown() { nullb_teardown; }
	nullb_make 64
	dd if=/dev/urandom of=/dev/nullb0 bs=1M count=8 oflag=direct status=none
	dst_export e1 /dev/nullb0 "$SRV"
	dst_attach r1 "$SRV" export=e1
	disk=${DST_DEV#/dev/}
	[ "$(cat /sys/block/$disk/queue/write_cache)" = "write back" ]
	[ "$(cat /sys/block/$disk/queue/discard_max_bytes)" -gt 0 ]

	blkdiscard -o 0 -l $((4 << 20)) "$DST_DEV"
	cmp -n $((4 << 20)) /dev/nullb0 /dev/zero
	! cmp -n $((1 << 20)) -i $((4 << 20)) /dev/nullb0 /dev/zero || false

	mountpoint -q /sys/kernel/tracing ||
		mount -t tracefs tracefs /sys/kernel/tracing
	t=/sys/kernel/tracing
	echo > $t/trace
	echo 1 > $t/events/block/block_bio_queue/enable
	dd if=/dev/zero of="$DST_DEV" bs=4k count=1 oflag=direct,sync status=none
	blockdev --flushbufs "$DST_DEV"
	echo 0 > $t/events/block/block_bio_queue/enable
	nb=$(cat /sys/block/nullb0/dev)
	grep " ${nb/:/,} F" $t/trace	# a flush reached nullb0
	grep " ${nb/:/,} WF" $t/trace	# a FUA write reached nullb0
}

# in_flight DEV OP N: DEV's queue holds OP (-eq, -ge) N requests now.
in_flight() {
	[ "$(awk '{print $1 + $2}' "/sys/block/$1/inflight")" "$2" "$3" ]
}

@test "requests behind a slow one reach the backing device before its reply" {
	# The client holds a request while an earlier one is unacknowledged
	# (Nagle); the server must acknowledge what it read even when no
	# reply can follow soon, or requests would queue behind the slowest.
	teardown() { nullb_teardown; }
	modprobe null_blk nr_devices=0
	DST_MADE_NULLB=1
	local d=/sys/kernel/config/nullb/nullb0 i pids=
	mkdir "$d"
	echo 64 > "$d/size"
	echo 2 > "$d/irqmode"			# complete from a timer ...
	echo 4000000000 > "$d/completion_nsec"	# ... after 4 s
	echo 1 > "$d/power"
	wait_for 10 test -b /dev/nullb0
	dst_export e1 /dev/nullb0 "$SRV"
	dst_attach r1 "$SRV" export=e1 connections=1
	# The partition scan and udev's probe of the new disk go first.
	udevadm settle -t 120 || true
	wait_for 60 in_flight nullb0 -eq 0
	for i in 1 2 3 4; do
		dd if="$DST_DEV" of=/dev/null bs=4k count=1 skip=$((i * 16)) \
			iflag=direct status=none &
		pids="$pids $!"
	done
	# All four are in the backing device together, before the first
	# one's 4 s are up (four dd started at once take a while in a
	# one-vCPU guest: 1.5 s was not always enough there).
	wait_for 4 in_flight nullb0 -ge 4
	for i in $pids; do
		wait "$i"
	done
}

@test "bad configuration gives its documented errno and changes nothing" {
	e=$DST_CFS/exports/e1
	r=$DST_CFS/remotes/r1
	mkdir "$e" "$r"
	acl_rule e1 all 0.0.0.0/0 rw
	[ "$(cfs_errno $e/addr 10.99.0.1)" = EINVAL ]		# no port
	[ "$(cfs_errno $e/addr 'nonsense:80')" = EINVAL ]
	[ "$(cfs_errno $e/addr '::1:80')" = EINVAL ]		# v6 needs []
	[ "$(cat $e/addr)" = "" ]
	[ "$(cfs_errno $e/enable 1 dst-srv)" = EDESTADDRREQ ]	# no addr
	echo "$SRV" > $e/addr
	[ "$(cfs_errno $e/enable 1 dst-srv)" = EINVAL ]		# no device
	echo /dev/nonexistent > $e/device
	[ "$(cfs_errno $e/enable 1 dst-srv)" = ENOENT ]
	echo /etc/passwd > $e/device
	[ "$(cfs_errno $e/enable 1 dst-srv)" = ENOTBLK ]
	echo /dev/ram0 > $e/device
	echo $((128 << 20)) > $e/size
	[ "$(cfs_errno $e/enable 1 dst-srv)" = EINVAL ]		# larger than ram0
	[ "$(cat $e/enable)" = 0 ]
	[ "$(cat $e/state)" = disabled ]
	echo 0 > $e/size

	[ "$(cfs_errno $e/enable 1 dst-srv)" = OK ]
	[ "$(cfs_errno $e/enable 1 dst-srv)" = OK ]		# enable twice: no-op
	[ "$(wc -l < $e/clients)" = 0 ]
	[ "$(cfs_errno $e/device /dev/ram1)" = EBUSY ]		# while enabled
	[ "$(cfs_errno $e/addr 10.99.0.1:7001)" = EBUSY ]
	[ "$(cat $e/device)" = /dev/ram0 ]
	[ "$(cat $e/size)" = $((64 << 20)) ]

	# A second export of the same device or port is refused.
	mkdir $DST_CFS/exports/e2
	echo /dev/ram0 > $DST_CFS/exports/e2/device
	echo 10.99.0.1:7002 > $DST_CFS/exports/e2/addr
	[ "$(cfs_errno $DST_CFS/exports/e2/enable 1 dst-srv)" = EBUSY ]
	echo /dev/ram1 > $DST_CFS/exports/e2/device
	echo "$SRV" > $DST_CFS/exports/e2/addr
	[ "$(cfs_errno $DST_CFS/exports/e2/enable 1 dst-srv)" = EADDRINUSE ]

	[ "$(cfs_errno $r/poll_queues 17)" = EINVAL ]		# 0..16
	[ "$(cfs_errno $r/poll_queues -1)" = EINVAL ]
	[ "$(cfs_errno $r/enable 1 dst-cli)" = EDESTADDRREQ ]
	echo "$SRV" > $r/addr
	echo nosuch > $r/export
	[ "$(cfs_errno $r/enable 1 dst-cli)" = ENOENT ]	# no such export
	echo 10.99.0.1:7999 > $r/addr
	echo e1 > $r/export
	[ "$(cfs_errno $r/enable 1 dst-cli)" = ECONNREFUSED ]
	echo "$SRV" > $r/addr
	echo $((128 << 20)) > $r/size
	[ "$(cfs_errno $r/enable 1 dst-cli)" = EINVAL ]	# larger than export
	[ "$(cat $r/enable)" = 0 ]
	[ "$(cat $r/device)" = "" ]
	! ls /sys/block | grep -q '^dst' || false
	echo 0 > $r/size
	[ "$(cfs_errno $r/enable 1 dst-cli)" = OK ]
	# Not live: changes only while disabled (connections is live:
	# reconfig.bats).
	[ "$(cfs_errno $r/queue_depth 64)" = EBUSY ]
	[ "$(cat $r/queue_depth)" = 128 ]
	[ "$(cfs_errno $r/poll_queues 1)" = EBUSY ]
	[ "$(cat $r/poll_queues)" = 0 ]
	klog_has "r1: size 134217728 does not fit export 'e1'"
}

# fio_running DEV: random read/write I/O that runs until it fails.
fio_bg() {
	fio --name=bg --filename="$1" --direct=1 --ioengine=libaio \
		--iodepth=16 --rw=randrw --bs=4k --time_based --runtime=120 \
		--output="$BATS_TEST_TMPDIR/fio.out" > /dev/null 2>&1 &
	FIO_PID=$!
	# I/O is flowing once the disk has completed some reads.
	wait_for 30 reads_above "${1#/dev/}" 100
}

reads_above() {
	[ "$(awk '{print $1}' "/sys/block/$1/stat")" -gt "$2" ]
}

# fio_failed: the background fio exited with an I/O error.
fio_failed() {
	local rc=0
	wait "$FIO_PID" || rc=$?
	[ "$rc" -ne 0 ]
	grep -q 'err= *[1-9]' "$BATS_TEST_TMPDIR/fio.out"
}

@test "disable with fio running: no hang, fio sees errors, module unloads" {
	dst_export e1 /dev/ram0 "$SRV"
	dst_attach r1 "$SRV" export=e1 connections=2
	fio_bg "$DST_DEV"
	echo 0 > $DST_CFS/remotes/r1/enable
	fio_failed
	[ ! -e "$DST_DEV" ]
	[ "$(cat $DST_CFS/remotes/r1/state)" = disabled ]
	rmdir $DST_CFS/remotes/r1
	# A function: wait_for runs it again each time.
	no_clients() { [ "$(wc -l < $DST_CFS/exports/e1/clients)" = 0 ]; }
	wait_for 10 no_clients
	export_rmdir $DST_CFS/exports/e1
	rmmod dst
}

@test "rmdir with fio running: no hang, fio sees errors, module unloads" {
	dst_export e1 /dev/ram0 "$SRV"
	dst_attach r1 "$SRV" export=e1
	fio_bg "$DST_DEV"
	rmdir $DST_CFS/remotes/r1
	fio_failed
	[ ! -e "$DST_DEV" ]
	[ ! -e /sys/bus/dst/devices/dst-r1 ]
	export_rmdir $DST_CFS/exports/e1
	rmmod dst
}

@test "export gone for good under a client: I/O fails after fail_timeout_s, nothing hangs" {
	dst_export e1 /dev/ram0 "$SRV"
	dst_attach r1 "$SRV" export=e1 fail_timeout_s=2
	fio_bg "$DST_DEV"
	echo 0 > $DST_CFS/exports/e1/enable
	fio_failed
	[ "$(cat $DST_CFS/remotes/r1/state)" = failed ]
	run dd if="$DST_DEV" of=/dev/null bs=4k count=1 iflag=direct status=none
	assert_failure
	klog_has 'r1: connection 0 to 10.99.0.1:7000 lost'
	klog_has 'r1: no connection to 10.99.0.1:7000 for 2 s; failing I/O'
	rmdir $DST_CFS/remotes/r1
	export_rmdir $DST_CFS/exports/e1
	rmmod dst
}

@test "a peer that does not speak DST is dropped with one log line" {
	dst_export e1 /dev/ram0 "$SRV"
	in_ns dst-cli python3 -c '
import socket
s = socket.create_connection(("10.99.0.1", 7000))
s.sendall(b"GET / HTTP/1.0\r\n\r\n" + b"x" * 64)
s.settimeout(20)
try:
    assert s.recv(100) == b""
except ConnectionResetError:
    pass'
	wait_for 10 klog_has "e1: 10.99.0.2:[0-9]*: not a DST v1 HELLO"
	# ...and the export still serves.
	dst_attach r1 "$SRV" export=e1
	[ "$(checksum $DST_DEV 0 $((1 << 20)))" = "$(checksum /dev/ram0 0 $((1 << 20)))" ]
}

@test "a server that is not DST fails the attach with EPROTO" {
	in_ns dst-srv python3 -c '
import socket
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("10.99.0.1", 7100)); l.listen(1)
c, _ = l.accept(); c.recv(96); c.sendall(b"SSH-2.0-x\r\n" + b"\0" * 64); c.close()' &
	wait_for 10 listening dst-srv 10.99.0.1:7100
	mkdir $DST_CFS/remotes/r1
	echo 10.99.0.1:7100 > $DST_CFS/remotes/r1/addr
	[ "$(cfs_errno $DST_CFS/remotes/r1/enable 1 dst-cli)" = EPROTO ]
	wait
	[ "$(cat $DST_CFS/remotes/r1/state)" = disabled ]
}
