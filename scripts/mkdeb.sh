#!/bin/sh
# make deb: build the Debian packages dst-dkms and dst-tools from this
# tree with debhelper and dh-dkms, outside the checkout, and check them
# with lintian.
#
# The packaging lives in packaging/debian/.  The tree (the files the
# packages need, as they are in the work tree, committed or not) is
# copied to build/deb/dst-VERSION/, packaging/debian/ becomes its
# debian/, a changelog is written for VERSION, and dpkg-buildpackage
# builds there; the .debs land in build/deb/.  Nothing is written in
# the checkout outside build/.
#
# VERSION comes from git describe: the last tag vX.Y (or 0.0 before the
# first tag) plus the commits since and the commit, "X.Y+N.gHASH", with
# ".dirty" when the work tree has changes; "X.Y" on a tag itself.
set -eu

usage() {
	cat >&2 <<EOF
usage: $0 [--version] [--no-lintian]
  builds build/deb/dst-dkms_VERSION_all.deb and dst-tools_VERSION_ARCH.deb
  --version     print the Debian version this tree builds and exit
  --no-lintian  skip the lintian check of the packages
EOF
	exit 2
}

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
lint=1
case "${1:-}" in
"") ;;
--version) ;;
--no-lintian) lint=0 ;;
*) usage ;;
esac
[ $# -le 1 ] || usage

die() {
	echo "mkdeb: $*" >&2
	exit 1
}

# deb_version: the tree's version, valid as a Debian (native) version.
deb_version() {
	git rev-parse --git-dir > /dev/null 2>&1 ||
		die "$top is not a git checkout: the version comes from git describe"
	if d=$(git describe --tags --long --match 'v[0-9]*' 2>/dev/null); then
		# vX.Y-N-gHASH; a tag's own '-' becomes '~' (v1.0-rc1: 1.0~rc1)
		hash=${d##*-}
		d=${d%-*}
		n=${d##*-}
		base=$(printf '%s' "${d%-*}" | sed 's/^v//; s/-/~/g')
	else
		base=0.0
		n=$(git rev-list --count HEAD)
		hash=g$(git rev-parse --short HEAD)
	fi
	v=$base
	[ "$n" = 0 ] || v=$base+$n.$hash
	git diff --quiet HEAD -- 2>/dev/null || v=$v.dirty
	case $v in
	[0-9]*) ;;
	*) die "version '$v' from git describe does not start with a digit" ;;
	esac
	case $v in
	*[!A-Za-z0-9.+~]*) die "version '$v' has characters Debian does not allow" ;;
	esac
	echo "$v"
}

ver=$(deb_version)
if [ "${1:-}" = --version ]; then
	echo "$ver"
	exit 0
fi

for t in dpkg-buildpackage dh dh_dkms fakeroot; do
	command -v "$t" > /dev/null || die "$t missing: run 'make deps'"
done
[ "$lint" = 0 ] || command -v lintian > /dev/null || die "lintian missing: run 'make deps'"

out=$top/build/deb
src=$out/dst-$ver
rm -rf "$out"
mkdir -p "$src"

# What the packages are built from: the top Makefile (make install),
# the module, the tools and their man pages, udev, dracut, the docs.
# Files as they are in the work tree, tracked or new (not ignored).
git ls-files -z --cached --others --exclude-standard -- \
	Makefile README.md docs module configfs-scripts udev dracut-module |
	tr '\0' '\n' | while IFS= read -r f; do
		[ -f "$f" ] || continue	# deleted in the work tree
		mkdir -p "$src/$(dirname "$f")"
		cp -p "$f" "$src/$f"
	done
[ -f "$src/module/Kbuild" ] || die "no module/Kbuild copied: is the checkout whole?"

cp -R packaging/debian "$src/debian"
{
	echo "dst ($ver) unstable; urgency=medium"
	echo
	echo "  * Built from git $(git rev-parse --short HEAD)$(case $ver in *.dirty) echo ' with uncommitted changes' ;; esac)."
	echo
	echo " -- $(sed -n 's/^Maintainer: //p' packaging/debian/control)  $(date -R -d "@$(git log -1 --format=%ct)")"
} > "$src/debian/changelog"

echo "mkdeb: building dst $ver in $src"
(cd "$src" && dpkg-buildpackage -b --no-sign) > "$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log" >&2
	die "dpkg-buildpackage failed (all of it in $out/build.log)"
}
arch=$(dpkg --print-architecture)
for p in "dst-dkms_${ver}_all.deb" "dst-tools_${ver}_$arch.deb"; do
	[ -f "$out/$p" ] || die "dpkg-buildpackage made no $p"
	echo "mkdeb: $out/$p"
done

[ "$lint" = 1 ] || exit 0
# Errors fail the build; warnings and the rest are printed and kept in
# build/deb/lintian.log (packaging/README.md explains each one).
rc=0
lintian --info --display-info --fail-on error \
	"$out/dst-dkms_${ver}_all.deb" "$out/dst-tools_${ver}_$arch.deb" \
	> "$out/lintian.log" 2>&1 || rc=$?
grep -E '^[EWIPX]: ' "$out/lintian.log" | sort | uniq -c | sort -rn || true
[ "$rc" = 0 ] || die "lintian found errors (build/deb/lintian.log)"
echo "mkdeb: lintian: $(grep -c '^E: ' "$out/lintian.log" || true) errors, $(grep -c '^W: ' "$out/lintian.log" || true) warnings"
