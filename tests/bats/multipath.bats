#!/usr/bin/env bats
# Multipath (docs/configfs.md, "Multipath"): a remote names two
# addresses of one export, on two networks between the namespaces.  I/O
# goes on, with no error, while one link goes down, comes back, and then
# the other goes down; a path that comes back carries I/O again; a path
# that reaches another export is refused; the export's identity is
# stable and settable.

load helpers

E=$DST_CFS/exports/e1
R=$DST_CFS/remotes/r1
PATHS=10.99.0.1:7000,10.98.0.1:7000

setup() {
	dst_load
	netns_pair
	# The second network: 10.98.0.0/24.
	ip link add veth2-srv netns dst-srv type veth peer name veth2-cli \
		netns dst-cli
	ip -n dst-srv addr add 10.98.0.1/24 dev veth2-srv
	ip -n dst-cli addr add 10.98.0.2/24 dev veth2-cli
	ip -n dst-srv link set veth2-srv up
	ip -n dst-cli link set veth2-cli up
	wait_for 10 ip netns exec dst-cli ping -c1 -W1 10.98.0.1 > /dev/null
	brd_make 64
}

teardown() {
	dst_teardown
}

same_data() {
	[ "$(checksum "$DST_DEV" 0 $((64 << 20)))" = \
	  "$(checksum /dev/ram0 0 $((64 << 20)))" ]
}

# verified_clean: fio's verify passed, the remote counted no error, and
# DST shows what the backing device holds.
verified_clean() {
	fio_verify_wait
	stat_is errors 0
	same_data
}

# stat_is KEY VALUE: the remote's stats say so.
stat_is() {
	[ "$(stat_of "$R" "$1")" = "$2" ]
}

# failover LINK OTHER: take the client's side of LINK down, wait until
# both connections live on path OTHER, and print how long that took.
failover() {
	local t0 t1
	t0=$(date +%s%N)
	ip -n dst-cli link set "$1" down
	wait_for 60 stat_is "path$2_connections" 2
	t1=$(date +%s%N)
	echo "# $1 down: both connections on path $2 after $(( (t1 - t0) / 1000000 )) ms" >&3
	wait_for 10 state_is "$R" running
}

@test "two paths under fio verify: one link down, back, the other down: 0 errors; failover times printed" {
	dst_export e1 /dev/ram0 0.0.0.0:7000
	dst_attach r1 "$PATHS" export=e1 connections=2 keepalive_ms=1000 \
		reconnect_delay_ms=200
	[ "$(cat "$R/addr")" = "$PATHS" ]
	stat_is path0 10.99.0.1:7000
	stat_is path0_connections 1
	stat_is path1_connections 1
	fio_verify_start "$DST_DEV" --size=$(scaled 48)M --bsrange=4k-64k \
		--iodepth=16 --rate=2m
	wait_for 30 stat_at_least "$R" write_ops 20

	failover veth-cli 1
	# Its probe (a TCP connect every 2 s) finds it still down.
	wait_for 20 stat_is path0_state down
	[ "$(stat_of "$R" path0_failovers)" -ge 1 ]
	# Back: the connection that belongs there returns to it.
	ip -n dst-cli link set veth-cli up
	wait_for 60 stat_is path0_connections 1
	stat_is path1_connections 1

	failover veth2-cli 0
	ip -n dst-cli link set veth2-cli up
	wait_for 60 stat_is path1_connections 1

	verified_clean
}

@test "a path that reaches another export (same name and geometry, another identity) fails the enable with ESTALE" {
	dst_export e1 /dev/ram0 10.99.0.1:7000
	uuid=$(cat "$E/uuid")
	# What the kernel client would be welcomed with, for the impostor.
	geo=$(in_ns dst-cli python3 - "$DST_TOP/tests/proto" <<-'PY'
	import sys
	sys.path.insert(0, sys.argv[1])
	import dstwire as w
	g = w.Client("10.99.0.1", 7000, "e1").geometry
	print(",".join(str(g[k]) for k in ("features", "size", "lbs", "pbs",
	                                   "max_io", "max_discard", "max_write_zeroes")))
	PY
	)
	other=0123456789abcdef0123456789abcdef
	hostile_server impostor --addr 10.98.0.1 --geometry "$geo" --uuid "$other"
	mkdir "$R"
	echo "$PATHS" > "$R/addr"
	echo e1 > "$R/export"
	echo 2 > "$R/connections"
	[ "$(cfs_errno "$R/enable" 1 dst-cli)" = ESTALE ]
	klog | grep -q 'r1: connection 1 to 10.98.0.1:7000 found a different export'
	state_is "$R" disabled
	[ -z "$(cat "$R/device")" ]

	# The same impostor with the export's identity passes: it is the
	# identity that was refused, nothing else.
	kill "$DST_SERVER_PID"
	wait "$DST_SERVER_PID" 2>/dev/null || true
	rm "$SLOG"
	hostile_server impostor --addr 10.98.0.1 --geometry "$geo" \
		--uuid "$(echo "$uuid" | tr -d -)"
	[ "$(cfs_errno "$R/enable" 1 dst-cli)" = OK ]
	echo 0 > "$R/enable"
}

