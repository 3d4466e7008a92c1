#!/usr/bin/env bats
# Authentication, integrity and encryption (hash, cipher, key,
# crypto_threads).  docs/security.md is the contract: with a shared key
# both sides prove it in the handshake, every frame carries a tag, a
# cipher encrypts the data, and a frame that was modified, replayed or
# reordered drops the connection before anything of it is used.

load helpers

SRV=10.99.0.1:7000
MITM=10.99.0.1:7001
E=$DST_CFS/exports/e1
R=$DST_CFS/remotes/r1
KEY=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
KEY2=ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100

setup() {
	dst_load
	netns_pair
	brd_make 64
}

teardown() {
	[ -z "${MITM_PID:-}" ] || kill "$MITM_PID" 2>/dev/null || true
	[ -z "${DUMP_PID:-}" ] || kill "$DUMP_PID" 2>/dev/null || true
	dst_teardown
}

# attach_errno ADDR ATTR=VALUE...: a remote r1 of export e1; prints OK or
# the errno its enable returned.
attach_errno() {
	local addr=$1 kv
	shift
	mkdir "$R"
	echo "$addr" > "$R/addr"
	echo e1 > "$R/export"
	for kv in "$@"; do
		echo "${kv#*=}" > "$R/${kv%%=*}"
	done
	cfs_errno "$R/enable" 1 dst-cli
}

# remote_dev: the /dev/dstN of r1, once it exists.
remote_dev() {
	DST_DEV=/dev/$(cut -d' ' -f1 "$R/device")
	wait_for 10 test -b "$DST_DEV"
}

@test "key, hash and cipher: checked when written, the key never shown" {
	mkdir "$E"
	[ "$(cat $E/key)" = none ]
	echo "$KEY" > "$E/key"
	[ "$(cat $E/key)" = set ]
	run grep -rqi 0011223344 "$E"/
	assert_failure
	[ "$(cfs_errno $E/key 0011)" = EINVAL ]		# too short
	[ "$(cfs_errno $E/key "${KEY%?}x")" = EINVAL ]	# not hex
	# Unknown to the kernel: ENOENT; known, but the wrong kind: EINVAL.
	[ "$(cfs_errno $E/hash nosuchhash)" = ENOENT ]
	[ "$(cfs_errno $E/hash 'sha256')" = EINVAL ]		# takes no key
	[ "$(cfs_errno $E/hash 'gcm(aes)')" = EINVAL ]		# an AEAD
	[ "$(cfs_errno $E/cipher nosuchcipher)" = ENOENT ]
	[ "$(cfs_errno $E/cipher 'hmac(sha256)')" = EINVAL ]	# not an AEAD
	klog | grep -q "hash 'nosuchhash': the kernel has no such algorithm"
	klog | grep -q "cipher 'hmac(sha256)' is not a synchronous AEAD"
	# An AEAD whose nonce rules refuse DST's IVs would fail every frame.
	[ "$(cfs_errno $E/cipher 'ccm(aes)')" = EINVAL ]
	klog | grep -q "cipher 'ccm(aes)' refuses DST's nonces"
	klog | grep -q "hash 'sha256' takes no key"
	# Refusals changed nothing.
	[ "$(cat $E/key)" = set ]
	[ "$(cat $E/hash)" = "" ]
	[ "$(cat $E/cipher)" = "" ]
	echo 'hmac(sha256)' > "$E/hash"
	echo 'gcm(aes)' > "$E/cipher"
	[ "$(cat $E/hash)" = 'hmac(sha256)' ]
	[ "$(cat $E/cipher)" = 'gcm(aes)' ]
	# An empty write clears.
	echo > "$E/key"
	[ "$(cat $E/key)" = none ]
	# A hash or cipher without a key cannot run.
	echo /dev/ram0 > "$E/device"
	echo "$SRV" > "$E/addr"
	[ "$(cfs_errno $E/enable 1 dst-srv)" = EINVAL ]
	klog | grep -q 'e1: hash and cipher need a key'
	echo "$KEY" > "$E/key"
	[ "$(cfs_errno $E/enable 1 dst-srv)" = OK ]
	# Fixed while enabled; crypto_threads is live.
	[ "$(cfs_errno $E/key $KEY2)" = EBUSY ]
	[ "$(cfs_errno $E/hash 'hmac(sha512)')" = EBUSY ]
	[ "$(cfs_errno $E/crypto_threads 2)" = OK ]
	[ "$(cat $E/crypto_threads)" = 2 ]
	[ "$(cfs_errno $E/crypto_threads 0)" = EINVAL ]
}

