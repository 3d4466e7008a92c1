#!/usr/bin/env bats
# dracut's 95dst, the parts that run without a boot: the root=dst: parser
# every hook shares (dst-lib.sh), and make install's placement.  Booting
# a client from a DST root is tests/vm/rootboot/run (two guests), which
# make check runs after the suites.  docs/root-on-dst.md is the contract.

load helpers

LIB=$DST_TOP/dracut-module/95dst/dst-lib.sh

# parse SPEC: what dst_parse_root makes of SPEC, as
# server|port|export|fstype|rootflags, or "error: REASON".
parse() {
	sh -c '. "$1"; if dst_parse_root "$2"; then
		echo "$dst_server|$dst_port|$dst_export|$dst_fstype|$dst_rootflags"
	else echo "error: $dst_err"; fi' sh "$LIB" "$1"
}

@test "root=dst: lines that parse: defaults, every field, IPv6 in brackets" {
	[ "$(parse dst:10.0.0.1:7000)" = "10.0.0.1|7000|root|auto|" ]
	[ "$(parse dst:10.0.0.1:7000:sys)" = "10.0.0.1|7000|sys|auto|" ]
	[ "$(parse dst:10.0.0.1:7000:sys:ext4)" = "10.0.0.1|7000|sys|ext4|" ]
	[ "$(parse dst:10.0.0.1:7000:sys:ext4:noatime,data=ordered)" = \
		"10.0.0.1|7000|sys|ext4|noatime,data=ordered" ]
	[ "$(parse dst:10.0.0.1:7000::xfs)" = "10.0.0.1|7000|root|xfs|" ]
	[ "$(parse 'dst:[fd00::1]:7000:root')" = "[fd00::1]|7000|root|auto|" ]
	[ "$(parse 'dst:[::ffff:10.0.0.1]:1')" = "[::ffff:10.0.0.1]|1|root|auto|" ]
	[ "$(parse dst:255.255.255.255:65535)" = "255.255.255.255|65535|root|auto|" ]
}

