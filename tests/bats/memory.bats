#!/usr/bin/env bats
# vm: mem=256 disk=1280
# Forward progress under memory pressure: a guest with 256 MiB of RAM
# writes three times its memory through the page cache to ext4 on DST,
# whose export (in the same guest) is a virtio disk.  (A debug kernel's
# guest gets 192 MiB more for the kernel's own tables -- tests/vm/run --
# and still has less than half of what is written.)  Writeback of the
# dirty pages is what frees memory, and it goes through DST both ways:
# any allocation on the I/O path that waits for reclaim deadlocks here.
# The runner fails the guest on a hung-task warning.

load helpers

SRV=10.99.0.1:7000

setup() {
	dst_load
	netns_pair
	modprobe virtio_blk
	wait_for 10 test -b /dev/vda
}

teardown() {
	umount "$BATS_TEST_TMPDIR/mnt" 2>/dev/null || true
	dst_teardown
}

@test "768 MiB through the page cache to ext4 on DST in a 256 MiB guest" {
	# What is written is at least twice what the kernel has to cache it.
	[ "$(awk '/MemTotal/ { print $2 }' /proc/meminfo)" -le $((384 * 1024)) ]
	dst_export e1 /dev/vda "$SRV"
	dst_attach r1 "$SRV" export=e1 connections=2
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$DST_DEV"
	mnt=$BATS_TEST_TMPDIR/mnt
	mkdir -p "$mnt"
	mount "$DST_DEV" "$mnt"
	run fio --name=fill --directory="$mnt" --rw=write --bs=1M \
		--size=768M --ioengine=psync --end_fsync=1 \
		--verify=crc32c --do_verify=0
	assert_success
	umount "$mnt"
	# Read it back from the disk, not the page cache.
	mount "$DST_DEV" "$mnt"
	run fio --name=fill --directory="$mnt" --rw=write --bs=1M \
		--size=768M --ioengine=psync --verify=crc32c --verify_only
	assert_success
	refute_output --regexp 'err= *[1-9]'
	umount "$mnt"
	run fsck.ext4 -fn "$DST_DEV"
	assert_success
}