@test "a client without the right key is refused (EKEYREJECTED), even from an allowed address" {
	dst_export e1 /dev/ram0 "$SRV" key=$KEY hash='hmac(sha256)'
	# No key at all.
	[ "$(attach_errno $SRV)" = EKEYREJECTED ]
	klog | grep -q 'the client has no key and this export needs one'
	rmdir "$R"
	# A wrong key: the server cannot prove this client's key.
	[ "$(attach_errno $SRV key=$KEY2 hash='hmac(sha256)')" = EKEYREJECTED ]
	klog | grep -q 'r1: 10.99.0.1:7000 cannot prove the shared key'
	rmdir "$R"
	# The right key with another hash.
	[ "$(attach_errno $SRV key=$KEY hash='hmac(sha512)')" = EKEYREJECTED ]
	klog | grep -q "the client uses hash 'hmac(sha512)'"
	rmdir "$R"
	[ "$(grep -c . $E/clients)" = 0 ]
	# And a keyed client refuses a server without a key.
	echo 0 > "$E/enable"
	echo > "$E/key"
	echo > "$E/hash"
	cfs_write "$E/enable" 1 dst-srv
	[ "$(attach_errno $SRV key=$KEY)" = EKEYREJECTED ]
	klog | grep -q 'the client has a key and this export none'
}

@test "hmac(sha256) and gcm(aes): fio verify passes, reads match the backing device" {
	local alg
	for alg in "" "gcm(aes)"; do
		dst_export e1 /dev/ram0 "$SRV" key=$KEY hash='hmac(sha256)' cipher="$alg"
		[ "$(attach_errno $SRV key=$KEY hash='hmac(sha256)' cipher="$alg" connections=2)" = OK ]
		remote_dev
		klog | grep -q 'e1: client 10.99.0.2:[0-9]* attached, authenticated'
		[ "$(checksum "$DST_DEV" 0 $((8 << 20)))" = "$(checksum /dev/ram0 0 $((8 << 20)))" ]
		fio_verify_start "$DST_DEV" --size=$(scaled 16)M --bs=4k --bsrange=4k-256k --iodepth=16 --numjobs=1
		fio_verify_wait
		[ "$(checksum "$DST_DEV" 0 $((64 << 20)))" = "$(checksum /dev/ram0 0 $((64 << 20)))" ]
		echo 0 > "$R/enable" && rmdir "$R"
		echo 0 > "$E/enable" && export_rmdir "$E"
	done
}

# mitm_case MODE CIPHER: write a pattern through the proxy in MODE;
# checks that the backing device holds exactly the pattern where it was
# written and is unchanged everywhere else.
mitm_case() {
	local mode=$1 alg=$2 tag=32 st=$BATS_TEST_TMPDIR/mitm-$1-${2:-mac}
	local mark
	[ -z "$alg" ] || tag=16
	mkdir -p "$st"
	mark=$(log_mark)
	dst_export e1 /dev/ram0 "$SRV" key=$KEY hash='hmac(sha256)' cipher="$alg"
	nsenter --net=/run/netns/dst-srv python3 "$DST_TOP/tests/proto/dstmitm.py" 7001 "$SRV" "$tag" "$mode" "$st" 2> "$st/log" &
	MITM_PID=$!
	wait_for 10 test -e "$st/ready"
	[ "$(attach_errno $MITM key=$KEY hash='hmac(sha256)' cipher="$alg" reconnect_delay_ms=100)" = OK ]
	remote_dev
	pattern_file "$st/data" 1 "mitm-$mode"
	dd if="$st/data" of="$DST_DEV" bs=64k seek=16 oflag=direct status=none
	test -e "$st/tampered"
	log_since "$mark" | grep -q 'e1: 10.99.0.1:[0-9]*: frame fails its integrity check'
	# The client reconnected and the write went through, intact.
	stat_at_least "$R" reconnects 1
	cp "/run/dst-patterns/dst-64" "$st/want"
	dd if="$st/data" of="$st/want" bs=64k seek=16 conv=notrunc status=none
	[ "$(checksum /dev/ram0 0 $((64 << 20)))" = "$(digest < "$st/want")" ]
	[ "$(checksum "$DST_DEV" $((1 << 20)) $((1 << 20)))" = "$(digest < "$st/data")" ]
	kill "$MITM_PID"
	wait "$MITM_PID" || true
	MITM_PID=""
	echo 0 > "$R/enable" && rmdir "$R"
	echo 0 > "$E/enable" && export_rmdir "$E"
}

