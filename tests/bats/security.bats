#!/usr/bin/env bats
# Who may connect and what they may do: an export's access list
# (exports/<name>/acl/<rule>/{addr,perm}).  docs/security.md is the
# contract: no rule refuses everyone, the longest matching prefix
# decides, a ro rule is enforced by the server itself.

load helpers

SRV=10.99.0.1:7000
E=$DST_CFS/exports/e1
R=$DST_CFS/remotes/r1

setup() {
	dst_load
	netns_pair
	brd_make 64
	# Each test writes its own access list.
	export DST_ACL=none
}

teardown() {
	dst_teardown
}

# attach_errno: enable r1 from the client namespace; prints OK or errno.
attach_errno() {
	cfs_errno "$R/enable" 1 dst-cli
}

new_remote() {
	mkdir "$R"
	echo "${1:-$SRV}" > "$R/addr"
	echo e1 > "$R/export"
}

@test "an export with no rule refuses every client (EACCES) and says so at enable" {
	dst_export e1 /dev/ram0 "$SRV"
	klog | grep -q 'e1: the access list is empty: every client is refused'
	new_remote
	[ "$(attach_errno)" = EACCES ]
	[ "$(cat $R/enable)" = 0 ]
	klog | grep -q 'e1: 10.99.0.2:[0-9]*: refused: no access rule allows this address'
	[ "$(grep -c . $E/clients)" = 0 ]
	# A rule with no address yet matches nothing either.
	mkdir "$E/acl/blank"
	[ "$(cat $E/acl/blank/addr)" = "" ]
	[ "$(cat $E/acl/blank/perm)" = ro ]
	[ "$(attach_errno)" = EACCES ]
}

@test "the longest matching prefix decides: rw for the net, ro for one host" {
	mkdir "$E" && echo /dev/ram0 > "$E/device" && echo "$SRV" > "$E/addr"
	acl_rule e1 net 10.99.0.0/16 rw
	acl_rule e1 host 10.99.0.2/32 ro
	cfs_write "$E/enable" 1 dst-srv
	new_remote
	[ "$(attach_errno)" = OK ]
	DST_DEV=/dev/$(cut -d' ' -f1 "$R/device")
	wait_for 10 test -b "$DST_DEV"
	# The host rule is the more specific one: a read-only disk.
	[ "$(blockdev --getro "$DST_DEV")" = 1 ]
	grep -q ' ro$' "$E/clients"
	run dd if=/dev/zero of="$DST_DEV" bs=4k count=1 oflag=direct status=none
	assert_failure
	[ "$(checksum /dev/ram0 0 $((64 << 20)))" = "$BRD_SUM" ]
	[ "$(checksum "$DST_DEV" 0 $((1 << 20)))" = "$(checksum /dev/ram0 0 $((1 << 20)))" ]
	echo 0 > "$R/enable"

	# Without the host rule the net rule gives a writable disk.
	rmdir "$E/acl/host"
	[ "$(attach_errno)" = OK ]
	DST_DEV=/dev/$(cut -d' ' -f1 "$R/device")
	wait_for 10 test -b "$DST_DEV"
	[ "$(blockdev --getro "$DST_DEV")" = 0 ]
	dd if=/dev/zero of="$DST_DEV" bs=4k count=1 oflag=direct status=none
	cmp -n 4096 /dev/ram0 /dev/zero
}

@test "IPv6 clients need an IPv6 rule: 0.0.0.0/0 does not cover them" {
	mkdir "$E" && echo /dev/ram0 > "$E/device"
	echo "[fd99::1]:7000" > "$E/addr"
	acl_rule e1 v4all 0.0.0.0/0 rw
	cfs_write "$E/enable" 1 dst-srv
	new_remote "[fd99::1]:7000"
	[ "$(attach_errno)" = EACCES ]
	klog | grep -q 'e1: \[fd99::2\]:[0-9]*: refused: no access rule'
	acl_rule e1 v6 fd99::/64 rw
	[ "$(attach_errno)" = OK ]
	grep -q '^\[fd99::2\]:' "$E/clients"
	DST_DEV=/dev/$(cut -d' ' -f1 "$R/device")
	wait_for 10 test -b "$DST_DEV"
	[ "$(blockdev --getro "$DST_DEV")" = 0 ]
}

