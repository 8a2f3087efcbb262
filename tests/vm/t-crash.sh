#!/bin/bash
# covers: crash consistency, single-key
# VM test, in two boots: what was fsync'ed through an encrypted loop is on
# the backing file after a hard reset (sysrq 'b': no sync, no unmount).
#   t-crash.sh write   attach, mkfs, write a file, fsync it, reset
#   t-crash.sh check   (a new boot) attach again: the file is there, intact
# The backing file lives in /share, on the host, so it outlives the guest.
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

img=/share/crash.img
pass='correct horse battery staple 2026'
mkdir -p /mnt/t
attach() { losetup -e AES256 -p 3 -f --show "$img" 3<<<"$pass"; }

case "${1:-}" in
write)
	rm -f "$img" /share/crash.sum
	t_zerofile "$img" 32M
	if ! { dev=$(attach) && t_run_quiet mkfs.ext4 -q "$dev" && mount "$dev" /mnt/t; }; then
		t_fail crash-write "could not set up the volume"
		exit 1
	fi
	t_randfile /mnt/t/kept 2M
	# fsync the file and its directory, as an application that cares does.
	sync /mnt/t/kept /mnt/t
	sha256sum </mnt/t/kept >/share/crash.sum
	sync /share/crash.sum
	# Written after the last sync: may or may not survive, no matter.
	t_randfile /mnt/t/maybe 1M
	t_pass crash-write
	t_hard_reset
	;;
check)
	if [ ! -s /share/crash.sum ]; then
		t_fail crash-check "no checksum from the write boot"
		exit 1
	fi
	if dev=$(attach) && t_check crash-fsck e2fsck -p "$dev" && mount "$dev" /mnt/t; then
		t_expect_eq crash-file-intact "$(cat /share/crash.sum)" "$(sha256sum </mnt/t/kept)"
		umount /mnt/t
		losetup -d "$dev"
	else
		t_fail crash-check "the volume does not mount after the reset"
	fi
	rm -f "$img" /share/crash.sum
	;;
*)
	echo "usage: t-crash.sh write|check" >&2
	exit 2
	;;
esac
