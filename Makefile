# DST: build, test in QEMU guests, demo, benchmark.
#
#   make, make all  module and tools
#   make deps     install the Debian packages DST needs (idempotent)
#   make module   deps, then module/dst.ko (and the runner self-test's
#                 warning module, build/selftest/) against the Debian
#                 6.1 headers
#   make tools    build/sbin/dst-cn and build/tests/dst-rawwrite
#   make check    module + tools + the runner self-test + every bats
#                 suite + the root-on-DST boot test (tests/check)
#   make demo     module + tools + a guest that shows DST at work
#   make debug-kernel  build (once, cached in /var/cache/dst) the debug
#                 guest kernel: KASAN, lockdep, kmemleak, fault injection
#   make check-debug  every suite, and tests/debug/, in that kernel;
#                 SUITES="tests/bats/x.bats ..." for some only
#   make bench    DST against raw brd, NBD and NVMe/TCP in one guest
#   make bench-ab BASE=REV  DST as it is against DST at git revision REV,
#                 in one guest boot (tests/bench/ab); AB="-c 1 -p -r 6"
#                 for one connection, plain, six rounds
#   make bench-profile  wakeups and context switches per I/O, traced;
#                 PROFILE="-c -d 32" for a CPU profile at QD32 (see
#                 tests/bench/profile for the options)
#   make vm-shell an interactive guest shell for debugging
#   make lint     checkpatch --strict, sparse and W=1 on module/ and
#                 the self-test module (scripts/lint.sh; not in check)
#   make install  dstctl, dst-cn, their man pages, dst.service, the udev
#                 rules and dracut's 95dst (DESTDIR= and PREFIX=, default
#                 /usr); run make tools first.  Not dst.ko: DKMS installs
#                 it (make deb), or see docs/root-on-dst.md
#   make deb      Debian packages dst-dkms and dst-tools in build/deb/,
#                 checked with lintian (scripts/mkdeb.sh, packaging/)
#   make check-packages  make deb, then a guest installs them (DKMS
#                 builds dst.ko), uses them and purges them
#   make patches  the driver as an upstream patch series against
#                 linux-source-6.1, in build/patches/ (scripts/mkpatches.py)
#   make check-patches  apply it patch by patch to a pristine tree:
#                 each builds, checkpatch --strict, kernel-doc
#   make clean    the module's build files and build/
#
# KVER= or KDIR= override the kernel found by scripts/kver.sh.

KVER ?= $(shell sh scripts/kver.sh 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
UAPI := module/include/uapi
CFLAGS_TOOLS := -Wall -Wextra -Werror -O2 -I$(UAPI)

TOOLS := build/sbin/dst-cn build/tests/dst-rawwrite
PREFIX ?= /usr
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
UDEVRULESDIR ?= $(PREFIX)/lib/udev/rules.d
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
DRACUTMODDIR ?= $(PREFIX)/lib/dracut/modules.d
DRACUT95DST := module-setup.sh parse-dstroot.sh dstroot.sh dst-generator.sh dst-lib.sh

all: module tools

deps:
	@sh scripts/deps.sh

module: deps
	$(MAKE) -C module KVER=$(KVER) KDIR=$(KDIR)
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/vm/selftest/warn modules
	mkdir -p build/selftest
	cp tests/vm/selftest/warn/dst_selftest_warn.ko build/selftest/

tools: $(TOOLS)

build/sbin/%: configfs-scripts/%.c $(UAPI)/linux/dst.h
	mkdir -p build/sbin
	$(CC) $(CFLAGS_TOOLS) -o $@ $<

# Test clients (not installed).
build/tests/%: tests/proto/%.c $(UAPI)/linux/dst.h
	mkdir -p build/tests
	$(CC) $(CFLAGS_TOOLS) -o $@ $<

check: module tools
	@sh tests/check

debug-kernel: deps
	@sh scripts/debug-kernel.sh >/dev/null

check-debug: module tools
	@sh tests/check-debug $(SUITES)

demo: module tools
	@sh tests/vm/run -o demo -e 'sh tests/demo.sh'

bench: module tools
	@sh tests/bench/run

bench-ab: module tools
	@test -n "$(BASE)" || { echo "make bench-ab: BASE=REV, the revision to compare with" >&2; exit 2; }
	@sh tests/bench/ab $(AB) $(BASE)

bench-profile: module tools
	@sh tests/bench/profile $(PROFILE)

vm-shell: module tools
	@sh tests/vm/run -s

# Kernel style and static checks (not part of check: linux-source is big).
lint: module
	sh scripts/lint.sh

# Installs what is built: run make (or make tools) first.
install:
	@test -x build/sbin/dst-cn || { echo "make install: build/sbin/dst-cn missing: run make tools first" >&2; exit 1; }
	install -D -m 0755 configfs-scripts/dstctl $(DESTDIR)$(SBINDIR)/dstctl
	install -D -m 0755 build/sbin/dst-cn $(DESTDIR)$(SBINDIR)/dst-cn
	install -D -m 0644 configfs-scripts/dstctl.8 \
		$(DESTDIR)$(MANDIR)/man8/dstctl.8
	install -D -m 0644 configfs-scripts/dst-cn.8 \
		$(DESTDIR)$(MANDIR)/man8/dst-cn.8
	mkdir -p $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|@SBINDIR@|$(SBINDIR)|g' configfs-scripts/dst.service.in \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/dst.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/dst.service
	install -D -m 0644 udev/60-dst.rules \
		$(DESTDIR)$(UDEVRULESDIR)/60-dst.rules
	install -d $(DESTDIR)$(DRACUTMODDIR)/95dst
	for f in $(DRACUT95DST); do \
		install -m 0755 dracut-module/95dst/$$f $(DESTDIR)$(DRACUTMODDIR)/95dst/$$f || exit 1; \
	done

# Debian packages, built in a copy of the tree under build/deb/.
deb: deps
	@sh scripts/mkdeb.sh

# Not part of check: the DKMS build takes minutes under TCG.
patches: deps
	@python3 scripts/mkpatches.py

check-patches: deps
	@sh scripts/check-patches.sh

check-packages: module tools deb
	@sh tests/packages/run -t 1200

clean:
	-$(MAKE) -C module KVER=$(KVER) KDIR=$(KDIR) clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/vm/selftest/warn clean
	rm -rf build

.PHONY: all deps module tools check check-debug debug-kernel demo bench bench-ab bench-profile vm-shell lint install deb check-packages patches check-patches clean
