#!/bin/sh
# Kernel style and static checks on module/ and the selftest module:
# checkpatch.pl --strict (from Debian's linux-source-6.1, extracted into
# build/), sparse (make C=1) and a W=1 build.  Fails on any finding.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
kver=${KVER:-$(sh scripts/kver.sh)}
kdir=${KDIR:-/lib/modules/$kver/build}
src=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n 1)
[ -n "$src" ] || { echo "lint: linux-source-6.1 missing: make deps" >&2; exit 1; }

cp_dir=build/checkpatch
if [ ! -x "$cp_dir/scripts/checkpatch.pl" ]; then
	mkdir -p "$cp_dir"
	tar -xf "$src" -C "$cp_dir" --strip-components=1 --wildcards \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'
fi

rc=0
files=$(git ls-files 'module/*.c' 'module/*.h' 'tests/vm/selftest/warn/*.c')
echo "== checkpatch --strict"
# shellcheck disable=SC2086
"$cp_dir/scripts/checkpatch.pl" --strict --no-tree --quiet --show-types \
	--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG -f $files || rc=1

echo "== sparse (C=2) and W=1"
out=$(make -s -C "$kdir" M="$top/module" C=2 W=1 modules 2>&1 |
	grep -v 'Skipping BTF generation' || true)
if [ -n "$out" ]; then
	echo "$out"
	rc=1
fi
[ "$rc" -eq 0 ] && echo "lint: clean"
exit "$rc"
