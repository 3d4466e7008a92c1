#!/usr/bin/env bats
# The shared helpers do what every other suite relies on.

load helpers

teardown() {
	dst_teardown
}

@test "brd_make fills /dev/ram0 with a reproducible pattern" {
	brd_make 8 seed1
	[ "$(blockdev --getsize64 /dev/ram0)" = $((8 * 1024 * 1024)) ]
	[ "$(checksum /dev/ram0 0 $((8 * 1024 * 1024)))" = "$BRD_SUM" ]
	pattern_file "$BATS_TEST_TMPDIR/p" 8 seed1
	[ "$(digest < "$BATS_TEST_TMPDIR/p")" = "$BRD_SUM" ]
	pattern_file "$BATS_TEST_TMPDIR/q" 8 seed2
	[ "$(digest < "$BATS_TEST_TMPDIR/q")" != "$BRD_SUM" ]
}

@test "checksum covers exactly the range asked for" {
	brd_make 4
	a=$(checksum /dev/ram0 0 1048576)
	b=$(dd if=/dev/ram0 bs=1M count=1 status=none | digest)
	[ "$a" = "$b" ]
	[ "$(checksum /dev/ram0 1048576 1048576)" != "$a" ]
}

@test "netns_pair joins two namespaces over IPv4 and IPv6" {
	netns_pair
	ip netns exec dst-cli ping -c1 -W2 10.99.0.1
	wait_for 10 ip netns exec dst-cli ping -6 -c1 -W2 fd99::1
	ip netns exec dst-srv ping -c1 -W2 10.99.0.2
}

@test "wait_for gives up at its deadline" {
	start=$(date +%s)
	run wait_for 1 false
	assert_failure
	[ $(( $(date +%s) - start )) -lt 5 ]
}

@test "dst_teardown removes nodes, module, namespaces and brd" {
	brd_make 4
	netns_pair
	dst_load
	mkdir "$DST_CFS/exports/t1" "$DST_CFS/remotes/t2"
	dst_teardown
	! dst_is_loaded || false
	! ip netns list | grep -q dst- || false
	! grep -q '^brd ' /proc/modules || false
	[ ! -e /sys/bus/dst ]
}
