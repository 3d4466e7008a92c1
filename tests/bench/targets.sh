# shellcheck shell=sh disable=SC2154
# Sourced by the benchmark's guest scripts (guest.sh, profile-guest.sh):
# bring each target up over 127.0.0.1 on /dev/ram0 and down again.  The
# caller sets cfs (configfs mount), work (scratch directory) and top
# (the tree), and defines die.  Each *_up sets dev to the device to use.

# wait_dev DEV: poll until the block device node exists (10 s).
wait_dev() {
	i=0
	until [ -b "$1" ]; do
		i=$((i + 1))
		[ "$i" -lt 100 ] || die "$1 did not appear"
		sleep 0.1
	done
}

# dst_up CONNECTIONS [HASH [CIPHER]]: one DST export and remote pair
# (dst.ko loaded); a hash or cipher comes with a shared key on both ends.
dst_up() {
	n=$1 hash=${2:-} cipher=${3:-}
	e=$cfs/dst/exports/bench r=$cfs/dst/remotes/r
	key=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
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
	# One poll queue, for the polled job; a build without them has none.
	[ ! -e $r/poll_queues ] || echo 1 > $r/poll_queues
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
}

# dst_down [STATS_FILE]: detach and remove the pair, keeping the
# remote's stats first if asked.
dst_down() {
	r=$cfs/dst/remotes/r e=$cfs/dst/exports/bench
	[ -z "${1:-}" ] || cat $r/stats > "$1"
	rmdir $r
	rmdir $e/acl/local $e
}

nbd_up() {
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
	dev=/dev/nbd0
}

nbd_down() {
	nbd-client -d /dev/nbd0 > /dev/null
	kill "$(cat "$work/nbd.pid")" 2>/dev/null || true
}

# nvme_up: the kernel's nvmet-tcp target over configfs, nvme-cli's
# connect with its default of one I/O queue per CPU.  No poll queues:
# 6.1's nvme_tcp_poll() takes lock_sock(), which sleeps, inside the RCU
# read-side section io_uring polls in, and the kernel warns ("Voluntary
# context switch within RCU read-side critical section", seen in a
# bench guest with --nr-poll-queues=1); docs/benchmarks.md.
nvme_up() {
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
}

nvme_down() {
	nvme disconnect -n bench > /dev/null
	rm $P/subsystems/bench
	rmdir $P
	echo 0 > $S/namespaces/1/enable
	rmdir $S/namespaces/1
	rmdir $S
}
