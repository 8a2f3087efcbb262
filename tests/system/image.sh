#!/bin/bash
# Usage: tests/system/image.sh [--base] SUITE[-deb][-dracut]
# Builds the system test image of Debian SUITE (bookworm or trixie; -dracut: with Debian's
# dracut instead of initramfs-tools, in build/system/SUITE-dracut; -deb: aesloop from its Debian
# packages instead, below; -deb-dracut: both, the packaged dracut module) and prints the
# folder that holds it: root.img (ext4, the whole root file system, no partition table),
# root.tar.zst (the same tree, for tests/system/image-root.sh),
# vmlinuz, initrd.img and kver.  Two layers, each cached under build/system/SUITE (the tar
# files compressed: plain, they took a gigabyte or more an image, and CI has run out of disk):
#   base.tar.zst  Debian from the archive (mmdebstrap): systemd, udev, kmod, util-linux, e2fsprogs,
#             initramfs-tools, gnupg, cryptsetup-bin, udisks2, the kernel the VM suites test on
#             (bookworm: 6.1; trixie: 7.3 from trixie-backports), and tests/system/rootfs (the
#             test unit, the shutdown hook).  Rebuilt when the package list, make_base, rootfs/,
#             fstab or the kernel release change.
#   root.img  base.tar.zst with aesloop installed as the README tells a user: make install (loop.ko
#             into updates/, depmod), make install-tools (util-linux 2.38.1's patched
#             programs on bookworm, 2.41's on trixie) and make install-boot (the initramfs
#             hook, the fstab generator), then update-initramfs.  Rebuilt when
#             what is installed changes.  -deb: the base also has dkms and the kernel's headers,
#             and the headers of a second kernel downloaded, not installed (bookworm:
#             bookworm-security's 6.12; trixie: trixie's own 6.12); root.img is the base after
#             "apt-get install ./aesloop-dkms_*.deb ./aesloop-utils_*.deb" (DKMS builds loop.ko
#             for the kernel), then dpkg -i of those second headers (DKMS builds it again): the
#             guest's tests/system/t-deb.sh checks both.  The packages are the suite's own:
#             bookworm's from make deb on this bookworm host (build/deb), trixie's from the
#             source package built in a trixie build root (tests/packaging/source-build.sh
#             trixie, build/srcbuild/trixie).
# --base: only the base layer (check.sh makes it ahead, beside the host tests), no output.
# mke2fs -d makes the file system from a folder: nothing is mounted on this host.  Needs root.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tests/system/image-lib.sh
. "$top/tests/system/image-lib.sh"
say() { echo "image.sh: $*" >&2; }
die() { say "$*"; exit 1; }

base_only=
[ "${1:-}" != --base ] || { base_only=1; shift; }
[ $# -eq 1 ] || die "usage: $0 [--base] bookworm|trixie[-deb][-dracut]"
name=$1 suite=$1 initramfs=initramfs-tools flavour=
case "$suite" in *-dracut) suite=${suite%-dracut} initramfs=dracut ;; esac
case "$suite" in *-deb) suite=${suite%-deb} flavour=deb ;; esac
mirror=http://deb.debian.org/debian
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
case "$suite" in
bookworm)
	kseries=6.1 ul_build=build kextra=
	sources="deb [signed-by=$keyring] $mirror bookworm main
deb [signed-by=$keyring] $mirror bookworm-updates main
deb [signed-by=$keyring] http://deb.debian.org/debian-security bookworm-security main"
	;;
trixie)
	# linux-image-7.3's own pre-dependency: trixie's linux-base is too old.
	kseries=7.3 ul_build=build/ul-2.41 kextra=linux-base/trixie-backports
	sources="deb [signed-by=$keyring] $mirror trixie main
deb [signed-by=$keyring] $mirror trixie-updates main
deb [signed-by=$keyring] http://deb.debian.org/debian-security trixie-security main
deb [signed-by=$keyring] $mirror trixie-backports main"
	;;
*) die "unknown suite '$suite' (bookworm or trixie)" ;;
esac
command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (tests/deps.sh)"
kver=$("$top/tests/vm/kernel.sh" "$kseries") || die "kernel.sh $kseries failed"
ktree="$top/build/kernel/$kver/lib/modules/$kver/build"
# The packaged image: DKMS needs a kernel's headers; a second kernel's (bookworm-security's 6.12)
# come later, as when a user installs another kernel.
deb_extra=() headers2='' debs_dir=''
if [ "$flavour" = deb ]; then
	case "$suite" in
	bookworm)
		kver2=$("$top/tests/vm/kernel.sh" 6.12) || die "kernel.sh 6.12 failed"
		headers2=linux-headers-$kver2 debs_dir=build/deb
		;;
	# trixie's own kernel, while the image boots 7.3 from backports.
	trixie) headers2=linux-headers-amd64/trixie debs_dir=build/srcbuild/trixie ;;
	esac
	deb_extra=(dkms "linux-headers-$kver")
