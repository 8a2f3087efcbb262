#!/bin/bash
# covers: harness
# Self-test of the VM harness, with Debian's stock loop.ko standing in for ours.
#
# On the host:  tests/vm/t-harness.sh [-k KVER] [-c CPU] [-r FILE]
#   boots the guest with run.sh -m <the unpacked kernel's own loop.ko>, runs this same file
#   inside it, then checks on the host that the file the guest wrote to /share arrived intact.
# In the guest (run.sh sets AESLOOP_ROOT): loop device with util-linux's losetup and ext4;
#   a loop-AES single-key mapping with cryptsetup (dm-crypt) on a loop device; a file handed
#   to the host through /share.
# It checks the harness and the guest's programs, not aesloop's driver.
set -euo pipefail

if [ -z "${AESLOOP_ROOT:-}" ]; then
	# Host side.
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	kver=""
	cpu=max
	results=""
	while getopts 'k:c:r:' opt; do
		case "$opt" in
		k) kver=$OPTARG ;;
		c) cpu=$OPTARG ;;
		r) results=$OPTARG ;;
		*) echo "usage: $0 [-k KVER] [-c CPU] [-r FILE]" >&2; exit 2 ;;
		esac
	done
	[ -n "$kver" ] || kver=$("$top/tests/vm/kernel.sh" 6.1)
	[ -f "$top/build/kernel/$kver/.aesloop-tree-ok" ] || kver=$("$top/tests/vm/kernel.sh" "$kver")
	stock=$(compgen -G "$top/build/kernel/$kver/lib/modules/$kver/kernel/drivers/block/loop.ko*")
	share="$top/build/vm/share"
	out="$share/t-harness"
	rm -rf "$out"
	# A token the guest must hand back through /share.
	token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
	rc=0
	"$top/tests/vm/run.sh" -k "$kver" -c "$cpu" -m "$stock" -u ${results:+-r "$results"} \
		"$top/tests/vm/t-harness.sh" "$token" || rc=$?
	# The guest wrote a random file and its SHA-256; both must match here.
	if [ -f "$out/token" ] && [ "$(cat "$out/token")" = "$token" ] && [ -f "$out/data" ] &&
		[ "$(sha256sum <"$out/data" | cut -d' ' -f1)" = "$(cat "$out/data.sha256")" ]; then
		state=pass
	else
		state=fail
		rc=1
	fi
	# shellcheck source=tests/tap.sh
	. "$top/tests/tap.sh"
	if [ -n "$results" ]; then
		tap_append "$results" "$state" t-harness/host-share-readback
	else
		tap_line 1 "$state" t-harness/host-share-readback
	fi
	exit "$rc"
fi

# Guest side.
# shellcheck source=tests/vm/lib.sh
. "$AESLOOP_LIB"
token=${1:?token}
work=/tmp/t-harness
mkdir -p "$work"

t_check module-is-loop test -d /sys/module/loop
t_check guest-programs which cryptsetup mkfs.ext4 losetup losetup.stock dmsetup fio gpg

t_log "plain loop device with the stock losetup"
t_zerofile "$work/plain.img" 32M
dev=
T_LOSETUP=losetup.stock t_attach dev "$work/plain.img"
t_expect_eq plain-attach-device /dev/loop0 "$dev"
t_check plain-mkfs mkfs.ext4 -q -F "$dev"
mkdir -p "$work/mnt"
t_check plain-mount mount -t ext4 "$dev" "$work/mnt"
t_randfile "$work/data" 1M
t_check plain-write cp "$work/data" "$work/mnt/data"
t_check plain-umount umount "$work/mnt"
t_check plain-remount mount -t ext4 -o ro "$dev" "$work/mnt"
t_check plain-readback cmp "$work/data" "$work/mnt/data"
t_check plain-umount2 umount "$work/mnt"
t_check plain-fsck e2fsck -f -n "$dev"
t_check plain-detach losetup.stock -d "$dev"
t_check plain-detached sh -c "! losetup.stock -a | grep -q plain.img"

t_log "loop-AES single-key volume through dm-crypt"
# cryptsetup's loop-AES key file: one line of at least 20 characters.
echo "harness passphrase 0123456789" >"$work/key1"
t_zerofile "$work/crypt.img" 32M
t_check crypt-open cryptsetup open --type loopaes --key-file "$work/key1" -s 128 "$work/crypt.img" harness
t_check crypt-table sh -c "dmsetup table harness | grep -q ' aes-cbc-plain64 '"
t_check crypt-mkfs mkfs.ext4 -q -F /dev/mapper/harness
t_check crypt-mount mount -t ext4 /dev/mapper/harness "$work/mnt"
t_check crypt-write cp "$work/data" "$work/mnt/data"
t_check crypt-umount umount "$work/mnt"
t_check crypt-close cryptsetup close harness
t_check crypt-reopen cryptsetup open --type loopaes --key-file "$work/key1" -s 128 "$work/crypt.img" harness
t_check crypt-readback sh -c "mount -t ext4 -o ro /dev/mapper/harness $work/mnt && cmp $work/data $work/mnt/data && umount $work/mnt"
t_check crypt-close2 cryptsetup close harness
# The image holds ciphertext: no ext4 magic where the plaintext has it.
t_check crypt-is-encrypted sh -c "! blkid $work/crypt.img"

t_log "hand files to the host through /share"
mkdir -p /share/t-harness
t_check share-write cp "$work/data" /share/t-harness/data
t_sha256 "$work/data" >/share/t-harness/data.sha256
echo "$token" >/share/t-harness/token
t_check share-sync sync
