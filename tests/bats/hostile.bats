#!/usr/bin/env bats
# Hostile peers and a hostile administrator: a seeded, bounded fuzzer
# (tests/proto/dstfuzz.py) attacks two exports (one read-write, one
# read-only) with malformed handshakes, garbage, well-framed hostile
# requests, resets in the middle of frames and readers that never read,
# then throws random values at every configfs attribute and random
# connector messages, and storms one set of nodes through both doors at
# once.  Each test then proves the kernel unharmed: the read-only
# backing device is unchanged, a real client attaches and moves data,
# every node is disabled and removed, and the module unloads.  (A
# splat fails the guest: the runner watches the kernel log.)
#
# Every test prints its seed (# seed=N); DST_FUZZ_SEED=N replays it
# (docs/testing.md).  DST_FUZZ_N and DST_FUZZ_TIME bound each fuzzer
# run (connections or operations, seconds); DST_DEBUG=1 (the debug
# kernel) makes dstfuzz.py do a quarter of the operations.

load helpers

FUZZ=$DST_TOP/tests/proto/dstfuzz.py
CN=$DST_TOP/build/sbin/dst-cn
RAW=$DST_TOP/tests/cn/cnraw.py
MB=16
E=$DST_CFS/exports/e1
RO=$DST_CFS/exports/ro
N=${DST_FUZZ_N:-300}
T=${DST_FUZZ_TIME:-60}

