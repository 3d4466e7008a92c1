#!/usr/bin/env bats
# The Debian packages of "make deb" (packaging/debian, scripts/mkdeb.sh)
# as an administrator gets them: dpkg installs dst-dkms and dst-tools,
# DKMS builds dst.ko for the guest's kernel, modprobe loads that module,
# the packaged dstctl exports and attaches over loopback, and purging
# takes back everything the packages put on the system.
#
# dpkg needs a writable root and the guest's is the machine's own,
# read-only over 9p.  The suite lays an overlay over it (lower: the 9p
# root with the machine's dpkg database, dkms, compiler and headers;
# upper: a tmpfs) and runs dpkg, dkms, modprobe and dstctl chrooted in
# it, with /proc, /sys (configfs), /dev, a fresh /run and /tmp, and this
# tree (for the .debs) mounted in.  Whatever the packages wrote or
# removed is then in the overlay's upper layer and nowhere else.
#
# dst.service restoring a configuration at boot: the suite saves one,
# and after the job guest-init boots systemd in a copy of the packaged
# root to restore it (boot/; tests/packages/run reads the verdict).
#
# It lives outside tests/bats/ so that make check does not run it: the
# DKMS build alone takes minutes under TCG and make check is at its
# time budget.  make check-packages builds the packages and runs it.

load ../bats/helpers

PKG=/run/dst-pkg
R=$PKG/root
U=$PKG/upper
KVER=$(uname -r)
DEBS=$DST_TOP/build/deb

