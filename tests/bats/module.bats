#!/usr/bin/env bats
# The module loads and unloads cleanly and shows its control interfaces.

load helpers

teardown() {
	dst_teardown
}

@test "modinfo shows description, license, author and version" {
	run modinfo "$DST_KO"
	assert_success
	assert_line --regexp '^description: +DST'
	assert_line --regexp '^license: +GPL'
	assert_line --regexp '^author: +.+'
	assert_line --regexp '^version: +[0-9]'
}

@test "load and unload 20 times: interfaces appear and vanish each time" {
	for i in $(seq 20); do
		dst_load
		[ -d "$DST_CFS/exports" ]
		[ -d "$DST_CFS/remotes" ]
		[ -d /sys/bus/dst ]
		grep -q ' dst$' /proc/devices
		rmmod dst
		[ ! -e "$DST_CFS" ]
		[ ! -e /sys/bus/dst ]
		! grep -q ' dst$' /proc/devices || false
	done
}

@test "mkdir makes a node on the dst bus with its attributes; rmdir removes it" {
	dst_load
	mkdir "$DST_CFS/exports/e1"
	mkdir "$DST_CFS/remotes/r1"
	d=/sys/bus/dst/devices/dst-e1
	[ -d "$d" ]
	[ "$(cat $d/name)" = e1 ]
	[ "$(cat $d/role)" = export ]
	[ "$(cat $d/state)" = disabled ]
	[ "$(cat /sys/bus/dst/devices/dst-r1/role)" = remote ]
	[ "$(cat $DST_CFS/remotes/r1/export)" = r1 ]
	for a in size type local state role; do [ -r "$d/$a" ]; done
	rmdir "$DST_CFS/exports/e1" "$DST_CFS/remotes/r1"
	[ ! -e "$d" ]
	[ ! -e /sys/bus/dst/devices/dst-r1 ]
}

@test "a node name is unique across exports and remotes" {
	dst_load
	mkdir "$DST_CFS/exports/same"
	run mkdir "$DST_CFS/remotes/same"
	assert_failure
	assert_output --partial 'File exists'
	klog | grep -q "node 'same' already exists"
}

@test "a node holds the module: rmmod fails while a directory exists" {
	dst_load
	mkdir "$DST_CFS/remotes/busy"
	run rmmod dst
	assert_failure
	rmdir "$DST_CFS/remotes/busy"
	rmmod dst
}

@test "parameters are range-checked and bad values change nothing" {
	dst_load
	r=$DST_CFS/remotes/p
	mkdir "$r"
	echo 4 > "$r/connections"
	[ "$(cat $r/connections)" = 4 ]
	run sh -c "echo 0 > $r/connections"
	assert_failure
	[ "$(cat $r/connections)" = 4 ]
	run sh -c "echo 99999 > $r/max_pages"
	assert_failure
	run sh -c "echo 513 > $r/size"
	assert_failure
	[ "$(cat $r/size)" = 0 ]
	run sh -c "echo bogus > $r/addr"
	assert_failure
	run sh -c "echo 10.0.0.1 > $r/addr"
	assert_failure
	run sh -c "echo fd00::1:1025 > $r/addr"
	assert_failure
	echo '[fd00::1]:1025' > "$r/addr"
	[ "$(cat $r/addr)" = '[fd00::1]:1025' ]
	echo '10.1.2.3:1025' > "$r/addr"
	[ "$(cat $r/addr)" = '10.1.2.3:1025' ]
	[ "$(cat /sys/bus/dst/devices/dst-p/type)" = '10.1.2.3:1025' ]
	run sh -c "echo 'bad/name' > $r/export"
	assert_failure
	[ "$(cat $r/export)" = p ]
	echo other > "$r/export"
	[ "$(cat $r/export)" = other ]
}

@test "values count without the blanks around them; what does not parse is EINVAL, logged, and changes nothing" {
	local r=$DST_CFS/remotes/v long
	dst_load
	mkdir "$r"
	printf 2 > "$r/connections"			# no newline
	[ "$(cat "$r/connections")" = 2 ]
	printf ' 3 \n' > "$r/connections"
	[ "$(cat "$r/connections")" = 3 ]
	# The longest name, with echo's newline after it, fits.
	long=$(printf '%031d' 0)
	echo "$long" > "$r/export"
	[ "$(cat "$r/export")" = "$long" ]
	printf '  e1 \n' > "$r/export"
	[ "$(cat "$r/export")" = e1 ]
	[ "$(cfs_errno "$r/export" "${long}1")" = EINVAL ]
	[ "$(cfs_errno "$r/connections" abc)" = EINVAL ]
	[ "$(cfs_errno "$r/connections" 99999999999999999999999)" = EINVAL ]
	[ "$(cfs_errno "$r/size" 0x)" = EINVAL ]
	[ "$(cfs_errno "$r/enable" maybe)" = EINVAL ]
	# A NUL inside is no end of the string: refused.
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
try:
    os.write(fd, b"e3\0junk\n")
except OSError:
    sys.exit(0)
sys.exit(1)' "$r/export"
	[ "$(cat "$r/connections")" = 3 ]
	[ "$(cat "$r/export")" = e1 ]
	[ "$(cat "$r/enable")" = 0 ]
	klog | grep -qF 'v: connections takes an integer in [1, 16]'
	klog | grep -qF 'v: size takes an integer in [0, '
	klog | grep -qF 'v: export takes at most 31 bytes'
	klog | grep -qF 'v: enable takes 1 or 0'
	klog | grep -qF 'v: export must not hold a NUL byte'
	rmdir "$r"
}

@test "an export's device must be an absolute path; local shows it" {
	dst_load
	e=$DST_CFS/exports/dev
	mkdir "$e"
	run sh -c "echo ram0 > $e/device"
	assert_failure
	[ "$(cat $e/device)" = "" ]
	echo /dev/ram0 > "$e/device"
	[ "$(cat $e/device)" = /dev/ram0 ]
	[ "$(cat /sys/bus/dst/devices/dst-dev/local)" = /dev/ram0 ]
	echo 1048576 > "$e/size"
	[ "$(cat $e/size)" = 1048576 ]
	[ "$(cat /sys/bus/dst/devices/dst-dev/size)" = 1048576 ]
}

@test "the connector answers: an unknown node gets ENODEV" {
	dst_load
	run "$DST_TOP/build/sbin/dst-cn" start none
	assert_failure 1
	assert_output 'dst-cn: start none: No such device'
}
