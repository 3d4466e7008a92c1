# Shared helpers for DST bats suites (run inside a test guest).
#
# Every resource a helper makes is recorded, and dst_teardown removes all
# of it -- configfs nodes, namespaces, veths, brd, the module -- even when
# the test failed half-way.  Suites call it from teardown().

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

DST_TOP=${DST_TOP:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
# The runner passes another dst.ko for a debug kernel (tests/check-debug).
DST_KO=${DST_KO:-$DST_TOP/module/dst.ko}
DST_CFS=/sys/kernel/config/dst

# wait_for SECONDS CMD...: poll CMD until it succeeds or the deadline passes.
wait_for() {
	local deadline=$(( $(date +%s) + $1 ))
	shift
	until "$@"; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "wait_for: timed out: $*" >&2
			return 1
		fi
		sleep 0.1
	done
}

# scaled N: N, or a quarter of it (at least 1) in the debug kernel
# (DST_DEBUG=1, set by make check-debug), whose I/O is about nine times
# slower: for sizes of data a test moves, never for what it asserts.
scaled() {
	if [ "${DST_DEBUG:-0}" = 1 ]; then
		echo $(( $1 / 4 > 0 ? $1 / 4 : 1 ))
	else
		echo "$1"
	fi
}

# log_mark: write a unique line to the kernel log and print it;
# log_since MARK: what the kernel logged from that line on.  Counting
# lines instead breaks once the ring buffer is full (a packed guest
# after the fuzzing suite): the count stops growing.
log_mark() {
	local m="dst-test-mark-$$-$RANDOM-$SECONDS"
	echo "$m" > /dev/kmsg
	echo "$m"
}

log_since() {
	dmesg | sed -n "/$1/,\$p"
}

# klog: what the kernel logged since this test began.  A packed guest
# runs many suites, and a line from an earlier test must neither pass
# nor fail this one.  Bats sources this file afresh for every test, so
# the mark is written once per test, before its setup.
if [ -n "${BATS_TEST_NAME:-}" ] && [ -w /dev/kmsg ]; then
	DST_KLOG_MARK=$(log_mark)
fi

klog() {
	log_since "${DST_KLOG_MARK:?klog: no mark: not inside a bats test}"
}

# no_nodes: configfs and the dst bus hold no node at all.
no_nodes() {
	[ -z "$(ls -A "$DST_CFS/exports")" ] &&
		[ -z "$(ls -A "$DST_CFS/remotes")" ] &&
		[ -z "$(ls -A /sys/bus/dst/devices)" ]
}

dst_is_loaded() {
	grep -q '^dst ' /proc/modules
}

dst_load() {
	dst_is_loaded && return 0
	modprobe configfs
	mountpoint -q /sys/kernel/config ||
		mount -t configfs configfs /sys/kernel/config
	insmod "$DST_KO"
	[ -d "$DST_CFS" ]
}

# Remove every node (disabling it, and an export's access rules first:
# configfs removes a directory only once it is empty), then the module.
dst_unload() {
	dst_is_loaded || return 0
	local d
	for d in "$DST_CFS"/remotes/* "$DST_CFS"/exports/*; do
		[ -d "$d" ] || continue
		echo 0 > "$d/enable" 2>/dev/null || true
		export_rmdir "$d"
	done
	rmmod dst
}

# export_rmdir DIR: rmdir an export's directory, its access rules first.
export_rmdir() {
	local r
	for r in "$1"/acl/*; do
		[ -d "$r" ] && rmdir "$r"
	done
	rmdir "$1"
}

# acl_rule EXPORT RULE ADDR PERM: an access rule of an export.
acl_rule() {
	local r=$DST_CFS/exports/$1/acl/$2
	mkdir "$r"
	echo "$3" > "$r/addr"
	echo "$4" > "$r/perm"
}

# pattern_file FILE MB SEED: reproducible pseudo-random data (AES-CTR of
# zeroes keyed by SEED), so a test can recreate what it wrote.
pattern_file() {
	openssl enc -aes-128-ctr -pass "pass:$3" -nosalt -pbkdf2 \
		< /dev/zero 2>/dev/null | head -c $(($2 * 1024 * 1024)) > "$1"
}

# brd_make SIZE_MB [SEED]: ram disks /dev/ram0 (and /dev/ram1 ...,
# BRD_NR of them, default 2) of SIZE_MB each; /dev/ram0 is filled with the
# pattern of SEED (default "dst") and BRD_SUM is its digest.  The pattern
# and its digest are made once per guest (under TCG, AES of 64 MiB costs
# seconds) and kept in /run/dst-patterns for the next test and suite.
brd_make() {
	local mb=$1 seed=${2:-dst} cache=/run/dst-patterns
	local pat=$cache/$seed-$mb
	modprobe brd rd_nr="${BRD_NR:-2}" rd_size=$((mb * 1024)) max_part=0
	DST_MADE_BRD=1
	wait_for 10 test -b /dev/ram0
	if [ ! -f "$pat.sum" ]; then
		mkdir -p "$cache"
		pattern_file "$pat" "$mb" "$seed"
		digest < "$pat" > "$pat.sum"
	fi
	dd if="$pat" of=/dev/ram0 bs=1M oflag=direct status=none
	BRD_SUM=$(cat "$pat.sum")
}

# digest: the digest of standard input.  The tests compare data with data
# (corruption by bugs and by the tests' own bit flips, not by an
# adversary), so MD5 is enough, and under TCG it costs a third of what
# SHA-256 does: 0.5 s against 1.4 s for 64 MiB.
digest() {
	md5sum | cut -d' ' -f1
}

# checksum DEV OFFSET_BYTES LENGTH_BYTES: digest of a device range.
checksum() {
	dd if="$1" iflag=direct,skip_bytes,count_bytes skip="$2" count="$3" \
		bs=1M status=none | digest
}

# netns_pair: namespaces dst-srv and dst-cli joined by veth, with
# 10.99.0.1/24 + fd99::1/64 (server) and 10.99.0.2/24 + fd99::2/64 (client).
netns_pair() {
	ip netns add dst-srv
	ip netns add dst-cli
	DST_MADE_NETNS=1
	ip link add veth-srv netns dst-srv type veth peer name veth-cli netns dst-cli
	ip -n dst-srv addr add 10.99.0.1/24 dev veth-srv
	ip -n dst-cli addr add 10.99.0.2/24 dev veth-cli
	ip -n dst-srv addr add fd99::1/64 dev veth-srv nodad
	ip -n dst-cli addr add fd99::2/64 dev veth-cli nodad
	local ns
	for ns in dst-srv dst-cli; do
		ip -n "$ns" link set lo up
	done
	ip -n dst-srv link set veth-srv up
	ip -n dst-cli link set veth-cli up
	wait_for 10 ip netns exec dst-cli ping -c1 -W1 10.99.0.1 > /dev/null
}

# in_ns NS CMD...: run CMD in network namespace NS only.  (ip netns exec
# would also remount /sys and hide configfs.)
in_ns() {
	local ns=$1
	shift
	nsenter --net="/run/netns/$ns" "$@"
}

# cfs_write FILE VALUE [NS]: write a configfs attribute (from NS, if given).
cfs_write() {
	if [ -n "${3:-}" ]; then
		in_ns "$3" sh -c 'echo "$2" > "$1"' sh "$1" "$2"
	else
		echo "$2" > "$1"
	fi
}

# dst_export NAME DEVICE ADDR [ATTR=VALUE...]: create an export and enable
# it from the server namespace ($DST_SRV_NS, default dst-srv).  It is open
# to every address (rules all4 and all6, rw) unless DST_ACL=none, for
# tests that write their own access list.
dst_export() {
	local name=$1 dev=$2 addr=$3 kv d=$DST_CFS/exports/$1
	shift 3
	mkdir "$d"
	echo "$dev" > "$d/device"
	echo "$addr" > "$d/addr"
	if [ "${DST_ACL:-all}" = all ]; then
		acl_rule "$name" all4 0.0.0.0/0 rw
		acl_rule "$name" all6 ::/0 rw
	fi
	for kv in "$@"; do
		echo "${kv#*=}" > "$d/${kv%%=*}"
	done
	cfs_write "$d/enable" 1 "${DST_SRV_NS:-dst-srv}"
}

# dst_attach NAME ADDR [ATTR=VALUE...]: create a remote and enable it from
# the client namespace ($DST_CLI_NS, default dst-cli); DST_DEV is then its
# /dev/dstN.
dst_attach() {
	local name=$1 addr=$2 kv d=$DST_CFS/remotes/$1
	shift 2
	mkdir "$d"
	echo "$addr" > "$d/addr"
	for kv in "$@"; do
		echo "${kv#*=}" > "$d/${kv%%=*}"
	done
	cfs_write "$d/enable" 1 "${DST_CLI_NS:-dst-cli}"
	DST_DEV=/dev/$(cut -d' ' -f1 "$d/device")
	wait_for 10 test -b "$DST_DEV"
}

# fio_verify_start DEV FIO_ARGS...: random writes with crc32c verify
# on DEV in the background (written first, then read back and checked);
# fio_verify_wait collects its verdict.
fio_verify_start() {
	local dev=$1
	shift
	fio --name=verify --filename="$dev" --direct=1 --ioengine=libaio \
		--rw=randwrite --verify=crc32c --verify_fatal=1 --do_verify=1 \
		--randrepeat=0 "$@" --output="$BATS_TEST_TMPDIR/fio.out" \
		> /dev/null 2>&1 &
	DST_FIO_PID=$!
}

# fio_verify_wait: wait for fio_verify_start's fio; fail, showing its
# output, unless it finished with no error and its verify passed.
fio_verify_wait() {
	local rc=0
	wait "$DST_FIO_PID" || rc=$?
	DST_FIO_PID=""
	if [ "$rc" -ne 0 ] || grep -q 'err= *[1-9]' "$BATS_TEST_TMPDIR/fio.out"; then
		echo "fio failed (rc $rc):" >&2
		cat "$BATS_TEST_TMPDIR/fio.out" >&2
		return 1
	fi
}

# stat_of NODE_DIR KEY: one value of a node's "stats".
stat_of() {
	awk -v k="$2" '$1 == k { print $2 }' "$1/stats"
}

# stat_at_least NODE_DIR KEY N: that value is N or more.
stat_at_least() {
	[ "$(stat_of "$1" "$2")" -ge "$3" ]
}

# state_is NODE_DIR STATE
state_is() {
	[ "$(cat "$1/state")" = "$2" ]
}

# hostile_server MODE [ARGS...]: tests/proto/dstserver.py in dst-srv,
# listening on port 7000, logging to $SLOG; dst_teardown stops it.
# nsenter (not in_ns, which would leave a subshell between) execs
# python, so $! is the server itself.
hostile_server() {
	SLOG=$BATS_TEST_TMPDIR/server.log
	nsenter --net=/run/netns/dst-srv python3 \
		"$DST_TOP/tests/proto/dstserver.py" \
		--port 7000 --log "$SLOG" --mode "$@" 3>&- &
	DST_SERVER_PID=$!
	wait_for 10 grep -q listening "$SLOG"
}

# logged LINE: the hostile server logged LINE.
logged() {
	grep -qx "$1" "$SLOG"
}

dst_teardown() {
	if [ -n "${DST_SERVER_PID:-}" ]; then
		kill "$DST_SERVER_PID" 2>/dev/null || true
		wait "$DST_SERVER_PID" 2>/dev/null || true
		DST_SERVER_PID=""
	fi
	if [ -n "${DST_FIO_PID:-}" ]; then
		kill "$DST_FIO_PID" 2>/dev/null || true
		wait "$DST_FIO_PID" 2>/dev/null || true
	fi
	dst_unload || echo "teardown: dst did not unload" >&2
	local ns
	for ns in ${DST_EXTRA_NETNS:-}; do
		ip netns del "$ns" 2>/dev/null || true
	done
	if [ -n "${DST_MADE_NETNS:-}" ]; then
		ip netns del dst-srv 2>/dev/null || true
		ip netns del dst-cli 2>/dev/null || true
	fi
	if [ -n "${DST_MADE_BRD:-}" ]; then
		rmmod brd 2>/dev/null || true
	fi
}

# cfs_errno FILE VALUE [NS]: write VALUE to FILE (from NS, if given) and
# print OK or the errno name (ENOENT, EBUSY, ...) the write returned.
cfs_errno() {
	local ns=()
	[ -n "${3:-}" ] && ns=(nsenter --net="/run/netns/$3")
	"${ns[@]}" python3 -c '
import errno, os, sys
try:
    fd = os.open(sys.argv[1], os.O_WRONLY)
    try:
        os.write(fd, sys.argv[2].encode() + b"\n")
    finally:
        os.close(fd)
    print("OK")
except OSError as e:
    print(errno.errorcode[e.errno])' "$1" "$2"
}

# netns_client NS N: one more client namespace NS joined to dst-srv by
# its own veth, server 10.99.N.1, client 10.99.N.2.
netns_client() {
	ip netns add "$1"
	DST_EXTRA_NETNS="${DST_EXTRA_NETNS:-} $1"
	ip link add "vs-$1" netns dst-srv type veth peer name "vc-$1" netns "$1"
	ip -n dst-srv addr add "10.99.$2.1/24" dev "vs-$1"
	ip -n "$1" addr add "10.99.$2.2/24" dev "vc-$1"
	ip -n "$1" link set lo up
	ip -n dst-srv link set "vs-$1" up
	ip -n "$1" link set "vc-$1" up
	wait_for 10 in_ns "$1" ping -c1 -W1 "10.99.$2.1" > /dev/null
}
