#!/bin/bash
# Usage: tests/vm/kmake.sh KVER MAKE-ARGUMENTS...
#        tests/vm/kmake.sh KVER      only make the build root ready (fetched ahead of the builds)
# Runs make (from the top of the checkout) for an out-of-tree build against the kernel tree
# KVER that kernel.sh unpacked, with that kernel's compiler.  Debian builds each kernel with
# its distribution's gcc (bookworm: gcc-12, trixie: gcc-14), and its kbuild helpers (modpost,
# objtool) are linked against that distribution's C library.  When the host has the compiler,
# make runs here; otherwise in a build root of the kernel's distribution (mmdebstrap, cached
# under build/buildroot/SUITE), with the checkout bind-mounted at its own path so that every
# path means the same inside and out.  The build root needs root (chroot, mount).
# An arm64 tree (kernel.sh's .aesloop-arch) is a cross build: ARCH=arm64 and the kernel's gcc
# for aarch64-linux-gnu (bookworm's gcc-12-aarch64-linux-gnu here, trixie's gcc-14 cross
# compiler in a build root of its own); its kbuild helpers are amd64 (kernel.sh).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
say() { echo "kmake.sh: $*" >&2; }
die() { say "$*"; exit 1; }

[ $# -ge 1 ] || die "usage: $0 KVER [MAKE-ARGUMENTS...]"
kver=$1
shift
# No make arguments: only the build root (checked before "set --" below adds some).
nargs=$#
tree="$top/build/kernel/$kver"
[ -f "$tree/.aesloop-tree-ok" ] || die "$tree is not ready: run tests/vm/kernel.sh first"
compiler=$(cat "$tree/.aesloop-compiler" 2>/dev/null || echo gcc)
arch=$(cat "$tree/.aesloop-arch" 2>/dev/null || echo amd64)
cross=
case "$arch" in
amd64) ;;
arm64)
	# Debian's headers name the compiler as $(CROSS_COMPILE)gcc-N (.kernelvariables).
	cross=aarch64-linux-gnu-
	set -- ARCH=arm64 CROSS_COMPILE="$cross" "$@"
	;;
*) die "$tree: no cross build known for architecture $arch" ;;
esac
# A User-Mode Linux tree (tests/uml/kernel.sh): kbuild reads ARCH=um from make's command
# line, which make hands on to the kernel's own makefiles.
[ ! -x "$tree/boot/linux-$kver" ] || set -- ARCH=um "$@"

# make builds in the checkout itself (loop.ko in loop/, its objects in aes/ and aes-intel/): two
# builds at once, for two kernels (check.sh's lanes each making a system image), would write
# the same files.  So one at a time: the lock's descriptor passes through exec to make and its
# children, and is let go when they end.
checkout_lock() {
	exec 7>"$top/build/.kmake.lock"
	flock 7
}

cd "$top"
if command -v "$cross$compiler" >/dev/null; then
	[ "$nargs" -gt 0 ] || exit 0
	checkout_lock
	exec make "$@"
fi

# The Debian release whose gcc this is.
case "$compiler" in
gcc-14) suite=trixie libs="libelf1t64 libssl3t64" ;;
*) die "no build root known for $cross$compiler (the compiler of $kver)" ;;
esac
root="$top/build/buildroot/$suite"
# gcc: the top Makefile asks $(CC) (cc) for the target; xz-utils: modules_install
# compresses as the kernel's configuration says (7.x: xz).  The stamp holds this list, so
# a build root made from an older one is made again.
include="$compiler,gcc,make,libc6-dev,binutils,bc,kmod,zlib1g,pahole,xz-utils,${libs// /,}"
# A cross compiler in a build root of its own, so that the native one is not made again.
if [ -n "$cross" ]; then
	root="$root-$arch"
	include+=",$compiler-${cross%-},binutils-${cross%-}"
fi
if [ "$(cat "$root/.aesloop-root-ok" 2>/dev/null)" != "$include" ]; then
	mkdir -p "$top/build/buildroot"
	exec 8>"$top/build/buildroot/.lock"
	flock 8
	if [ "$(cat "$root/.aesloop-root-ok" 2>/dev/null)" != "$include" ]; then
		command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (tests/deps.sh)"
		say "making the $suite build root for $compiler in ${root#"$top"/}"
		rm -rf "$root"
		# In a mount namespace of its own: a run that is killed leaves no mounts behind.
		unshare --mount --propagation private -- \
			mmdebstrap --quiet --variant=apt --include="$include" "$suite" "$root" \
			"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
			>&2 || die "mmdebstrap $suite failed"
		echo "$include" >"$root/.aesloop-root-ok"
	fi
	exec 8>&-
fi
[ "$nargs" -gt 0 ] || exit 0

checkout_lock
# A private mount namespace: the bind mounts vanish with the command, whatever happens.
# shellcheck disable=SC2016 # the inner shell expands its own arguments
exec unshare --mount --propagation private -- /bin/sh -c '
	set -e
	root=$1 top=$2
	shift 2
	mkdir -p "$root$top"
	mount --bind "$top" "$root$top"
	mount -t proc proc "$root/proc"
	exec chroot "$root" /bin/sh -c "cd \"\$0\" && exec make \"\$@\"" "$top" "$@"
' kmake "$root" "$top" "$@"
