#!/bin/sh
# The benchmark's guest half (tests/bench/run boots the guest): the same
# 256 MiB brd served by DST (1, 2 and 4 connections; 2 with hmac(sha256)
# frames, and with hmac(sha256) + gcm(aes)), NBD (nbd-server)
# and NVMe/TCP (nvmet), all over 127.0.0.1, and used raw, with the same
# four fio jobs in the same order.  One "target job iops MiB/s" line per
# run goes to $DST_RESULTS/bench.txt; versions to bench.versions.
set -eu

top=${DST_TOP:?DST_TOP not set}
out=${DST_RESULTS:?DST_RESULTS not set}
cfs=/sys/kernel/config
runtime=${DST_BENCH_RUNTIME:-8}
ramp=${DST_BENCH_RAMP:-2}
# Subsets, for profiling one target: DST_BENCH_TARGETS="dst" DST_BENCH_CONNS=1
targets=${DST_BENCH_TARGETS:-raw dst dst-crypto nbd nvme}
conns=${DST_BENCH_CONNS:-1 2 4}
work=/tmp/bench
mkdir -p "$work"
: > "$out/bench.txt"

say() { printf '### %s\n' "$*"; }
die() { echo "bench: $*" >&2; exit 1; }

# wait_dev DEV: poll until the block device node exists (10 s).
wait_dev() {
	i=0
	until [ -b "$1" ]; do
		i=$((i + 1))
		[ "$i" -lt 100 ] || die "$1 did not appear"
		sleep 0.1
	done
}

# job NAME: fio arguments of one of the four workloads.
job() {
	case "$1" in
	randread-4k-qd32) echo "--rw=randread --bs=4k --iodepth=32" ;;
	randwrite-4k-qd32) echo "--rw=randwrite --bs=4k --iodepth=32" ;;
	read-1m-qd8) echo "--rw=read --bs=1M --iodepth=8" ;;
	randread-4k-qd1) echo "--rw=randread --bs=4k --iodepth=1" ;;
	esac
}
JOBS="randread-4k-qd32 randwrite-4k-qd32 read-1m-qd8 randread-4k-qd1"

# measure TARGET DEV: the four jobs on DEV, in order.
measure() {
	for j in $JOBS; do
		# shellcheck disable=SC2046
		fio --name="$1-$j" --filename="$2" --ioengine=libaio --direct=1 \
			--time_based --runtime="$runtime" --ramp_time="$ramp" \
			--size=256M $(job "$j") --output-format=json \
			--output="$work/$1-$j.json" > /dev/null
		python3 - "$work/$1-$j.json" "$1" "$j" >> "$out/bench.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["jobs"][0]
rw = d["write"] if d["write"]["io_bytes"] > d["read"]["io_bytes"] else d["read"]
print(sys.argv[2], sys.argv[3], round(rw["iops"]), round(rw["bw_bytes"] / 2**20, 1))
PY
		tail -n 1 "$out/bench.txt"
	done
}

modprobe configfs 2>/dev/null || true
mountpoint -q $cfs || mount -t configfs configfs $cfs
modprobe brd rd_nr=1 rd_size=262144 max_part=0
wait_dev /dev/ram0
# Fill it: reads must touch real pages, not brd's zero page.
fio --name=fill --filename=/dev/ram0 --rw=write --bs=1M --direct=1 \
	--size=256M --ioengine=libaio --iodepth=4 > /dev/null

{
	echo "kernel $(uname -r)"
	echo "fio $(fio --version)"
	echo "qemu $(cat /sys/firmware/qemu_fw_cfg/rev 2>/dev/null || echo tcg)"
	echo "cpus $(nproc)"
	echo "date $(date -u +%Y-%m-%d)"
} > "$out/bench.versions"

want() {
	case " $targets " in *" $1 "*) return 0 ;; esac
	return 1
}

if want raw; then
say "raw brd"
measure raw /dev/ram0
fi

