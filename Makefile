# aesloop top-level Makefile.  make help prints the first line of each entry below
# (every line "#   make ..."), so this list is the one place targets are described.
#
#   make                 the userspace library, aesloop-pipe, aesloop-reencrypt and loop.ko
#                        (loop.ko for the running kernel, or KDIR=...)
#   make userspace       build/libaesloop.a, build/bin/aesloop-pipe and -reencrypt only
#   make module          loop/loop.ko only, as make -C KDIR M=$PWD builds it
#   make install         loop.ko into /lib/modules/KVER/updates/loop, then depmod
#                        for that kernel (KVER: KDIR's release, or uname -r;
#                        INSTALL_MOD_PATH=DIR or DESTDIR=DIR: into DIR/lib/...,
#                        e.g. a system image's root, and depmod -b DIR)
#   make uninstall       that loop.ko removed again, then depmod
#   make tools           aesloop-pipe, aesloop-reencrypt and the patched util-linux programs (as your user)
#                        (fetches util-linux's source)
#   make install-tools   the programs make tools built, and the man pages, into PREFIX
#                        (it builds nothing): aesloop-losetup, -mount, -swapon and -swapoff, linked as
#                        losetup, mount, swapon and swapoff, and aesloop-reencrypt into $(PREFIX)/sbin,
#                        aesloop-pipe and aesloop-keygen into $(PREFIX)/bin, the man
#                        pages into $(PREFIX)/share/man (PREFIX=/usr/local; DESTDIR
#                        too; UL_BUILD=build/ul-SERIES: another series', e.g. 2.41)
#   make uninstall-tools what make install-tools installed, removed
#   make install-boot    the boot integration: encrypted root and fstab lines
#                        (the initramfs-tools hook and scripts into
#                        $(INITRAMFS_TOOLS) (/etc/initramfs-tools), the fstab
#                        generator into $(SYSTEMD_GENERATORS)
#                        ($(PREFIX)/lib/systemd/system-generators), the dracut
#                        module into $(DRACUT_MODULES) if dracut is installed,
#                        helpers into $(PREFIX)/lib/aesloop; DESTDIR too)
#   make uninstall-boot  what make install-boot installed, removed
#   make losetup         util-linux 2.38.1's losetup, mount, swapon, swapoff, patched
#                        (Debian bookworm's release, in build/bin)
#   make losetup-SERIES  the same from another util-linux series of patches/series.sh
#                        (2.41: Debian trixie's, 2.42: forky's; in build/ul-SERIES/bin)
#   make losetup-arm64   make losetup's programs cross-built for the arm64 test guest
#                        (in build/ul-arm64/bin; needs libssl-dev:arm64)
#   make source          the Debian source package, build/source/aesloop_VERSION-REV.dsc
#                        (3.0 (quilt): the tree as orig tarball, util-linux's release
#                        tarballs as its util-linux component; fetches them)
#   make deb             the Debian packages aesloop-dkms and aesloop-utils
#                        (build/deb/*.deb, built from make source's package)
#   make dist            the release tarball, build/dist/aesloop-VERSION.tar.gz
#   make manifest        make dist, then its DIST line in the Gentoo overlay's Manifests
#   make clean           what the builds made in the checkout (not build/'s caches)
#   make demo            try aesloop in a throw-away VM: an encrypted ext4 on an aesloop device
#   make check           what CI runs (tests/check.sh; tests/README.md says what)
#                        (the VM suites on 6.1 and 7.3, each once where both would
#                        run the same code, a smoke set on 6.12, 7.3-rt's loop.ko)
#   make check-full      every VM suite on all four kernels, every system image
#                        (and the benchmark, and make check-source)
#   make check-source    the source package built offline, as a buildd does, for bookworm
#                        and trixie (clean build roots; tests/packaging/source-build.sh)
#   make check-host      the host tests (also under ASan and UBSan), no VM
#   make check-debug     the VM suites on a KASAN/lockdep/kmemleak/UBSAN kernel
#                        (7.3, built from Debian's source; tests/check-debug.sh)
#   make check-uml       VM suites in User-Mode Linux 6.1 and 7.3, on this CPU
#                        (t-plain, t-crypt, t-multikey, t-driver, natively;
#                        tests/check-uml.sh)
#   make check-arm64     arm64 host tests in qemu-aarch64, VM suites in arm64 guests
#                        (6.1 and 7.3; tests/check-arm64.sh)
#   make host-tests      build the host test programs (make check-host runs them)
#   make vm-tools        build the programs the test guest runs (build/vm-tools)
#   make vm-tools-arm64  the same for the arm64 guest (build/arm64/vm-tools)
#   make bench           MB/s of every AES code path against OpenSSL and aespipe
#                        (builds with INTELAES=y; BENCH_ARGS=--tsv)
#   make bench-io        in a VM: fio through aesloop, the stock loop.ko and dm-crypt
#                        (ratios; BENCH_IO_ARGS='-k 6.1 -b OLD.ko')
#   make bench-kernel    the same in User-Mode Linux, on this CPU's own cores
#                        (the stock loop, aesloop and dm-crypt over a brd, dd and
#                        fio; BENCH_KERNEL_ARGS='-b OLD.ko -r ROUNDS')
#   make version         print VERSION (with make -s)
#   make kernelrelease   print the release loop.ko is built and installed for
#                        (with make -s; KDIR=... or KVER=...)
#   make help            this list, one line a target
#
# Userspace output goes to build/, the project-local cache that also holds the
# Debian kernel trees and util-linux sources the tests use.

