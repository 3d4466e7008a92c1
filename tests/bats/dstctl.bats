#!/usr/bin/env bats
# dstctl (configfs-scripts/dstctl, dstctl(8)): the shell door.  Every
# command either does all it says or leaves nothing behind; save and
# restore round-trip the whole configuration.

load helpers

DSTCTL=$DST_TOP/configfs-scripts/dstctl

setup() {
	dst_load
	brd_make 64
}

teardown() {
	# What a test that failed half-way left on a DST disk goes first,
	# or the module cannot be unloaded.
	[ -z "${LOOP:-}" ] || losetup -d "$LOOP" 2>/dev/null || true
	if [ -n "${MNT:-}" ] && mountpoint -q "$MNT"; then
		umount "$MNT" || true
	fi
	dst_teardown
}

# cfg_dump: every configuration attribute and rule of every node, to
# compare two configurations.
cfg_dump() {
	local d f
	for d in "$DST_CFS"/exports/* "$DST_CFS"/remotes/* "$DST_CFS"/exports/*/acl/*; do
		[ -d "$d" ] || continue
		for f in "$d"/*; do
			[ -f "$f" ] || continue
			case ${f##*/} in stats | clients | state | device) continue ;; esac
			echo "${d#"$DST_CFS"/} ${f##*/}=$(cat "$f")"
		done
	done
}

