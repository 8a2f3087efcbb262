#!/bin/bash
# Usage: tests/system/image-root.sh SUITE VARIANT
# Builds a system test disk whose root file system is on an aesloop device, set up by the
# initramfs, and prints the folder that holds it: disk.img (GPT: partition 1 the clear /boot,
# partition 2 the root's backing store), vmlinuz, initrd.img (the image's own, made by its
# update-initramfs with aesloop's hook), cmdline (the kernel's arguments: no root=, no key),
# kver, module-buildid and passphrase (the test's, not a secret).  VARIANT:
#   part  the root on all of partition 2, AES128 single-key, a passphrase
#   file  the root in the file /host/root.aes on partition 2's ext4 (mounted at /host),
#         AES256 multi-key v3 with its gpg key file on /boot
# Made from image.sh's installed tree (make install-boot done) as doc/admin-guide.md tells an admin: the
# root line of /etc/fstab with loop-AES options, update-initramfs; the encrypted data is
# written with aesloop-pipe and the file systems with mke2fs -d: nothing is mounted on this
# host.  Cached in build/system/SUITE-root-VARIANT; rebuilt when the image or boot/ change.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tests/system/image-lib.sh
. "$top/tests/system/image-lib.sh"
say() { echo "image-root.sh: $*" >&2; }
die() { say "$*"; exit 1; }

[ $# -eq 2 ] || die "usage: $0 bookworm|trixie part|file"
suite=$1 variant=$2
case "$variant" in
part | file) ;;
*) die "unknown variant '$variant' (part or file)" ;;
esac
base=$("$top/tests/system/image.sh" "$suite") || die "image.sh $suite failed"
out="$top/build/system/$suite-root-$variant"
mkdir -p "$out"
exec 8>"$out/.lock"
flock 8

passphrase='aesloop test root passphrase'
# Fixed GUIDs: the fstab written before the disk exists names them.
disk_guid=6a1f2c3e-0000-4a5b-9c00-000000000000
boot_guid=6a1f2c3e-0001-4a5b-9c00-000000000001
data_guid=6a1f2c3e-0002-4a5b-9c00-000000000002
boot_mib=256

key=$({
	cat "$base/root.key"
	echo "$variant $passphrase $boot_mib"
	cat "${BASH_SOURCE[0]}" "$top/tests/system/image-lib.sh"
	cd "$top" && git ls-files -z boot Makefile | xargs -0 sha256sum
} | sha256sum | cut -c1-16)
if [ "$(cat "$out/disk.key" 2>/dev/null)" = "$key" ] && [ -f "$out/disk.img" ]; then
	echo "$out"
	exit 0
fi

say "making the $suite disk with an encrypted root ($variant)"
rm -f "$out/disk.key" "$out/disk.img"
work="$out/work"
rm -rf "$work"
tree="$work/tree"
mkdir -p "$tree"
tar -C "$tree" --zstd -xf "$base/root.tar.zst"
kver=$(cat "$base/kver")

# The root line, as an admin writes it (boot/aesloop-root-config has the syntax).
{
	grep -v '^/dev/vda[[:space:]]' "$top/tests/system/fstab"
	echo "PARTUUID=$boot_guid	/boot	ext4	defaults	0 2"
	case "$variant" in
	part) echo "PARTUUID=$data_guid	/	ext4	loop=/dev/loop0,encryption=AES128,errors=remount-ro	0 1" ;;
	file)
		echo "PARTUUID=$data_guid	/host	ext4	defaults	0 2"
		echo "/host/root.aes	/	ext4	loop=/dev/loop0,encryption=AES256,gpgkey=/boot/root.gpg,errors=remount-ro	0 1"
		;;
	esac
} >"$tree/etc/fstab"
mkdir -p "$tree/host"

# v3: 65 key lines from the kernel's random source, gpg-encrypted with the passphrase (the
# recipe of loop-AES's README, which tools/aesloop-keygen follows too).
pipe_args=(-e aes128)
if [ "$variant" = file ]; then
	gnupg="$work/gnupg"
	mkdir -m 0700 "$gnupg"
	head -c 3000 /dev/urandom | base64 -w 45 | head -n 65 |
		gpg --homedir "$gnupg" --batch --quiet --pinentry-mode loopback \
			--passphrase-fd 3 --symmetric --cipher-algo AES256 -o "$tree/boot/root.gpg" \
			3<<<"$passphrase"
	cp "$tree/boot/root.gpg" "$work/root.gpg"
	pipe_args=(-e aes256 -K "$work/root.gpg" -G "$gnupg")
fi

# make install-boot is in image.sh's tree already.
: >"$out/build.log"
image_boot_files "$tree" "$kver" "$out/build.log" "$out" ||
	die "update-initramfs with the aesloop hook failed"

# /boot on its own file system; the root keeps the empty mount point.
mke2fs -q -F -t ext4 -L boot -d "$tree/boot" "$work/boot.img" "${boot_mib}M" >>"$out/build.log" 2>&1
find "$tree/boot" -mindepth 1 -delete
# The root's size from its tree, a quarter more and 256 MiB free: every byte of it is written
# encrypted, so none of it stays sparse, and CI has run out of disk.
root_mib=$(($(du -sm "$tree" | cut -f1) * 5 / 4 + 256))
mke2fs -q -F -t ext4 -L aesloop-root -d "$tree" "$work/root.img" "${root_mib}M" >>"$out/build.log" 2>&1
rm -rf "$tree"
"$top/build/bin/aesloop-pipe" "${pipe_args[@]}" -p 3 <"$work/root.img" >"$work/root.aes" \
	3<<<"$passphrase" || die "aesloop-pipe failed"
rm -f "$work/root.img"
# Partition 2: the encrypted root itself, or a file system that holds it as root.aes.
data=$work/root.aes data_mib=$root_mib
if [ "$variant" = file ]; then
	mkdir "$work/host"
	mv "$work/root.aes" "$work/host/root.aes"
	data=$work/host.img data_mib=$((root_mib + 256))
	mke2fs -q -F -t ext4 -L host -d "$work/host" "$data" "${data_mib}M" >>"$out/build.log" 2>&1
fi

# The disk: 1 MiB for the table, the two partitions, 1 MiB for the backup table.
disk="$work/disk.img"
truncate -s $((1 + boot_mib + data_mib + 1))M "$disk"
sfdisk -q "$disk" <<EOF >>"$out/build.log"
label: gpt
label-id: $disk_guid
start=2048, size=$((boot_mib * 2048)), type=linux, uuid=$boot_guid, name=boot
start=$(((1 + boot_mib) * 2048)), size=$((data_mib * 2048)), type=linux, uuid=$data_guid, name=data
EOF
dd if="$work/boot.img" of="$disk" bs=1M seek=1 conv=notrunc,sparse status=none
dd if="$data" of="$disk" bs=1M seek=$((1 + boot_mib)) conv=notrunc,sparse status=none
mv "$disk" "$out/disk.img"
rm -rf "$work"

echo "$kver" >"$out/kver"
cp "$base/module-buildid" "$out/module-buildid"
echo "ro" >"$out/cmdline"
printf '%s\n' "$passphrase" >"$out/passphrase"
echo "$key" >"$out/disk.key"
echo "$out"
