#!/bin/sh
# Build (once) the debug guest kernel that `make check-debug` boots:
# Debian's linux-source-6.1 (the target kernel's own version) configured
# from x86_64 defconfig + kvm_guest.config + tests/debug/debug.config
# (KASAN, lockdep, kmemleak, UBSAN, debug objects, fault injection, and
# what the suites need).
#
# The build lives outside the checkout, in $DST_CACHE (default
# /var/cache/dst), in a directory keyed by the fragment, this script and
# the source package's version: a fresh clone on the same machine reuses
# it, a changed fragment (or recipe, below) builds anew.  The directory holds:
#   vmlinuz   the kernel the guests boot
#   kver      its release string (uname -r in the guest)
#   src/      the configured, built tree (modules build against it: M=)
#   mods/     modules_install output: mods/lib/modules/<kver>/
#   build.log, build.secs
# Prints the directory on stdout; everything else goes to stderr.
set -eu

usage() {
	echo "usage: $0 [-n]" >&2
	echo "  builds the debug guest kernel if missing, prints its directory;" >&2
	echo "  -n prints the directory it would use without building" >&2
	exit 2
}
dry=0
case "${1:-}" in
-n) dry=1 ;;
"") ;;
*) usage ;;
esac

top=$(cd "$(dirname "$0")/.." && pwd)
frag=$top/tests/debug/debug.config
tarball=/usr/src/linux-source-6.1.tar.xz
cache=${DST_CACHE:-/var/cache/dst}

srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || true)
if [ -z "$srcver" ] || [ ! -r "$tarball" ]; then
	echo "debug-kernel: linux-source-6.1 is not installed: run 'make deps'" >&2
	exit 1
fi
# The recipe's version: raise it when the steps below change what is
# built (editing comments or messages here does not rebuild).
recipe=1
key=$( (echo "$srcver recipe $recipe"; cat "$frag") | sha256sum | cut -c1-16)
dir=$cache/debug-kernel/$key
if [ "$dry" -eq 1 ] || [ -f "$dir/ok" ]; then
	echo "$dir"
	exit 0
fi

mkdir -p "$cache/debug-kernel"
# One build at a time; a second caller waits for the first.
exec 9>"$cache/debug-kernel/.lock"
flock 9
if [ -f "$dir/ok" ]; then
	echo "$dir"
	exit 0
fi

rm -rf "$dir"
mkdir -p "$dir"
start=$(date +%s)
log=$dir/build.log
echo "debug-kernel: building $srcver with $(basename "$frag") in $dir" >&2
echo "debug-kernel: log in $log (about half an hour on 2 cores)" >&2
(
	set -e
	cd "$dir"
	tar -xJf "$tarball"
	mv linux-source-6.1 src
	cd src
	make defconfig
	make kvm_guest.config
	scripts/kconfig/merge_config.sh -m .config "$frag"
	make olddefconfig
) > "$log" 2>&1 || {
	echo "debug-kernel: configuring failed; the end of $log:" >&2
	tail -n 30 "$log" >&2
	exit 1
}

# merge_config.sh only warns when a value does not survive olddefconfig
# (a dependency missing): every line of the fragment must hold.
bad=$(grep -E '^CONFIG_' "$frag" | while IFS= read -r line; do
	opt=${line%%=*}
	val=${line#*=}
	case "$val" in
	n) if grep -q "^$opt=" "$dir/src/.config"; then echo "$line"; fi ;;
	*) grep -qx "$line" "$dir/src/.config" || echo "$line" ;;
	esac
done || true)
if [ -n "$bad" ]; then
	echo "debug-kernel: these fragment lines did not hold after olddefconfig:" >&2
	echo "$bad" >&2
	exit 1
fi

(
	set -e
	cd "$dir/src"
	make -j"$(nproc)" bzImage modules
	make modules_install INSTALL_MOD_PATH="$dir/mods"
) >> "$log" 2>&1 || {
	echo "debug-kernel: the build failed; the end of $log:" >&2
	tail -n 30 "$log" >&2
	exit 1
}
cp "$dir/src/arch/x86/boot/bzImage" "$dir/vmlinuz"
make -s -C "$dir/src" kernelrelease > "$dir/kver"
echo $(( $(date +%s) - start )) > "$dir/build.secs"
: > "$dir/ok"
echo "debug-kernel: built $(cat "$dir/kver") in $(cat "$dir/build.secs")s" >&2
echo "$dir"
