#!/usr/bin/env bats
# Fault injection, in the debug kernel only (make check-debug): Debian's
# kernel has no fault injection, which is why these suites live outside
# tests/bats/ and make check does not run them.
#
# Allocation failures are injected with fail-nth: the Nth fault point
# (a slab allocation that may sleep, or an atomic or high-order page
# allocation) the writing task reaches fails, for N = 1, 2, ... 64,
# then in steps of N/16, until an enable succeeds without reaching N.
# (Every point one by one would be thousands of tries on some paths:
# the reserve mempools alone are hundreds of allocations in a row.)
# Every failed try must return an errno, leave the node disabled and as
# configured, and the next try must work; kmemleak, scanned by the
# guest after rmmod dst, finds whatever an error path leaked.  Work done
# in workqueues (the server's handshake, reconnections), which fail-nth
# cannot follow, fails through fail_function on the functions DST marks
# for it.  Then the backing device fails requests (fail_make_request)
# and the disk loses completions (fail_io_timeout).

load ../bats/helpers

SRV=10.99.0.1:7000
FI=/sys/kernel/debug

setup() {
	[ -w /proc/self/fail-nth ] ||
		skip "needs the debug kernel (fault injection): make check-debug"
	dst_load
	netns_pair
	brd_make 16
	# Only fail-nth injects (probability 0); sleeping slab allocations
	# too; and quietly: a stack per injected failure reads as a splat.
	local a
	for a in failslab fail_page_alloc; do
		echo 0 > "$FI/$a/probability"
		echo 0 > "$FI/$a/verbose"
	done
	echo N > "$FI/failslab/ignore-gfp-wait"
}

teardown() {
	echo 0 > "$FI/fail_function/probability" 2>/dev/null || true
	echo > "$FI/fail_function/inject" 2>/dev/null || true
	echo 0 > "$FI/fail_make_request/probability" 2>/dev/null || true
	echo 0 > "$FI/fail_io_timeout/probability" 2>/dev/null || true
	dst_teardown
}

# nth_enable DIR N NS: write 1 to DIR/enable from NS with the Nth fault
# point of the writing thread failing.  Prints "<errno or OK> <left>",
# left being what remained of N: not 0 means the Nth point was never
# reached, so every point of this path has been tried.
nth_enable() {
	in_ns "$3" python3 -c '
import errno, os, sys
fd = os.open(sys.argv[1] + "/enable", os.O_WRONLY)
nth = os.open("/proc/thread-self/fail-nth", os.O_RDWR)
os.write(nth, sys.argv[2].encode())
try:
    os.write(fd, b"1\n")
    r = "OK"
except OSError as e:
    r = errno.errorcode[e.errno]
left = os.pread(nth, 32, 0).decode().strip()
os.write(nth, b"0")
print(r, left)' "$1" "$2"
}