fi
kernel2_hook=()
# shellcheck disable=SC2016 # mmdebstrap's shell expands $1, the root
[ -z "$headers2" ] || kernel2_hook=(--customize-hook='mkdir -p "$1/var/cache/aesloop-kernel2/partial"'
	--customize-hook="chroot \"\$1\" apt-get install -y -q --download-only \
		-o Dir::Cache::archives=/var/cache/aesloop-kernel2 $headers2")

out="$top/build/system/$name"
mkdir -p "$out"
exec 8>"$out/.lock"
flock 8

# What the image is made of, as the packages a user would install.  No recommends: udisks2's
# would pull in every file system's tools; polkitd is what authorizes udisksctl.
packages=(
	systemd systemd-sysv udev dbus kmod util-linux e2fsprogs "$initramfs" gnupg
	cryptsetup-bin udisks2 polkitd procps fdisk "linux-image-$kver" ${kextra:+"$kextra"}
	"${deb_extra[@]}"
)

key_of() { sha256sum | cut -c1-16; }

# The base layer: what it is made of is its key (this function's text included), so that a
# change to the install step below does not rebuild Debian.
make_base() {
	local hostname=aesloop-$suite
	say "making the $suite base system in ${out#"$top"/}/base.tar.zst (mmdebstrap)"
	rm -f "$out/base.tar.zst" "$out/base.key" "$out/base-new.tar.zst"
	# In a mount namespace of its own: a run that is killed leaves no mounts behind.
	# shellcheck disable=SC2016 # the hooks are run by mmdebstrap's shell, with $1 the root
	unshare --mount --propagation private -- \
		mmdebstrap --quiet --variant=apt --aptopt='APT::Install-Recommends "false"' \
		--include="$(
			IFS=,
			echo "${packages[*]}"
		)" \
		--customize-hook="cp -a '$top/tests/system/rootfs/.' \"\$1/\"" \
		--customize-hook="echo $hostname >\"\$1/etc/hostname\"" \
		--customize-hook="cp '$top/tests/system/fstab' \"\$1/etc/fstab\"" \
		--customize-hook='mkdir -p "$1/aesloop" "$1/share"' \
		--customize-hook='chroot "$1" passwd -dq root' \
		--customize-hook='chroot "$1" systemctl enable aesloop-test.service aesloop-test-watchdog.service' \
		"${kernel2_hook[@]}" \
		--customize-hook='rm -f "$1/etc/machine-id" && touch "$1/etc/machine-id"' \
		"$suite" - "$sources" | zstd -q -T0 >"$out/base-new.tar.zst" ||
		die "mmdebstrap $suite failed"
	mv "$out/base-new.tar.zst" "$out/base.tar.zst"
	echo "$base_key" >"$out/base.key"
}
base_key=$({
	echo "$suite $kver ${packages[*]} $sources $headers2"
	declare -f make_base
	cat "$top/tests/system/fstab"
	(cd "$top/tests/system/rootfs" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
} | key_of)
if [ "$(cat "$out/base.key" 2>/dev/null)" != "$base_key" ] || [ ! -f "$out/base.tar.zst" ]; then
	make_base
fi
[ -z "$base_only" ] || exit 0

if [ "$flavour" = deb ]; then
	# What apt installs: the suite's packages (check.sh makes them first).
	deb_version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
	debs=("$top/$debs_dir/aesloop-dkms_${deb_version}_all.deb"
		"$top/$debs_dir/aesloop-utils_${deb_version}_amd64.deb")
	if [ ! -f "${debs[0]}" ] || [ ! -f "${debs[1]}" ]; then
		case "$suite" in
		bookworm) die "no packages in build/deb: run make deb first" ;;
		*) die "no packages in $debs_dir: run tests/packaging/source-build.sh $suite first" ;;
		esac
	fi
	img_key=$({
		echo "$base_key deb"
		cat "${BASH_SOURCE[0]}" "$top/tests/system/image-lib.sh"
		sha256sum "${debs[@]}"
	} | key_of)
