#!/bin/sh
# make check-patches: check the upstream series (scripts/mkpatches.py)
# the way a maintainer would before taking it.  On a pristine unpacked
# linux-source-6.1, configured from Debian's own config, it applies the
# patches one at a time and after each one
#   - compiles, at W=1, every driver file the series has added so far
#     (until the last patch hooks the driver into the build, no Makefile
#     names them: a scratch one, not part of the series, does here);
#   - after the last, builds dst.ko with CONFIG_BLK_DEV_DST=m;
#   - runs checkpatch.pl --strict on the patch (must be clean);
# then scripts/kernel-doc -none on the driver's sources (no warnings).
#
#   scripts/check-patches.sh [PATCH_DIR]   (default: make the series)
#
# The unpacked, configured tree is cached in /var/cache/dst/patches/
# (DST_CACHE), keyed by the source package's version; each run works on
# a hard-linked copy of it.
set -eu

usage() {
	echo "usage: $0 [PATCH_DIR]" >&2
	exit 2
}
case "${1:-}" in -h|--help) usage ;; esac
[ $# -le 1 ] || usage

top=$(cd "$(dirname "$0")/.." && pwd)
tarball=/usr/src/linux-source-6.1.tar.xz
cache=${DST_CACHE:-/var/cache/dst}
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || true)
[ -n "$srcver" ] && [ -r "$tarball" ] ||
	{ echo "check-patches: linux-source-6.1 is not installed: run 'make deps'" >&2; exit 1; }
kver=$(sh "$top/scripts/kver.sh")
config=/boot/config-$kver
[ -r "$config" ] ||
	{ echo "check-patches: no $config: run 'make deps'" >&2; exit 1; }

