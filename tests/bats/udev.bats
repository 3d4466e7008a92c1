#!/usr/bin/env bats
# Stable names from udev/60-dst.rules, with a real systemd-udevd running
# in the guest: /dev/dst/<name>, /dev/disk/by-id/dst-<name>, their -partN
# links, and by-uuid/by-label for file systems on DST (which systemd's
# persistent-storage rules skip).  docs/udev.md is the contract.

load helpers

SRV=10.99.0.1:7000

setup() {
	mkdir -p /run/udev/rules.d
	cp "$DST_TOP/udev/60-dst.rules" /run/udev/rules.d/
	/lib/systemd/systemd-udevd --daemon --resolve-names=never
	wait_for 10 udevadm control --ping
	dst_load
	netns_pair
	brd_make 64
	dst_export e1 /dev/ram0 "$SRV"
}

teardown() {
	dst_teardown
	udevadm control --exit 2>/dev/null || true
	rm -f /run/udev/rules.d/60-dst.rules
}

# points_at LINK DEV: LINK exists and resolves to DEV.
points_at() {
	[ "$(readlink -f "$1")" = "$2" ]
}

@test "attach gives /dev/dst/<name> and by-id links to the right disk; detach removes them" {
	dst_attach disk-a "$SRV" export=e1
	udevadm settle -t 30
	points_at /dev/dst/disk-a "$DST_DEV"
	points_at /dev/disk/by-id/dst-disk-a "$DST_DEV"
	# Through the link is the export's data.
	[ "$(checksum /dev/dst/disk-a 0 $((1 << 20)))" = "$(checksum /dev/ram0 0 $((1 << 20)))" ]
	# A second remote gets its own names, on its own disk.
	first=$DST_DEV
	dst_attach disk-b "$SRV" export=e1 read_only=1
	udevadm settle -t 30
	[ "$DST_DEV" != "$first" ]
	points_at /dev/dst/disk-b "$DST_DEV"
	points_at /dev/dst/disk-a "$first"
	echo 0 > "$DST_CFS/remotes/disk-a/enable"
	udevadm settle -t 30
	[ ! -e /dev/dst/disk-a ] && [ ! -L /dev/dst/disk-a ]
	[ ! -L /dev/disk/by-id/dst-disk-a ]
	points_at /dev/dst/disk-b "$DST_DEV"
}

@test "partitions get -partN links; a file system gets by-uuid and by-label" {
	dst_attach r1 "$SRV" export=e1
	udevadm settle -t 30
	printf 'label: gpt\n,16M\n,\n' | sfdisk -q "$DST_DEV"
	udevadm settle -t 30
	points_at /dev/dst/r1-part1 "${DST_DEV}p1"
	points_at /dev/dst/r1-part2 "${DST_DEV}p2"
	points_at /dev/disk/by-id/dst-r1-part2 "${DST_DEV}p2"
	partuuid=$(blkid -s PARTUUID -o value "${DST_DEV}p2")
	points_at "/dev/disk/by-partuuid/$partuuid" "${DST_DEV}p2"

	uuid=8c1f3a3e-55a1-4c57-9d2e-0d7f3b1c2a41
	mkfs.ext4 -q -F -L dstdata -U "$uuid" "${DST_DEV}p2"
	udevadm settle -t 30
	points_at "/dev/disk/by-uuid/$uuid" "${DST_DEV}p2"
	points_at /dev/disk/by-label/dstdata "${DST_DEV}p2"
	# What fstab's UUID= would mount.
	mkdir -p "$BATS_TEST_TMPDIR/mnt"
	mount "UUID=$uuid" "$BATS_TEST_TMPDIR/mnt"
	echo hello > "$BATS_TEST_TMPDIR/mnt/f"
	umount "$BATS_TEST_TMPDIR/mnt"

	echo 0 > "$DST_CFS/remotes/r1/enable"
	udevadm settle -t 30
	for l in /dev/dst/r1 /dev/dst/r1-part1 /dev/dst/r1-part2 \
		/dev/disk/by-id/dst-r1 /dev/disk/by-id/dst-r1-part2 \
		"/dev/disk/by-uuid/$uuid" /dev/disk/by-label/dstdata \
		"/dev/disk/by-partuuid/$partuuid"; do
		[ ! -L "$l" ]
	done
}
