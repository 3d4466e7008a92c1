#!/bin/sh
# Guest A of the root-on-DST test (tests/vm/rootboot/run): export the
# virtio disk holding B's root file system as "root" on 10.99.0.1:7000.
# MODE plain: serve until the host says stop.  MODE restart: once B has
# written 40 times, disable the export for 3 s and enable it again (B,
# booted with fail_timeout_s=-1, must wait and carry on), then serve
# until stop.  The host creates $DST_RESULTS/stop when B is done.
# KEYFILE, if given: the export takes that shared key, hmac(sha256) and
# gcm(aes), as B's initramfs does.
set -eu
mode=${1:-plain}
keyfile=${2:-}
top=${DST_TOP:?}
cfs=/sys/kernel/config
exp=$cfs/dst/exports/root

eth=""
for n in /sys/class/net/*; do
	[ "${n##*/}" = lo ] || { eth=${n##*/}; break; }
done
[ -n "$eth" ] || { echo "server: no network interface"; exit 1; }
ip link set "$eth" up
ip addr add 10.99.0.1/24 dev "$eth"
modprobe configfs
grep -q " $cfs configfs" /proc/mounts || mount -t configfs configfs "$cfs"
# make check-debug boots A from its debug kernel, with dst.ko built for it.
insmod "${DST_KO:-$top/module/dst.ko}"
mkdir "$exp"
echo /dev/vda > "$exp/device"
echo 10.99.0.1:7000 > "$exp/addr"
mkdir "$exp/acl/net"
echo 10.99.0.0/24 > "$exp/acl/net/addr"
echo rw > "$exp/acl/net/perm"
if [ -n "$keyfile" ]; then
	cat "$keyfile" > "$exp/key"
	echo 'hmac(sha256)' > "$exp/hash"
	echo 'gcm(aes)' > "$exp/cipher"
fi
echo 1 > "$exp/enable"
echo "server: exporting /dev/vda as root on 10.99.0.1:7000${keyfile:+, keyed}"
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
fi
until [ -e "$DST_RESULTS/stop" ]; do
	[ "$(date +%s)" -lt "$deadline" ] || { echo "server: never told to stop"; exit 1; }
	sleep 0.5
done
echo "server: stopping; $(tr '\n' ' ' < "$exp/stats")"
echo 0 > "$exp/enable"
rmdir "$exp/acl/net" "$exp"