# every_failure DIR NS MAX: enable DIR with fault point 1, 2, ... failing
# until an enable passes all of them; each failure must leave the node
# disabled, and it is disabled again after each success.
every_failure() {
	local dir=$1 ns=$2 max=$3 n=1 out r left fails=0
	while [ "$n" -le "$max" ]; do
		out=$(nth_enable "$dir" "$n" "$ns")
		r=${out% *}
		left=${out#* }
		if [ "$r" = OK ]; then
			state_is "$dir" running
			echo 0 > "$dir/enable"
			[ "$left" != 0 ] && break
		else
			fails=$((fails + 1))
			state_is "$dir" disabled || {
				echo "fault point $n: $r but state $(cat "$dir/state")" >&2
				return 1
			}
		fi
		echo "faults: $dir: fault point $n: $r" > /dev/kmsg
		n=$((n + (n >= 64 ? n / 16 : 1)))
	done
	echo "$dir: fault points up to $n tried, $fails enables failed" >&3
	[ "$n" -le "$max" ] || { echo "more than $max fault points" >&2; return 1; }
	[ "$fails" -gt 0 ]
}

@test "an export's enable unwinds from every allocation failure, then works" {
	local d=$DST_CFS/exports/e1
	mkdir "$d"
	echo /dev/ram0 > "$d/device"
	echo "$SRV" > "$d/addr"
	acl_rule e1 all4 0.0.0.0/0 rw
	every_failure "$d" dst-srv 20000
	cfs_write "$d/enable" 1 dst-srv
	dst_attach r1 "$SRV" export=e1
	[ "$(checksum "$DST_DEV" 0 $((16 << 20)))" = "$BRD_SUM" ]
}

# r1_make ATTR=VALUE...: a remote r1 of export e1 ($SRV), configured
# with those attributes and not enabled.
r1_make() {
	local d=$DST_CFS/remotes/r1 kv
	mkdir "$d"
	echo "$SRV" > "$d/addr"
	echo e1 > "$d/export"
	for kv in "$@"; do
		echo "${kv#*=}" > "$d/${kv%%=*}"
	done
}

# attach_every_failure ATTR=VALUE...: a remote r1 of export e1 with
# those attributes, attached through every_failure, then for real; it
# must read the export's data.
attach_every_failure() {
	local d=$DST_CFS/remotes/r1
	r1_make "$@"
	every_failure "$d" dst-cli 20000
	cfs_write "$d/enable" 1 dst-cli
	DST_DEV=/dev/$(cut -d' ' -f1 "$d/device")
	wait_for 20 test -b "$DST_DEV"
	[ "$(checksum "$DST_DEV" 0 $((16 << 20)))" = "$BRD_SUM" ]
}

@test "a remote's attach unwinds from every allocation failure, then works" {
	dst_export e1 /dev/ram0 "$SRV"
	attach_every_failure
}

@test "a keyed attach unwinds from every allocation failure in the session setup" {
	local k=(key=00112233445566778899aabbccddeeff hash='hmac(sha256)' cipher='gcm(aes)')
	dst_export e1 /dev/ram0 "$SRV" "${k[@]}"
	attach_every_failure "${k[@]}"
}

@test "a backing device that fails requests fails exactly those, and nothing else" {
	dst_export e1 /dev/ram0 "$SRV"
	dst_attach r1 "$SRV" export=e1
	pattern_file "$BATS_TEST_TMPDIR/p" 1 other
	echo 100 > "$FI/fail_make_request/probability"
	echo -1 > "$FI/fail_make_request/times"
	echo 0 > "$FI/fail_make_request/verbose"
	echo 1 > /sys/block/ram0/make-it-fail
	# A write of 1 MiB at 4 MiB: refused with EIO by the backing device.
	run dd if="$BATS_TEST_TMPDIR/p" of="$DST_DEV" bs=1M seek=4 count=1 \
		oflag=direct status=none
	[ "$status" -ne 0 ]
	[[ "$output" == *"Input/output error"* ]]
	run dd if="$DST_DEV" of=/dev/null bs=4k skip=100 count=1 iflag=direct \
		status=none
	[ "$status" -ne 0 ]
	echo 0 > /sys/block/ram0/make-it-fail
	# Nothing hung, nothing changed, and the device works again.
	[ "$(checksum /dev/ram0 0 $((16 << 20)))" = "$BRD_SUM" ]
	dd if="$BATS_TEST_TMPDIR/p" of="$DST_DEV" bs=1M seek=4 count=1 \
		oflag=direct status=none
	[ "$(checksum /dev/ram0 $((4 << 20)) $((1 << 20)))" = \
	  "$(digest < "$BATS_TEST_TMPDIR/p")" ]
}

@test "a completion the disk loses (fail_io_timeout) ends in the timeout path, not a hang" {
	dst_export e1 /dev/ram0 "$SRV"
	dst_attach r1 "$SRV" export=e1 trans_scan_timeout=2000
	local blk
	blk=$(basename "$DST_DEV")
	[ -w "/sys/block/$blk/io-timeout-fail" ]
	echo 100 > "$FI/fail_io_timeout/probability"
	echo 3 > "$FI/fail_io_timeout/times"
	echo 0 > "$FI/fail_io_timeout/verbose"
	echo 1 > "/sys/block/$blk/io-timeout-fail"
	# Three completions are lost; the reads end anyway (resent or
	# failed by the timeout handler), well before the hung-task alarm.
	run timeout 100 dd if="$DST_DEV" of=/dev/null bs=4k count=8 \
		iflag=direct status=none
	[ "$status" -ne 124 ]
	echo 0 > "/sys/block/$blk/io-timeout-fail"
	[ "$(checksum "$DST_DEV" 0 $((16 << 20)))" = "$BRD_SUM" ]
}

# fail_fn FUNC TIMES [SPACE]: DST's FUNC (one marked ALLOW_ERROR_INJECTION)
# returns -ENOMEM without running, TIMES times, once SPACE - 1 calls
# have passed (fail_function: a call passes while "space" exceeds 1).
# These paths run in workqueues, where fail-nth cannot reach.
fail_fn() {
	# A function already listed cannot be added again (EBUSY): start
	# from an empty list.
	echo > "$FI/fail_function/inject"
	echo "$1" > "$FI/fail_function/inject"
	printf %#x -12 > "$FI/fail_function/$1/retval"
	echo 0 > "$FI/fail_function/verbose"
	echo "${3:-0}" > "$FI/fail_function/space"
	echo "$2" > "$FI/fail_function/times"
	echo 100 > "$FI/fail_function/probability"
}

fail_fn_off() {
	echo 0 > "$FI/fail_function/probability"
	echo > "$FI/fail_function/inject"
}

# stat_is_zero KEY: the export's stats KEY is 0.
stat_is_zero() {
	[ "$(stat_of "$DST_CFS/exports/e1" "$1")" = 0 ]
}

# r1_try [ATTR=VALUE...]: a fresh remote r1 of e1 ($SRV) tries to
# attach; R1 is then OK or the errno.  A failed r1 must be disabled,
# and is removed again.
r1_try() {
	local d=$DST_CFS/remotes/r1
	r1_make "$@"
	R1=$(cfs_errno "$d/enable" 1 dst-cli)
	if [ "$R1" != OK ]; then
		state_is "$d" disabled
		rmdir "$d"
	fi
}

@test "a server handshake that fails (fail_function) drops that client only; the next one attaches" {
	dst_export e1 /dev/ram0 "$SRV"
	fail_fn dst_sconn_handshake 2
	r1_try
	[ "$R1" != OK ]
	r1_try
	[ "$R1" != OK ]
	fail_fn_off
	r1_try
	[ "$R1" = OK ]
	DST_DEV=/dev/$(cut -d' ' -f1 "$DST_CFS/remotes/r1/device")
	wait_for 20 test -b "$DST_DEV"
	[ "$(checksum "$DST_DEV" 0 $((16 << 20)))" = "$BRD_SUM" ]
	wait_for 20 stat_is_zero handshakes
}

@test "keyed session setup that fails on either side unwinds; the next attach works" {
	local k=(key=00112233445566778899aabbccddeeff hash='hmac(sha256)' cipher='gcm(aes)')
	dst_export e1 /dev/ram0 "$SRV" "${k[@]}"
	# The client sets its session up first, after the server's proof ...
	fail_fn dst_crypto_session 1
	r1_try "${k[@]}"
	[ "$R1" != OK ]
	klog | grep -q 'r1: cannot set up hmac(sha256) + gcm(aes): -12'
	# ... and the server after the client's: one call passes, then.
	fail_fn dst_crypto_session 1 2
	r1_try "${k[@]}"
	[ "$R1" != OK ]
	klog | grep -q 'e1: 10.99.0.2:[0-9]*: cannot set up the session keys: -12'
	fail_fn_off
	r1_try "${k[@]}"
	[ "$R1" = OK ]
	DST_DEV=/dev/$(cut -d' ' -f1 "$DST_CFS/remotes/r1/device")
	wait_for 20 test -b "$DST_DEV"
	[ "$(checksum "$DST_DEV" 0 $((16 << 20)))" = "$BRD_SUM" ]
}

@test "reconnection goes on through failed handshakes (keyed); held writes land" {
	local k=(key=00112233445566778899aabbccddeeff hash='hmac(sha256)' cipher='gcm(aes)')
	dst_export e1 /dev/ram0 "$SRV" "${k[@]}"
	dst_attach r1 "$SRV" export=e1 reconnect_delay_ms=100 "${k[@]}"
	local r=$DST_CFS/remotes/r1
	pattern_file "$BATS_TEST_TMPDIR/p" 2 held
	fail_fn dst_rconn_handshake 3
	in_ns dst-cli ss -tnK 'dport = :7000' > /dev/null
	wait_for 30 state_is "$r" reconnecting
	# Issued while there is no connection: held, then sent.
	dd if="$BATS_TEST_TMPDIR/p" of="$DST_DEV" bs=1M seek=2 oflag=direct \
		status=none &
	local dd=$!
	wait_for 60 state_is "$r" running
	wait "$dd"
	[ "$(cat "$FI/fail_function/times")" = 0 ]
	stat_at_least "$r" reconnects 1
	[ "$(stat_of "$r" errors)" = 0 ]
	[ "$(checksum /dev/ram0 $((2 << 20)) $((2 << 20)))" = \
	  "$(digest < "$BATS_TEST_TMPDIR/p")" ]
}
