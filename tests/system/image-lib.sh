# shellcheck shell=bash
# Sourced by image.sh and image-root.sh (on the host): what making an image's boot files shares.

# image_boot_files ROOT KVER LOG OUT: runs the image's own update-initramfs (or dracut, in a
# dracut image: for any machine, not this host's) for KVER in ROOT
# (chroot, in a private mount namespace: nothing stays mounted), then copies that kernel and
# initramfs to OUT/vmlinuz and OUT/initrd.img.  Output goes to LOG; status 1 on failure.
image_boot_files() {
	local root=$1 kver=$2 log=$3 out=$4 f
	# shellcheck disable=SC2016 # the inner shell expands its own arguments
	unshare --mount --propagation private -- /bin/sh -c '
		set -e
		mount -t proc proc "$1/proc"
		mount -t sysfs sysfs "$1/sys"
		mount --bind /dev "$1/dev"
		if [ -x "$1/usr/bin/dracut" ]; then
			chroot "$1" dracut --force --no-hostonly --kver "$2" "/boot/initrd.img-$2"
		else
			chroot "$1" update-initramfs -u -k "$2"
		fi
	' initramfs "$root" "$kver" >>"$log" 2>&1 || { tail -n 20 "$log" >&2; return 1; }
	# Inside the root: 7.x's /boot entries may be symlinks into /usr/lib.
	for f in vmlinuz initrd.img; do
		cp "$root$(chroot "$root" realpath -e "/boot/$f-$kver")" "$out/$f" || return 1
	done
}
