#!/bin/bash
# covers: losetup, LOOP_CONFIGURE, LOOP_SET_FD, LOOP_CLR_FD, deferred detach, read-only
# VM test: plain (unencrypted) loops driven by util-linux's own losetup,
# unchanged (losetup.stock), on our loop.ko: what a complete loop driver
# needs.  Each check names the losetup option it covers.
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

lo_ioctl=$t_tools/lo-ioctl
work=/tmp/t-plain
mkdir -p "$work" /mnt/t
img=$work/disk.img
t_randfile "$img" 1M

sysfs() { cat "/sys/block/${1#/dev/}/$2"; }
bytes_of() { echo $(($(sysfs "$1" size) * 512)); }
region_sum() { tail -c +$(($2 + 1)) "$1" | head -c "$3" | sha256sum; }

# -f --show, -a, sysfs, -d
if dev=$(losetup.stock -f --show "$img"); then
	t_pass stock-f-show
	t_expect_eq stock-size "$((1 << 20))" "$(bytes_of "$dev")"
	t_expect_eq sysfs-backing-file "$img" "$(sysfs "$dev" loop/backing_file)"
	t_check stock-a-lists sh -c "losetup.stock -a | grep -F '$dev: ' | grep -F '$img'"
	t_json_vs_sysfs stock-list "$dev"
	t_expect_eq read-matches-file "$(t_sha256 "$img")" "$(sha256sum <"$dev" | cut -d' ' -f1)"
	t_check stock-d losetup.stock -d "$dev"
	t_expect_eq stock-d-gone "" "$(losetup.stock -a)"
else
	t_fail stock-f-show "losetup -f --show $img failed"
fi

# -o and --sizelimit: the window of the file, reads and writes.
if dev=$(losetup.stock -o 4096 --sizelimit 65536 -f --show "$img"); then
	t_expect_eq stock-o-sizelimit-size 65536 "$(bytes_of "$dev")"
	t_expect_eq stock-o-offset-sysfs 4096 "$(sysfs "$dev" loop/offset)"
	t_json_vs_sysfs stock-o-sizelimit "$dev"
	t_expect_eq stock-o-read "$(region_sum "$img" 4096 65536)" "$(sha256sum <"$dev")"
	head -c 65536 /dev/urandom >"$work/patch"
	dd if="$work/patch" of="$dev" bs=4k conv=fsync 2>/dev/null
	t_expect_eq stock-o-write "$(sha256sum <"$work/patch")" "$(region_sum "$img" 4096 65536)"
	losetup.stock -d "$dev"
else
	t_fail stock-o-sizelimit "losetup -o 4096 --sizelimit 65536 failed"
fi

# -r: read-only, writes refused.
if dev=$(losetup.stock -r -f --show "$img"); then
	before=$(t_sha256 "$img")
	t_expect_eq stock-r-ro 1 "$(sysfs "$dev" ro)"
	t_json_vs_sysfs stock-r "$dev"
	t_expect_fail stock-r-write-refused '' \
		dd if=/dev/zero of="$dev" bs=4k count=1 conv=fsync
	t_expect_eq stock-r-unchanged "$before" "$(t_sha256 "$img")"
	losetup.stock -d "$dev"
else
	t_fail stock-r "losetup -r failed"
fi

# ext4 and mount on a plain loop.
t_zerofile "$work/fs.img" 16M
if dev=$(losetup.stock -f --show "$work/fs.img") &&
   t_run_quiet mkfs.ext4 -q "$dev" && mount "$dev" /mnt/t &&
   t_randfile /mnt/t/f 1M && sum=$(sha256sum </mnt/t/f) &&
   umount /mnt/t && losetup.stock -d "$dev" &&
   dev=$(losetup.stock -f --show "$work/fs.img") && mount "$dev" /mnt/t &&
   [ "$(sha256sum </mnt/t/f)" = "$sum" ] && umount /mnt/t &&
   losetup.stock -d "$dev"; then
	t_pass plain-ext4
else
	t_fail plain-ext4 "ext4 on a plain loop did not survive detach and attach"
fi

# Detaching a mounted loop is refused and loses nothing.
if dev=$(losetup.stock -f --show "$work/fs.img") && mount "$dev" /mnt/t; then
	t_expect_fail clr-busy EBUSY "$lo_ioctl" clr "$dev"
	t_check clr-busy-still-mounted cat /mnt/t/f
	umount /mnt/t
	losetup.stock -d "$dev"
fi
# Open but not claimed (udev's blkid, a reader): the detach succeeds and
# happens at the last close, as with the stock driver.
if dev=$(losetup.stock -f --show "$work/fs.img"); then
	exec 7<"$dev"
	t_check clr-open-deferred losetup.stock -d "$dev"
	# Detached for util-linux (not listed), bound for the opener it has.
	t_expect_eq clr-open-not-listed "" "$(losetup.stock -a)"
	t_expect_eq clr-open-still-readable "$(head -c 4096 "$work/fs.img" | sha256sum)" \
		"$(head -c 4096 <&7 | sha256sum)"
	exec 7<&-
	t_check clr-open-gone-after-close test ! -e "/sys/block/${dev#/dev/}/loop"
	t_expect_eq clr-open-size-0-after-close 0 "$(sysfs "$dev" size)"
fi

# LOOP_SET_FD (the older path) and LOOP_CTL_GET_FREE creating devices.
dev=/dev/loop$("$lo_ioctl" get-free)
t_check set-fd "$lo_ioctl" set-fd "$dev" "$img"
t_expect_eq set-fd-size "$((1 << 20))" "$(bytes_of "$dev")"
t_check set-fd-clr "$lo_ioctl" clr "$dev"
for _ in 0 1 2 3 4 5 6 7 8; do
	d=$(losetup.stock -f --show "$img") && t_cleanup losetup.stock -d "$d"
done
t_expect_eq get-free-adds-devices /dev/loop8 "${d:-none}"