@test "addr lists: malformed, duplicate, too many, on an export: EINVAL, nothing changed; scopes read back; too few connections: EINVAL" {
	mkdir "$R"
	echo 10.99.0.1:7000 > "$R/addr"
	for bad in "10.99.0.1:7000,," "10.99.0.1:7000,10.99.0.1:7000" \
		   "10.99.0.1:7000,[fd99::1]" "1.1.1.1:1,1.1.1.2:1,1.1.1.3:1,1.1.1.4:1,1.1.1.5:1" \
		   "10.99.0.1:7000;10.98.0.1:7000"; do
		[ "$(cfs_errno "$R/addr" "$bad")" = EINVAL ]
		[ "$(cat "$R/addr")" = 10.99.0.1:7000 ]
	done
	# A link-local address keeps its interface, and reads back as it
	# can be written again (dstctl save and restore rely on it).
	lo=$(cat /sys/class/net/lo/ifindex)
	echo "[fe80::1%lo]:7000" > "$R/addr"
	[ "$(cat "$R/addr")" = "[fe80::1%$lo]:7000" ]
	v=$(cat "$R/addr")
	echo "$v" > "$R/addr"
	[ "$(cat "$R/addr")" = "[fe80::1%$lo]:7000" ]
	[ "$(cfs_errno "$R/addr" "[fe80::1%$lo]:7000,[fe80::1%lo]:7000")" = EINVAL ]
	echo "10.99.0.1:7000,[fd99::1]:7000" > "$R/addr"
	[ "$(cat "$R/addr")" = "10.99.0.1:7000,[fd99::1]:7000" ]
	[ "$(cfs_errno "$R/enable" 1 dst-cli)" = EINVAL ]
	klog | grep -q 'r1: 2 addresses need at least as many connections, not 1'
	mkdir "$E"
	[ "$(cfs_errno "$E/addr" "0.0.0.0:7000,0.0.0.0:7001")" = EINVAL ]
	[ -z "$(cat "$E/addr")" ]
}

@test "an export's uuid: derived and stable across disable and enable, settable, checked, fixed while enabled" {
	dst_export e1 /dev/ram0 0.0.0.0:7000
	uuid=$(cat "$E/uuid")
	[[ "$uuid" =~ ^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]]
	[ "$(cfs_errno "$E/uuid" 01234567-89ab-cdef-0123-456789abcdef)" = EBUSY ]
	cfs_write "$E/enable" 0 dst-srv
	[ -z "$(cat "$E/uuid")" ]
	cfs_write "$E/enable" 1 dst-srv
	[ "$(cat "$E/uuid")" = "$uuid" ]
	cfs_write "$E/enable" 0 dst-srv
	[ "$(cfs_errno "$E/uuid" not-a-uuid)" = EINVAL ]
	echo 01234567-89ab-cdef-0123-456789abcdef > "$E/uuid"
	cfs_write "$E/enable" 1 dst-srv
	[ "$(cat "$E/uuid")" = 01234567-89ab-cdef-0123-456789abcdef ]
	# A client attached over both networks sees one export.
	dst_attach r1 "$PATHS" export=e1 connections=2
	same_data
}

@test "a server restart: every connection comes back on its own path, I/O without an error" {
	dst_export e1 /dev/ram0 0.0.0.0:7000
	dst_attach r1 "$PATHS" export=e1 connections=2 reconnect_delay_ms=200
	fio_verify_start "$DST_DEV" --size=$(scaled 16)M --bsrange=4k-64k \
		--iodepth=8 --rate=2m
	wait_for 30 stat_at_least "$R" write_ops 20
	cfs_write "$E/enable" 0 dst-srv
	wait_for 20 state_is "$R" reconnecting
	cfs_write "$E/enable" 1 dst-srv
	wait_for 60 state_is "$R" running
	# Home at once, or within a probe if a slot caught the export's
	# first moments on the other path.
	wait_for 20 stat_is path0_connections 1
	stat_is path1_connections 1
	verified_clean
}

@test "a remote's uuid pins the export: another identity is ESTALE, the right one attaches" {
	dst_export e1 /dev/ram0 0.0.0.0:7000
	uuid=$(cat "$E/uuid")
	mkdir "$R"
	echo 10.99.0.1:7000 > "$R/addr"
	echo e1 > "$R/export"
	echo 01234567-89ab-8def-8123-456789abcdef > "$R/uuid"
	[ "$(cfs_errno "$R/enable" 1 dst-cli)" = ESTALE ]
	klog | grep -q "r1: 10.99.0.1:7000 is export $uuid, not 01234567-89ab-8def-8123-456789abcdef"
	[ "$(cfs_errno "$R/uuid" bad)" = EINVAL ]
	echo "$uuid" > "$R/uuid"
	[ "$(cfs_errno "$R/enable" 1 dst-cli)" = OK ]
	[ "$(cfs_errno "$R/uuid" "")" = EBUSY ]
	[ "$(cat "$R/uuid")" = "$uuid" ]
}
