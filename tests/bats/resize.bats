#!/usr/bin/env bats
# Online resize (docs/configfs.md, an export's `size`; docs/protocol.md,
# RESIZE): an export grows while clients are attached, and their disks
# grow with it, an ext4 on one too; what a client cannot survive -- a
# shrink under it -- is refused and changes nothing; a client that was
# away when the export grew takes the new size when it reconnects.

load helpers

SRV=10.99.0.1:7000
E=$DST_CFS/exports/e1
R=$DST_CFS/remotes/r1
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
MB=$((1 << 20))

setup() {
	dst_load
	netns_pair
	brd_make 64
	LOOP=""
}

teardown() {
	if mountpoint -q "$BATS_TEST_TMPDIR/mnt" 2>/dev/null; then
		umount "$BATS_TEST_TMPDIR/mnt"
	fi
	dst_teardown
	[ -z "$LOOP" ] || losetup -d "$LOOP" 2>/dev/null || true
}

# in_klog TEXT: the kernel said TEXT during this test.
in_klog() {
	klog | grep -qF -- "$1"
}

# disk_bytes DEV: the size of the block device DEV, as the kernel has it.
disk_bytes() {
	echo $(( $(cat "/sys/class/block/${1#/dev/}/size") * 512 ))
}

# disk_is DEV BYTES
disk_is() {
	[ "$(disk_bytes "$1")" = "$2" ]
}

# same_at OFF LEN: DST and the backing brd agree on LEN bytes at OFF.
same_at() {
	[ "$(checksum "$DST_DEV" "$1" "$2")" = "$(checksum /dev/ram0 "$1" "$2")" ]
}

# loop_attach: a loop device LOOP over a 32 MiB file in tmpfs, exported
# as e1 and attached as r1 ($DST_DEV).
loop_attach() {
	truncate -s 32M "$BATS_TEST_TMPDIR/backing"
	# No udev in the guest to load loop on demand.
	modprobe loop
	LOOP=$(losetup --find --show "$BATS_TEST_TMPDIR/backing")
	dst_export e1 "$LOOP" "$SRV"
	dst_attach r1 "$SRV" export=e1
}

@test "a grown backing device: the export, the client's disk and ext4 on it grow online; data intact" {
	loop_attach
	disk_is "$DST_DEV" $((32 * MB))
	mkfs.ext4 -q -F "$DST_DEV"
	# loop over tmpfs refuses the WRITE_ZEROES it offers, and mkfs gets
	# through anyway (the next test): only what follows must not fail.
	errs=$(stat_of "$R" errors)
	mkdir "$BATS_TEST_TMPDIR/mnt"
	mount "$DST_DEV" "$BATS_TEST_TMPDIR/mnt"
	pattern_file "$BATS_TEST_TMPDIR/mnt/before" 8 before
	sync
	sum=$(digest < "$BATS_TEST_TMPDIR/mnt/before")
	mark=$(log_mark)

	# The administrator grows the file and tells loop, then the export.
	truncate -s 96M "$BATS_TEST_TMPDIR/backing"
	losetup -c "$LOOP"
	echo 0 > "$E/size"
	[ "$(cat "$E/size")" = $((96 * MB)) ]
	wait_for 20 disk_is "$DST_DEV" $((96 * MB))
	[ "$(cat "$R/size")" = $((96 * MB)) ]
	log_since "$mark" | grep -qF "r1: export 'e1' grew to $((96 * MB)) bytes, from $((32 * MB))"
	log_since "$mark" | grep -q "${DST_DEV#/dev/}: detected capacity change"

	resize2fs "$DST_DEV"
	# 48 MiB more than the old file system could hold at all.
	dd if=/dev/zero of="$BATS_TEST_TMPDIR/mnt/after" bs=1M count=48 \
		conv=fsync status=none
	[ "$(digest < "$BATS_TEST_TMPDIR/mnt/before")" = "$sum" ]
	umount "$BATS_TEST_TMPDIR/mnt"
	fsck.ext4 -fn "$DST_DEV"
	[ "$(stat_of "$R" errors)" = "$errs" ]
}

