#!/usr/bin/env bats
# The connector door (docs/connector.md): the original 2008 control ABI,
# spoken by dst-cn (configfs-scripts/dst-cn.c) and, for malformed
# messages, by tests/cn/cnraw.py.  Nodes it makes are the nodes configfs
# and sysfs show, and either door removes them.

load helpers

CN=$DST_TOP/build/sbin/dst-cn
RAW=$DST_TOP/tests/cn/cnraw.py

setup() {
	dst_load
}

teardown() {
	dst_teardown
}

# raw_is CASE NODE ERRNO: the module answers a hand-built message CASE
# with ERRNO (or OK).
raw_is() {
	local got
	got=$(python3 "$RAW" "$1" "$2")
	if [ "$got" != "$3" ]; then
		echo "case $1: got $got, want $3" >&2
		return 1
	fi
}

# The kernel's connector lives in the initial network namespace only, so
# a connector-made node runs there (docs/connector.md): this cycle runs
# over loopback.
@test "export, attach, I/O and detach through the connector alone" {
	brd_make 64
	"$CN" add-export srv /dev/ram0 127.0.0.1:7000
	"$CN" security srv 127.0.0.0/8 rw
	"$CN" start srv
	[ "$(cat "$DST_CFS/exports/srv/state")" = running ]
	[ "$(cat "$DST_CFS/exports/srv/acl/cn0/addr")" = 127.0.0.0/8 ]
	[ "$(cat "$DST_CFS/exports/srv/acl/cn0/perm")" = rw ]

	"$CN" add-remote cli 127.0.0.1:7000 export=srv max_pages=64 \
		trans_max_retries=3
	[ "$(cat "$DST_CFS/remotes/cli/export")" = srv ]
	[ "$(cat "$DST_CFS/remotes/cli/max_pages")" = 64 ]
	[ "$(cat "$DST_CFS/remotes/cli/trans_max_retries")" = 3 ]
	"$CN" start cli
	[ "$(cat /sys/bus/dst/devices/dst-cli/role)" = remote ]
	dev=/dev/$(cut -d' ' -f1 "$DST_CFS/remotes/cli/device")
	wait_for 10 test -b "$dev"
	[ "$(checksum "$dev" 0 $((64 << 20)))" = "$BRD_SUM" ]
	fio_verify_start "$dev" --bs=4k --size=$(scaled 16)M --iodepth=8
	fio_verify_wait

	"$CN" del cli
	[ ! -b "$dev" ]
	"$CN" del srv
	no_nodes
}

@test "nodes are one registry: either door removes what the other made" {
	brd_make 16
	# connector-made, removed by rmdir (rules first, as for any export)
	"$CN" add-export a /dev/ram0 10.99.0.1:7001
	"$CN" security a 10.99.0.7 ro
	"$CN" security a fd99::/64 rw
	[ -d "$DST_CFS/exports/a" ] && [ -d /sys/bus/dst/devices/dst-a ]
	[ "$(cat "$DST_CFS/exports/a/acl/cn0/addr")" = 10.99.0.7/32 ]
	[ "$(cat "$DST_CFS/exports/a/acl/cn0/perm")" = ro ]
	[ "$(cat "$DST_CFS/exports/a/acl/cn1/addr")" = fd99::/64 ]
	export_rmdir "$DST_CFS/exports/a"
	[ ! -e /sys/bus/dst/devices/dst-a ]

	# configfs-made, removed by DST_DEL_NODE, rules and all
	mkdir "$DST_CFS/exports/b" "$DST_CFS/remotes/c"
	acl_rule b r1 10.0.0.0/8 rw
	"$CN" del b
	"$CN" del c
	no_nodes

	# a name taken by either door is taken for both
	mkdir "$DST_CFS/remotes/d"
	run "$CN" add-export d /dev/ram0 10.99.0.1:7001
	assert_failure 1
	assert_output --partial 'File exists'
	rmdir "$DST_CFS/remotes/d"
	run "$CN" del d
	assert_failure 1
	assert_output --partial 'No such device'
	no_nodes
}