@test "a man in the middle flips a payload bit, a header bit, replays a frame: dropped, nothing corrupt written" {
	local mode alg
	for alg in "" "gcm(aes)"; do
		for mode in payload header replay; do
			mitm_case "$mode" "$alg"
		done
	done
}

@test "without a key the same bit flip reaches the disk (the MITM test can fail)" {
	local st=$BATS_TEST_TMPDIR/mitm-plain
	mkdir -p "$st"
	dst_export e1 /dev/ram0 "$SRV"
	nsenter --net=/run/netns/dst-srv python3 "$DST_TOP/tests/proto/dstmitm.py" 7001 "$SRV" 0 payload "$st" 2> "$st/log" &
	MITM_PID=$!
	wait_for 10 test -e "$st/ready"
	[ "$(attach_errno $MITM)" = OK ]
	remote_dev
	pattern_file "$st/data" 1 mitm-plain
	dd if="$st/data" of="$DST_DEV" bs=64k seek=16 oflag=direct status=none
	test -e "$st/tampered"
	[ "$(checksum /dev/ram0 $((1 << 20)) $((1 << 20)))" != "$(digest < "$st/data")" ]
}

@test "on the wire: a written pattern is visible without cipher and not with gcm(aes)" {
	local alg n st=$BATS_TEST_TMPDIR
	printf 'DST-SECRET-PATTERN-%.0s' $(seq 1 256) | head -c 4096 > "$st/secret"
	for alg in "" "gcm(aes)"; do
		dst_export e1 /dev/ram0 "$SRV" key=$KEY cipher="$alg"
		[ "$(attach_errno $SRV key=$KEY cipher="$alg")" = OK ]
		remote_dev
		rm -f "$st/cap.pcap"
		nsenter --net=/run/netns/dst-srv tcpdump -i veth-srv -U -s 0 -w "$st/cap.pcap" tcp port 7000 2> "$st/tcpdump.log" &
		DUMP_PID=$!
		wait_for 10 grep -q 'listening on' "$st/tcpdump.log"
		dd if="$st/secret" of="$DST_DEV" bs=4k seek=100 oflag=direct status=none
		[ "$(checksum /dev/ram0 $((100 * 4096)) 4096)" = "$(digest < "$st/secret")" ]
		# The write's frames are in the capture (tcpdump -U writes each
		# packet as it reads it) before it is stopped.
		wait_for 10 sh -c '[ "$(stat -c %s "$1")" -gt 4096 ]' sh "$st/cap.pcap"
		# SIGINT: tcpdump writes out what it has and exits.
		kill -INT "$DUMP_PID"
		wait "$DUMP_PID" || true
		DUMP_PID=""
		n=$(grep -c -a 'DST-SECRET-PATTERN' "$st/cap.pcap" || true)
		if [ -z "$alg" ]; then
			[ "$n" -gt 0 ]
		else
			[ "$n" -eq 0 ]
		fi
		echo 0 > "$R/enable" && rmdir "$R"
		echo 0 > "$E/enable" && export_rmdir "$E"
	done
}

@test "crypto_threads changed 1 -> 4 -> 2 under fio: no errors" {
	dst_export e1 /dev/ram0 "$SRV" key=$KEY cipher='gcm(aes)' crypto_threads=1
	[ "$(attach_errno $SRV key=$KEY cipher='gcm(aes)' connections=2)" = OK ]
	remote_dev
	local mib t ops=0 step
	mib=$(scaled 16)
	fio_verify_start "$DST_DEV" --size=${mib}M --bs=16k --iodepth=16 --numjobs=1
	# A fifth of fio's writes (it writes everything, then reads back).
	step=$((mib * 1024 / 16 / 5))
	for t in 4 2; do
		# Change it with fio's I/O in flight: wait for more of it.
		ops=$((ops + step))
		wait_for 60 stat_at_least "$E" write_ops "$ops"
		[ "$(cfs_errno $E/crypto_threads $t)" = OK ]
	done
	fio_verify_wait
	[ "$(cat $E/crypto_threads)" = 2 ]
	[ "$(stat_of $E errors)" = 0 ]
}
