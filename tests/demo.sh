#!/bin/sh
# make demo, inside a guest: load DST, create an export and a remote node
# through configfs, and show what an administrator sees -- the configfs
# tree, the dst bus in sysfs, the attributes.  The data path (enable)
# follows once export/attach over TCP is implemented.
set -eu

top=${DST_TOP:?DST_TOP not set}
cfs=/sys/kernel/config/dst

say() { printf '\n### %s\n' "$*"; }

say "loading dst.ko"
modprobe configfs
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
insmod "$top/module/dst.ko"
modinfo "$top/module/dst.ko" | grep -E '^(description|version|license):'
dmesg | grep 'dst:' | tail -n 1

say "configuring an export and a remote node"
modprobe brd rd_nr=1 rd_size=65536 max_part=0
set -x
mkdir $cfs/exports/disk0
echo /dev/ram0 > $cfs/exports/disk0/device
echo '[::]:1025' > $cfs/exports/disk0/addr
mkdir $cfs/remotes/disk0-remote
echo 10.0.0.1:1025 > $cfs/remotes/disk0-remote/addr
echo disk0 > $cfs/remotes/disk0-remote/export
echo 2 > $cfs/remotes/disk0-remote/connections
set +x

say "configfs tree: $cfs"
find $cfs | sort
say "attributes"
for f in $cfs/exports/disk0/* $cfs/remotes/disk0-remote/*; do
	[ -f "$f" ] && printf '%-60s %s\n' "$f" "$(cat "$f")"
done

say "sysfs: /sys/bus/dst/devices"
ls -l /sys/bus/dst/devices/
for d in /sys/bus/dst/devices/*; do
	for a in name role state type local size; do
		printf '%-45s %s\n' "$d/$a" "$(cat "$d/$a")"
	done
done

say "a bad value is refused with an errno and a log line"
echo 0 > $cfs/remotes/disk0-remote/connections 2>&1 || true
dmesg | tail -n 1

say "tearing down"
rmdir $cfs/remotes/disk0-remote $cfs/exports/disk0
rmmod dst
rmmod brd
echo "dst unloaded cleanly"