if [ $# -eq 1 ]; then
	series=$(cd "$1" && pwd)
else
	python3 "$top/scripts/mkpatches.py" > /dev/null
	series=$top/build/patches
fi
ls "$series"/0001-*.patch > /dev/null 2>&1 ||
	{ echo "check-patches: no patches in $series" >&2; exit 1; }

jobs=$(nproc)
# Who the series' MAINTAINERS entry names (the M: line).
dst_m=$(git -C "$top" log -1 --format='%an <%ae>')
dir=$cache/patches/$srcver
tree=$dir/tree
mkdir -p "$dir"
# One preparation at a time; a second caller waits for the first.
exec 9>"$dir/.lock"
flock 9
if [ ! -f "$tree/.dst-prepared" ]; then
	echo "== preparing $tree (Debian's $kver config)"
	rm -rf "$tree" "$dir/unpack"
	mkdir -p "$dir/unpack"
	tar -xJf "$tarball" -C "$dir/unpack"
	mv "$dir/unpack/linux-source-6.1" "$tree"
	rmdir "$dir/unpack"
	cp "$config" "$tree/.config"
	(
		cd "$tree"
		# Debian signs with keys that are not in the source package.
		scripts/config --set-str SYSTEM_TRUSTED_KEYS "" \
			--set-str SYSTEM_REVOCATION_KEYS "" \
			--disable MODULE_SIG_ALL --disable DEBUG_INFO_BTF
		make -s olddefconfig
		make -s -j"$jobs" modules_prepare
	) > "$dir/prepare.log" 2>&1 || {
		echo "check-patches: preparing the tree failed; the end of $dir/prepare.log:" >&2
		tail -n 30 "$dir/prepare.log" >&2
		exit 1
	}
	touch "$tree/.dst-prepared"
fi

# A hard-linked copy: git apply and the build replace files, never
# write into them, so the cached tree stays pristine.
work=$dir/work
rm -rf "$work"
cp -al "$tree" "$work"
cd "$work"
# The symbols Debian's kernel exports: modpost then fails a driver that
# uses one it does not (the tree itself was never built).
symvers=/lib/modules/$kver/build/Module.symvers
[ -r "$symvers" ] ||
	{ echo "check-patches: no $symvers: run 'make deps'" >&2; exit 1; }
cp "$symvers" Module.symvers
scratch=drivers/block/dst/Makefile
log=$top/build/check-patches.log
mkdir -p "$top/build"
: > "$log"
fail=0
n=0
for p in "$series"/[0-9][0-9][0-9][0-9]-*.patch; do
	case "$p" in */0000-cover-letter.patch) continue ;; esac
	n=$((n + 1))
	name=$(basename "$p")
	[ ! -f "$work/.dst-scratch" ] || { rm -f "$scratch" .dst-scratch; }
	if ! git apply --whitespace=error-all "$p" >> "$log" 2>&1; then
		echo "not ok $n $name: does not apply (build/check-patches.log)"
		fail=$((fail + 1))
		break
	fi
	# checkpatch asks of every patch that adds files without touching
	# MAINTAINERS whether it should (FILE_PATH_CHANGES).  The answer is
	# checked instead: get_maintainer.pl must find DST's entry for every
	# file the patch adds.
	if cp=$(perl scripts/checkpatch.pl --strict --no-summary --quiet \
		--ignore FILE_PATH_CHANGES "$p" 2>&1) && [ -z "$cp" ]; then
		cpok=1
	else
		cpok=0
		printf '%s: checkpatch:\n%s\n' "$name" "$cp" >> "$log"
	fi
	for f in $(awk '/^diff --git / { f = $4 } /^new file mode/ { sub("^b/", "", f); print f }' "$p"); do
		perl scripts/get_maintainer.pl --no-git --no-git-fallback --no-rolestats \
			-f "$f" 2>/dev/null | grep -q "^$dst_m" || {
			echo "$name: MAINTAINERS has no DST entry for $f" >> "$log"
			cpok=0
		}
	done
	objs=$(ls drivers/block/dst/*.c 2>/dev/null | sed 's/\.c$/.o/' || true)
	built=1
	if [ -f "$scratch" ]; then
		# The hook is in: the module, as a distribution would build it.
		scripts/config --module BLK_DEV_DST >> "$log" 2>&1
		make -s olddefconfig >> "$log" 2>&1
		grep -qx 'CONFIG_BLK_DEV_DST=m' .config || {
			echo "$name: CONFIG_BLK_DEV_DST=m did not hold" >> "$log"
			built=0
		}
		[ "$built" -eq 0 ] || make -s -j"$jobs" modules_prepare >> "$log" 2>&1 || built=0
		[ "$built" -eq 0 ] ||
			make -s -j"$jobs" W=1 M=drivers/block/dst modules >> "$log" 2>&1 || built=0
		[ -f drivers/block/dst/dst.ko ] || built=0
		! grep -q 'modpost: .* undefined!' "$log" || built=0
		what="dst.ko"
	elif [ -n "$objs" ]; then
		{
			echo "# check-patches scratch: compile what the series added so far"
			# As the driver's own Makefile: trace.h includes itself.
			echo 'CFLAGS_trace.o := -I$(src)'
		} > "$scratch"
		touch .dst-scratch
		# Built as the directory's own (M=), so that it is this
		# Makefile kbuild reads for them: drivers/block/Makefile
		# does not name dst/ yet.
		# shellcheck disable=SC2086
		make -s -j"$jobs" W=1 M=drivers/block/dst \
			$(echo "$objs" | sed 's|drivers/block/dst/||g') >> "$log" 2>&1 ||
			built=0
		what=$(echo "$objs" | wc -w)" objects"
	else
		what="nothing to compile"
	fi
	if [ "$built" -eq 1 ] && [ "$cpok" -eq 1 ]; then
		echo "ok $n $name: applies, checkpatch --strict clean, builds ($what)"
	else
		echo "not ok $n $name:$([ "$cpok" -eq 1 ] || echo " checkpatch")$([ "$built" -eq 1 ] || echo " build") (build/check-patches.log)"
		fail=$((fail + 1))
	fi
done
n=$((n + 1))
kd=$(perl scripts/kernel-doc -none drivers/block/dst/*.c drivers/block/dst/*.h \
	include/uapi/linux/dst.h 2>&1 || true)
if [ -z "$kd" ]; then
	echo "ok $n kernel-doc -none: no warnings"
else
	echo "not ok $n kernel-doc -none:"
	echo "$kd"
	fail=$((fail + 1))
fi
echo "$((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
