#!/bin/sh
# systemd generator of 95dst (systemd initramfs only): a sysroot.mount for
# /dev/root with the file system type and flags of root=dst: (or of
# rootfstype= and rootflags=: dst_mount_opts), so that
# systemd waits for the DST disk that /sbin/dstroot attaches.
# Sourced helpers come from dracut; generators get no shell options.
# shellcheck disable=SC1091,SC2154 # dracut's libraries and variables, from the initramfs

type getarg > /dev/null 2>&1 || . /lib/dracut-lib.sh
command -v dst_parse_root > /dev/null || . /lib/dst-lib.sh

[ -z "$root" ] && root=$(getarg root=)
[ "${root%%:*}" = "dst" ] || exit 0

GENERATOR_DIR=$2
[ -n "$GENERATOR_DIR" ] || exit 1
mkdir -p "$GENERATOR_DIR"

# A malformed line is reported by the cmdline hook; mount nothing here.
dst_parse_root "$root" || exit 0

dst_mount_opts

{
    echo "[Unit]"
    echo "Before=initrd-root-fs.target"
    echo "[Mount]"
    echo "Where=/sysroot"
    echo "What=/dev/root"
    [ -z "$dst_mnt_type" ] || echo "Type=$dst_mnt_type"
    [ -z "$dst_mnt_flags" ] || echo "Options=$dst_mnt_flags"
} > "$GENERATOR_DIR"/sysroot.mount
exit 0