VERSION   := 0.1
BUILD     ?= build
CC        ?= gcc
CFLAGS    ?= -O2 -g
WARN      := -std=c11 -Wall -Wextra -Werror
CPPFLAGS  += -D_DEFAULT_SOURCE -Iaes -Ilib -DAESLOOP_VERSION='"$(VERSION)"'
SANFLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
TOOL_LDFLAGS := -Wl,-z,relro -Wl,-z,now

# The kernel to build loop.ko against and install it for: the running one,
# or KVER's, or the tree KDIR names, whose UTS_RELEASE (the modules' vermagic;
# Debian's include/config/kernel.release differs) then says where it goes.
PREFIX    ?= /usr/local
ifdef KDIR
KVER      ?= $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"$$/\1/p' \
		$(KDIR)/include/generated/utsrelease.h 2>/dev/null)
else
KVER      ?= $(shell uname -r)
KDIR      := /lib/modules/$(KVER)/build
endif
CHECK_KVER = [ -n "$(KVER)" ] || { echo "no UTS_RELEASE in $(KDIR)/include/generated/utsrelease.h: give KVER" >&2; exit 1; }
# Where modules_install and depmod write: INSTALL_MOD_PATH as kbuild names
# it, or DESTDIR as the rest of the install targets do.
MOD_ROOT  := $(abspath $(or $(INSTALL_MOD_PATH),$(DESTDIR)))

# lib/ parses mount options and fstab with libmount: the system's
# (libmount-dev) for the host tests; build-losetup.sh gives the util-linux
# tree's own, which the patched programs link.
MOUNT_CFLAGS ?= $(shell pkg-config --cflags mount 2>/dev/null)
MOUNT_LIBS   ?= $(shell pkg-config --libs mount 2>/dev/null)
# aesloop-reencrypt checks the old key with libblkid (libblkid-dev, which
# libmount-dev brings).
BLKID_CFLAGS ?= $(shell pkg-config --cflags blkid 2>/dev/null)
BLKID_LIBS   ?= $(shell pkg-config --libs blkid 2>/dev/null)

