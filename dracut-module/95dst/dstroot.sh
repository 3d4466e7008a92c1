#!/bin/sh
# /sbin/dstroot NETIF NETROOT NEWROOT: dracut's netroot handler for DST.
#
# 40network's netroot runs it once an interface is up.  It configures a
# remote node through configfs, in the initramfs's (the initial) network
# namespace, with fail_timeout_s=-1 so that I/O to the root waits out any
# outage rather than failing, attaches it, and points /dev/root at the
# disk.  The node is kernel state: it outlives switch-root and stays in
# configfs for the running system (docs/root-on-dst.md).
#
# dracut-lib.sh is not written for set -u, so this script sets no shell
# options and checks every step itself.
# shellcheck disable=SC1091,SC2154 # dracut's libraries and variables, from the initramfs

PATH=/usr/sbin:/usr/bin:/sbin:/bin
command -v getarg > /dev/null || . /lib/dracut-lib.sh
command -v dst_parse_root > /dev/null || . /lib/dst-lib.sh

if [ -z "$1" ] || [ -z "$2" ] || [ -z "$3" ]; then
    warn "usage: dstroot NETIF dst:SERVER:PORT[:EXPORT[:FSTYPE[:ROOTFLAGS]]] NEWROOT"
    exit 1
fi
netroot=$2
# $3, NEWROOT: rootfs-block (or sysroot.mount) mounts the root there.
[ "${netroot%%:*}" = "dst" ] || exit 0

dst_parse_root "$netroot" || die "dst: cannot use root=$netroot: $dst_err"
name=$(dst_node_name)
dst_valid_name "$name" || die "dst: bad rd.dst.name='$name'"

cfs=/sys/kernel/config
node=$cfs/dst/remotes/$name

# The kernel's last word on why a write was refused.
kernel_reason() {
    dmesg 2> /dev/null | sed -n 's/^\[[^]]*\] dst: //p' | tail -n 1
}

# set_attr ATTR VALUE WHAT: one configfs write; WHAT names the option.
set_attr() {
    if ! _err=$( (printf '%s\n' "$2" > "$node/$1") 2>&1); then
        die "dst: $3: ${_err##*: } (kernel: $(kernel_reason))"
    fi
}

# Already attached (netroot runs once per interface): nothing to do.
if grep -q . "$node/device" 2> /dev/null; then
    exit 0
fi

[ -d /sys/module/dst ] || modprobe dst || die "dst: cannot load the dst module"
grep -q " $cfs configfs" /proc/mounts || mount -t configfs configfs "$cfs" \
    || die "dst: cannot mount configfs on $cfs"
[ -d "$cfs/dst" ] || die "dst: $cfs/dst missing after loading dst"

if [ ! -d "$node" ]; then
    mkdir "$node" || die "dst: cannot create remote node $node"
fi

# The root's other addresses (multipath): one connection per address
# unless rd.dst.connections says more.
paths=$(getarg rd.dst.paths=)
if [ -n "$paths" ]; then
    dst_check_paths "$paths" || die "dst: $dst_err"
    n=$((dst_npaths + 1))
    c=$(getarg rd.dst.connections=)
    case "$c" in
        '' | *[!0-9]*) ;;
        *) [ "$c" -ge "$n" ] || die "dst: rd.dst.connections=$c is fewer than the $n addresses of root= and rd.dst.paths=" ;;
    esac
    set_attr addr "$dst_server:$dst_port,$paths" "server $dst_server:$dst_port and rd.dst.paths=$paths"
    set_attr connections "$n" "rd.dst.paths=$paths"
else
    set_attr addr "$dst_server:$dst_port" "server $dst_server:$dst_port"
fi
set_attr export "$dst_export" "export '$dst_export'"
ft=$(getarg rd.dst.fail_timeout=)
set_attr fail_timeout_s "${ft:--1}" "rd.dst.fail_timeout=${ft:--1}"
for opt in connections:connections queue_depth:queue_depth \
    max_pages:max_pages trans_timeout:trans_scan_timeout \
    retries:trans_max_retries keepalive:keepalive_ms \
    reconnect_delay:reconnect_delay_ms; do
    v=$(getarg "rd.dst.${opt%%:*}=")
    [ -z "$v" ] || set_attr "${opt#*:}" "$v" "rd.dst.${opt%%:*}=$v"
done
uuid=$(getarg rd.dst.uuid=)
[ -z "$uuid" ] || set_attr uuid "$uuid" "rd.dst.uuid=$uuid"
if getargbool 0 rd.dst.ro; then
    set_attr read_only 1 "rd.dst.ro"
