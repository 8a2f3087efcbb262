# shellcheck shell=bash
# Sourced by image.sh and image-root.sh (on the host): what making an image's boot files shares.

# image_chroot ROOT LOG COMMAND...: runs COMMAND in ROOT (chroot) with /proc, /sys and /dev
# mounted, in a private mount namespace: nothing stays mounted.  Output goes to LOG; on a
# failure its end is shown and the status is 1.
image_chroot() {
	local root=$1 log=$2
	shift 2
	# shellcheck disable=SC2016 # the inner shell expands its own arguments
	unshare --mount --propagation private -- /bin/sh -c '
		set -e
		root=$1
		shift
		mount -t proc proc "$root/proc"
		mount -t sysfs sysfs "$root/sys"
		mount --bind /dev "$root/dev"
		exec chroot "$root" "$@"
	' image-chroot "$root" "$@" >>"$log" 2>&1 || { tail -n 20 "$log" >&2; return 1; }
}

# image_boot_files ROOT KVER LOG OUT: runs the image's own update-initramfs (or dracut, in a
# dracut image: for any machine, not this host's) for KVER in ROOT, then copies that kernel
# and initramfs to OUT/vmlinuz and OUT/initrd.img.  Output goes to LOG; status 1 on failure.
image_boot_files() {
	local root=$1 kver=$2 log=$3 out=$4 f
	if [ -x "$root/usr/bin/dracut" ]; then
		image_chroot "$root" "$log" dracut --force --no-hostonly --kver "$kver" "/boot/initrd.img-$kver"
	else
		image_chroot "$root" "$log" update-initramfs -u -k "$kver"
	fi || return 1
	# Inside the root: 7.x's /boot entries may be symlinks into /usr/lib.
	for f in vmlinuz initrd.img; do
		cp "$root$(chroot "$root" realpath -e "/boot/$f-$kver")" "$out/$f" || return 1
	done
}
