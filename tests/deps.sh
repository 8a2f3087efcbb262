#!/bin/bash
# Installs, from Debian 12's own archive, everything aesloop needs to build and test.
# Safe to run again: apt-get skips what is already installed. Needs root.
set -euo pipefail

packages=(
	# build: userspace library, tools, the kernel module (kbuild helpers) and util-linux
	build-essential make pkg-config bc flex bison libelf-dev libssl-dev
	# the 32-bit ioctl caller of the VM tests (lo-ioctl32): Debian's i686 cross
	# compiler, not gcc-multilib, which conflicts with every cross compiler (the
	# arm64 tier's among them)
	gcc-i686-linux-gnu libc6-dev-i386-cross
	# libmount: mount option and fstab parsing in lib/options.c and lib/fstab.c (host tests)
	libmount-dev
	dpkg-dev xz-utils zstd pahole python3
	# test oracles and the programs the guest runs; strace: the host losetup
	# test checks that a refused setup touches no device
	openssl aespipe cryptsetup-bin e2fsprogs fio strace patch
	# sfdisk: the guest writes partition tables on loop devices with it
	fdisk
	# the test VM; the guest also runs dmsetup, and gpg with its agent for loop-AES
	# gpg-encrypted key files
	qemu-system-x86 busybox-static cpio kmod dmsetup gpg gpg-agent
	# trixie's kernels (7.x) are built with trixie's gcc-14, and their kbuild
	# helpers need trixie's C library: tests/vm/kmake.sh builds modules for them
	# in a trixie build root made by mmdebstrap; mmdebstrap also makes the system
	# test images (tests/system), which boot on copy-on-write overlays (qemu-img)
	mmdebstrap qemu-utils
	# shell script checks; systemd-escape for the fstab generator's host test
	shellcheck systemd
	# the Gentoo overlay's checks (tests/gentoo): metadata.xml against the DTD,
	# make dist (git archive)
	libxml2-utils git
	# the util-linux patches' series (patches/mkpatch.sh edits them with quilt)
	quilt
	# make deb (debian/), lintian on its packages, dkms building from the package's tree;
	# file: the re-encryption recipe's check (tests/host/t-keygen.sh)
	debhelper dh-dkms dkms lintian file
)

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: must run as root to install packages" >&2
	exit 1
fi

# ARM64=1: also what the arm64 tier (make check-arm64) needs: the cross
# compilers (arm64; armhf for the guest's 32-bit ioctl caller), qemu-user for
# the host tests (tests/host/arm64.sh), qemu-system-arm for the guest, and
# arm64 libcrypto, libmount and C library from Debian's multiarch archive
# (dpkg --add-architecture arm64).
arm64_deps() {
	local p missing=()
	for p in gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf libc6-dev-armhf-cross \
		qemu-user qemu-system-arm libc6:arm64 libssl-dev:arm64 \
		libasan8:arm64 libubsan1:arm64 \
		libmount-dev:arm64; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -qx 'install ok installed' ||
			missing+=("$p")
	done
	[ "${#missing[@]}" -gt 0 ] || return 0
	dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
	echo "deps.sh: installing ${missing[*]}"
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -qx 'install ok installed' ||
		missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	echo "deps.sh: installing ${missing[*]}"
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
[ "${ARM64:-0}" != 1 ] || arm64_deps