@test "rules change while enabled: the next connection sees them, live ones stay" {
	dst_export e1 /dev/ram0 "$SRV"
	new_remote
	[ "$(attach_errno)" = EACCES ]
	acl_rule e1 lan 10.99.0.0/24 rw
	[ "$(attach_errno)" = OK ]
	DST_DEV=/dev/$(cut -d' ' -f1 "$R/device")
	wait_for 10 test -b "$DST_DEV"
	# Removing the rule does not cut the client that is in (documented).
	rmdir "$E/acl/lan"
	dd if=/dev/urandom of="$BATS_TEST_TMPDIR/blk" bs=64k count=1 status=none
	dd if="$BATS_TEST_TMPDIR/blk" of="$DST_DEV" bs=64k oflag=direct status=none
	cmp -n 65536 "$BATS_TEST_TMPDIR/blk" /dev/ram0
	# ... but a new attach is refused.
	mkdir "$DST_CFS/remotes/r2"
	echo "$SRV" > "$DST_CFS/remotes/r2/addr"
	echo e1 > "$DST_CFS/remotes/r2/export"
	[ "$(cfs_errno "$DST_CFS/remotes/r2/enable" 1 dst-cli)" = EACCES ]
}

@test "addr and perm are checked: bad values are refused and change nothing" {
	mkdir "$E"
	mkdir "$E/acl/r"
	echo 10.1.2.3/8 > "$E/acl/r/addr"
	[ "$(cat $E/acl/r/addr)" = 10.0.0.0/8 ]		# the prefix is kept
	for bad in 10.0.0.256 10.0.0.0/33 10.0.0.0/-1 10.0.0.0/ ::/129 \
		10.0.0.1:80 '[::1]' foo 10.0.0 '' '10.0.0.0/8 x'; do
		[ "$(cfs_errno "$E/acl/r/addr" "$bad")" = EINVAL ]
		[ "$(cat $E/acl/r/addr)" = 10.0.0.0/8 ]
	done
	echo fd99::1/64 > "$E/acl/r/addr"
	[ "$(cat $E/acl/r/addr)" = fd99::/64 ]
	echo ::1 > "$E/acl/r/addr"
	[ "$(cat $E/acl/r/addr)" = ::1/128 ]
	echo rw > "$E/acl/r/perm"
	for bad in rx RW r '' 1; do
		[ "$(cfs_errno "$E/acl/r/perm" "$bad")" = EINVAL ]
		[ "$(cat $E/acl/r/perm)" = rw ]
	done
	klog | grep -q 'e1: acl r: invalid address'
	klog | grep -q 'e1: acl r: invalid perm: want ro or rw'
	# A node with rules goes only once they are gone.
	run rmdir "$E"
	assert_failure
	assert_output --partial 'Directory not empty'
	rmdir "$E/acl/r" "$E"
	[ ! -e /sys/bus/dst/devices/dst-e1 ]
}

@test "a WRITE sent anyway on a ro connection is refused by the server" {
	dst_export e1 /dev/ram0 "$SRV"
	acl_rule e1 ro 10.99.0.0/24 ro
	# tests/proto/dst-rawwrite.c: HELLO, then a WRITE whatever was granted.
	run in_ns dst-cli "$DST_TOP/build/tests/dst-rawwrite" 10.99.0.1 7000 e1 0 65536
	assert_success
	# READ_ONLY (0x1) granted; the WRITE gets PERM (2); the connection
	# goes on and a READ returns what was there, not the write's bytes.
	assert_line --regexp '^welcome features=0x[0-9a-f]*[13579bdf] size=67108864$'
	assert_line 'write status=2'
	assert_line 'read status=0 same_as_written=0'
	# ... and the same client on a rw rule does write: the test can fail.
	acl_rule e1 rw 10.99.0.2 rw
	run in_ns dst-cli "$DST_TOP/build/tests/dst-rawwrite" 10.99.0.1 7000 e1 1048576 4096
	assert_success
	assert_line 'write status=0'
	assert_line 'read status=0 same_as_written=1'
	# The refused WRITE left the first MiB as it was; the second landed.
	[ "$(checksum /dev/ram0 0 $((1 << 20)))" = "$(head -c $((1 << 20)) /run/dst-patterns/dst-64 | digest)" ]
	[ "$(checksum /dev/ram0 $((1 << 20)) 4096)" = "$(head -c 4096 /dev/zero | tr '\0' X | digest)" ]
}
