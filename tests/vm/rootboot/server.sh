#!/bin/sh
# Guest A of the root-on-DST test (tests/vm/rootboot/run): export the
# virtio disk holding B's root file system as "root" on 10.99.0.1:7000.
# MODE plain: serve until the host says stop.  MODE restart: once B has
# written 40 times, disable the export for 3 s and enable it again (B,
# booted with fail_timeout_s=-1, must wait and carry on), then serve
# until stop.  MODE cutpath: A has a second network, 10.98.0.1 (B's
# rd.dst.paths); once B has a connection on each and has written 40
# times more, the first network goes down for good (B's connection on
# it must move to the second).  The
# host creates $DST_RESULTS/stop when B is done.
# KEYFILE, if given: the export takes that shared key, hmac(sha256) and
# gcm(aes), as B's initramfs does.
set -eu
mode=${1:-plain}
keyfile=${2:-}
top=${DST_TOP:?}
cfs=/sys/kernel/config
exp=$cfs/dst/exports/root

# The interfaces in the order of QEMU's -netdev options (PCI slots).
eth="" eth2=""
for n in /sys/class/net/*; do
	[ "${n##*/}" != lo ] || continue
	if [ -z "$eth" ]; then eth=${n##*/}; elif [ -z "$eth2" ]; then eth2=${n##*/}; fi
done
[ -n "$eth" ] || { echo "server: no network interface"; exit 1; }
ip link set "$eth" up
ip addr add 10.99.0.1/24 dev "$eth"
listen=10.99.0.1:7000
if [ "$mode" = cutpath ]; then
	[ -n "$eth2" ] || { echo "server: cutpath wants a second network interface"; exit 1; }
	ip link set "$eth2" up
	ip addr add 10.98.0.1/24 dev "$eth2"
	listen=0.0.0.0:7000
fi
modprobe configfs
grep -q " $cfs configfs" /proc/mounts || mount -t configfs configfs "$cfs"
# make check-debug boots A from its debug kernel, with dst.ko built for it.
insmod "${DST_KO:-$top/module/dst.ko}"
mkdir "$exp"
echo /dev/vda > "$exp/device"
echo "$listen" > "$exp/addr"
mkdir "$exp/acl/net"
echo 10.99.0.0/24 > "$exp/acl/net/addr"
echo rw > "$exp/acl/net/perm"
if [ "$mode" = cutpath ]; then
	mkdir "$exp/acl/net2"
	echo 10.98.0.0/24 > "$exp/acl/net2/addr"
	echo rw > "$exp/acl/net2/perm"
fi
if [ -n "$keyfile" ]; then
	cat "$keyfile" > "$exp/key"
	echo 'hmac(sha256)' > "$exp/hash"
	echo 'gcm(aes)' > "$exp/cipher"
fi
echo 1 > "$exp/enable"
echo "server: exporting /dev/vda as root on $listen${keyfile:+, keyed}"
: > "$DST_RESULTS/ready"

stat() { sed -n "s/^$1 //p" "$exp/stats"; }
deadline=$(($(date +%s) + 600))
if [ "$mode" = restart ]; then
	until [ "$(stat write_ops)" -ge 40 ]; do
		[ "$(date +%s)" -lt "$deadline" ] || { echo "server: B never wrote"; exit 1; }
		sleep 0.2
	done
	echo "server: B wrote $(stat write_ops) times; restarting the export"
	echo 0 > "$exp/enable"
	sleep 3
	echo 1 > "$exp/enable"
	echo "server: export enabled again"
elif [ "$mode" = cutpath ]; then
	# B's two connections, one over each network (by their source
	# addresses), then 40 more writes.
	until grep -q '^10\.99\.0\.2:' "$exp/clients" &&
		grep -q '^10\.98\.0\.2:' "$exp/clients"; do
		[ "$(date +%s)" -lt "$deadline" ] || { echo "server: B never had two connections"; exit 1; }
		sleep 0.2
	done
	w0=$(stat write_ops)
	until [ "$(stat write_ops)" -ge $((w0 + 40)) ]; do
		[ "$(date +%s)" -lt "$deadline" ] || { echo "server: B never wrote"; exit 1; }
		sleep 0.2
	done
	ip link set "$eth" down
	echo "server: cut the network of 10.99.0.1 after $(stat write_ops) writes"
fi
until [ -e "$DST_RESULTS/stop" ]; do
	[ "$(date +%s)" -lt "$deadline" ] || { echo "server: never told to stop"; exit 1; }
	sleep 0.5
done
echo "server: stopping; $(tr '\n' ' ' < "$exp/stats")"
echo 0 > "$exp/enable"
[ "$mode" != cutpath ] || rmdir "$exp/acl/net2"
rmdir "$exp/acl/net" "$exp"
