#!/bin/sh
# dst-lib.sh: the parser of root=dst: shared by the cmdline hook, the
# netroot handler and the systemd generator of dracut's 95dst module, so
# all three read the same line the same way (docs/root-on-dst.md).
#
# Sourced by dracut's own shells, so it sets no shell options and only
# variables prefixed dst_ (and _dst_ for scratch).
# shellcheck disable=SC2034 # dst_* are this file's results, read by its callers

# dst_valid_name NAME: a DST node or export name, as configfs takes it.
dst_valid_name() {
    case "$1" in
        '' | .* | *[!A-Za-z0-9._-]*) return 1 ;;
    esac
    [ "${#1}" -le 31 ]
}

# dst_valid_ipv4 ADDR: four dotted decimal numbers of 0..255.
dst_valid_ipv4() {
    _dst_a=$1.
    _dst_n=0
    while [ -n "$_dst_a" ]; do
        _dst_o=${_dst_a%%.*}
        _dst_a=${_dst_a#*.}
        case "$_dst_o" in
            '' | *[!0-9]* | ????*) return 1 ;;
        esac
        [ "$_dst_o" -le 255 ] || return 1
        _dst_n=$((_dst_n + 1))
    done
    [ "$_dst_n" -eq 4 ]
}

# dst_parse_root SPEC: split dst:SERVER:PORT[:EXPORT[:FSTYPE[:ROOTFLAGS]]]
# into dst_server (IPv6 kept in brackets, as configfs's addr wants it),
# dst_port, dst_export (default root), dst_fstype (default auto) and
# dst_rootflags.  On a malformed SPEC return 1 with the reason in dst_err.
dst_parse_root() {
    dst_err=""
    dst_server="" dst_port="" dst_export="" dst_fstype="" dst_rootflags=""
    _dst_r=${1#dst:}
    if [ "$_dst_r" = "$1" ]; then
        dst_err="'$1' does not start with dst:"
        return 1
    fi
    case "$_dst_r" in
        "["*)
            dst_server=${_dst_r%%]*}
            if [ "$dst_server" = "$_dst_r" ]; then
                dst_err="no ']' closes the IPv6 server address"
                return 1
            fi
            dst_server="$dst_server]"
            _dst_r=${_dst_r#"$dst_server"}
            _dst_a=${dst_server#[}
            _dst_a=${_dst_a%]}
            case "$_dst_a" in
                *:*:*) ;;
                *) dst_err="bad IPv6 server address '$_dst_a'"; return 1 ;;
            esac
            case "$_dst_a" in
                *[!0-9A-Fa-f:.]*)
                    dst_err="bad IPv6 server address '$_dst_a'"
                    return 1
                    ;;
            esac
            ;;
        *)
            dst_server=${_dst_r%%:*}
            _dst_r=${_dst_r#"$dst_server"}
            if ! dst_valid_ipv4 "$dst_server"; then
                dst_err="bad server address '$dst_server' (an IPv4 address, or an IPv6 one in brackets)"
                return 1
            fi
            ;;
    esac
    case "$_dst_r" in
        :*) _dst_r=${_dst_r#:} ;;
        *)
            dst_err="no :PORT after the server"
            return 1
            ;;
    esac
    # The remaining fields, one by one; ROOTFLAGS takes the rest.
    dst_port=${_dst_r%%:*}
    _dst_r=${_dst_r#"$dst_port"}
    _dst_r=${_dst_r#:}
    dst_export=${_dst_r%%:*}
    _dst_r=${_dst_r#"$dst_export"}
    _dst_r=${_dst_r#:}
    dst_fstype=${_dst_r%%:*}
    _dst_r=${_dst_r#"$dst_fstype"}
    dst_rootflags=${_dst_r#:}

    case "$dst_port" in
        '' | *[!0-9]* | ??????*)
            dst_err="bad port '$dst_port' (1-65535)"
            return 1
            ;;
    esac
    if [ "$dst_port" -lt 1 ] || [ "$dst_port" -gt 65535 ]; then
        dst_err="bad port '$dst_port' (1-65535)"
        return 1
    fi
    [ -n "$dst_export" ] || dst_export=root
    if ! dst_valid_name "$dst_export"; then
        dst_err="bad export name '$dst_export' (1-31 of A-Za-z0-9._-, not starting with '.')"
        return 1
    fi
    [ -n "$dst_fstype" ] || dst_fstype=auto
    case "$dst_fstype" in
        *[!A-Za-z0-9_.]*)
            dst_err="bad file system type '$dst_fstype'"
            return 1
            ;;
    esac
    return 0
}

# dst_check_paths LIST: the root's other addresses (rd.dst.paths=,
# multipath), ADDR:PORT[,ADDR:PORT...], each a server and port as in
# root=dst:.  Their number into dst_npaths; on a malformed LIST return 1
# with the reason in dst_err.  Leaves dst_server and the rest alone.
dst_check_paths() {
    dst_err="" dst_npaths=0
    _dst_l=$1,
    while [ -n "$_dst_l" ]; do
        _dst_p=${_dst_l%%,*}
        _dst_l=${_dst_l#*,}
        if ! _dst_e=$(
            if ! dst_parse_root "dst:$_dst_p"; then
                echo "$dst_err"
                exit 1
            fi
            [ "$dst_server:$dst_port" = "$_dst_p" ] || {
                echo "want ADDR:PORT"
                exit 1
            }
        ); then
            dst_err="bad address '$_dst_p' in rd.dst.paths: $_dst_e"
            return 1
        fi
        dst_npaths=$((dst_npaths + 1))
    done
    if [ "$dst_npaths" -gt 3 ]; then
        dst_err="rd.dst.paths: at most 3 more addresses"
        return 1
    fi
    return 0
}

# dst_node_name: the remote node's name, rd.dst.name= or root.
dst_node_name() {
    _dst_n=$(getarg rd.dst.name=)
    echo "${_dst_n:-root}"
}

# dst_mount_opts: after dst_parse_root, the type (dst_mnt_type, empty
# for auto) and options (dst_mnt_flags) /dev/root is mounted with in a
# systemd initramfs -- the rule the shell init's rootfs-block follows
# (parse-dstroot.sh): rootfstype= and rootflags= on the command line win
# over root=dst:'s FSTYPE and ROOTFLAGS, and ro or rw there is added.
dst_mount_opts() {
    dst_mnt_type=$(getarg rootfstype=)
    [ -n "$dst_mnt_type" ] || dst_mnt_type=$dst_fstype
    [ "$dst_mnt_type" != auto ] || dst_mnt_type=""
    dst_mnt_flags=$(getarg rootflags=)
    [ -n "$dst_mnt_flags" ] || dst_mnt_flags=$dst_rootflags
    if getarg ro > /dev/null; then
        dst_mnt_flags=${dst_mnt_flags:+$dst_mnt_flags,}ro
    fi
    if getarg rw > /dev/null; then
        dst_mnt_flags=${dst_mnt_flags:+$dst_mnt_flags,}rw
    fi
    return 0
}
