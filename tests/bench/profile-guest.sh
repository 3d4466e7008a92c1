#!/bin/sh
# The guest half of tests/bench/profile: for each target, one fio job
# (4k random reads at $DST_PROF_QD) during which the scheduler's
# tracepoints are recorded for $DST_PROF_SECONDS; then wakeups.py says
# what one I/O cost in wakeups and context switches.  Traces go to
# $DST_RESULTS/<target>.trace, the summary to profile.txt.
set -eu

top=${DST_TOP:?DST_TOP not set}
out=${DST_RESULTS:?DST_RESULTS not set}
cfs=/sys/kernel/config
tr=/sys/kernel/tracing
qd=${DST_PROF_QD:-1}
secs=${DST_PROF_SECONDS:-2}
targets=${DST_PROF_TARGETS:-dst-1 dst-2 nvme-tcp}
work=/tmp/profile
mkdir -p "$work"
: > "$out/profile.txt"

die() { echo "profile: $*" >&2; exit 1; }

. "$top/tests/bench/targets.sh"

# trace TARGET: fio on $dev, traced in the middle of its run.
trace() {
	fio --name="$1" --filename="$dev" --ioengine=libaio --direct=1 \
		--time_based --runtime=$((secs + 5)) --size=256M \
		--rw=randread --bs=4k --iodepth="$qd" --output-format=json \
		--output="$work/$1.json" > /dev/null &
	fio=$!
	sleep 3
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
