#!/bin/sh
# Install, from Debian, every package DST's build, tests, demo and
# benchmark need. Idempotent: packages already present are left alone and
# apt-get update runs only when something must be installed.
set -eu

usage() {
	echo "usage: $0 [--list]" >&2
	echo "  installs the Debian packages DST needs (as root);" >&2
	echo "  --list prints them and exits" >&2
}

PKGS="linux-image-amd64 linux-headers-amd64 linux-source-6.1
build-essential kmod sparse
qemu-system-x86 busybox-static
bats bats-assert bats-support
fio iproute2 e2fsprogs util-linux fdisk procps mdadm
dracut-core dracut-network
nbd-server nbd-client nvme-cli
tcpdump tshark iputils-ping
gnuplot-nox xz-utils cpio
udev systemd
flex bison bc libelf-dev libssl-dev
debhelper dh-dkms dkms dpkg-dev fakeroot lintian jq
python3 git"

case "${1:-}" in
--list) echo $PKGS; exit 0 ;;
"") ;;
-h|--help) usage; exit 0 ;;
*) usage; exit 2 ;;
esac

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done

[ -n "$missing" ] || exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages:$missing" >&2
	echo "deps: run as root to install them" >&2
	exit 1
fi

echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