@test "malformed root=dst: lines are refused with the reason" {
	local spec want
	while IFS='|' read -r spec want; do
		run parse "$spec"
		[ "$output" = "error: $want" ] ||
			{ echo "'$spec' gave '$output', wanted 'error: $want'" >&2; return 1; }
	done <<-'EOF2'
	nbd:10.0.0.1:7000|'nbd:10.0.0.1:7000' does not start with dst:
	dst:10.0.0.1|no :PORT after the server
	dst:|bad server address '' (an IPv4 address, or an IPv6 one in brackets)
	dst:10.0.0.1:|bad port '' (1-65535)
	dst:10.0.0.1:0|bad port '0' (1-65535)
	dst:10.0.0.1:65536|bad port '65536' (1-65535)
	dst:10.0.0.1:123456|bad port '123456' (1-65535)
	dst:10.0.0.1:7k|bad port '7k' (1-65535)
	dst:300.0.0.1:7000|bad server address '300.0.0.1' (an IPv4 address, or an IPv6 one in brackets)
	dst:10.0.1:7000|bad server address '10.0.1' (an IPv4 address, or an IPv6 one in brackets)
	dst:server.example:7000|bad server address 'server.example' (an IPv4 address, or an IPv6 one in brackets)
	dst:[fd00::1:7000|no ']' closes the IPv6 server address
	dst:[fd00::1]7000|no :PORT after the server
	dst:[fd00::g]:7000|bad IPv6 server address 'fd00::g'
	dst:[]:7000|bad IPv6 server address ''
	dst:10.0.0.1:7000:.hidden|bad export name '.hidden' (1-31 of A-Za-z0-9._-, not starting with '.')
	dst:10.0.0.1:7000:a/b|bad export name 'a/b' (1-31 of A-Za-z0-9._-, not starting with '.')
	dst:10.0.0.1:7000:abcdefghijklmnopqrstuvwxyz012345|bad export name 'abcdefghijklmnopqrstuvwxyz012345' (1-31 of A-Za-z0-9._-, not starting with '.')
	dst:10.0.0.1:7000:root:ext4;x|bad file system type 'ext4;x'
	EOF2
}

# paths LIST: what dst_check_paths makes of LIST (rd.dst.paths=), as
# the count, or "error: REASON"; dst_server is left as it was.
paths() {
	sh -c '. "$1"; dst_server=kept; if dst_check_paths "$2"; then
		echo "$dst_npaths $dst_server"
	else echo "error: $dst_err"; fi' sh "$LIB" "$1"
}

@test "rd.dst.paths: lists that parse, and malformed ones refused with the reason" {
	[ "$(paths 10.1.0.1:7000)" = "1 kept" ]
	[ "$(paths '10.1.0.1:7000,[fd01::1]:7000,10.2.0.1:1')" = "3 kept" ]
	[ "$(paths 10.1.0.1)" = "error: bad address '10.1.0.1' in rd.dst.paths: no :PORT after the server" ]
	[ "$(paths 10.1.0.1:7000,)" = "error: bad address '' in rd.dst.paths: bad server address '' (an IPv4 address, or an IPv6 one in brackets)" ]
	[ "$(paths 10.1.0.1:7000:root)" = "error: bad address '10.1.0.1:7000:root' in rd.dst.paths: want ADDR:PORT" ]
	[ "$(paths 1.1.1.1:1,1.1.1.2:1,1.1.1.3:1,1.1.1.4:1)" = "error: rd.dst.paths: at most 3 more addresses" ]
}

# generate CMDLINE: the sysroot.mount the systemd generator writes for
# that kernel command line (getarg stubbed: dracut-lib is not here).
generate() {
	local dir=$BATS_TEST_TMPDIR/gen
	rm -rf "$dir"
	mkdir "$dir"
	CMDLINE=$1 sh -c '
		getarg() {
			for a in $CMDLINE; do
				case $1 in
				*=) case $a in "$1"*) echo "${a#"$1"}"; return 0 ;; esac ;;
				*) [ "$a" != "$1" ] || return 0 ;;
				esac
			done
			return 1
		}
		lib=$1 gen=$2 dir=$3
		. "$lib"
		set -- "$dir" "$dir" "$dir"
		. "$gen"' sh "$LIB" "$DST_TOP/dracut-module/95dst/dst-generator.sh" "$dir"
	grep -q '^What=/dev/root$' "$dir/sysroot.mount" 2>/dev/null || return 1
	grep -E '^(Type|Options)=' "$dir/sysroot.mount" | tr '\n' ' '
}

@test "the systemd initramfs mounts the root as the shell init does: rootfstype= and rootflags= win, ro or rw added" {
	run generate 'root=dst:10.0.0.1:7000'
	assert_success
	assert_output ''
	run generate 'root=dst:10.0.0.1:7000:root:ext4:noatime ro'
	assert_success
	assert_output 'Type=ext4 Options=noatime,ro '
	run generate 'root=dst:10.0.0.1:7000:root:ext4:noatime rootfstype=xfs rootflags=discard rw'
	assert_success
	assert_output 'Type=xfs Options=discard,rw '
	run generate 'root=dst:10.0.0.1:7000 rootfstype=btrfs'
	assert_success
	assert_output 'Type=btrfs '
	# Not a DST root: nothing written.
	run generate 'root=/dev/sda1'
	assert_failure
}

@test "make install puts 95dst where dracut looks for modules" {
	local root=$BATS_TEST_TMPDIR/root f
	make -s -C "$DST_TOP" install DESTDIR="$root" > /dev/null
	for f in module-setup.sh parse-dstroot.sh dstroot.sh dst-generator.sh dst-lib.sh; do
		[ -x "$root/usr/lib/dracut/modules.d/95dst/$f" ] ||
			{ echo "missing 95dst/$f" >&2; return 1; }
	done
	# dracut sources module-setup.sh with bash: it must at least parse.
	bash -n "$root/usr/lib/dracut/modules.d/95dst/module-setup.sh"
}
