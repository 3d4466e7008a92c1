#!/bin/sh
# dracut cmdline hook (priority 90) of 95dst: recognise a root on DST.
#
#   root=dst:SERVER:PORT[:EXPORT[:FSTYPE[:ROOTFLAGS]]]
#   netroot=dst:...      (also what a DHCP root-path of dst:... becomes)
#
# A malformed line stops the boot here, with the reason, rather than
# after the network timeout.  The disk itself is attached by
# /sbin/dstroot once the network is up (40network's netroot calls it).
#
# Sourced by dracut's init (and again by netroot for root=dhcp), so it
# returns rather than exits and sets no shell options.  root=dhcp works
# in the systemd initramfs only (dstroot writes sysroot.mount's drop-in):
# netroot's run of this hook cannot set the shell init's root=, so
# rootfs-block would mount nothing there (docs/root-on-dst.md).
# shellcheck disable=SC1091,SC2154 # dracut's libraries and variables, from the initramfs

command -v dst_parse_root > /dev/null || . /lib/dst-lib.sh

[ -z "$root" ] && root=$(getarg root=)

if [ -z "$netroot" ]; then
    for netroot in $(getargs netroot=); do
        [ "${netroot%%:*}" = "dst" ] && break
    done
    [ "${netroot%%:*}" = "dst" ] || unset netroot
fi

# root= wins over netroot=, as for every netroot type.
if [ "${root%%:*}" = "dst" ]; then
    [ -n "$netroot" ] && warn "dst: root= takes precedence over netroot=; ignoring netroot=$netroot"
    netroot=$root
    unset root
fi

[ "${netroot%%:*}" = "dst" ] || return 0

dst_parse_root "$netroot" || die "dst: cannot use root=$netroot: $dst_err"
_dst_paths=$(getarg rd.dst.paths=)
[ -z "$_dst_paths" ] || dst_check_paths "$_dst_paths" || die "dst: $dst_err"
dst_valid_name "$(dst_node_name)" \
    || die "dst: bad rd.dst.name='$(dst_node_name)' (1-31 of A-Za-z0-9._-)"

# The module, this early, so a missing one is named here.
[ -d /sys/module/dst ] || modprobe dst \
    || die "dst: root is on DST but this initramfs has no dst module (build it with --add dst)"

# shellcheck disable=SC2034
rootok=1

# With no other root=, dstroot makes /dev/root point at the DST disk (a
# udev rule on the node name, as 95nbd does), and rootfs-block mounts it
# with root=dst:'s FSTYPE and ROOTFLAGS (rootfstype= and rootflags=, read
# by 99base's hook before this one, win).  Either way the boot waits until
# the node has its disk.
if [ -z "$root" ]; then
    root=block:/dev/root
    # shellcheck disable=SC2034 # read by rootfs-block's mount hook
    {
        [ "$fstype" != auto ] || [ "$dst_fstype" = auto ] || fstype=$dst_fstype
        [ -n "$(getarg rootflags=)" ] || rflags="$dst_rootflags${rflags:+,$rflags}"
    }
fi
printf 'grep -q . /sys/kernel/config/dst/remotes/%s/device 2>/dev/null\n' \
    "$(dst_node_name)" > "$hookdir"/initqueue/finished/dstroot.sh