# dst_run LABEL CONNECTIONS [HASH [CIPHER]]: one DST export and remote
# pair over 127.0.0.1, measured as LABEL; a hash or cipher comes with a
# shared key on both ends.
dst_run() {
	label=$1 n=$2 hash=${3:-} cipher=${4:-}
	e=$cfs/dst/exports/bench r=$cfs/dst/remotes/r
	key=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
	say "DST $label"
	mkdir $e
	echo /dev/ram0 > $e/device
	echo 127.0.0.1:7000 > $e/addr
	mkdir $e/acl/local
	echo 127.0.0.0/8 > $e/acl/local/addr
	echo rw > $e/acl/local/perm
	mkdir $r
	echo 127.0.0.1:7000 > $r/addr
	echo bench > $r/export
	echo "$n" > $r/connections
	if [ -n "$hash$cipher" ]; then
		for d in $e $r; do
			echo $key > "$d/key"
			echo "$hash" > "$d/hash"
			echo "$cipher" > "$d/cipher"
		done
	fi
	echo 1 > $e/enable
	echo 1 > $r/enable
	dev=/dev/$(cut -d' ' -f1 $r/device)
	wait_dev "$dev"
	measure "$label" "$dev"
	cat $r/stats > "$out/$label.stats"
	rmdir $r
	rmdir $e/acl/local $e
}

if want dst; then
insmod "$top/module/dst.ko"
for n in $conns; do
	dst_run "dst-$n" "$n"
done
rmmod dst
fi

# The same with every frame authenticated, then also encrypted (2
# connections, so both vCPUs hash).
if want dst-crypto; then
insmod "$top/module/dst.ko"
dst_run dst-hmac 2 'hmac(sha256)'
dst_run dst-gcm 2 'hmac(sha256)' 'gcm(aes)'
rmmod dst
fi

if want nbd; then
say "NBD"
modprobe nbd nbds_max=1
cat > "$work/nbd.conf" <<EOT
[generic]
    listenaddr = 127.0.0.1
    port = 10809
[bench]
    exportname = /dev/ram0
EOT
nbd-server -C "$work/nbd.conf" -p "$work/nbd.pid"
i=0
until nbd-client -N bench 127.0.0.1 10809 /dev/nbd0 -b 4096 > /dev/null 2>&1; do
	i=$((i + 1))
	[ "$i" -lt 50 ] || die "nbd-client could not connect"
	sleep 0.2
done
measure nbd /dev/nbd0
nbd-client -d /dev/nbd0 > /dev/null
kill "$(cat "$work/nbd.pid")" 2>/dev/null || true
fi

if want nvme; then
say "NVMe/TCP"
modprobe nvmet
modprobe nvmet-tcp
modprobe nvme-tcp
S=$cfs/nvmet/subsystems/bench
P=$cfs/nvmet/ports/1
mkdir $S
echo 1 > $S/attr_allow_any_host
mkdir $S/namespaces/1
echo /dev/ram0 > $S/namespaces/1/device_path
echo 1 > $S/namespaces/1/enable
mkdir $P
echo tcp > $P/addr_trtype
echo ipv4 > $P/addr_adrfam
echo 127.0.0.1 > $P/addr_traddr
echo 4420 > $P/addr_trsvcid
ln -s $S $P/subsystems/bench
uuid=$(cat /proc/sys/kernel/random/uuid)
nvme connect -t tcp -a 127.0.0.1 -s 4420 -n bench \
	--hostnqn="nqn.2014-08.org.nvmexpress:uuid:$uuid" --hostid="$uuid" > /dev/null
dev=""
i=0
while [ -z "$dev" ]; do
	for b in /sys/block/nvme*n*; do
		[ -e "$b" ] && dev=/dev/${b##*/}
	done
	i=$((i + 1))
	[ "$i" -lt 100 ] || die "no NVMe/TCP namespace appeared"
	[ -n "$dev" ] || sleep 0.1
done
wait_dev "$dev"
measure nvme-tcp "$dev"
nvme disconnect -n bench > /dev/null
rm $P/subsystems/bench
rmdir $P
echo 0 > $S/namespaces/1/enable
rmdir $S/namespaces/1
rmdir $S
fi
say "done"
