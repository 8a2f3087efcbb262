# aesloop top-level Makefile.
#
#   make                 userspace library, tools and tests, and loop.ko for
#                        the running kernel (or KDIR=...)
#   make module          loop.ko only
#   make install         loop.ko into /lib/modules/$(KVER)/updates, then depmod
#   make losetup         the util-linux losetup with the aesloop patch
#   make check-host      host tests (also under ASan and UBSan)
#   make check           every test, the VM suites included (tests/check.sh)
#   make demo            the main job: an encrypted ext4 on an aesloop device in the VM
#
# Userspace output goes to build/, the project-local cache that also holds the
# Debian kernel trees and util-linux sources the tests use.

BUILD     ?= build
CC        ?= gcc
CFLAGS    ?= -O2 -g
WARN      := -std=c11 -Wall -Wextra -Werror
CPPFLAGS  += -D_DEFAULT_SOURCE -Iaes -Itools
SANFLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
TOOL_LDFLAGS := -Wl,-z,relro -Wl,-z,now

# The kernel to build loop.ko against: the running one unless KDIR says else.
KVER      ?= $(shell uname -r)
KDIR      ?= /lib/modules/$(KVER)/build

LIB_SRCS  := aes/aes.c aes/md5.c aes/loop_aes.c
TOOL_SRCS := $(wildcard tools/keysetup.c)
HDRS      := $(wildcard aes/*.h tools/*.h)

# $(call objs,VARIANT,SOURCES): object paths of one build variant.
objs = $(patsubst %.c,$(BUILD)/$(1)/%.o,$(2))

.PHONY: all userspace module install losetup host-tests check-host vm-tools check demo clean

all: userspace module

userspace: $(BUILD)/libaesloop.a $(BUILD)/bin/aesloop-pipe

# One rule per variant: "plain" is what ships, "san" is the same code under
# ASan and UBSan for the tests.
$(BUILD)/plain/%.o: %.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

$(BUILD)/san/%.o: %.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) $(SANFLAGS) $(CPPFLAGS) -c $< -o $@

$(BUILD)/libaesloop.a: $(call objs,plain,$(LIB_SRCS) $(TOOL_SRCS))
	$(AR) rcs $@ $^

$(BUILD)/libaesloop-san.a: $(call objs,san,$(LIB_SRCS) $(TOOL_SRCS))
	$(AR) rcs $@ $^

# -z now: no lazy binding, whose register save area on the stack could keep
# a copy of key bytes that are in vector registers at the time.
$(BUILD)/bin/aesloop-pipe: $(BUILD)/plain/tools/aesloop-pipe.o $(BUILD)/libaesloop.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(TOOL_LDFLAGS) -o $@ $^ -lcrypto

$(BUILD)/bin/aesloop-pipe-san: $(BUILD)/san/tools/aesloop-pipe.o $(BUILD)/libaesloop-san.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SANFLAGS) $(TOOL_LDFLAGS) -o $@ $^ -lcrypto

# Host test programs: tests/host/NAME.c -> build/tests/NAME and NAME-san.
HOST_TESTS := $(patsubst tests/host/%.c,%,$(wildcard tests/host/*.c))

$(BUILD)/tests/%: $(BUILD)/plain/tests/host/%.o $(BUILD)/libaesloop.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ -lcrypto

$(BUILD)/tests/%-san: $(BUILD)/san/tests/host/%.o $(BUILD)/libaesloop-san.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $^ -lcrypto

host-tests: $(foreach t,$(HOST_TESTS),$(BUILD)/tests/$(t) $(BUILD)/tests/$(t)-san) \
	    $(BUILD)/bin/aesloop-pipe $(BUILD)/bin/aesloop-pipe-san

check-host: host-tests
	tests/host/run.sh

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/loop W=1 modules

install: module
	$(MAKE) -C $(KDIR) M=$(CURDIR)/loop INSTALL_MOD_DIR=updates modules_install
	depmod -a $(KVER)

losetup: $(BUILD)/bin/losetup

$(BUILD)/bin/losetup: patches/build-losetup.sh $(wildcard patches/*.patch) \
		      $(LIB_SRCS) $(TOOL_SRCS) $(HDRS)
	patches/build-losetup.sh $(BUILD)

check:
	tests/check.sh

demo:
	tests/demo.sh

clean:
	rm -rf $(BUILD)/plain $(BUILD)/san $(BUILD)/tests $(BUILD)/bin $(BUILD)/*.a
	-[ -d $(KDIR) ] && $(MAKE) -C $(KDIR) M=$(CURDIR)/loop clean

# Programs the VM tests run in the guest: static, so they need no libraries.
VM_TOOLS := $(BUILD)/vm-tools/lo-ioctl

vm-tools: $(VM_TOOLS)

$(BUILD)/vm-tools/%: tests/vm/%.c
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) -D_GNU_SOURCE -static -o $@ $<
