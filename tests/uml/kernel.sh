#!/bin/bash
# Usage: tests/uml/kernel.sh SERIES
#   SERIES: 6.1 (bookworm's linux-source-6.1) or 7.3 (trixie-backports' linux-source-7.3)
# Builds, once (cached), a User-Mode Linux kernel (ARCH=um) from Debian's kernel source of the
# series: the kernel runs as an ordinary process on this machine's cores, so the driver and
# its AES-NI/VAES engines run at the CPU's own speed (no /dev/kvm here; QEMU's TCG emulates
# every AES instruction).  Its config is UML's x86_64 defconfig plus what the UML tier needs:
# the stock loop driver, brd and dm-crypt as modules (the peers, and what loop.ko is compared
# with), ext4 and hostfs built in (the guest's root is the host's, read-only), the kernel's
# hung-task and lockup detectors, and SMP with 2 CPUs where UML has it (7.3; 6.1's UML is
# uniprocessor).
# The result, in tests/vm/kernel.sh's layout: build/kernel/KVER/ with boot/linux-KVER (the UML
# executable), lib/modules/KVER (modules.dep; build -> the object tree, which out-of-tree
# modules build against with ARCH=um).  KVER is the source's version with -aesloop-uml.
# Prints only KVER on stdout; progress goes to stderr.  Quick when already done.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
say() { echo "uml/kernel.sh: $*" >&2; }
die() { say "$*"; exit 1; }

[ $# -eq 1 ] || die "usage: $0 SERIES (6.1 or 7.3)"
series=$1
# shellcheck source=tests/vm/kernel-source.sh
. "$top/tests/vm/kernel-source.sh"
case "$series" in
6.1) apt_opts=() refresh=: ;;
7.3)
	# shellcheck source=tests/vm/apt-trixie.sh
	. "$top/tests/vm/apt-trixie.sh"
	apt_opts=("${trixie_apt_opts[@]}") refresh=trixie_refresh
	;;
*) die "no UML build for series $series (6.1 or 7.3)" ;;
esac

work="$top/build/uml/$series"
mkdir -p "$work"
exec 8>"$work/.lock"
flock 8

srcpkg=linux-source-$series
source_version "$srcpkg" "$refresh" "${apt_opts[@]}"
upstream=${ver%%-*}
kver="$upstream-aesloop-uml"
tree="$top/build/kernel/$kver"
stamp="$tree/.aesloop-tree-ok"
src="$work/linux-source-$series"
obj="$work/obj"

kmake() { make -C "$src" O="$obj" ARCH=um "$@"; }
config() { "$src/scripts/config" --file "$obj/.config" "$@"; }
uml_options() {
	# The drivers under test and their peers.
	config -e MODULES -e MODULE_UNLOAD -e BLK_DEV -m BLK_DEV_LOOP -m BLK_DEV_RAM \
		--set-val BLK_DEV_RAM_COUNT 4 -e MD -m BLK_DEV_DM -m DM_CRYPT \
		-e BLK_DEV_UBD -e BLK_DEV_INITRD
	# dm-crypt's ciphers: UML has no arch crypto, only the generic C code.
	config -e CRYPTO -m CRYPTO_AES -m CRYPTO_CBC -m CRYPTO_ECB -m CRYPTO_XTS -m CRYPTO_MD5 \
		-m CRYPTO_SHA256 -m CRYPTO_SHA512 -e CRYPTO_USER_API -m CRYPTO_USER_API_HASH \
		-m CRYPTO_USER_API_SKCIPHER -e CRYPTO_MANAGER_DISABLE_TESTS
	# The guest's root and tools.
	config -e HOSTFS -e EXT4_FS -e TMPFS -e DEVTMPFS -e UNIX98_PTYS -e PROC_FS -e SYSFS \
		-e BLK_DEV_INTEGRITY -e DEBUG_FS -e MAGIC_SYSRQ -e KALLSYMS -e KALLSYMS_ALL \
		-e DETECT_HUNG_TASK -e SOFTLOCKUP_DETECTOR -e PRINTK_TIME -e SWAP -e BLK_DEV_WRITE_MOUNTED
	# Trace events: t-crypt traces the kthread works of shared reads.
	config -e FTRACE -e ENABLE_DEFAULT_TRACERS -e EVENT_TRACING
	# Two CPUs where UML has SMP (7.3 has, 6.1 has not): races show at native speed.
	config -e SMP --set-val NR_CPUS 4
	config -d MODULE_SIG -d MODULE_COMPRESS -d DEBUG_INFO -e DEBUG_INFO_NONE \
		--set-str LOCALVERSION "-aesloop-uml" -d LOCALVERSION_AUTO
}

# The stamps hold a hash of the source's version and the options: a tree built from another
# Debian revision or with other options is built again.
options_id=$({ echo "$srcpkg $ver"; declare -f uml_options; } | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" = "$options_id" ]; then
	echo "$kver"
	exit 0
fi

source_unpack "$srcpkg" "$ver" "$src" "$obj" "${apt_opts[@]}"

if [ "$(cat "$obj/.aesloop-config-ok" 2>/dev/null)" != "$options_id" ]; then
	say "configuring $kver in ${obj#"$top"/}"
	rm -rf "$obj"
	mkdir -p "$obj"
	kmake -s defconfig >&2
	uml_options
	kmake -s olddefconfig >&2
	for opt in BLK_DEV_LOOP BLK_DEV_RAM DM_CRYPT CRYPTO_AES CRYPTO_CBC; do
		grep -qx "CONFIG_$opt=m" "$obj/.config" || die "CONFIG_$opt is not a module"
	done
	for opt in HOSTFS EXT4_FS DEVTMPFS EVENT_TRACING; do
		grep -qx "CONFIG_$opt=y" "$obj/.config" || die "CONFIG_$opt did not stay set"
	done
	echo "$options_id" >"$obj/.aesloop-config-ok"
fi

say "building $kver (about 10 minutes on two cores, the first time only)"
start=$(date +%s)
kmake -j"$(nproc)" -s all >&2
say "built in $(($(date +%s) - start)) s"

# The tree, in tests/vm/kernel.sh's layout.
tmp="$top/build/kernel/.$kver.tmp"
rm -rf "$tmp"
mkdir -p "$tmp/boot"
cp "$obj/linux" "$tmp/boot/linux-$kver"
kmake -s INSTALL_MOD_PATH="$tmp" modules_install >&2
ln -sfn "$obj" "$tmp/lib/modules/$kver/build"
echo gcc >"$tmp/.aesloop-compiler"
echo "built by tests/uml/kernel.sh from $srcpkg $ver (ARCH=um)" >"$tmp/.aesloop-built-here"
rm -rf "$tree"
mv "$tmp" "$tree"
depmod -b "$tree" "$kver"
echo "$options_id" >"$stamp"
say "ready: ${tree#"$top"/}"
echo "$kver"
