#!/usr/bin/env bats
# Replicas across servers with md (docs/replication.md): two exports in
# two server namespaces, md RAID1 with a write-intent bitmap over the two
# remotes on the client.  One server's link is cut under fio verify: md
# fails that member within the documented time and I/O goes on with no
# error; the server comes back, --re-add resyncs through the bitmap only
# what changed, and both members hold the same data.

load helpers

R1=$DST_CFS/remotes/r1
R2=$DST_CFS/remotes/r2
MD=/dev/md/dsttest
MB=$((1 << 20))

setup() {
	command -v mdadm > /dev/null ||
		{ echo "mdadm missing: make deps installs it" >&2; return 1; }
	dst_load
	netns_pair
	# The second server: namespace dst-srv2, 10.97.0.0/24 to the client.
	ip netns add dst-srv2
	DST_EXTRA_NETNS=dst-srv2
	ip link add veth3-srv netns dst-srv2 type veth peer name veth3-cli \
		netns dst-cli
	ip -n dst-srv2 addr add 10.97.0.1/24 dev veth3-srv
	ip -n dst-cli addr add 10.97.0.2/24 dev veth3-cli
	ip -n dst-srv2 link set lo up
	ip -n dst-srv2 link set veth3-srv up
	ip -n dst-cli link set veth3-cli up
	wait_for 10 ip netns exec dst-cli ping -c1 -W1 10.97.0.1 > /dev/null
	brd_make 64
}

teardown() {
	mdadm --stop "$MD" > /dev/null 2>&1 || true
	dst_teardown
}

# member_state DEV: md's state of member DEV (dstN) in the array.
member_state() {
	cat "/sys/block/$(basename "$(readlink -f "$MD")")/md/dev-$1/state" 2>/dev/null
}

member_faulty() {
	member_state "$1" | grep -q faulty
}

in_sync() {
	! grep -q 'recovery\|resync' /proc/mdstat &&
		mdadm --detail "$MD" | grep -q 'Active Devices : 2'
}

@test "md RAID1 over two servers: one cut under fio verify, failed in time, re-added through the bitmap, both members equal" {
	dst_export e1 /dev/ram0 10.99.0.1:7000
	DST_SRV_NS=dst-srv2 dst_export e2 /dev/ram1 10.97.0.1:7000
	# The settings docs/replication.md gives for md members.
	local opts="keepalive_ms=500 fail_timeout_s=1 reconnect_delay_ms=200"
	# shellcheck disable=SC2086
	dst_attach r1 10.99.0.1:7000 export=e1 $opts
	d1=${DST_DEV#/dev/}
	# shellcheck disable=SC2086
	dst_attach r2 10.97.0.1:7000 export=e2 $opts
	d2=${DST_DEV#/dev/}
	mdadm --create "$MD" --run --quiet --level=1 --raid-devices=2 \
		--metadata=1.2 --bitmap=internal --bitmap-chunk=64K \
		--assume-clean \
		--failfast "/dev/$d1" "/dev/$d2"
	wait_for 20 test -b "$MD"

	fio_verify_start "$MD" --size=$(scaled 16)M --bsrange=4k-64k \
		--iodepth=8 --rate=1m --verify_backlog=64
	wait_for 30 stat_at_least "$R2" write_ops 20
	t0=$(date +%s%N)
	ip -n dst-cli link set veth3-cli down
	wait_for 60 member_faulty "$d2"
	t1=$(date +%s%N)
	echo "# md failed $d2 $(( (t1 - t0) / 1000000 )) ms after its link was cut" >&3
	# keepalive (2 x 0.5 s) + fail_timeout_s (1 s) + a scan, with room
	# for an emulated CPU.
	[ $(( (t1 - t0) / 1000000000 )) -le 15 ]
	member_state "$d1" | grep -q in_sync

	# I/O went on through the other member, to the end, unharmed.
	fio_verify_wait
	[ "$(stat_of "$R1" errors)" = 0 ]

	# Back (re-added once running: docs/replication.md), and resynced.
	ip -n dst-cli link set veth3-cli up
	wait_for 60 state_is "$R2" running
	before=$(stat_of "$R2" write_bytes)
	mdadm "$MD" --remove "/dev/$d2" > /dev/null
	mdadm "$MD" --re-add "/dev/$d2" > /dev/null
	wait_for 120 in_sync
	resynced=$(( $(stat_of "$R2" write_bytes) - before ))
	echo "# resync after --re-add wrote $resynced bytes to $d2 (of $((64 * MB)))" >&3
	# Only what changed while it was away, through the bitmap: at most
	# the part fio wrote (and md's own metadata), where a full resync
	# would copy the whole 64 MiB member.
	[ "$resynced" -gt 0 ]
	[ "$resynced" -le $(( $(scaled 16) * MB + MB )) ]

	# Both members hold the same data where fio wrote.
	mdadm --stop "$MD" > /dev/null
	off=$(mdadm --examine /dev/ram0 | awk '/Data Offset/ { print $4 * 512 }')
	[ -n "$off" ]
	[ "$(checksum /dev/ram0 "$off" $(( $(scaled 16) * MB )))" = \
	  "$(checksum /dev/ram1 "$off" $(( $(scaled 16) * MB )))" ]
}