setup() {
	SEED=${DST_FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
	echo "# seed=$SEED ($BATS_TEST_DESCRIPTION)" >&3
	dst_load
}

teardown() {
	dst_teardown
}

# fuzz ARGS...: run dstfuzz.py with this test's seed and bounds; its
# summary goes to the TAP stream, all of it to the test's output.
fuzz() {
	local out=$BATS_TEST_TMPDIR/fuzz.$$.$RANDOM rc=0
	${FUZZ_NS:+in_ns "$FUZZ_NS"} python3 "$FUZZ" -s "$SEED" -n "$N" -t "$T" \
		"$@" > "$out" 2>&1 || rc=$?
	sed -n 's/^\(seed=.*\|took.*\|results:.*\|unusual:.*\)/# \1/p' "$out" >&3
	cat "$out"
	return "$rc"
}

# Two exports in dst-srv: e1 (read-write, ram1) and ro (read-only, ram0,
# holding brd_make's pattern).
two_exports() {
	netns_pair
	brd_make "$MB"
	dst_export e1 /dev/ram1 10.99.0.1:7000
	dst_export ro /dev/ram0 10.99.0.1:7001 read_only=1
}

# fuzz_exports CASES: the same cases against both exports at once, from
# dst-cli; the read-only export's reads are checked against its pattern.
fuzz_exports() {
	local pid rc=0 FUZZ_NS=dst-cli
	fuzz net 10.99.0.1 7000 e1 "$1" > "$BATS_TEST_TMPDIR/rw.out" &
	pid=$!
	fuzz net --ro --expect "/run/dst-patterns/dst-$MB" \
		10.99.0.1 7001 ro "$1" || rc=$?
	wait "$pid" || rc=$?
	cat "$BATS_TEST_TMPDIR/rw.out"
	return "$rc"
}

no_clients() {
	[ -z "$(cat "$1/clients")" ]
}

# detach NODE_DIR: disable a node and remove it.
detach() {
	echo 0 > "$1/enable"
	export_rmdir "$1"
}

# unharmed: what every network case ends with.
unharmed() {
	# The exports let go of every hostile connection and still run.
	wait_for 40 no_clients "$E"
	wait_for 40 no_clients "$RO"
	state_is "$E" running
	state_is "$RO" running
	# Nothing reached the read-only export's device.
	[ "$(checksum /dev/ram0 0 $((MB << 20)))" = "$BRD_SUM" ]
	# A real client reads it whole.
	dst_attach r2 10.99.0.1:7001 export=ro
	[ "$(checksum "$DST_DEV" 0 $((MB << 20)))" = "$BRD_SUM" ]
	# And the read-write export serves what its device holds, and takes
	# writes that read back.
	dst_attach r1 10.99.0.1:7000 export=e1
	[ "$(checksum "$DST_DEV" 0 $((MB << 20)))" = \
	  "$(checksum /dev/ram1 0 $((MB << 20)))" ]
	fio_verify_start "$DST_DEV" --bsrange=4k-64k --size=4M --iodepth=8
	fio_verify_wait
	[ "$(checksum "$DST_DEV" 0 $((MB << 20)))" = \
	  "$(checksum /dev/ram1 0 $((MB << 20)))" ]
	# Every node comes apart, and the module unloads.
	detach "$DST_CFS/remotes/r1"
	detach "$DST_CFS/remotes/r2"
	detach "$E"
	detach "$RO"
	no_nodes
	dst_unload
}

@test "mutated and truncated HELLOs and random garbage: refused, exports unharmed" {
	two_exports
	run fuzz_exports hello,garbage
	assert_success
	unharmed
}

@test "hostile well-framed requests (out of range, u64 wrap, unaligned, unknown, duplicate ids, no data): never served, exports unharmed" {
	two_exports
	run fuzz_exports requests
	assert_success
	refute_output --partial VIOLATION
	unharmed
}

@test "partial frames then RST, and a WRITE cut mid-data behind 8 READs then RST on fenced slots: exports unharmed" {
	two_exports
	# writerst is the regression test for a use-after-free: a WRITE
	# whose data never comes, other requests of its connection in
	# flight, the connection reset (or fenced by the next one).
	run fuzz_exports reset,writerst,writerst
	assert_success
	[ "$(stat_of "$E" fenced)" -ge 1 ]
	unharmed
}

@test "slow readers: many READs, replies never read, then close: exports let go, unharmed" {
	two_exports
	N=$((N / 6)) run fuzz_exports slow
	assert_success
	unharmed
}

@test "random values into every configfs attribute, disabled and enabled: OK or an errno, nodes still work" {
	netns_pair
	brd_make "$MB"
	mkdir "$E" "$DST_CFS/remotes/r1"
	echo /dev/ram1 > "$E/device"
	echo 10.99.0.1:7000 > "$E/addr"
	acl_rule e1 all 0.0.0.0/0 rw
	echo 10.99.0.1:7000 > "$DST_CFS/remotes/r1/addr"
	echo e1 > "$DST_CFS/remotes/r1/export"
	# Disabled nodes: every attribute but enable, then put back.
	run fuzz cfs --restore "$E" "$DST_CFS/remotes/r1"
	assert_success
	refute_output --partial VIOLATION
	# Enabled nodes: enable too (from this namespace, which has neither
	# the export's address nor a route to it).
	cfs_write "$E/enable" 1 dst-srv
	cfs_write "$DST_CFS/remotes/r1/enable" 1 dst-cli
	run fuzz cfs --enable --restore "$E" "$DST_CFS/remotes/r1"
	assert_success
	refute_output --partial VIOLATION
	# Node names: anything, including what no node may be called.
	for n in "" . .. .a a/b "a b" "$(printf 'n%.0s' $(seq 32))" \
		"$(printf '\xc3\xbc')" "$(printf 'a\tb')" -a _ 0; do
		if mkdir "$DST_CFS/exports/$n" 2>/dev/null; then
			rmdir "$DST_CFS/exports/$n"
		fi
	done
	# The nodes work as configured before the fuzz.
	state_is "$E" disabled
	cfs_write "$E/enable" 1 dst-srv
	cfs_write "$DST_CFS/remotes/r1/enable" 1 dst-cli
	dev=/dev/$(cut -d' ' -f1 "$DST_CFS/remotes/r1/device")
	wait_for 10 test -b "$dev"
	pattern_file "$BATS_TEST_TMPDIR/p" 4 cfs
	dd if="$BATS_TEST_TMPDIR/p" of="$dev" bs=1M oflag=direct status=none
	[ "$(checksum /dev/ram1 0 $((4 << 20)))" = \
	  "$(digest < "$BATS_TEST_TMPDIR/p")" ]
	[ "$(checksum "$dev" 0 $((4 << 20)))" = \
	  "$(digest < "$BATS_TEST_TMPDIR/p")" ]
	detach "$DST_CFS/remotes/r1"
	detach "$E"
	no_nodes
	dst_unload
}

# any_nodes_removed: disable and remove every node, failing if one
# cannot be removed.
all_nodes_removed() {
	local d
	for d in "$DST_CFS"/remotes/* "$DST_CFS"/exports/*; do
		[ -d "$d" ] || continue
		echo 0 > "$d/enable"
		export_rmdir "$d"
	done
	no_nodes
}

# cn_cycle: an export and an attach through the connector alone move
# data (the kernel's connector lives in the initial namespace: loopback).
cn_cycle() {
	"$CN" -t 30 add-export st /dev/ram1 127.0.0.1:7300
	"$CN" -t 30 security st 127.0.0.0/8 rw
	"$CN" -t 30 start st
	"$CN" -t 30 add-remote cr 127.0.0.1:7300 export=st
	"$CN" -t 30 start cr
	local dev
	dev=/dev/$(cut -d' ' -f1 "$DST_CFS/remotes/cr/device")
	wait_for 10 test -b "$dev"
	pattern_file "$BATS_TEST_TMPDIR/p" 4 cn
	dd if="$BATS_TEST_TMPDIR/p" of="$dev" bs=1M oflag=direct status=none
	[ "$(checksum /dev/ram1 0 $((4 << 20)))" = \
	  "$(digest < "$BATS_TEST_TMPDIR/p")" ]
	"$CN" -t 30 del cr
	"$CN" -t 30 del st
}

@test "random connector messages: each acknowledged with 0 or an errno, the module still serves" {
	brd_make "$MB"
	"$CN" -t 30 add-export st /dev/ram1 127.0.0.1:7300
	"$CN" -t 30 security st 127.0.0.0/8 rw
	"$CN" -t 30 start st
	run fuzz cn st cr
	assert_success
	refute_output --partial VIOLATION
	all_nodes_removed
	cn_cycle
	no_nodes
	dst_unload
}

# storm KIND DEADLINE: one background worker, bounded by count and time,
# doing one kind of node churn; every step may fail (a race lost).
storm() {
	local kind=$1 deadline=$2 i d
	set +e		# every step may lose a race
	for i in $(seq 200); do
		[ "$(date +%s)" -lt "$deadline" ] || break
		case $kind in
		cfs-export)
			d=$DST_CFS/exports/s0
			mkdir "$d" && {
				echo /dev/ram0 > "$d/device"
				echo 127.0.0.1:7400 > "$d/addr"
				mkdir "$d/acl/a" && echo 127.0.0.0/8 > "$d/acl/a/addr"
				echo 1 > "$d/enable"
				echo 0 > "$d/enable"
				rmdir "$d/acl/a"
				rmdir "$d"
			} ;;
		cn-export)
			"$CN" -t 30 add-export s0 /dev/ram0 127.0.0.1:7401 &&
				"$CN" -t 30 security s0 127.0.0.1 rw
			"$CN" -t 30 start s0
			"$CN" -t 30 del s0 ;;
		raw)
			python3 "$RAW" valid-start s0
			python3 "$RAW" valid-del t0
			python3 "$RAW" valid-start t0
			python3 "$RAW" valid-del s0
			echo 0 > "$DST_CFS/exports/s0/enable"
			echo 0 > "$DST_CFS/remotes/t0/enable" ;;
		cfs-remote)
			d=$DST_CFS/remotes/t0
			mkdir "$d" && {
				echo 127.0.0.1:7300 > "$d/addr"
				echo st > "$d/export"
				echo 2 > "$d/fail_timeout_s"
				echo 1 > "$d/enable" && dd of=/dev/null bs=64k \
					count=4 iflag=direct status=none \
					if="/dev/$(cut -d' ' -f1 "$d/device")"
				echo 0 > "$d/enable"
				rmdir "$d"
			} ;;
		cn-remote)
			"$CN" -t 30 add-remote t0 127.0.0.1:7300 export=st
			"$CN" -t 30 start t0
			"$CN" -t 30 del t0 ;;
		esac
	done > /dev/null 2>&1
	echo "$kind: $i rounds" > "$BATS_TEST_TMPDIR/storm.$kind"
}

none_alive() {
	local p
	for p in "$@"; do
		kill -0 "$p" 2>/dev/null && return 1
	done
	return 0
}

@test "concurrent storms of mkdir/enable/disable/rmdir through configfs and the connector: every node removable, rmmod works" {
	brd_make "$MB"
	# a stable export the remotes attach to, in the initial namespace
	mkdir "$DST_CFS/exports/st"
	echo /dev/ram1 > "$DST_CFS/exports/st/device"
	echo 127.0.0.1:7300 > "$DST_CFS/exports/st/addr"
	acl_rule st lo 127.0.0.0/8 rw
	echo 1 > "$DST_CFS/exports/st/enable"
	local secs=$((T / 4)) pids=() k
	[ "${DST_DEBUG:-0}" = 1 ] && secs=$((T / 2))
	deadline=$(( $(date +%s) + secs ))
	for k in cfs-export cn-export raw cfs-remote cn-remote raw; do
		storm "$k" "$deadline" &
		pids+=($!)
	done
	# Each step is bounded (dst-cn -t 30, connect 10 s, detach 5 s):
	# workers that outlive this are stuck in the kernel.
	wait_for $((secs + 90)) none_alive "${pids[@]}"
	wait
	cat "$BATS_TEST_TMPDIR"/storm.* | sed 's/^/# /' >&3
	all_nodes_removed
	cn_cycle
	no_nodes
	dst_unload
}
