#!/bin/bash
# Usage: tests/vm/userland.sh ARCH
# The foreign userland that mkinitramfs.sh packs for a guest of another architecture than this
# host (arm64): Debian bookworm's programs of the guest (busybox-static, bash, kmod, e2fsprogs,
# cryptsetup, dmsetup, util-linux, aespipe, fio, gpg) and their libraries, made once with
# mmdebstrap into build/vm/root-ARCH.  --variant=extract only unpacks the packages and their
# dependencies, so no maintainer script of the foreign architecture ever runs (no binfmt or
# qemu-user needed); the guest needs files, not an installed system.  The stamp holds the
# package list, so a root made from an older list is made again.
# Prints the root's path on stdout; progress goes to stderr.  Quick when already made.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
say() { echo "userland.sh: $*" >&2; }
die() { say "$*"; exit 1; }

[ $# -eq 1 ] || die "usage: $0 ARCH (arm64)"
arch=$1
case "$arch" in
arm64) ;;
*) die "no foreign userland known for $arch" ;;
esac

suite=bookworm
packages="busybox-static,bash,kmod,e2fsprogs,cryptsetup-bin,dmsetup,util-linux,mount,fdisk,aespipe,fio,gpg,gpg-agent"
root="$top/build/vm/root-$arch"
want="$suite $arch $packages"
if [ "$(cat "$root/.aesloop-root-ok" 2>/dev/null)" = "$want" ]; then
	echo "$root"
	exit 0
fi

mkdir -p "$top/build/vm"
exec 8>"$top/build/vm/.root-$arch.lock"
flock 8
if [ "$(cat "$root/.aesloop-root-ok" 2>/dev/null)" != "$want" ]; then
	command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (tests/deps.sh)"
	say "making the $suite $arch userland in ${root#"$top"/}"
	deb="deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org"
	# Into a scratch folder renamed at the end: an interrupted run leaves nothing that looks
	# finished.  In a mount namespace of its own: a killed run leaves no mounts behind.
	rm -rf "$root.tmp" "$root"
	unshare --mount --propagation private -- \
		mmdebstrap --quiet --variant=extract --arch="$arch" --include="$packages" \
		"$suite" "$root.tmp" "$deb/debian $suite main" "$deb/debian $suite-updates main" \
		"$deb/debian-security $suite-security main" >&2 || die "mmdebstrap $suite $arch failed"
	echo "$want" >"$root.tmp/.aesloop-root-ok"
	mv "$root.tmp" "$root"
fi
echo "$root"