# in_root CMD...: CMD in the package root, with a clean environment.
in_root() {
	chroot "$R" /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

# upper_files: what the overlay's upper layer holds besides directories
# (files, links, and whiteouts: a whiteout is a file removed).
upper_files() {
	(cd "$U" && find . ! -type d | sort)
}

setup_file() {
	local f
	for f in "$DEBS"/dst-dkms_*_all.deb "$DEBS"/dst-tools_*.deb; do
		[ -f "$f" ] || {
			echo "no $f: run 'make deb' on the machine first" >&2
			return 1
		}
	done
	mkdir -p "$PKG"
	mount -t tmpfs -o mode=0755 tmpfs "$PKG"
	mkdir -p "$U" "$PKG/work" "$R"
	mount -t overlay overlay \
		-o "lowerdir=/,upperdir=$U,workdir=$PKG/work" "$R"
	mount -t proc proc "$R/proc"
	for f in sys dev; do
		mount --rbind "/$f" "$R/$f"
		mount --make-rslave "$R/$f"
	done
	mount -t tmpfs -o mode=0755 tmpfs "$R/run"
	mount -t tmpfs -o mode=1777 tmpfs "$R/tmp"
	mkdir -p "$R$DST_TOP"
	mount --bind "$DST_TOP" "$R$DST_TOP"
	# man-db's trigger would index every manual page of the machine.
	rm -f "$R/var/lib/man-db/auto-update"
	cp "$R/lib/modules/$KVER/modules.dep" "$PKG/modules.dep.before"
	upper_files > "$PKG/upper.before"
}

teardown_file() {
	if dst_is_loaded; then dst_unload; fi
	umount -R "$R" 2>/dev/null || umount -R -l "$R"
	umount "$PKG" 2>/dev/null || umount -l "$PKG"
}

teardown() {
	dst_teardown
}

@test "dpkg installs both packages; DKMS builds dst for the guest's kernel" {
	local s=$(date +%s)
	run in_root dpkg -i "$DEBS"/dst-dkms_*_all.deb "$DEBS"/dst-tools_*.deb
	echo "# dpkg -i with the DKMS build: $(( $(date +%s) - s ))s" >&3
	assert_success
	run in_root dpkg-query -W -f '${Package} ${Status}\n' dst-dkms dst-tools
	assert_line 'dst-dkms install ok installed'
	assert_line 'dst-tools install ok installed'

	ver=$(in_root dpkg-query -W -f '${Version}' dst-dkms)
	run in_root dkms status -m dst
	assert_output "dst/$ver, $KVER, $(uname -m): installed"
	[ -f "$R/usr/src/dst-$ver/dkms.conf" ]
	grep -qx 'AUTOINSTALL="yes"' "$R/usr/src/dst-$ver/dkms.conf"
	# the kernel's hook that runs DKMS for every kernel installed later
	[ -x "$R/etc/kernel/postinst.d/dkms" ]

	run in_root modinfo -F vermagic dst
	assert_success
	assert_output --regexp "^$KVER "
	run in_root modinfo -F filename dst
	assert_output "/lib/modules/$KVER/updates/dkms/dst.ko"
	for f in /usr/sbin/dstctl /usr/sbin/dst-cn /lib/udev/rules.d/60-dst.rules \
		/usr/share/man/man8/dstctl.8.gz /usr/share/man/man8/dst-cn.8.gz \
		/usr/lib/dracut/modules.d/95dst/module-setup.sh; do
		[ -f "$R$f" ] || { echo "missing $f" >&2; return 1; }
	done
}

@test "modprobe dst loads the DKMS module; the packaged dstctl attaches an export" {
	in_root modprobe dst
	[ "$(cat /sys/module/dst/srcversion)" = "$(in_root modinfo -F srcversion dst)" ]
	brd_make 16
	run in_root dstctl export e1 /dev/ram0 127.0.0.1:7000 --allow 127.0.0.0/8
	assert_success
	run in_root dstctl attach r1 127.0.0.1:7000 --export e1
	assert_success
	assert_output --regexp '^r1: /dev/dst[0-9]+$'
	dev=${output#r1: }
	wait_for 10 test -b "$dev"
	[ "$(checksum "$dev" 0 $((16 << 20)))" = "$BRD_SUM" ]
	run in_root dstctl list -o json
	assert_success
	[ "$(jq -r '.nodes[] | select(.name == "r1") | .state' <<< "$output")" = running ]
	in_root dstctl detach --all
	no_nodes
	rmmod dst
}

@test "dst.service is installed, enabled and valid" {
	[ -f "$R/lib/systemd/system/dst.service" ]
	[ "$(readlink "$R/etc/systemd/system/multi-user.target.wants/dst.service")" = \
		/lib/systemd/system/dst.service ]
	run in_root systemd-analyze verify --man=no /lib/systemd/system/dst.service
	assert_success
}

@test "a configuration saved with the packaged dstctl is handed to systemd to restore at boot" {
	# What systemd does with it is checked after this job: guest-init
	# boots systemd as PID 1 in a copy of this root (boot/), where
	# dst.service restores the configuration and boot/check writes
	# boot.tap, which tests/packages/run reads.  The kernel and the RAM
	# disk's contents stay; dst is unloaded in between.
	local b=/run/dst-boot
	modprobe brd rd_nr=1 rd_size=16384
	dd if=/dev/urandom of=/dev/ram0 bs=1M count=16 status=none
	in_root modprobe dst
	run in_root dstctl export e1 /dev/ram0 127.0.0.1:7000 --allow 127.0.0.0/8
	assert_success
	run in_root dstctl attach r1 127.0.0.1:7000 --export e1
	assert_success
	run in_root dstctl save
	assert_success
	grep -q '^export e1 ' "$R/etc/dst/dst.conf"
	grep -q '^remote r1 ' "$R/etc/dst/dst.conf"
	in_root dstctl detach --all
	no_nodes
	rmmod dst
	# The root to boot: this one as it is now (the next test purges
	# the packages), plus the test's units and check.
	mkdir -p "$b"
	mount -t tmpfs -o mode=0755 tmpfs "$b"
	cp -a "$U" "$b/upper"
	mkdir -p "$b/work" "$b/upper/usr/local/lib/dst-test"
	cp "$DST_TOP/tests/packages/boot/check" "$b/upper/usr/local/lib/dst-test/"
	dd if=/dev/ram0 bs=1M status=none | sha256sum | cut -d' ' -f1 \
		> "$b/upper/usr/local/lib/dst-test/expect"
	cp "$DST_TOP/tests/packages/boot/dst-boot.target" \
		"$DST_TOP/tests/packages/boot/dst-boot-check.service" \
		"$b/upper/etc/systemd/system/"
	echo "$b" > "$DST_RESULTS/boot-root"
	# The saved file is the administrator's, not the packages': purging
	# would rightly leave it, and the next test looks for leftovers.
	rm "$R/etc/dst/dst.conf"
}

@test "purging both packages removes everything they installed" {
	local ver f
	ver=$(in_root dpkg-query -W -f '${Version}' dst-dkms)
	in_root dpkg-query -L dst-dkms dst-tools | sort -u > "$PKG/owned"
	run in_root dpkg --purge dst-tools dst-dkms
	assert_success
	run in_root dpkg-query -W -f '${Status}\n' dst-dkms dst-tools
	refute_output --partial installed

	# no file the packages owned is left (directories shared with other
	# packages stay, like /usr/sbin)
	while IFS= read -r f; do
		if [ -e "$R$f" ] && [ ! -d "$R$f" ]; then
			echo "left behind: $f" >&2
			return 1
		fi
	done < "$PKG/owned"
	for f in "/usr/src/dst-$ver" /var/lib/dkms/dst /usr/share/doc/dst-dkms \
		/usr/share/doc/dst-tools /usr/lib/dracut/modules.d/95dst \
		"/lib/modules/$KVER/updates/dkms/dst.ko" \
		/etc/systemd/system/multi-user.target.wants/dst.service; do
		[ ! -e "$R$f" ] || { echo "left behind: $f" >&2; return 1; }
	done
	run in_root dkms status -m dst
	assert_output ''
	# Debian's kernel has a module of the same name (the bt8xx DVB
	# frontend, drivers/media/pci/bt8xx/dst.ko): DKMS's copy in
	# updates/ came first while installed; now only that one is left.
	run in_root modinfo -F filename dst
	refute_output --partial /updates/
	# depmod's index is as it was before
	diff -u "$PKG/modules.dep.before" "$R/lib/modules/$KVER/modules.dep"

	# Everything else written since the install is dpkg's and dkms's own
	# bookkeeping, and depmod's rebuilt indexes, as above (below usr/:
	# bookworm's /lib is a link to usr/lib).
	upper_files > "$PKG/upper.after"
	run sh -c "comm -13 '$PKG/upper.before' '$PKG/upper.after' |
		grep -Ev '^\./var/lib/dpkg/|^\./var/log/|^\./var/cache/debconf/|^\./var/lib/dkms/mok\.(key|pub)$|^\./(usr/)?lib/modules/$KVER/modules\.'"
	assert_output ''
}