@test "every malformed message gets its error ack and changes nothing" {
	brd_make 16
	# node-less checks first: each must leave no node behind
	while read -r case want; do
		raw_is "$case" x "$want"
	done <<-EOF
		empty EBADMSG
		short-ctl EBADMSG
		cmd-out-of-range EINVAL
		cmd-huge EINVAL
		name-no-nul EINVAL
		name-bad-chars EINVAL
		name-dotdot EINVAL
		flags-on-start EINVAL
		pad-nonzero EINVAL
		param-on-start EINVAL
		payload-on-start EBADMSG
		export-short EBADMSG
		export-long EBADMSG
		export-device-no-nul EINVAL
		export-device-relative EINVAL
		export-remote-param EINVAL
		export-family-unix EAFNOSUPPORT
		export-family-huge EAFNOSUPPORT
		export-addrlen-wrong EINVAL
		export-addrlen-v6-short EINVAL
		export-port-zero EINVAL
		remote-udp ESOCKTNOSUPPORT
		remote-proto-udp EPROTONOSUPPORT
		remote-bad-param EINVAL
		remote-size-odd EBADMSG
		remote-export-no-nul EINVAL
		valid-security ENODEV
		valid-crypto ENODEV
		valid-del ENODEV
	EOF
	no_nodes

	# then the ones that name an existing export: it stays as it was
	raw_is valid-export e OK
	for case in security-short security-write-only security-no-perm \
		security-prefix-33 security-unknown-flag security-family-unix \
		crypto-short crypto-key-overflow crypto-key-wrap \
		crypto-key-too-big crypto-size-mismatch crypto-algo-no-nul \
		crypto-attached crypto-threads; do
		want=EINVAL
		case $case in
		*-short | crypto-size-mismatch) want=EBADMSG ;;
		*-family-unix) want=EAFNOSUPPORT ;;
		esac
		raw_is "$case" e "$want"
	done
	[ -z "$(ls "$DST_CFS/exports/e/acl")" ]
	[ "$(cat "$DST_CFS/exports/e/device")" = /dev/ram1 ]
	[ "$(cat "$DST_CFS/exports/e/addr")" = 10.99.0.1:7000 ]
	[ "$(cat "$DST_CFS/exports/e/state")" = disabled ]
	raw_is export-long e EBADMSG
	raw_is valid-export e EEXIST
	[ "$(ls "$DST_CFS/exports")" = e ]

	# a good DST_CRYPTO sets the hash and the key (never shown)
	raw_is valid-crypto e OK
	[ "$(cat "$DST_CFS/exports/e/hash")" = 'hmac(sha256)' ]
	[ "$(cat "$DST_CFS/exports/e/key")" = set ]

	# and the module keeps serving: a good rule, then removal
	raw_is valid-security e OK
	[ "$(cat "$DST_CFS/exports/e/acl/cn0/addr")" = 10.99.0.0/24 ]
	raw_is valid-del e OK
	no_nodes
}

@test "only CAP_SYS_ADMIN may configure: others get EPERM and change nothing" {
	brd_make 16
	run setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$CN" add-export p /dev/ram0 10.99.0.1:7000
	assert_failure 1
	assert_output --partial 'Operation not permitted'
	run capsh --drop=cap_sys_admin -- -c \
		"$CN add-export p /dev/ram0 10.99.0.1:7000"
	assert_failure 1
	assert_output --partial 'Operation not permitted'
	no_nodes
}

@test "dst-cn rejects bad arguments before sending anything" {
	for args in "" "frob x" "start" "start a b" "add-export a" \
		"add-export a /dev/ram0 10.0.0.1" "add-export a /dev/ram0 [fd00::1:7000" \
		"add-remote a 10.0.0.1:70000" "add-remote a 10.0.0.1:7000 max_pages=-1" \
		"add-remote a 10.0.0.1:7000 bogus=1" "security a 10.0.0.1/33 rw" \
		"security a 10.0.0.1 rx" "crypto a hash_key=abc" "crypto a hash_key=zz" \
		"start $(printf 'n%.0s' $(seq 40))"; do
		# shellcheck disable=SC2086
		run "$CN" $args
		assert_failure 2
		[ -n "$output" ]
	done
	run "$CN" --help
	assert_success
	assert_output --partial 'add-export NAME DEVICE ADDR:PORT'
	no_nodes
}

# A DST_START that found the node just before rmdir took it out of the
# registry used to wait for the node's lock and then start it: an
# export left listening that no configfs directory, registry entry or
# rmmod could reach.  Races the two many times; the port must be free
# after each round, and the module must unload.
@test "DST_START racing rmdir never leaves a node running outside the registry" {
	brd_make 16
	local i d=$DST_CFS/exports/race rounds=60
	[ "${DST_DEBUG:-0}" = 1 ] && rounds=20
	for i in $(seq "$rounds"); do
		mkdir "$d"
		echo /dev/ram0 > "$d/device"
		echo 127.0.0.1:7100 > "$d/addr"
		"$CN" start race > /dev/null 2>&1 &
		rmdir "$d"
		wait $! || true
		[ ! -e "$d" ]
		[ ! -e /sys/bus/dst/devices/dst-race ]
		# Nothing listens on the port any more.
		run sh -c 'ss -ltnH "sport = :7100" | grep -q .'
		assert_failure
	done
	# Whatever the races did, every node is gone and the module unloads.
	no_nodes
	rmmod dst
}
