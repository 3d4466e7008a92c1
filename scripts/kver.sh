#!/bin/sh
# Print the Debian kernel version DST builds against and boots in guests:
# the newest version that has both /boot/vmlinuz-V and /lib/modules/V/build,
# so the module and the guest kernel always match. Never `uname -r`: the
# machine runs a different kernel from the one we target.
set -eu

best=""
for d in /lib/modules/*/build; do
	[ -d "$d" ] || continue
	v=${d#/lib/modules/}
	v=${v%/build}
	[ -f "/boot/vmlinuz-$v" ] || continue
	best="$best$v
"
done
v=$(printf '%s' "$best" | sort -V | tail -n 1)
if [ -z "$v" ]; then
	echo "kver: no kernel with both /boot/vmlinuz-V and /lib/modules/V/build;" >&2
	echo "kver: run 'make deps' (linux-image-amd64, linux-headers-amd64)" >&2
	exit 1
fi
echo "$v"