@test "a device that refuses the WRITE_ZEROES it offered: the client stops offering it; mkfs and the data are fine" {
	loop_attach
	q=/sys/block/${DST_DEV#/dev/}/queue
	[ "$(cat "$q/write_zeroes_max_bytes")" -gt 0 ]
	# The first zeroing is refused (loop's fallocate on tmpfs) and the
	# block layer falls back to writing zeroes; no second refusal.
	fallocate -z -o $((1 * MB)) -l $((1 * MB)) "$DST_DEV"
	wait_for 10 in_klog "r1: export 'e1' refused WRITE_ZEROES (EOPNOTSUPP from its device); zeroes are written as data from now on"
	[ "$(cat "$q/write_zeroes_max_bytes")" = 0 ]
	errs=$(stat_of "$R" errors)
	[ "$errs" -ge 1 ]
	pat=$BATS_TEST_TMPDIR/pattern
	pattern_file "$pat" 4 zeroes
	dd if="$pat" of="$DST_DEV" bs=1M oflag=direct status=none
	blkdiscard -z -o $((1 * MB)) -l $((1 * MB)) "$DST_DEV"
	zero=$(head -c $((1 * MB)) /dev/zero | digest)
	want=$({ head -c $((1 * MB)) "$pat"; head -c $((1 * MB)) /dev/zero;
		 tail -c +$((2 * MB + 1)) "$pat"; } | digest)
	[ "$(checksum "$DST_DEV" $((1 * MB)) $((1 * MB)))" = "$zero" ]
	[ "$(checksum "$DST_DEV" 0 $((4 * MB)))" = "$want" ]
	[ "$(checksum "$LOOP" 0 $((4 * MB)))" = "$want" ]
	[ "$(stat_of "$R" errors)" = "$errs" ]
}

@test "keyed: size raised on a running export reaches the client; a shrink with clients is EBUSY, too large EINVAL" {
	dst_export e1 /dev/ram0 "$SRV" size=$((32 * MB)) key=$KEY \
		hash='hmac(sha256)' cipher='gcm(aes)'
	dst_attach r1 "$SRV" export=e1 key=$KEY hash='hmac(sha256)' \
		cipher='gcm(aes)' connections=2
	disk_is "$DST_DEV" $((32 * MB))

	# Refused, and nothing changed on either side.
	[ "$(cfs_errno "$E/size" $((16 * MB)))" = EBUSY ]
	in_klog 'e1: cannot shrink to 16777216 bytes: 2 client connections use 33554432'
	[ "$(cfs_errno "$E/size" $((128 * MB)))" = EINVAL ]
	[ "$(cfs_errno "$E/size" 1000)" = EINVAL ]
	[ "$(cat "$E/size")" = $((32 * MB)) ]
	disk_is "$DST_DEV" $((32 * MB))

	[ "$(cfs_errno "$E/size" $((48 * MB)))" = OK ]
	[ "$(cat "$E/size")" = $((48 * MB)) ]
	wait_for 20 disk_is "$DST_DEV" $((48 * MB))
	# The new blocks are the backing device's, both ways, on both
	# connections (4k direct reads spread over the queues).
	same_at $((32 * MB)) $((16 * MB))
	pattern_file "$BATS_TEST_TMPDIR/p" 4 grown
	dd if="$BATS_TEST_TMPDIR/p" of="$DST_DEV" bs=4k seek=$(( (44 * MB) / 4096 )) \
		oflag=direct status=none
	[ "$(checksum /dev/ram0 $((44 * MB)) $((4 * MB)))" = \
	  "$(digest < "$BATS_TEST_TMPDIR/p")" ]
	# Past the end is still past the end.
	run dd if=/dev/zero of="$DST_DEV" bs=4k seek=$(( (48 * MB) / 4096 )) \
		count=1 oflag=direct
	assert_failure
	[ "$(stat_of "$R" errors)" = 0 ]
	[ "$(stat_of "$R" reconnects)" = 0 ]
}

@test "a client away while the export grew takes the new size when it reconnects" {
	dst_export e1 /dev/ram0 "$SRV" size=$((32 * MB))
	dst_attach r1 "$SRV" export=e1 reconnect_delay_ms=200
	disk_is "$DST_DEV" $((32 * MB))
	cfs_write "$E/enable" 0 dst-srv
	wait_for 10 state_is "$R" reconnecting
	echo $((64 * MB)) > "$E/size"
	cfs_write "$E/enable" 1 dst-srv
	wait_for 60 state_is "$R" running
	wait_for 20 disk_is "$DST_DEV" $((64 * MB))
	same_at 0 $((64 * MB))
}

@test "a client that set its own size keeps it when the export grows" {
	dst_export e1 /dev/ram0 "$SRV" size=$((32 * MB))
	dst_attach r1 "$SRV" export=e1 size=$((16 * MB))
	echo $((64 * MB)) > "$E/size"
	wait_for 20 in_klog "r1: export 'e1' grew to $((64 * MB)) bytes; the disk keeps the $((16 * MB)) set in size"
	disk_is "$DST_DEV" $((16 * MB))
	[ "$(cat "$R/size")" = $((16 * MB)) ]
	same_at 0 $((16 * MB))
}

@test "with no client attached a running export may shrink; new clients see the new size" {
	dst_export e1 /dev/ram0 "$SRV"
	echo $((8 * MB)) > "$E/size"
	[ "$(cat "$E/size")" = $((8 * MB)) ]
	dst_attach r1 "$SRV" export=e1
	disk_is "$DST_DEV" $((8 * MB))
	same_at 0 $((8 * MB))
}
