#!/bin/bash
# dracut module 95dst: boot from a root file system on DST.
#
# Included when the root in hostonly mode lives on a DST disk, or when
# asked for (dracut --add dst).  Puts dst.ko (and the crypto modules a
# configured hash or cipher needs), the root=dst: parser, /sbin/dstroot
# (the netroot handler) and, in a systemd initramfs, a generator for
# /sysroot into the initramfs.  docs/root-on-dst.md is the manual.
#
# Build-time settings, from dracut.conf.d or the environment:
#   dst_hash, dst_cipher   algorithms whose modules to include
#   dst_key_file           shared key to put at /etc/dst/root.key (0600)
# shellcheck disable=SC2154 # moddir, initdir, systemdutildir: set by dracut

# block_is_dst MAJ:MIN: the block device is a DST disk (the major
# /proc/devices lists as dst).
block_is_dst() {
    local _maj
    _maj=$(awk '$2 == "dst" { print $1 }' /proc/devices 2> /dev/null)
    [[ -n $_maj ]] && [[ ${1%%:*} == "$_maj" ]]
}

# called by dracut
check() {
    local _rootdev
    # Hostonly: only when DST is somewhere under the root.
    [[ $hostonly ]] || [[ $mount_needs ]] && {
        _rootdev=$(find_root_block_device)
        [[ -b /dev/block/$_rootdev ]] || return 1
        check_block_and_slaves block_is_dst "$_rootdev" || return 255
    }
    return 0
}

# called by dracut
depends() {
    echo network rootfs-block
}

# called by dracut
installkernel() {
    local _alg _tok _m
    instmods dst
    # hmac(sha256) needs crypto-hmac and crypto-sha256, gcm(aes) needs
    # crypto-gcm and crypto-aes: module aliases the crypto API asks for.
    # A template also asks for what it is built from at run time: gcm
    # for ghash and ctr, ccm for ctr and cbcmac.
    for _alg in ${dst_hash:-} ${dst_cipher:-} ${DST_HASH:-} ${DST_CIPHER:-}; do
        for _tok in ${_alg//[(),]/ }; do
            case $_tok in
                gcm | rfc4106) _tok="$_tok ghash ctr" ;;
                ccm | rfc4309) _tok="$_tok ctr cbcmac" ;;
            esac
            for _m in $_tok; do
                hostonly='' instmods -o "crypto-$_m"
            done
        done
    done
}

# called by dracut
install() {
    local _key=${dst_key_file:-${DST_KEY_FILE:-}}

    inst_simple "$moddir/dst-lib.sh" /lib/dst-lib.sh
    inst_hook cmdline 90 "$moddir/parse-dstroot.sh"
    inst_script "$moddir/dstroot.sh" /sbin/dstroot
    inst_multiple date cut sed tail sleep grep
    inst_multiple -o dmesg
    if dracut_module_included "systemd-initrd"; then
        inst_script "$moddir/dst-generator.sh" \
            "$systemdutildir"/system-generators/dracut-dst-generator
    fi
    # The disks' stable names (/dev/dst/<name>), when installed.
    inst_rules 60-dst.rules
    if [[ -n $_key ]]; then
        if [[ ! -r $_key ]]; then
            dfatal "dst: cannot read the key file $_key (dst_key_file)"
            return 1
        fi
        inst_simple "$_key" /etc/dst/root.key
        chmod 0600 "${initdir}/etc/dst/root.key"
    fi
    # systemd-networkd in the initramfs does not run netroot handlers.
    if dracut_module_included "systemd-networkd"; then
        dwarn "dst: systemd-networkd does not call netroot handlers; build with --add network-legacy (or network-manager) to boot from DST"
    fi
    dracut_need_initqueue
}
