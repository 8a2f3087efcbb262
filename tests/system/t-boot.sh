#!/bin/bash
# covers: module loading, engine choice, losetup, mount, udev events, single-key
# System suite: a stock Debian system with aesloop installed as the README says, booted with
# systemd and udev (tests/system/run.sh).  The loop driver udev and systemd load is aesloop's;
# its AES path is the one the CPU allows; the patched losetup and mount from /usr/local/sbin
# set up, use and detach an encrypted loop under udev's probing.
# shellcheck source=tests/vm/lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"
# shellcheck source=tests/system/lib.sh
. /aesloop/tests/system/lib.sh

# What systemd's boot did with the loop driver: loaded at most once, by the name loop.
check_aes_impl
t_check driver-loaded-line sh -c "dmesg | grep -q 'aesloop driver loaded'"

# The losetup a root shell finds is the patched one.
t_check losetup-is-patched sh -c 'command -v losetup | grep -qx /usr/local/sbin/losetup && losetup --help | grep -q -- --encryption'

# An encrypted volume under udev: set up, mkfs, mount, write, unmount, detach, set up again with
# the same passphrase and read back.
f=/var/tmp/t-boot.img
truncate -s 64M "$f"
pass=/run/t-boot.pass
printf '%s\n' 'system-boot-test passphrase' >"$pass"
setup() { losetup -f --show -e AES128 -p 3 "$f" 3<"$pass"; }
if dev=$(setup); then
	t_pass setup-encrypted
	udevadm settle
	t_check mkfs mkfs.ext4 -q "$dev"
	mkdir -p /mnt/t-boot
	t_check mount mount "$dev" /mnt/t-boot
	echo "written at $(date +%s%N)" >/mnt/t-boot/file
	want=$(cat /mnt/t-boot/file)
	t_check umount umount /mnt/t-boot
	t_check detach losetup -d "$dev"
	udevadm settle
	if dev=$(setup); then
		mount -o ro "$dev" /mnt/t-boot
		t_expect_eq readback "$want" "$(cat /mnt/t-boot/file 2>&1)"
		umount /mnt/t-boot
		losetup -d "$dev"
	else
		t_fail setup-again "losetup -e AES128 failed the second time"
	fi
else
	t_fail setup-encrypted "losetup -f --show -e AES128 -p 3 $f failed"
fi
t_check no-loop-left no_loop_left
rm -f "$f" "$pass"