AES_SRCS  := aes/aes.c aes/md5.c aes/loop_aes.c aes/engines.c
# lib/: the key setup (keysetup.c is its base, keysetup-*.c one job each),
# what the patched util-linux programs call (libaesloop.h: a file a job),
# and how both start programs (spawn.c); all of it in libaesloop.a, with
# the AES of AES_SRCS (aes/, which loop.ko builds too).  tools/ holds the
# programs.
LIBAESLOOP_SRCS := $(wildcard lib/*.c)
HDRS      := $(wildcard aes/*.h lib/*.h tools/*.h) loop/aesloop_uapi.h

# INTELAES=y: the AES-NI/VAES engines of aes-intel/ (x86_64), C glue and
# assembly, chosen at run time by loop_aes_probe().  The default when
# $(CC) builds for x86_64, so that a default build never has only the C AES
# (slower, and table-based); INTELAES=n leaves all of aes-intel/ out, and
# the tests that need it.  This sets the userspace default only: loop.ko's
# is set in loop/Kbuild, from the kernel's configuration, and only an
# INTELAES given to make is passed down to it.
ifeq ($(origin INTELAES),undefined)
INTELAES := $(if $(filter x86_64-%,$(shell $(CC) -dumpmachine)),y,n)
endif
ifeq ($(INTELAES),y)
INTEL_SRCS := aes-intel/aes-intel.c aes-intel/aesni.S aes-intel/aes-ssse3.S \
		aes-intel/md5-mb.S
CPPFLAGS  += -Iaes-intel -DAESLOOP_INTELAES -DAESLOOP_ARCH_AES
HDRS      += $(wildcard aes-intel/*.h)
endif

# ARM64AES=y: the ARMv8 Crypto Extensions engine of aes-arm64/ (arm64,
# little-endian), C glue and assembly, chosen at run time by
# loop_aes_probe() as aes-intel/ is on x86_64.  The default when $(CC)
# builds for aarch64; ARM64AES=n leaves aes-arm64/ out, and the test_arm64ce*
# tests.
# Userspace default only, as INTELAES: loop.ko's is set in loop/Kbuild.
ifeq ($(origin ARM64AES),undefined)
ARM64AES := $(if $(filter aarch64-%,$(shell $(CC) -dumpmachine)),y,n)
endif
ifeq ($(ARM64AES),y)
ARM64_SRCS := aes-arm64/aes-arm64.c aes-arm64/aes-ce.S
CPPFLAGS  += -Iaes-arm64 -DAESLOOP_ARM64AES -DAESLOOP_ARCH_AES
HDRS      += $(wildcard aes-arm64/*.h)
endif

# Objects depend on the flags they were built with, so that switching
# INTELAES (or CC, CFLAGS) rebuilds them: a stamp rewritten when they change.
FLAGS_STAMP := $(BUILD)/flags.stamp
FLAGS_NOW   := $(CC) $(CFLAGS) $(CPPFLAGS) $(MOUNT_CFLAGS)
$(shell mkdir -p $(BUILD) && [ "$$(cat $(FLAGS_STAMP) 2>/dev/null)" = '$(FLAGS_NOW)' ] || \
	echo '$(FLAGS_NOW)' >$(FLAGS_STAMP))

# $(call objs,VARIANT,SOURCES): object paths of one build variant.
objs = $(patsubst %.S,$(BUILD)/$(1)/%.o,$(patsubst %.c,$(BUILD)/$(1)/%.o,$(2)))

.PHONY: all userspace module tools source deb version kernelrelease install uninstall install-tools uninstall-tools install-boot uninstall-boot losetup losetup-arm64 host-tests check-host bench bench-io bench-kernel vm-tools vm-tools-arm64 check check-full check-source check-debug check-uml check-arm64 demo clean \
	dist manifest

all: userspace module

userspace: $(BUILD)/libaesloop.a $(BUILD)/bin/aesloop-pipe $(BUILD)/bin/aesloop-reencrypt

# One rule per variant: "plain" is what ships, "san" is the same code under
# ASan and UBSan for the tests.
$(BUILD)/plain/%.o: %.c $(HDRS) $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

$(BUILD)/san/%.o: %.c $(HDRS) $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) $(SANFLAGS) $(CPPFLAGS) -c $< -o $@

# Assembly (aes-intel/, aes-arm64/): the same object in both variants, the sanitizers
# do not instrument it.
$(BUILD)/plain/%.o: %.S $(HDRS) $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -c $< -o $@

$(BUILD)/san/%.o: %.S $(HDRS) $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -c $< -o $@

# The files of lib/ that call libmount.
MOUNT_USERS := lib/options.c lib/fstab.c
$(call objs,plain,$(MOUNT_USERS)) $(call objs,san,$(MOUNT_USERS)): CPPFLAGS += $(MOUNT_CFLAGS)

$(BUILD)/libaesloop.a: $(call objs,plain,$(AES_SRCS) $(LIBAESLOOP_SRCS) $(INTEL_SRCS) $(ARM64_SRCS))
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/libaesloop-san.a: $(call objs,san,$(AES_SRCS) $(LIBAESLOOP_SRCS) $(INTEL_SRCS) $(ARM64_SRCS))
	rm -f $@
	$(AR) rcs $@ $^

# -z now: no lazy binding, whose register save area on the stack could keep
# a copy of key bytes that are in vector registers at the time.
$(BUILD)/bin/aesloop-pipe: $(BUILD)/plain/tools/aesloop-pipe.o $(BUILD)/libaesloop.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) $(TOOL_LDFLAGS) -o $@ $^ -lcrypto -lpthread

$(BUILD)/bin/aesloop-pipe-san: $(BUILD)/san/tools/aesloop-pipe.o $(BUILD)/libaesloop-san.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SANFLAGS) $(TOOL_LDFLAGS) -o $@ $^ -lcrypto -lpthread

# aesloop-reencrypt: its command line and checks, and the journal (reencrypt.c).
REENCRYPT_SRCS := tools/aesloop-reencrypt.c tools/reencrypt.c
$(call objs,plain,tools/aesloop-reencrypt.c) $(call objs,san,tools/aesloop-reencrypt.c): CPPFLAGS += $(BLKID_CFLAGS)

$(BUILD)/bin/aesloop-reencrypt: $(call objs,plain,$(REENCRYPT_SRCS)) $(BUILD)/libaesloop.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) $(TOOL_LDFLAGS) -o $@ $^ $(BLKID_LIBS) $(MOUNT_LIBS) -lcrypto -lpthread

$(BUILD)/bin/aesloop-reencrypt-san: $(call objs,san,$(REENCRYPT_SRCS)) $(BUILD)/libaesloop-san.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SANFLAGS) $(TOOL_LDFLAGS) -o $@ $^ $(BLKID_LIBS) $(MOUNT_LIBS) -lcrypto -lpthread

# Host test programs: tests/host/NAME.c -> build/tests/NAME and NAME-san.
HOST_TESTS := $(patsubst tests/host/%.c,%,$(wildcard tests/host/*.c))
ifneq ($(INTELAES),y)
HOST_TESTS := $(filter-out test_aesni,$(HOST_TESTS))
endif
ifneq ($(ARM64AES),y)
HOST_TESTS := $(filter-out test_arm64ce%,$(HOST_TESTS))
endif

# test_reencrypt_crash builds tools/reencrypt.c into itself, over its model of a disk.
$(BUILD)/plain/tests/host/test_reencrypt_crash.o $(BUILD)/san/tests/host/test_reencrypt_crash.o: \
	tools/reencrypt.c

$(BUILD)/tests/%: $(BUILD)/plain/tests/host/%.o $(BUILD)/libaesloop.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ $(MOUNT_LIBS) -lcrypto -lpthread

$(BUILD)/tests/%-san: $(BUILD)/san/tests/host/%.o $(BUILD)/libaesloop-san.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $^ $(MOUNT_LIBS) -lcrypto -lpthread

host-tests: $(foreach t,$(HOST_TESTS),$(BUILD)/tests/$(t) $(BUILD)/tests/$(t)-san) \
	    $(BUILD)/bin/aesloop-pipe $(BUILD)/bin/aesloop-pipe-san \
	    $(BUILD)/bin/aesloop-reencrypt $(BUILD)/bin/aesloop-reencrypt-san

check-host: host-tests
	tests/host/run.sh

# The benchmark (tests/bench/bench.c): every engine against
# OpenSSL and aespipe; always built with INTELAES=y.  BENCH_ARGS=--tsv for
# machine-readable output.
bench:
	$(MAKE) INTELAES=y $(BUILD)/bin/aesloop-bench $(BUILD)/bin/aesloop-pipe $(BUILD)/bin/aesloop-reencrypt
	$(BUILD)/bin/aesloop-bench $(BENCH_ARGS)

# The in-guest I/O comparison (tests/bench/io.sh), not a test: a table of ratios.
bench-io: vm-tools losetup
	tests/bench/io.sh $(BENCH_IO_ARGS)

# The driver at the CPU's own speed, in User-Mode Linux (tests/bench/kernel.sh).
bench-kernel: losetup
	tests/bench/kernel.sh $(BENCH_KERNEL_ARGS)

$(BUILD)/bin/aesloop-bench: $(BUILD)/plain/tests/bench/bench.o $(BUILD)/libaesloop.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ -lcrypto -lpthread

# The top Kbuild, as "make -C KDIR M=$PWD" (DKMS) reads it: loop/loop.ko.
module:
	@[ -d $(KDIR) ] || { echo "no kernel tree at $(KDIR): for the running kernel, apt install linux-headers-$$(uname -r); else give KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

# $(call install_files,FILTER,LIST): each MODE:SOURCE:DEST of LIST installed as
# $(DESTDIR)DEST, through the command the variable FILTER names (it reads the file on
# its standard input), or as it is when FILTER is empty.  $(call installed,LIST): those
# DESTs, for the uninstall targets: each install target's files are one list, which
# its uninstall target removes.
install_entry = install -d $(DESTDIR)$(dir $(word 3,$(2))) && \
	$(if $(1),$($(1)) <$(word 2,$(2)) >$(DESTDIR)$(word 3,$(2)) && \
		chmod $(word 1,$(2)) $(DESTDIR)$(word 3,$(2)),\
	install -m $(word 1,$(2)) $(word 2,$(2)) $(DESTDIR)$(word 3,$(2)))
install_files = set -e; $(foreach f,$(2),$(call install_entry,$(1),$(subst :, ,$(f)));)
installed = $(foreach f,$(1),$(DESTDIR)$(lastword $(subst :, ,$(f))))

# depmod for the kernel installed into, in the tree installed into: not the
# running kernel's when KDIR, KVER or INSTALL_MOD_PATH point elsewhere.
# updates/loop.ko: where an aesloop before the top Kbuild installed itself (M=loop); removed
# when it is aesloop's (it has aes_impl), so that no second copy competes with this one.
# MOD_INSTALLED: where modules_install puts loop/loop.ko (INSTALL_MOD_DIR=$(MOD_DIR),
# the folder of M's loop/ below it), compressed or not.
MOD_DIR   := updates
MOD_INSTALLED = $(MOD_ROOT)/lib/modules/$(KVER)/$(MOD_DIR)/loop
OLD_KO = for f in $(MOD_ROOT)/lib/modules/$(KVER)/updates/loop.ko*; do \
	[ ! -f "$$f" ] || ! modinfo -F parm "$$f" | grep -q '^aes_impl:' || rm -f "$$f"; done
install: module
	@$(CHECK_KVER)
	$(OLD_KO)
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=$(MOD_DIR) \
		$(if $(MOD_ROOT),INSTALL_MOD_PATH=$(MOD_ROOT)) modules_install
	depmod -a $(if $(MOD_ROOT),-b $(MOD_ROOT)) $(KVER)
	@[ -z "$$(ls $(MOD_ROOT)/lib/modules/$(KVER)/updates/dkms/loop.ko* 2>/dev/null)" ] || \
		echo "warning: the aesloop-dkms package's loop.ko is installed too: remove one of them" >&2

# What install put there (modules_install may have compressed it), then
# depmod, so that the kernel's own loop.ko is the one modprobe loads again.
uninstall:
	@$(CHECK_KVER)
	rm -f $(MOD_INSTALLED)/loop.ko $(MOD_INSTALLED)/loop.ko.*
	-rmdir $(MOD_INSTALLED) 2>/dev/null
	$(OLD_KO)
	depmod -a $(if $(MOD_ROOT),-b $(MOD_ROOT)) $(KVER)

# The patched util-linux programs under names of their own, aesloop-losetup and so on (as
# the Debian and Gentoo packages install them beside util-linux's), and linked as losetup,
# mount, swapon and swapoff: /usr/local/sbin comes before /usr/sbin in root's PATH on
# Debian, so these are the ones a shell runs; util-linux's own stay where they are.
# UL_BUILD: which util-linux build's programs (build, or build/ul-SERIES).
# install-tools installs what "make tools" built and builds nothing itself:
# run as root, it must not fetch and compile util-linux.
UL_BUILD  ?= $(BUILD)
UL_PROGS  := losetup mount swapon swapoff
# TOOL_LINKS=no: no plain-name links (a package's /usr/sbin/losetup is util-linux's).
TOOL_LINKS ?= yes
TOOLS_BUILT := $(addprefix $(UL_BUILD)/bin/,$(UL_PROGS)) $(BUILD)/bin/aesloop-pipe \
	$(BUILD)/bin/aesloop-reencrypt
MANDIR    := $(PREFIX)/share/man
# One page for the four programs: a losetup.8 here would hide util-linux's page.  The
# other three names are .so links to it.
UL_MAN    := aesloop-losetup.8
UL_MAN_LINKS := $(filter-out $(UL_MAN),$(addprefix aesloop-,$(addsuffix .8,$(UL_PROGS))))
TOOL_FILES := $(foreach p,$(UL_PROGS),0755:$(UL_BUILD)/bin/$(p):$(PREFIX)/sbin/aesloop-$(p)) \
	0755:$(BUILD)/bin/aesloop-pipe:$(PREFIX)/bin/aesloop-pipe \
	0755:$(BUILD)/bin/aesloop-reencrypt:$(PREFIX)/sbin/aesloop-reencrypt \
	0644:tools/aesloop-reencrypt.8:$(MANDIR)/man8/aesloop-reencrypt.8 \
	0644:tools/$(UL_MAN):$(MANDIR)/man8/$(UL_MAN) \
	0644:loop/aesloop.4:$(MANDIR)/man4/aesloop.4 \
	0644:tools/aesloop-pipe.1:$(MANDIR)/man1/aesloop-pipe.1 \
	0644:tools/aesloop-keygen.1:$(MANDIR)/man1/aesloop-keygen.1
# Installed with VERSION written in (run from the checkout, it reads this Makefile's).
TOOL_SCRIPTS := 0755:tools/aesloop-keygen:$(PREFIX)/bin/aesloop-keygen
VERSION_SUBST = sed -e 's|^version=@VERSION@$$|version=$(VERSION)|'
tools: userspace $(UL_BUILD)/bin/losetup

install-tools:
	@for f in $(TOOLS_BUILT); do [ -x "$$f" ] || { \
		echo "$$f is not built: run make tools$(if $(filter-out $(BUILD),$(UL_BUILD)), UL_BUILD=$(UL_BUILD)) first (not as root)" >&2; \
		exit 1; }; done
	$(call install_files,,$(TOOL_FILES))
	$(call install_files,VERSION_SUBST,$(TOOL_SCRIPTS))
	for p in $(UL_PROGS); do \
		[ "$(TOOL_LINKS)" != yes ] || ln -sf aesloop-$$p $(DESTDIR)$(PREFIX)/sbin/$$p || \
		exit 1; done
	for m in $(UL_MAN_LINKS); do \
		echo '.so man8/$(UL_MAN)' >$(DESTDIR)$(MANDIR)/man8/$$m || exit 1; done

# A plain name only when it is install-tools' link: /usr/sbin/losetup may be util-linux's.
uninstall-tools:
	for p in $(UL_PROGS); do \
		[ "$$(readlink $(DESTDIR)$(PREFIX)/sbin/$$p)" != aesloop-$$p ] || \
		rm -f $(DESTDIR)$(PREFIX)/sbin/$$p; done
	rm -f $(call installed,$(TOOL_FILES) $(TOOL_SCRIPTS)) \
		$(addprefix $(DESTDIR)$(MANDIR)/man8/,$(UL_MAN_LINKS))

# The root on an aesloop device (boot/): an admin's own initramfs-tools files go in
# /etc/initramfs-tools, a package's in /usr/share/initramfs-tools.  The hook is told where
# the helpers and the patched losetup are.
INITRAMFS_TOOLS ?= /etc/initramfs-tools
AESLOOP_LIBDIR  := $(PREFIX)/lib/aesloop
SYSTEMD_GENERATORS ?= $(PREFIX)/lib/systemd/system-generators
# dracut reads its modules from there only; installed when dracut is.
DRACUT_MODULES ?= /usr/lib/dracut/modules.d
# The patched losetup the boot integration runs (the Debian package's is /usr/sbin's).
LOSETUP ?= $(PREFIX)/sbin/aesloop-losetup
BOOT_SUBST = sed -e 's|@LIBDIR@|$(AESLOOP_LIBDIR)|' -e 's|@LOSETUP@|$(LOSETUP)|'
BOOT_FILES := \
	0755:boot/aesloop-root-config:$(AESLOOP_LIBDIR)/aesloop-root-config \
	0755:boot/aesloop-root-setup:$(AESLOOP_LIBDIR)/aesloop-root-setup \
	0644:boot/aesloop-functions:$(AESLOOP_LIBDIR)/aesloop-functions \
	0755:boot/aesloop-fstab-setup:$(AESLOOP_LIBDIR)/aesloop-fstab-setup \
	0755:boot/initramfs-tools/hooks/aesloop:$(INITRAMFS_TOOLS)/hooks/aesloop \
	0755:boot/initramfs-tools/scripts/local-top/aesloop:$(INITRAMFS_TOOLS)/scripts/local-top/aesloop \
	0755:boot/initramfs-tools/scripts/init-bottom/aesloop:$(INITRAMFS_TOOLS)/scripts/init-bottom/aesloop \
	0755:boot/systemd/aesloop-fstab-generator:$(SYSTEMD_GENERATORS)/aesloop-fstab-generator
DRACUT_FILES := \
	0755:boot/dracut/90aesloop/module-setup.sh:$(DRACUT_MODULES)/90aesloop/module-setup.sh \
	0644:boot/dracut/90aesloop/aesloop-root.service:$(DRACUT_MODULES)/90aesloop/aesloop-root.service
# dracut's module folder is the same for every PREFIX: one the aesloop-utils package installed
# is left to the package.
PACKAGE_OWNED_DRACUT = @if [ -z "$(DESTDIR)" ] && \
	dpkg-query -S $(DRACUT_MODULES)/90aesloop >/dev/null 2>&1; then \
	echo "$(DRACUT_MODULES)/90aesloop belongs to a package (aesloop-utils): use the package's" >&2; \
	exit 1; fi
install-boot:
	$(call install_files,BOOT_SUBST,$(BOOT_FILES))
	$(PACKAGE_OWNED_DRACUT)
	if [ -d $(DESTDIR)$(DRACUT_MODULES) ]; then \
		$(call install_files,BOOT_SUBST,$(DRACUT_FILES)) \
	fi

# The files install-boot made.  The initramfs then still has the hook's copy until the
# next update-initramfs, which a root on aesloop cannot boot without: said, not done.
uninstall-boot:
	rm -f $(call installed,$(BOOT_FILES))
	$(PACKAGE_OWNED_DRACUT)
	rm -f $(call installed,$(DRACUT_FILES))
	-rmdir $(DESTDIR)$(DRACUT_MODULES)/90aesloop $(DESTDIR)$(AESLOOP_LIBDIR) 2>/dev/null
	@echo "The initramfs keeps aesloop's setup until update-initramfs -u (dracut -f) makes it again."

# The Debian source package, in build/source: aesloop_VERSION.orig.tar.xz, the checkout's
# files (uncommitted edits included) less debian/; aesloop_VERSION.orig-util-linux.tar.xz,
# util-linux/ with the release tarball of every series of patches/series.sh, fetched
# (checked against its SHA-256) by build-losetup.sh unless build/ has it, which the
# package's build then takes from there, offline (doc/internals.md says why tarballs); the
# .dsc and debian.tar.xz of dpkg-source -b.  The tarballs are made reproducibly (sorted
# names, owner 0, debian/changelog's date), so the same tree gives the same orig tarballs.
# The version: VERSION, and debian/changelog's revision (tests/host/t-version.sh).
SRC_DIR   := $(BUILD)/source
SRC_TREE  := $(SRC_DIR)/aesloop-$(VERSION)
DEB_VERSION = $(shell dpkg-parsechangelog -S Version)
REPRO_TAR = tar -c --sort=name --format=gnu --owner=0 --group=0 --numeric-owner \
	--mtime=@$$(dpkg-parsechangelog -S Timestamp) --mode=u+w,go=rX,go-w
source:
	@case "$(DEB_VERSION)" in $(VERSION)-*) ;; *) echo "debian/changelog's version \
		$(DEB_VERSION) is not the Makefile's VERSION $(VERSION) with a Debian revision" >&2; \
		exit 1;; esac
	rm -rf $(SRC_DIR)
	mkdir -p $(SRC_TREE)/util-linux
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files -z --cached --others --exclude-standard ':!build' ':!util-linux' | \
		xargs -0 sh -c 'for f; do [ ! -e "$$f" ] || cp -P --parents "$$f" $(SRC_TREE); done' copy; \
	else \
		tar -c --exclude=./build --exclude=./util-linux --exclude=./debian/.debhelper . | \
		tar -x -C $(SRC_TREE); \
	fi
	bash -c '. patches/series.sh && for s in $$(ul_series_names); do ul_series $$s && \
		t=$$(patches/build-losetup.sh --fetch "$$ul_build_name" $$s | tail -n 1) && \
		cp "$$t" $(SRC_TREE)/util-linux/ || exit 1; done'
	$(REPRO_TAR) -C $(SRC_DIR) --exclude=aesloop-$(VERSION)/debian \
		--exclude=aesloop-$(VERSION)/util-linux aesloop-$(VERSION) | \
		xz -6 >$(SRC_DIR)/aesloop_$(VERSION).orig.tar.xz
	$(REPRO_TAR) -C $(SRC_TREE) util-linux | xz -6 >$(SRC_DIR)/aesloop_$(VERSION).orig-util-linux.tar.xz
	cd $(SRC_DIR) && dpkg-source -b aesloop-$(VERSION)
	rm -rf $(SRC_TREE)

# The Debian packages (debian/): make source's package, unpacked in build/deb/aesloop-VERSION,
# its binary packages built there (the .debs land in build/deb).
DEB_TREE := $(BUILD)/deb/aesloop-$(VERSION)
deb: source
	rm -rf $(BUILD)/deb
	mkdir -p $(BUILD)/deb
	dpkg-source -x $(SRC_DIR)/aesloop_$(DEB_VERSION).dsc $(DEB_TREE)
	cd $(DEB_TREE) && dpkg-buildpackage --build=binary --no-sign

# The util-linux series (patches/series.sh's table): the default one is make losetup's,
# in $(BUILD); each other one has make losetup-SERIES.
UL_DEFAULT_SERIES := $(shell bash -c '. patches/series.sh && echo $$ul_default_series')
UL_OTHER_SERIES := $(filter-out $(UL_DEFAULT_SERIES),\
	$(shell bash -c '. patches/series.sh && ul_series_names'))
# One BUILD_DIR per util-linux series (patches/series.sh), rebuilt when its quilt series
# (patches/util-linux/series-SERIES) or a patch it lists changes.
UL_SERIES_PATCHES = patches/util-linux/series-$(1) \
	$(addprefix patches/util-linux/,$(shell grep -v '^\#' patches/util-linux/series-$(1)))
losetup: $(BUILD)/bin/losetup

$(BUILD)/bin/losetup: patches/build-losetup.sh patches/series.sh \
		      $(call UL_SERIES_PATCHES,$(UL_DEFAULT_SERIES)) $(AES_SRCS) $(LIBAESLOOP_SRCS) $(HDRS)
	patches/build-losetup.sh $(BUILD)

# Every other series of patches/series.sh: make losetup-SERIES, in $(BUILD)/ul-SERIES.
define UL_SERIES_RULE
losetup-$(1): $(BUILD)/ul-$(1)/bin/losetup

$(BUILD)/ul-$(1)/bin/losetup: patches/build-losetup.sh patches/series.sh \
			      $$(call UL_SERIES_PATCHES,$(1)) $(AES_SRCS) $(LIBAESLOOP_SRCS) $(HDRS)
	patches/build-losetup.sh $(BUILD)/ul-$(1) $(1)
endef
$(foreach s,$(UL_OTHER_SERIES),$(eval $(call UL_SERIES_RULE,$(s))))
.PHONY: $(addprefix losetup-,$(UL_OTHER_SERIES))

# The same programs (2.38) cross-built for the arm64 test guest (needs libssl-dev:arm64).
losetup-arm64: $(BUILD)/ul-arm64/bin/losetup

$(BUILD)/ul-arm64/bin/losetup: patches/build-losetup.sh patches/series.sh \
			       $(call UL_SERIES_PATCHES,$(UL_DEFAULT_SERIES)) $(AES_SRCS) $(LIBAESLOOP_SRCS) $(HDRS)
	UL_HOST=aarch64-linux-gnu patches/build-losetup.sh $(BUILD)/ul-arm64

check:
	tests/check.sh

check-full:
	FULL=1 tests/check.sh

check-debug:
	tests/check-debug.sh

check-source:
	tests/packaging/source-build.sh

check-uml:
	tests/check-uml.sh

check-arm64:
	tests/check-arm64.sh

demo:
	tests/demo.sh

# The targets, one line each: the first line of each entry of the list at the top.
help:
	@sed -n 's/^#   \(make .*\)/  \1/p' $(firstword $(MAKEFILE_LIST))
.PHONY: help

# The release tarball that the Gentoo ebuilds fetch (README, "Gentoo"): HEAD as
# git archive gives it, less ebuild/ (the overlay's Manifests hold this
# tarball's checksums, so they cannot be inside it), re-packed with sorted
# names, owner 0, modes 644/755, one fixed time and gzip -n, so that the same
# tree always gives the same bytes whoever runs it, whenever.
dist:
	rm -rf $(BUILD)/dist
	mkdir -p $(BUILD)/dist/tree
	git archive --format=tar -o $(BUILD)/dist/head.tar --prefix=aesloop-$(VERSION)/ \
		HEAD -- . ':(exclude)ebuild'
	tar -x -f $(BUILD)/dist/head.tar -C $(BUILD)/dist/tree
	tar -c -f $(BUILD)/dist/aesloop-$(VERSION).tar -C $(BUILD)/dist/tree --sort=name \
		--format=gnu --owner=0 --group=0 --numeric-owner --mtime=@1767225600 \
		--mode=u=rwX,go=rX aesloop-$(VERSION)
	gzip -9 -n $(BUILD)/dist/aesloop-$(VERSION).tar
	rm -rf $(BUILD)/dist/tree $(BUILD)/dist/head.tar

# The DIST line of that tarball, written into the Manifest of every package of
# the overlay (OVERLAY=DIR: another copy of it) that has a $(VERSION) ebuild
# (or a revision of one, $(VERSION)-rN); the Manifests' other DIST lines
# (util-linux's) are kept.
manifest: dist
	@set -e; f=$(BUILD)/dist/aesloop-$(VERSION).tar.gz; n=$${f##*/}; \
	line="DIST $$n $$(stat -c %s $$f) BLAKE2B $$(b2sum $$f | cut -d' ' -f1)"; \
	line="$$line SHA512 $$(sha512sum $$f | cut -d' ' -f1)"; \
	for e in $(or $(OVERLAY),ebuild)/*/*/*-$(VERSION).ebuild \
		$(or $(OVERLAY),ebuild)/*/*/*-$(VERSION)-r[0-9]*.ebuild; do \
		[ -f "$$e" ] || continue; m=$${e%/*}/Manifest; \
		{ grep -v "^DIST $$n " "$$m" 2>/dev/null || true; echo "$$line"; } | \
			LC_ALL=C sort >"$$m.new"; \
		mv "$$m.new" "$$m"; echo "$$m: DIST $$n"; \
	done

# kbuild's output in the source folders, without asking a kernel tree (it may
# be gone).  Not kbuild's own "make -C KDIR M=$PWD clean": that deletes every
# object file under the checkout, build/'s kernel trees and build roots too.
KBUILD_OUTPUT_FILES := -name '*.o' -o -name '*.ko' -o -name '*.ko.*' -o -name '*.mod' \
	-o -name '*.mod.c' -o -name '.*.cmd' -o -name '.*.d' -o -name '*.o.d' -o -name '.tmp_*' \
	-o -name 'modules.order' -o -name 'Module.symvers'
clean:
	rm -rf $(BUILD)/plain $(BUILD)/san $(BUILD)/tests $(BUILD)/bin $(BUILD)/*.a
	find loop aes aes-intel aes-arm64 \( $(KBUILD_OUTPUT_FILES) \) -type f -delete
	find . -maxdepth 1 \( $(KBUILD_OUTPUT_FILES) \) -type f -delete

# What scripts ask of this Makefile rather than parse it again (make -s).
version:
	@echo $(VERSION)
kernelrelease:
	@$(CHECK_KVER)
	@echo $(KVER)

# Programs the VM tests run in the guest: static, so they need no libraries.
VM_TOOLS := $(BUILD)/vm-tools/lo-ioctl $(BUILD)/vm-tools/lo-ioctl32 \
	    $(BUILD)/vm-tools/flip-write $(BUILD)/vm-tools/memhog

vm-tools: $(VM_TOOLS)

$(BUILD)/vm-tools/flip-write: VM_LDLIBS := -pthread

$(BUILD)/vm-tools/%: tests/vm/%.c loop/aesloop_uapi.h
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) -D_GNU_SOURCE -static -o $@ $< $(VM_LDLIBS)

# The same, as a 32-bit program: the driver's compat_ioctl path.  Built by
# Debian's cross compilers: i686 for x86_64 (gcc-multilib would do, but it
# conflicts with every cross compiler), armhf for arm64 (AArch32 programs).
ifneq ($(filter aarch64-%,$(shell $(CC) -dumpmachine)),)
CC32 ?= arm-linux-gnueabihf-gcc
else
CC32 ?= i686-linux-gnu-gcc
endif

$(BUILD)/vm-tools/%32: tests/vm/%.c loop/aesloop_uapi.h
	@mkdir -p $(@D)
	$(CC32) $(WARN) $(CFLAGS) -D_GNU_SOURCE -static -o $@ $<

# The same programs for the arm64 test guest (tests/vm/lib.sh finds them there).
vm-tools-arm64:
	$(MAKE) vm-tools CC=aarch64-linux-gnu-gcc BUILD=$(BUILD)/arm64