else
	# What install-tools installs, built first (as a user runs make tools before make install).
	make -C "$top" userspace "$ul_build/bin/losetup" >"$out/build.log" 2>&1 ||
		{ tail -n 20 "$out/build.log" >&2; die "make userspace $ul_build/bin/losetup failed"; }
	# aesloop, installed into a copy of the base.  What goes in: the module source, the tools
	# and the install rules.
	img_key=$({
		echo "$base_key $ul_build"
		cat "${BASH_SOURCE[0]}" "$top/tests/system/image-lib.sh"
		cd "$top"
		git ls-files -z loop aes aes-intel tools boot Makefile Kbuild |
			xargs -0 sha256sum
		sha256sum "$ul_build"/bin/losetup "$ul_build"/bin/mount "$ul_build"/bin/swapon \
			"$ul_build"/bin/swapoff build/bin/aesloop-pipe
	} | key_of)
fi
if [ "$(cat "$out/root.key" 2>/dev/null)" = "$img_key" ] && [ -f "$out/root.img" ] &&
	[ -f "$out/root.tar.zst" ]; then
	echo "$out"
	exit 0
fi

say "installing aesloop into the $name image (kernel $kver, ${flavour:-util-linux ${ul_build#build/}})"
rm -f "$out/root.key" "$out/root.img" "$out/root.tar.zst"
root="$out/root"
rm -rf "$root"
mkdir -p "$root"
tar -C "$root" --zstd -xf "$out/base.tar.zst"
: >"$out/install.log"
if [ "$flavour" = deb ]; then
	# As a user installs them; DKMS builds loop.ko for the kernel.  Then the second kernel's
	# headers: DKMS's header_postinst.d hook builds it for that one too.
	mkdir -p "$root/var/cache/aesloop-debs"
	cp "${debs[@]}" "$root/var/cache/aesloop-debs/"
	# shellcheck disable=SC2016 # the image's shell expands it
	image_chroot "$root" "$out/install.log" sh -c '
		set -e
		apt-get install -y -q /var/cache/aesloop-debs/*.deb
		dpkg -i /var/cache/aesloop-kernel2/*.deb' ||
		die "apt-get install of the packages in the image failed (${out#"$top"/}/install.log)"
	rm -rf "$root/var/cache/aesloop-debs" "$root/var/cache/aesloop-kernel2"
	ko=$(find "$root/lib/modules/$kver/updates/dkms" -name 'loop.ko*' 2>/dev/null | head -n 1)
	[ -n "$ko" ] || die "DKMS put no loop.ko into the image's updates/dkms"
else
	# With that kernel's compiler (kmake.sh), as check.sh builds it.
	"$top/tests/vm/kmake.sh" "$kver" install KDIR="$ktree" KVER="$kver" \
		INSTALL_MOD_PATH="$root" >>"$out/install.log" 2>&1 ||
		{ tail -n 20 "$out/install.log" >&2; die "make install failed (${out#"$top"/}/install.log)"; }
	make -C "$top" install-tools DESTDIR="$root" UL_BUILD="$ul_build" >>"$out/install.log" 2>&1 ||
		{ tail -n 20 "$out/install.log" >&2; die "make install-tools failed"; }
	make -C "$top" install-boot DESTDIR="$root" >>"$out/install.log" 2>&1 ||
		{ tail -n 20 "$out/install.log" >&2; die "make install-boot failed"; }
	ko=$(find "$root/lib/modules/$kver/updates" -name 'loop.ko*' | head -n 1)
	[ -n "$ko" ] || die "make install put no loop.ko into the image's updates/"
fi
# Its ELF build id, which the guest compares with the loaded module's (guest.sh).
case "$ko" in
*.xz) xz -dc "$ko" >"$out/loop.ko" ;;
*.zst) zstd -qdc "$ko" >"$out/loop.ko" ;;
*.gz) gzip -dc "$ko" >"$out/loop.ko" ;;
*) cp "$ko" "$out/loop.ko" ;;
esac
readelf -n "$out/loop.ko" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p' >"$out/module-buildid"
[ -s "$out/module-buildid" ] || die "the installed loop.ko has no ELF build id"

image_boot_files "$root" "$kver" "$out/install.log" "$out" || die "update-initramfs in the image failed"
echo "$kver" >"$out/kver"
# Room for the suites' files; the image is sparse.
mke2fs -q -F -t ext4 -L aesloop-root -d "$root" "$out/root.img.new" 3G >>"$out/install.log" 2>&1 ||
	die "mke2fs -d failed"
# The installed tree too, which image-root.sh turns into its encrypted-root disks.
tar -C "$root" --zstd -cf "$out/root.tar.zst.new" . || die "tar of the installed tree failed"
mv "$out/root.tar.zst.new" "$out/root.tar.zst"
mv "$out/root.img.new" "$out/root.img"
rm -rf "$root"
echo "$img_key" >"$out/root.key"
echo "$out"
