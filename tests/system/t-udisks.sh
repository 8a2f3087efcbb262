#!/bin/bash
# covers: udisks, autoclear, LOOP_GET_STATUS64, LOOP_SET_STATUS64, key secrecy
# System suite: udisks (udisksd and udisksctl, over D-Bus, with polkit) driving loop devices, on
# aesloop's loop.ko and, as the reference, on the stock loop.ko of the same kernel:
# loop-setup and loop-delete, autoclear set through udisks' Loop.SetAutoclear and honoured at
# unmount, and - aesloop only - an encrypted loop whose key udisks cannot change: its flag
# change is a LOOP_GET_STATUS64/LOOP_SET_STATUS64 round trip that hands back no key.
# shellcheck source=tests/vm/lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"
# shellcheck source=tests/system/lib.sh
. /aesloop/tests/system/lib.sh

img=/var/tmp/t-udisks.img
truncate -s 32M "$img"
mkfs.ext4 -q -F "$img"
t_cleanup rm -f "$img"


# Loop.SetAutoclear as GNOME Disks calls it.
set_autoclear() { # DEV true|false
	busctl call org.freedesktop.UDisks2 "/org/freedesktop/UDisks2/block_devices/${1#/dev/}" \
		org.freedesktop.UDisks2.Loop SetAutoclear 'ba{sv}' "$2" 0
}
sysfs_loop() { cat "/sys/block/${1#/dev/}/loop/$2" 2>/dev/null; }

scenario() { # NAME: the sequences a desktop runs
	local n=$1 out dev mnt
	if ! out=$(udisksctl loop-setup --no-user-interaction -f "$img" 2>&1); then
		t_fail "$n/loop-setup" "udisksctl loop-setup: $out"
		return
	fi
	dev=$(sed -n 's/.* as \(\/dev\/loop[0-9]*\)\.$/\1/p' <<<"$out")
	t_expect_eq "$n/loop-setup-backing-file" "$img" "$(sysfs_loop "$dev" backing_file)"
	udevadm settle
	t_check "$n/loop-delete" udisksctl loop-delete --no-user-interaction -b "$dev"
	udevadm settle
	t_expect_eq "$n/loop-delete-detached" "" "$(sysfs_loop "$dev" backing_file)"

	out=$(udisksctl loop-setup --no-user-interaction -f "$img" 2>&1)
	dev=$(sed -n 's/.* as \(\/dev\/loop[0-9]*\)\.$/\1/p' <<<"$out")
	if [ -z "$dev" ]; then
		t_fail "$n/loop-setup-again" "udisksctl loop-setup: $out"
		return
	fi
	udevadm settle
	# As a desktop does it: mounted first, then autoclear (on a device nobody holds open,
	# udisks' own close would already detach it).
	if out=$(udisksctl mount --no-user-interaction -b "$dev" 2>&1); then
		mnt=$(sed -n 's/^Mounted [^ ]* at \(.*\)$/\1/p' <<<"$out")
		mnt=${mnt%.}
		t_pass "$n/mount"
		echo "$n" >"$mnt/written-through-udisks"
		t_check "$n/set-autoclear" set_autoclear "$dev" true
		t_expect_eq "$n/autoclear-flag" 1 "$(sysfs_loop "$dev" autoclear)"
		t_check "$n/unmount" udisksctl unmount --no-user-interaction -b "$dev"
		udevadm settle
		# Autoclear: the last close detached it.
		t_expect_eq "$n/autoclear-detached-at-unmount" "" "$(sysfs_loop "$dev" backing_file)"
	else
		t_fail "$n/mount" "udisksctl mount -b $dev: $out"
	fi
	losetup -D
}

if [ -n "$stock_ko" ] && use_driver stock; then
	scenario stock
else
	t_skip stock "the stock loop.ko could not be loaded ($stock_ko)"
fi
t_check use-aesloop use_driver aesloop
scenario aesloop

# An encrypted loop: udisks sees its file system and may change its flags, never its key.
enc=/var/tmp/t-udisks-enc.img
pass=/run/t-udisks.pass
truncate -s 32M "$enc"
t_cleanup rm -f "$enc" "$pass"
printf '%s\n' 'udisks must never change this key' >"$pass"
if dev=$(losetup -f --show -e AES128 -p 3 "$enc" 3<"$pass"); then
	mkfs.ext4 -q "$dev"
	mkdir -p /mnt/t-udisks
	mount "$dev" /mnt/t-udisks
	head -c 1M /dev/urandom >/mnt/t-udisks/data
	want=$(sha256sum </mnt/t-udisks/data)
	udevadm settle
	# Flag changes while it is mounted (a GET, SET round trip each).
	t_check enc/set-autoclear-true set_autoclear "$dev" true
	t_expect_eq enc/autoclear-flag 1 "$(sysfs_loop "$dev" autoclear)"
	t_check enc/set-autoclear-false set_autoclear "$dev" false
	t_expect_eq enc/autoclear-flag-off 0 "$(sysfs_loop "$dev" autoclear)"
	t_check enc/still-encrypted sh -c "losetup -a | grep -q 'encryption=AES128'"
	umount /mnt/t-udisks
	# Read back through the key, past every cache.
	echo 3 >/proc/sys/vm/drop_caches
	if out=$(udisksctl mount --no-user-interaction -b "$dev" 2>&1); then
		mnt=$(sed -n 's/^Mounted [^ ]* at \(.*\)$/\1/p' <<<"$out")
		mnt=${mnt%.}
		t_expect_eq enc/data-after-udisks "$want" "$(sha256sum <"$mnt/data" 2>&1)"
		udisksctl unmount --no-user-interaction -b "$dev" >/dev/null
	else
		t_fail enc/mount-through-udisks "udisksctl mount -b $dev: $out"
	fi
	losetup -d "$dev"
else
	t_fail enc/setup "losetup -e AES128 failed"
fi
t_check none-left no_loop_left