fi

# The shared key (authentication), then frame hashing and encryption.
# A key in the initramfs (module-setup.sh's dst_key_file) is used
# whenever it is there; rd.dst.key= names another file.  Hash or cipher
# without a key would be refused by the module at enable: say why here.
hash=$(getarg rd.dst.hash=)
cipher=$(getarg rd.dst.cipher=)
keyfile=$(getarg rd.dst.key=)
if [ -z "$keyfile" ] && [ -e /etc/dst/root.key ]; then
    keyfile=/etc/dst/root.key
fi
if [ -n "$hash$cipher$keyfile" ]; then
    [ -e "$node/key" ] || die "dst: a key, rd.dst.hash or rd.dst.cipher given, but this dst module has no authentication or encryption"
    [ -n "$keyfile" ] || die "dst: rd.dst.hash/rd.dst.cipher need a key: no /etc/dst/root.key in the initramfs and no rd.dst.key= (see docs/root-on-dst.md)"
    [ -r "$keyfile" ] || die "dst: cannot read the key file $keyfile in the initramfs (see docs/root-on-dst.md)"
    # Not set_attr: an error must not print the key.
    if ! (printf '%s\n' "$(cat "$keyfile")" > "$node/key") 2> /dev/null; then
        die "dst: the key in $keyfile is refused (kernel: $(kernel_reason))"
    fi
    [ -z "$hash" ] || set_attr hash "$hash" "rd.dst.hash=$hash"
    [ -z "$cipher" ] || set_attr cipher "$cipher" "rd.dst.cipher=$cipher"
fi

# /dev/root, from a rule on the node's name, when root= named no other
# device (as 95nbd does for /dev/nbd0).
want_root=""
if [ "$root" = "block:/dev/root" ] || [ "$root" = "dhcp" ] || [ -z "$root" ]; then
    mkdir -p /etc/udev/rules.d
    printf 'SUBSYSTEM=="block", KERNEL=="dst[0-9]*", ENV{DEVTYPE}=="disk", SUBSYSTEMS=="dst", ATTRS{role}=="remote", ATTRS{name}=="%s", SYMLINK+="root"\n' \
        "$name" > /etc/udev/rules.d/99-dst-root.rules \
        || die "dst: cannot write /etc/udev/rules.d/99-dst-root.rules"
    udevadm control --reload
    want_root=1
fi

# The server may come up after us (a rack powering on): keep trying for
# rd.dst.connect_timeout seconds, then give up with the reason; dracut's
# own timeout then gives the emergency shell.
wait_s=$(getarg rd.dst.connect_timeout=)
case "$wait_s" in
    '' | *[!0-9]*) wait_s=60 ;;
esac
deadline=$(($(date +%s) + wait_s))
delay=1
while :; do
    if _err=$( (echo 1 > "$node/enable") 2>&1); then
        break
    fi
    why="${_err##*: } (kernel: $(kernel_reason))"
    if [ "$(date +%s)" -ge "$deadline" ]; then
        warn "dst: cannot attach export '$dst_export' from $dst_server:$dst_port: $why; giving up after ${wait_s}s"
        exit 1
    fi
    warn "dst: cannot attach export '$dst_export' from $dst_server:$dst_port: $why; retrying in ${delay}s"
    sleep "$delay"
    [ "$delay" -ge 8 ] || delay=$((delay * 2))
done
info "dst: attached export '$dst_export' from $dst_server:$dst_port as $(cut -d' ' -f1 "$node/device")"

[ -n "$want_root" ] || exit 0
wait_for_dev -n /dev/root

# dracut's shell init: rootfs-block mounts /dev/root with the type and
# flags the cmdline hook set (root=dst: on the command line; with
# root=dhcp nothing mounts it there).  A systemd initramfs: the
# generator wrote sysroot.mount; for root=dhcp (root-path known only
# now) add them here.
if [ -n "$DRACUT_SYSTEMD" ]; then
    dst_mount_opts
    mkdir -p /run/systemd/system/sysroot.mount.d
    {
        echo "[Mount]"
        echo "Where=/sysroot"
        echo "What=/dev/root"
        [ -z "$dst_mnt_type" ] || echo "Type=$dst_mnt_type"
        [ -z "$dst_mnt_flags" ] || echo "Options=$dst_mnt_flags"
    } > /run/systemd/system/sysroot.mount.d/dst.conf
    systemctl --no-block daemon-reload
fi
exit 0