@test "export, attach, I/O and detach with dstctl alone" {
	netns_pair
	run in_ns dst-srv "$DSTCTL" export e1 /dev/ram0 10.99.0.1:7000 \
		--allow 10.99.0.0/24 --allow fd99::/64=ro
	assert_success
	assert_output 'e1: exporting /dev/ram0 on 10.99.0.1:7000'
	[ "$(cat "$DST_CFS/exports/e1/state")" = running ]
	run "$DSTCTL" acl list e1
	assert_output "allow0 10.99.0.0/24 rw
allow1 fd99::/64 ro"

	run in_ns dst-cli "$DSTCTL" attach r1 10.99.0.1:7000 --export e1 \
		--connections 2 --set keepalive_ms=2000
	assert_success
	assert_output --regexp '^r1: /dev/dst[0-9]+$'
	dev=${output#r1: }
	wait_for 10 test -b "$dev"
	[ "$(cat "$DST_CFS/remotes/r1/connections")" = 2 ]
	[ "$(cat "$DST_CFS/remotes/r1/keepalive_ms")" = 2000 ]
	[ "$(checksum "$dev" 0 $((64 << 20)))" = "$BRD_SUM" ]
	fio_verify_start "$dev" --bs=4k --size=$(scaled 16)M --iodepth=8
	fio_verify_wait

	run "$DSTCTL" list
	assert_success
	assert_line --regexp '^e1 +export +running +10.99.0.1:7000 +/dev/ram0$'
	assert_line --regexp "^r1 +remote +running +10.99.0.1:7000 +${dev#/dev/}\$"
	run "$DSTCTL" status r1
	assert_success
	assert_line 'connections: 2'
	assert_line --partial 'read_ops'

	"$DSTCTL" detach r1 e1
	[ ! -b "$dev" ]
	no_nodes
}

@test "save, tear down, restore: the same nodes, names and data" {
	local conf=$BATS_TEST_TMPDIR/dst.conf
	"$DSTCTL" export e1 /dev/ram0 127.0.0.1:7000 --allow 127.0.0.0/8 \
		--allow 127.0.0.9=ro
	"$DSTCTL" export e2 /dev/ram1 127.0.0.1:7001 --allow 0.0.0.0/0 \
		--read-only --size 1048576 --no-enable
	"$DSTCTL" acl add e2 ::/0 ro --rule all6
	"$DSTCTL" attach r1 127.0.0.1:7000 --export e1 --connections 2 \
		--fail-timeout -1 --set trans_max_retries=7
	dev=/dev/$(cut -d' ' -f1 "$DST_CFS/remotes/r1/device")
	wait_for 10 test -b "$dev"
	pattern_file "$BATS_TEST_TMPDIR/p" 4 restore
	dd if="$BATS_TEST_TMPDIR/p" of="$dev" bs=1M oflag=direct status=none
	want=$(checksum "$dev" 0 $((4 << 20)))
	cfg_dump > "$BATS_TEST_TMPDIR/before"

	run "$DSTCTL" save "$conf"
	assert_success
	assert_output "saved 7 entries to $conf"
	grep -qx 'acl e2 all6 ::/0 ro' "$conf"
	grep -q '^remote r1 addr=127.0.0.1:7000 export=e1 .*connections=2 .*fail_timeout_s=-1 .*enable=1$' "$conf"
	grep -q '^export e2 device=/dev/ram1 .*size=1048576 read_only=1 .*enable=0$' "$conf"

	"$DSTCTL" detach --all
	no_nodes
	run "$DSTCTL" restore "$conf"
	assert_success
	assert_output "restored 7 directories from $conf"
	[ "$(cat "$DST_CFS/remotes/r1/device" | cut -d' ' -f1)" = "${dev#/dev/}" ]
	wait_for 10 test -b "$dev"
	[ "$(checksum "$dev" 0 $((4 << 20)))" = "$want" ]
	cfg_dump > "$BATS_TEST_TMPDIR/after"
	diff -u "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"

	# restoring over what exists refuses before making anything
	run "$DSTCTL" restore "$conf"
	assert_failure 1
	assert_output --partial "node 'e1' already exists"
	cfg_dump > "$BATS_TEST_TMPDIR/again"
	diff -u "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/again"
}

@test "attach with several addresses: a connection each, every path used; save and restore keep the list, the uuid and the data" {
	local conf=$BATS_TEST_TMPDIR/dst.conf r=$DST_CFS/remotes/r1
	"$DSTCTL" export e1 /dev/ram0 0.0.0.0:7000 --allow 127.0.0.0/8
	uuid=$(cat "$DST_CFS/exports/e1/uuid")
	# Two addresses of the same export (both loopback): two paths.
	run "$DSTCTL" attach r1 127.0.0.1:7000,127.0.0.2:7000 --export e1 \
		--set "uuid=$uuid"
	assert_success
	[ "$(cat "$r/connections")" = 2 ]
	[ "$(cat "$r/addr")" = 127.0.0.1:7000,127.0.0.2:7000 ]
	wait_for 20 state_is "$r" running
	[ "$(stat_of "$r" path0_connections)" = 1 ]
	[ "$(stat_of "$r" path1_connections)" = 1 ]
	dev=/dev/$(cut -d' ' -f1 "$r/device")
	wait_for 10 test -b "$dev"
	pattern_file "$BATS_TEST_TMPDIR/p" 4 paths
	dd if="$BATS_TEST_TMPDIR/p" of="$dev" bs=1M oflag=direct status=none
	cfg_dump > "$BATS_TEST_TMPDIR/before"

	"$DSTCTL" save "$conf"
	grep -q "^remote r1 addr=127.0.0.1:7000,127.0.0.2:7000 export=e1 .*connections=2 .*uuid=$uuid enable=1\$" "$conf"
	"$DSTCTL" detach --all
	no_nodes
	"$DSTCTL" restore "$conf"
	cfg_dump > "$BATS_TEST_TMPDIR/after"
	diff -u "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	wait_for 20 state_is "$r" running
	[ "$(stat_of "$r" path0_connections)" = 1 ]
	[ "$(stat_of "$r" path1_connections)" = 1 ]
	dev=/dev/$(cut -d' ' -f1 "$r/device")
	wait_for 10 test -b "$dev"
	[ "$(checksum "$dev" 0 $((4 << 20)))" = "$(digest < "$BATS_TEST_TMPDIR/p")" ]

	# A malformed list: the reason, and nothing made.
	run "$DSTCTL" attach r2 127.0.0.1:7000,127.0.0.2 --export e1
	assert_failure
	assert_output --partial "127.0.0.2"
	[ ! -e "$DST_CFS/remotes/r2" ]
	# Fewer connections than addresses: bad usage.
	run "$DSTCTL" attach r2 127.0.0.1:7000,127.0.0.2:7000 --export e1 \
		--connections 1
	assert_failure 2
	assert_output --partial "1 connections for 2 addresses"
	[ ! -e "$DST_CFS/remotes/r2" ]
}

@test "keyed export and attach through dstctl; save refers to the key, never holds it" {
	local keys=$BATS_TEST_TMPDIR/keys conf=$BATS_TEST_TMPDIR/dst.conf
	local hex=00112233445566778899aabbccddeeff0123456789abcdeffedcba9876543210
	mkdir -m 700 "$keys"
	echo "$hex" > "$keys/e1.key"
	echo "$hex" > "$keys/r1.key"
	"$DSTCTL" export e1 /dev/ram0 127.0.0.1:7000 --allow 127.0.0.0/8 \
		--hash 'hmac(sha256)' --cipher 'gcm(aes)' --key-file "$keys/e1.key"
	"$DSTCTL" crypto e1 --threads 2
	[ "$(cat "$DST_CFS/exports/e1/crypto_threads")" = 2 ]
	run "$DSTCTL" attach r1 127.0.0.1:7000 --export e1 --hash 'hmac(sha256)' \
		--cipher 'gcm(aes)' --key-file "$keys/r1.key"
	assert_success
	dev=${output#r1: }
	wait_for 10 test -b "$dev"
	[ "$(cat "$DST_CFS/remotes/r1/key")" = set ]
	[ "$(checksum "$dev" 0 $((64 << 20)))" = "$BRD_SUM" ]
	run "$DSTCTL" status r1
	assert_line 'key: set'
	refute_output --partial "$hex"

	DSTCTL_KEYDIR=$keys run "$DSTCTL" save "$conf"
	assert_success
	grep -q "^export e1 .*hash=hmac(sha256) cipher=gcm(aes) .*key_file=$keys/e1.key" "$conf"
	grep -q "^remote r1 .*key_file=$keys/r1.key" "$conf"
	run grep -c "$hex" "$conf"
	assert_output 0
	"$DSTCTL" detach --all
	no_nodes
	DSTCTL_KEYDIR=$keys run "$DSTCTL" restore "$conf"
	assert_success
	wait_for 10 test -b "$dev"
	[ "$(checksum "$dev" 0 $((64 << 20)))" = "$BRD_SUM" ]
	[ "$(cat "$DST_CFS/remotes/r1/cipher")" = 'gcm(aes)' ]

	# the wrong key: the server refuses, attach fails, nothing is left
	echo "ff${hex#??}" > "$BATS_TEST_TMPDIR/bad.key"
	run "$DSTCTL" attach r2 127.0.0.1:7000 --export e1 --hash 'hmac(sha256)' \
		--cipher 'gcm(aes)' --key-file "$BATS_TEST_TMPDIR/bad.key"
	assert_failure 1
	assert_output --partial 'nothing was left configured'
	refute_output --partial "${hex#??}"
	[ ! -e "$DST_CFS/remotes/r2" ]
}

@test "detach --all leaves a remote in use attached, and its export here, and says so; named, it goes" {
	"$DSTCTL" export e1 /dev/ram0 127.0.0.1:7000 --allow 127.0.0.0/8
	"$DSTCTL" export e2 /dev/ram1 127.0.0.1:7001 --allow 127.0.0.0/8
	run "$DSTCTL" attach r1 127.0.0.1:7000 --export e1
	assert_success
	dev=${output#r1: }
	run "$DSTCTL" attach r2 127.0.0.1:7001 --export e2
	assert_success
	dev2=${output#r2: }
	wait_for 10 test -b "$dev"
	wait_for 10 test -b "$dev2"
	mkfs.ext4 -q -F "$dev"
	MNT=$BATS_TEST_TMPDIR/mnt
	mkdir "$MNT"
	mount "$dev" "$MNT"
	pattern_file "$MNT/p" 4 inuse
	sync
	want=$(digest < "$MNT/p")

	# What dst.service runs at shutdown: r1 is mounted, so it stays,
	# and so does e1, its server; r2 and e2 go.
	run "$DSTCTL" detach --all
	assert_success
	assert_output "dstctl: left attached: $dev is in use (mounted on $MNT); detach r1 removes it anyway
dstctl: left running: export e1, which r1 (left attached) reaches here"
	state_is "$DST_CFS/remotes/r1" running
	state_is "$DST_CFS/exports/e1" running
	[ ! -e "$DST_CFS/remotes/r2" ]
	[ ! -e "$DST_CFS/exports/e2" ]
	[ ! -b "$dev2" ]
	# The file system still reads, from the disk, not the page cache.
	echo 3 > /proc/sys/vm/drop_caches
	[ "$(digest < "$MNT/p")" = "$want" ]
	umount "$MNT"

	# The backing device of a loop device: the same.
	# No udev in the guest to load loop on demand.
	modprobe loop
	LOOP=$(losetup --find --show --read-only "$dev")
	run "$DSTCTL" detach --all
	assert_success
	assert_output "dstctl: left attached: $dev is in use (backing $LOOP); detach r1 removes it anyway
dstctl: left running: export e1, which r1 (left attached) reaches here"
	state_is "$DST_CFS/remotes/r1" running
	losetup -d "$LOOP"
	LOOP=""

	run "$DSTCTL" detach r1
	assert_success
	assert_output ''
	[ ! -b "$dev" ]
	run "$DSTCTL" detach --all
	assert_success
	assert_output ''
	no_nodes
}

@test "save leaves out the remote the running root lies on, and warns of a key file that is not there" {
	local keys=$BATS_TEST_TMPDIR/keys conf=$BATS_TEST_TMPDIR/dst.conf
	local hex=00112233445566778899aabbccddeeff0123456789abcdeffedcba9876543210
	mkdir -m 700 "$keys"
	echo "$hex" > "$BATS_TEST_TMPDIR/e2.key"
	"$DSTCTL" export e1 /dev/ram0 127.0.0.1:7000 --allow 127.0.0.0/8
	# keyed from a file elsewhere than where save says restore reads it
	"$DSTCTL" export e2 /dev/ram1 127.0.0.1:7001 --allow 127.0.0.0/8 \
		--key-file "$BATS_TEST_TMPDIR/e2.key" --no-enable
	run "$DSTCTL" attach r1 127.0.0.1:7000 --export e1
	assert_success
	dev=${output#r1: }
	wait_for 10 test -b "$dev"

	DSTCTL_KEYDIR=$keys run "$DSTCTL" save "$conf"
	assert_success
	assert_output "dstctl: warning: e2 has a key, but $keys/e2.key does not exist: restore reads the key from there
saved 5 entries to $conf"
	grep -q "^export e2 .*key_file=$keys/e2.key enable=0\$" "$conf"
	grep -q '^remote r1 ' "$conf"
	cp "$BATS_TEST_TMPDIR/e2.key" "$keys/e2.key"
	DSTCTL_KEYDIR=$keys run "$DSTCTL" save "$conf"
	assert_success
	assert_output "saved 5 entries to $conf"

	# The same save where r1 carries the root file system: chrooted
	# into a file system on it, in a mount namespace of its own (its
	# mounts go with it).
	mkfs.ext4 -q -F "$dev"
	MNT=$BATS_TEST_TMPDIR/mnt
	mkdir "$MNT"
	mount "$dev" "$MNT"
	cp "$DSTCTL" "$MNT/dstctl"
	mkdir -m 700 "$MNT/keys"
	cp "$BATS_TEST_TMPDIR/e2.key" "$MNT/keys/e2.key"
	# shellcheck disable=SC2016
	run unshare --mount sh -c '
		set -e
		r=$1
		for d in usr etc proc sys dev; do
			mkdir "$r/$d"
		done
		for d in bin sbin lib lib32 lib64 libx32; do
			if [ -L "/$d" ]; then
				ln -s "$(readlink "/$d")" "$r/$d"
			elif [ -d "/$d" ]; then
				mkdir "$r/$d"
				mount --bind "/$d" "$r/$d"
			fi
		done
		mount --bind /usr "$r/usr"
		mount --bind /etc "$r/etc"
		mount -t proc proc "$r/proc"
		mount --rbind /sys "$r/sys"
		mount --rbind /dev "$r/dev"
		DSTCTL_KEYDIR=/keys exec chroot "$r" /bin/sh /dstctl save /dst.conf
	' sh "$MNT"
	assert_success
	assert_output "dstctl: left out r1: $dev carries the running root file system, which the initramfs attaches
saved 4 entries to /dst.conf"
	grep -q '^export e1 ' "$MNT/dst.conf"
	run grep -c '^remote ' "$MNT/dst.conf"
	assert_output 0
	umount "$MNT"
	"$DSTCTL" detach r1 e1 e2
	no_nodes
}

@test "bad arguments: a message, a non-zero exit, nothing made" {
	local bad
	while IFS='|' read -r rc args; do
		# shellcheck disable=SC2086
		run "$DSTCTL" $args
		if [ "$status" -ne "$rc" ] || [ -z "$output" ]; then
			echo "dstctl $args: exit $status (want $rc), output: $output" >&2
			return 1
		fi
	done <<-EOF
		2|
		2|frob
		2|export
		2|export e1 /dev/ram0
		2|export e1 ram0 10.0.0.1:7000
		2|export e1 /dev/ram0 10.0.0.1
		2|export e1 /dev/ram0 fd00::1:7000
		2|export .e1 /dev/ram0 10.0.0.1:7000
		2|export e/1 /dev/ram0 10.0.0.1:7000
		2|export abcdefghijabcdefghijabcdefghijxy /dev/ram0 10.0.0.1:7000
		2|export e1 /dev/ram0 10.0.0.1:7000 --allow
		2|export e1 /dev/ram0 10.0.0.1:7000 --allow 10.0.0.0/8=rx
		2|export e1 /dev/ram0 10.0.0.1:7000 --allow host.example
		2|export e1 /dev/ram0 10.0.0.1:7000 --size 1k
		2|export e1 /dev/ram0 10.0.0.1:7000 --bogus
		1|export e1 /etc/passwd 10.0.0.1:7000
		1|export e1 /dev/nonexistent 10.0.0.1:7000
		2|attach r1
		2|attach r1 10.0.0.1:7000 --connections two
		2|attach r1 10.0.0.1:7000 --fail-timeout -2
		2|attach r1 10.0.0.1:7000 --set enable=1
		2|attach r1 10.0.0.1:7000 --set keepalive_ms
		2|attach r1 10.0.0.1:7000 --export
		2|attach r1 10.0.0.1:7000,10.0.0.2:7000 --connections 1
		2|attach r1 10.0.0.1:7000,10.0.0.2:7000 --set connections=1
		2|attach r1 10.0.0.1:7000 --set connections=two
		1|detach nosuch
		2|detach
		2|detach --all extra
		2|status
		1|status nosuch
		2|list extra
		1|acl add nosuch 10.0.0.0/8
		2|acl frob e1
		2|crypto r1
		1|crypto r1 --key-file /nonexistent
		2|export e1 /dev/ram0 10.0.0.1:7000 --hash
		1|export e1 /dev/ram0 10.0.0.1:7000 --key-file /nonexistent
		1|attach r1 10.0.0.1:7000 --key-file /nonexistent
		2|attach r1 10.0.0.1:7000 --set key=00112233445566778899aabbccddeeff
		1|restore /nonexistent/dst.conf
		2|save a b
	EOF
	no_nodes

	# a file that does not parse is refused before anything is made
	bad=$BATS_TEST_TMPDIR/bad.conf
	printf 'export e1 device=/dev/ram0 addr=127.0.0.1:7000 enable=0\nfrob x\n' > "$bad"
	run "$DSTCTL" restore "$bad"
	assert_failure 1
	assert_output --partial "$bad:2: unknown entry 'frob'"
	no_nodes
}

@test "a step that fails half-way leaves nothing behind" {
	"$DSTCTL" export e1 /dev/ram0 127.0.0.1:7000 --allow 127.0.0.0/8
	cfg_dump > "$BATS_TEST_TMPDIR/before"

	# the device is already exported: enable fails after mkdir and rules
	run "$DSTCTL" export e2 /dev/ram0 127.0.0.1:7001 --allow 0.0.0.0/0
	assert_failure 1
	assert_output --partial 'e2: cannot set enable to'
	assert_output --partial 'nothing was left configured'
	# a value the kernel refuses
	run "$DSTCTL" export e3 /dev/ram1 127.0.0.1:7002 --size 1000
	assert_failure 1
	assert_output --partial 'kernel: e3: size must be a multiple of 512 bytes'
	# nobody listens there: attach fails at enable
	run "$DSTCTL" attach r1 127.0.0.1:7999 --export e1
	assert_failure 1
	assert_output --partial 'nothing was left configured'
	# an attribute remotes do not have
	run "$DSTCTL" attach r2 127.0.0.1:7000 --set nosuch=1
	assert_failure 1
	assert_output --partial "no attribute 'nosuch'"
	# an algorithm the kernel does not have: refused, nothing set
	run "$DSTCTL" crypto e1 --hash nosuchhash
	assert_failure 1
	assert_output --partial "kernel: hash 'nosuchhash': the kernel has no such algorithm"
	[ "$(cat "$DST_CFS/exports/e1/hash")" = "" ]
	# all or nothing: the hash taken before the cipher was refused is
	# put back
	mkdir "$DST_CFS/exports/c1"
	run "$DSTCTL" crypto c1 --hash 'hmac(sha256)' --cipher nosuchcipher
	assert_failure 1
	assert_output --partial "kernel: cipher 'nosuchcipher': the kernel has no such algorithm"
	[ "$(cat "$DST_CFS/exports/c1/hash")" = "" ]
	[ "$(cat "$DST_CFS/exports/c1/cipher")" = "" ]
	rmdir "$DST_CFS/exports/c1"

	# a restore failing on its second export removes the first too
	printf '%s\n' 'export e4 device=/dev/ram1 addr=127.0.0.1:7004 enable=1' \
		'acl e4 all 0.0.0.0/0 rw' \
		'export e5 device=/dev/ram0 addr=127.0.0.1:7005 enable=1' \
		> "$BATS_TEST_TMPDIR/half.conf"
	run "$DSTCTL" restore "$BATS_TEST_TMPDIR/half.conf"
	assert_failure 1
	assert_output --partial 'e5: cannot set enable'
	assert_output --partial 'nothing was left configured'

	cfg_dump > "$BATS_TEST_TMPDIR/after"
	diff -u "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	[ "$(ls "$DST_CFS/exports")" = e1 ]
	[ -z "$(ls -A "$DST_CFS/remotes")" ]
}

@test "make install puts every piece in its place; the unit verifies" {
	local root=$BATS_TEST_TMPDIR/root f
	make -s -C "$DST_TOP" install DESTDIR="$root" > /dev/null
	for f in sbin/dstctl sbin/dst-cn share/man/man8/dstctl.8 \
		share/man/man8/dst-cn.8 lib/systemd/system/dst.service \
		lib/udev/rules.d/60-dst.rules; do
		[ -f "$root/usr/$f" ] || { echo "missing /usr/$f" >&2; return 1; }
	done
	[ -x "$root/usr/sbin/dstctl" ] && [ -x "$root/usr/sbin/dst-cn" ]
	grep -qx 'ExecStart=/usr/sbin/dstctl restore /etc/dst/dst.conf' \
		"$root/usr/lib/systemd/system/dst.service"

	# PREFIX moves everything, the unit's commands too; systemd-analyze
	# checks that they exist.
	make -s -C "$DST_TOP" install PREFIX="$root/opt" > /dev/null
	[ -x "$root/opt/sbin/dstctl" ]
	run systemd-analyze verify --man=no "$root/opt/lib/systemd/system/dst.service"
	assert_success
	run groff -man -ww -z "$root/opt/share/man/man8/dstctl.8"
	assert_success
	assert_output ''
}

@test "list and status -o json: the same facts as the text, as JSON jq reads" {
	local json
	"$DSTCTL" export e1 /dev/ram0 127.0.0.1:7000 --allow 127.0.0.0/8 --allow ::1=ro
	"$DSTCTL" export e2 /dev/ram1 127.0.0.1:7001 --allow 0.0.0.0/0 --no-enable
	run "$DSTCTL" attach r1 127.0.0.1:7000 --export e1 --connections 2 \
		--fail-timeout -1
	assert_success
	dev=${output#r1: }
	wait_for 10 test -b "$dev"
	[ "$(checksum "$dev" 0 $((1 << 20)))" = "$(checksum /dev/ram0 0 $((1 << 20)))" ]

	run "$DSTCTL" list -o json
	assert_success
	json=$output
	[ "$(jq -r '[.nodes[].name] | join(" ")' <<< "$json")" = "e1 e2 r1" ]
	jq -e '.nodes[0] == {"name": "e1", "role": "export", "state": "running",
		"addr": "127.0.0.1:7000", "device": "/dev/ram0"}' <<< "$json"
	jq -e '.nodes[1] | .state == "disabled" and .device == "/dev/ram1"' <<< "$json"
	jq -e --arg d "${dev#/dev/}" '.nodes[2] | .role == "remote" and
		.state == "running" and .device == $d' <<< "$json"
	[ "$("$DSTCTL" list --output-format=json)" = "$json" ]
	run "$DSTCTL" list -o normal
	assert_line --regexp '^e1 +export +running +127.0.0.1:7000 +/dev/ram0$'

	run "$DSTCTL" status r1 -o json
	assert_success
	json=$output
	jq -e '.name == "r1" and .role == "remote" and (has("acl") | not)' <<< "$json"
	jq -e '.attributes.connections == 2 and .attributes.fail_timeout_s == -1
		and .attributes.export == "e1"' <<< "$json"
	jq -e '.stats.connections == "2/2" and .stats.read_ops >= 1 and
		.stats.read_bytes >= 1048576' <<< "$json"
	# every attribute holds what the text status shows
	diff -u <("$DSTCTL" status r1 | sed -n '2,/^stats:$/p' | sed '$d') \
		<(jq -r '.attributes | to_entries[] | "\(.key): \(.value)"' <<< "$json")

	run "$DSTCTL" status -o json e1
	assert_success
	json=$output
	jq -e '.acl == [{"rule": "allow0", "addr": "127.0.0.0/8", "perm": "rw"},
		{"rule": "allow1", "addr": "::1/128", "perm": "ro"}]' <<< "$json"
	jq -e '.clients | length == 2 and all(.[]; .read_only == false and
		(.addr | startswith("127.0.0.1:")))' <<< "$json"
	jq -e '.stats.state == "running" and (.stats.read_ops | type) == "number"' <<< "$json"

	# strings are escaped: a device path with a quote, a backslash, a
	# tab and a blank (configfs takes any absolute path until enable)
	local odd=$'/tmp/a"b\\c\td e'
	mkdir "$DST_CFS/exports/e3"
	printf '%s\n' "$odd" > "$DST_CFS/exports/e3/device"
	[ "$("$DSTCTL" list -o json | jq -r '.nodes[] | select(.name == "e3") | .device')" = "$odd" ]
	[ "$("$DSTCTL" status e3 -o json | jq -r .attributes.device)" = "$odd" ]
	[ "$("$DSTCTL" status e3 -o json | jq -r .attributes.addr)" = "" ]
	rmdir "$DST_CFS/exports/e3"

	run "$DSTCTL" list -o xml
	assert_failure 2
	assert_output --partial "output format 'xml'"
	run "$DSTCTL" status r1 -o
	assert_failure 2
	run "$DSTCTL" status -o json
	assert_failure 2
}

@test "resize and set on running nodes: the client grows; live attributes change, others fail with the reason" {
	netns_pair
	in_ns dst-srv "$DSTCTL" export e1 /dev/ram0 10.99.0.1:7000 \
		--allow 10.99.0.0/24 --size $((16 << 20))
	run in_ns dst-cli "$DSTCTL" attach r1 10.99.0.1:7000 --export e1
	assert_success
	dev=${output#r1: }
	wait_for 10 test -b "$dev"

	run "$DSTCTL" resize e1
	assert_success
	assert_output "e1: $((64 << 20)) bytes"
	wait_for 20 grep -qx $((64 << 11)) "/sys/class/block/${dev#/dev/}/size"
	[ "$(checksum "$dev" 0 $((64 << 20)))" = "$BRD_SUM" ]
	run "$DSTCTL" resize e1 $((32 << 20))
	assert_failure 1
	assert_output --partial "kernel: e1: cannot shrink to $((32 << 20)) bytes"
	[ "$(cat "$DST_CFS/exports/e1/size")" = $((64 << 20)) ]
	run "$DSTCTL" resize e1 lots
	assert_failure 2

	"$DSTCTL" set r1 keepalive_ms=1500 fail_timeout_s=-1
	[ "$(cat "$DST_CFS/remotes/r1/keepalive_ms")" = 1500 ]
	[ "$(cat "$DST_CFS/remotes/r1/fail_timeout_s")" = -1 ]
	run "$DSTCTL" set r1 queue_depth=8
	assert_failure 1
	assert_output --partial 'kernel: r1: disable the node before changing queue_depth'
	run "$DSTCTL" set r1 enable=0
	assert_failure 2
	run "$DSTCTL" set r1 keepalive_ms
	assert_failure 2
	[ "$(cat "$DST_CFS/remotes/r1/state")" = running ]
	"$DSTCTL" detach r1 e1
	no_nodes
}
