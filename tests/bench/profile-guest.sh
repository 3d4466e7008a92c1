#!/bin/sh
# The guest half of tests/bench/profile: for each target, one fio job
# (random reads of $DST_PROF_BS at $DST_PROF_QD, or sequential reads for
# blocks larger than 4k) during which the scheduler's tracepoints are
# recorded for $DST_PROF_SECONDS; then wakeups.py says what one I/O cost
# in wakeups and context switches.  Traces go to
# $DST_RESULTS/<target>.trace, the summary to profile.txt.  With
# DST_PROF_CPU=1 the host samples the CPUs instead (cpuprof.py): the
# guest only marks when each target is measured (go-/stop-<target>) and
# leaves the kernel's symbols as they were then (<target>.kallsyms).
set -eu

top=${DST_TOP:?DST_TOP not set}
out=${DST_RESULTS:?DST_RESULTS not set}
cfs=/sys/kernel/config
tr=/sys/kernel/tracing
qd=${DST_PROF_QD:-1}
bs=${DST_PROF_BS:-4k}
cpu=${DST_PROF_CPU:-0}
rw=randread
[ "$bs" = 4k ] || rw="read"
secs=${DST_PROF_SECONDS:-2}
targets=${DST_PROF_TARGETS:-dst-1 dst-2 nvme-tcp}
work=/tmp/profile
mkdir -p "$work"
: > "$out/profile.txt"

die() { echo "profile: $*" >&2; exit 1; }

. "$top/tests/bench/targets.sh"

# start_fio TARGET: fio on $dev in the background ($fio), running long
# enough for 3 s of settling, the measurement and some slack.
start_fio() {
	fio --name="$1" --filename="$dev" --ioengine=libaio --direct=1 \
		--time_based --runtime=$((secs + 5)) --size=256M \
		--rw=$rw --bs="$bs" --iodepth="$qd" --output-format=json \
		--output="$work/$1.json" > /dev/null &
	fio=$!
}

# trace TARGET: fio on $dev, measured in the middle of its run: the
# scheduler's events, or with $cpu the host's samples of the CPUs.
trace() {
	start_fio "$1"
	[ "$cpu" -eq 0 ] || cat /proc/kallsyms > "$out/$1.kallsyms"
	sleep 3
	if [ "$cpu" -eq 1 ]; then
		touch "$out/go-$1"
		sleep "$secs"
		touch "$out/stop-$1"
		wait "$fio" || die "fio failed on $1"
		python3 - "$1" "$work/$1.json" >> "$out/profile.txt" <<'PY'
import json, sys
job = json.load(open(sys.argv[2]))["jobs"][0]["read"]
print("%-10s %7.0f IOPS, %.1f MiB/s while sampled" %
      (sys.argv[1], job["iops"], job["bw_bytes"] / 2**20))
PY
		return
	fi
	echo > $tr/trace
	for e in sched_wakeup sched_switch sched_migrate_task; do
		echo 1 > $tr/events/sched/$e/enable
	done
	sleep "$secs"
	echo 0 > $tr/events/sched/enable
	cp $tr/trace "$out/$1.trace"
	wait "$fio" || die "fio failed on $1"
	python3 "$top/tests/bench/wakeups.py" "$1" "$work/$1.json" \
		"$out/$1.trace" >> "$out/profile.txt"
}

mountpoint -q $cfs || mount -t configfs configfs $cfs
mountpoint -q $tr || mount -t tracefs tracefs $tr
modprobe brd rd_nr=1 rd_size=262144 max_part=0
wait_dev /dev/ram0
fio --name=fill --filename=/dev/ram0 --rw=write --bs=1M --direct=1 \
	--size=256M --ioengine=libaio --iodepth=4 > /dev/null

for t in $targets; do
	case "$t" in
	dst-[0-9]*)
		insmod "$top/module/dst.ko"
		dst_up "${t#dst-}"
		trace "$t"
		dst_down
		rmmod dst
		;;
	nbd) nbd_up; trace nbd; nbd_down ;;
	nvme-tcp) nvme_up; trace nvme-tcp; nvme_down ;;
	*) die "unknown target '$t' (dst-N, nbd, nvme-tcp)" ;;
	esac
done
