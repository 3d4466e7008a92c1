#!/bin/sh
# The benchmark's guest half (tests/bench/run boots the guest): the same
# 256 MiB brd served by DST (1, 2 and 4 connections; 2 with hmac(sha256)
# frames, and with hmac(sha256) + gcm(aes)), NBD (nbd-server)
# and NVMe/TCP (nvmet), all over 127.0.0.1, and used raw, with the same
# fio jobs in the same order.  Two rounds, the second in reverse
# order: a guest under TCG speeds up or slows down over a boot (NVMe/TCP
# at 4k QD1 went from 5,500 to 7,400 IOPS over one), which would favour
# whichever target comes last; averaged, a linear drift cancels.  One
# line per run goes to $DST_RESULTS/bench.txt:
#   target job iops MiB/s round p50 p99 p99.9 cpu
# the percentiles of fio's total latency (submission to completion:
# through io_uring a request may complete before fio notes it issued,
# which would make its completion latency alone read a few
# microseconds) in microseconds, and cpu
# the guest's busy CPU time per I/O in microseconds (both ends of the
# connection run in this guest: /proc/stat over the middle of the job);
# versions to bench.versions.
set -eu

top=${DST_TOP:?DST_TOP not set}
out=${DST_RESULTS:?DST_RESULTS not set}
cfs=/sys/kernel/config
runtime=${DST_BENCH_RUNTIME:-6}
rounds=${DST_BENCH_ROUNDS:-2}
ramp=${DST_BENCH_RAMP:-2}
# Subsets, for profiling one target: DST_BENCH_TARGETS="dst" DST_BENCH_CONNS=1
# DST_BENCH_JOBS="read-1m-qd8" (the names below)
targets=${DST_BENCH_TARGETS:-raw dst dst-crypto nbd nvme}
# A/B (tests/bench/ab): targets "base" and "base-crypto" are dst and
# dst-crypto with this other dst.ko, their labels prefixed "base-".
base_ko=${DST_BENCH_BASE_KO:-}
# ... and "dst" may be another build than the tree's (bench-ab -T).
tree_ko=${DST_BENCH_TREE_KO:-$top/module/dst.ko}
conns=${DST_BENCH_CONNS:-1 2 4}
work=/tmp/bench
mkdir -p "$work"
: > "$out/bench.txt"

say() { printf '### %s\n' "$*"; }
die() { echo "bench: $*" >&2; exit 1; }

. "$top/tests/bench/targets.sh"

# job NAME: fio arguments of one of the workloads.  The -uring jobs
# are the libaio ones through io_uring (interrupt-driven, no polling);
# the -hipri one polls (IORING_SETUP_IOPOLL), through the poll queue
# DST is given (targets.sh; NVMe/TCP's would make the kernel warn).
job() {
	case "$1" in
	randread-4k-qd32) echo "--ioengine=libaio --rw=randread --bs=4k --iodepth=32" ;;
	randwrite-4k-qd32) echo "--ioengine=libaio --rw=randwrite --bs=4k --iodepth=32" ;;
	read-1m-qd8) echo "--ioengine=libaio --rw=read --bs=1M --iodepth=8" ;;
	randread-4k-qd1) echo "--ioengine=libaio --rw=randread --bs=4k --iodepth=1" ;;
	randwrite-4k-qd1) echo "--ioengine=libaio --rw=randwrite --bs=4k --iodepth=1" ;;
	randread-4k-qd32-uring) echo "--ioengine=io_uring --rw=randread --bs=4k --iodepth=32" ;;
	randread-4k-qd1-uring) echo "--ioengine=io_uring --rw=randread --bs=4k --iodepth=1" ;;
	randread-4k-qd1-hipri) echo "--ioengine=io_uring --hipri=1 --rw=randread --bs=4k --iodepth=1" ;;
	*) die "no fio job '$1'" ;;
	esac
}
JOBS=${DST_BENCH_JOBS:-randread-4k-qd32 randwrite-4k-qd32 read-1m-qd8 randread-4k-qd1 randwrite-4k-qd1 randread-4k-qd32-uring randread-4k-qd1-uring randread-4k-qd1-hipri}
for j in $JOBS; do job "$j" > /dev/null; done

# cpu_busy: the guest's busy and total jiffies so far, "busy total".
cpu_busy() {
	awk '$1 == "cpu" {
		busy = $2 + $3 + $4 + $7 + $8 + $9
		print busy, busy + $5 + $6
	}' /proc/stat
}

