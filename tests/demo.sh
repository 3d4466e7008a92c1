#!/bin/sh
# make demo, inside a guest: the real job.  A 256 MiB brd is exported from
# network namespace "server" and attached in namespace "client" (joined by
# a veth pair), then formatted, mounted, written and read back, and
# measured with a short fio run.  Everything is configured the way an
# administrator would: mkdir and echo in configfs.
set -eu

top=${DST_TOP:?DST_TOP not set}
cfs=/sys/kernel/config/dst

say() { printf '\n### %s\n' "$*"; }
in_ns() { ns=$1; shift; nsenter --net="/run/netns/$ns" "$@"; }

say "loading dst.ko"
modprobe configfs
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
insmod "$top/module/dst.ko"
modinfo "$top/module/dst.ko" | grep -E '^(description|version|license):'

say "two network namespaces joined by veth: server 10.0.0.1, client 10.0.0.2"
ip netns add server
ip netns add client
ip link add veth0 netns server type veth peer name veth1 netns client
ip -n server addr add 10.0.0.1/24 dev veth0
ip -n client addr add 10.0.0.2/24 dev veth1
for ns in server client; do ip -n $ns link set lo up; done
ip -n server link set veth0 up
ip -n client link set veth1 up
i=0
until in_ns client ping -c1 -W1 10.0.0.1 >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 50 ] || { echo "demo: no link" >&2; exit 1; }
	sleep 0.2
done

say "exporting a 256 MiB ram disk from the server namespace"
modprobe brd rd_nr=1 rd_size=262144 max_part=0
set -x
mkdir $cfs/exports/disk0
echo /dev/ram0 > $cfs/exports/disk0/device
echo 10.0.0.1:1025 > $cfs/exports/disk0/addr
mkdir $cfs/exports/disk0/acl/clients
echo 10.0.0.0/24 > $cfs/exports/disk0/acl/clients/addr
echo rw > $cfs/exports/disk0/acl/clients/perm
in_ns server sh -c "echo 1 > $cfs/exports/disk0/enable"
set +x
grep -d skip . $cfs/exports/disk0/* $cfs/exports/disk0/acl/*/*

say "attaching it in the client namespace with 2 connections"
set -x
mkdir $cfs/remotes/disk0-remote
echo 10.0.0.1:1025 > $cfs/remotes/disk0-remote/addr
echo disk0 > $cfs/remotes/disk0-remote/export
echo 2 > $cfs/remotes/disk0-remote/connections
in_ns client sh -c "echo 1 > $cfs/remotes/disk0-remote/enable"
set +x
grep . $cfs/remotes/disk0-remote/*
dev=/dev/$(cut -d' ' -f1 $cfs/remotes/disk0-remote/device)
echo "server sees clients:"; cat $cfs/exports/disk0/clients
echo "sysfs: $(ls -d /sys/bus/dst/devices/*)"
echo "$dev is a child of $(readlink -f /sys/block/${dev#/dev/}/device)"
echo "size: $(blockdev --getsize64 $dev) bytes, largest I/O" \
	"$(cat /sys/block/${dev#/dev/}/queue/max_hw_sectors_kb) KiB"
dmesg | grep 'dst:' | tail -n 6

say "mkfs.ext4, mount, write a file, read it back"
mkfs.ext4 -q -F "$dev"
mkdir -p /mnt/dst
mount "$dev" /mnt/dst
head -c 16777216 /dev/urandom > /run/demo.file
cp /run/demo.file /mnt/dst/file
umount /mnt/dst
mount "$dev" /mnt/dst
sha256sum /run/demo.file /mnt/dst/file
cmp /run/demo.file /mnt/dst/file && echo "file read back intact"
df -h /mnt/dst | tail -n 1
umount /mnt/dst
fsck.ext4 -fn "$dev" | tail -n 1

say "short fio throughput (TCG guest: compare ratios, not numbers)"
for rw in read write; do
	fio --name=$rw --filename="$dev" --direct=1 --ioengine=libaio \
		--iodepth=16 --rw=$rw --bs=1M --size=128M --runtime=5 \
		--time_based --group_reporting 2>/dev/null |
		grep -E '^ +(READ|WRITE):'
done

say "detaching and stopping"
echo 0 > $cfs/remotes/disk0-remote/enable
echo 0 > $cfs/exports/disk0/enable
rmdir $cfs/remotes/disk0-remote $cfs/exports/disk0/acl/clients \
	$cfs/exports/disk0
dmesg | grep 'dst:' | tail -n 4
rmmod dst
ip netns del server
ip netns del client
echo "demo: done"