# measure TARGET DEV: the jobs on DEV, in order.  While fio runs, the
# guest's CPU use is read over the middle of its measured time: from a
# second after the warm-up ends to a second before the end, a window
# that fio's start-up and wind-down stay out of.  Its busy share times
# the CPUs, over the IOPS fio measured, is the CPU time one I/O cost.
measure() {
	win=$((runtime - 2))
	[ "$win" -ge 1 ] || win=1
	for j in $JOBS; do
		# shellcheck disable=SC2046
		fio --name="$1-$j" --filename="$2" --direct=1 --lat_percentiles=1 \
			--time_based --runtime="$runtime" --ramp_time="$ramp" \
			--size=256M $(job "$j") --output-format=json \
			--output="$work/$1-$j.json" > /dev/null &
		fio=$!
		sleep $((ramp + 1))
		c0=$(cpu_busy)
		sleep "$win"
		c1=$(cpu_busy)
		wait "$fio" || die "fio failed: $1 $j"
		python3 - "$work/$1-$j.json" "$1" "$j" "$round" "$c0" "$c1" "$(nproc)" \
			>> "$out/bench.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["jobs"][0]
rw = d["write"] if d["write"]["io_bytes"] > d["read"]["io_bytes"] else d["read"]
pct = rw["lat_ns"].get("percentile", {})
lat = ["%.1f" % (pct.get(p, 0) / 1000.0)
       for p in ("50.000000", "99.000000", "99.900000")]
b0, t0 = map(int, sys.argv[5].split())
b1, t1 = map(int, sys.argv[6].split())
busy = (b1 - b0) / (t1 - t0) if t1 > t0 else 0
cpu = busy * int(sys.argv[7]) * 1e6 / rw["iops"] if rw["iops"] else 0
print(sys.argv[2], sys.argv[3], round(rw["iops"]), round(rw["bw_bytes"] / 2**20, 1),
      sys.argv[4], *lat, "%.1f" % cpu)
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

run_raw() {
	say "raw brd"
	measure raw /dev/ram0
}

# dst_run LABEL CONNECTIONS [HASH [CIPHER]]: DST measured as LABEL.
dst_run() {
	say "DST $1"
	label=$1
	shift
	dst_up "$@"
	measure "$label" "$dev"
	dst_down "$out/$label.stats"
}

# run_dst KO PREFIX ORDER: one DST pair per connection count, in ORDER.
run_dst() {
	insmod "$1"
	for n in $3; do
		dst_run "$2dst-$n" "$n"
	done
	rmmod dst
}

# The same with every frame authenticated, then also encrypted (2
# connections, so both vCPUs hash).  run_dst_crypto KO PREFIX
run_dst_crypto() {
	insmod "$1"
	dst_run "$2dst-hmac" 2 'hmac(sha256)'
	dst_run "$2dst-gcm" 2 'hmac(sha256)' 'gcm(aes)'
	rmmod dst
}

run_nbd() {
	say "NBD"
	nbd_up
	measure nbd "$dev"
	nbd_down
}

run_nvme() {
	say "NVMe/TCP"
	nvme_up
	measure nvme-tcp "$dev"
	nvme_down
}

# run TARGET CONNECTION_ORDER
run() {
	want "$1" || return 0
	case "$1" in
	raw) run_raw ;;
	dst) run_dst "$tree_ko" "" "$2" ;;
	dst-crypto) run_dst_crypto "$tree_ko" "" ;;
	base) run_dst "$base_ko" base- "$2" ;;
	base-crypto) run_dst_crypto "$base_ko" base- ;;
	nbd) run_nbd ;;
	nvme) run_nvme ;;
	esac
}

# rev WORDS: the words in reverse order.
rev() {
	r=""
	for w in $1; do r="$w $r"; done
	echo "$r"
}

# The crypto limit keyed DST works under: the kernel's hmac(sha256) and
# gcm(aes) on one CPU of this guest (tests/bench/cryptospeed.py).
if want dst-crypto; then
	say "crypto speed"
	python3 "$top/tests/bench/cryptospeed.py" 2 > "$out/bench.crypto" ||
		die "cryptospeed.py failed"
	cat "$out/bench.crypto"
fi

order="raw dst dst-crypto nbd nvme base base-crypto"
if want base || want base-crypto; then
	[ -f "$base_ko" ] || die "DST_BENCH_BASE_KO: no dst.ko at '$base_ko'"
	# Interleaved, so a drift over the boot favours neither build.
	order="dst base dst-crypto base-crypto"
fi
round=1
while [ "$round" -le "$rounds" ]; do
	say "round $round"
	for t in $order; do run "$t" "$conns"; done
	# The next round goes back the way this one came.
	order=$(rev "$order")
	conns=$(rev "$conns")
	round=$((round + 1))
done
say "done"
