#!/bin/bash
# Usage: tests/vm/debug-kernel.sh
# Builds, once (cached), a debug kernel for the test guest from the source of Debian's newest
# kernel series in trixie-backports (linux-source-7.3: Debian's `linux` source package with
# Debian's patches applied), with Debian's own config plus the kernel's bug detectors: KASAN,
# KFENCE, lockdep (PROVE_LOCKING), DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS_WORK/TIMERS, kmemleak,
# UBSAN and the hung-task and soft-lockup detectors.  The config is trimmed the way
# `make localmodconfig` trims it: only the modules the guest loads (tests/vm/guest-modules)
# stay modules, every other module is left out; no debug info, no module signing.
# The result is a kernel tree like kernel.sh's under build/kernel/KVER/ (KVER = 7.3.N-aesloop-
# debug), that tests/vm/run.sh -k KVER boots and that modules build against on the host (its
# compiler is the host's gcc).  Prints only KVER on stdout; progress goes to stderr.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
say() { echo "debug-kernel.sh: $*" >&2; }
die() { say "$*"; exit 1; }

series=7.3
work="$top/build/debug-kernel"
src="$work/linux-source-$series"
obj="$work/obj"

# Debian's kernel of the series: its config is the starting point, its tree tells which
# modules the guest needs.
base=$("$top/tests/vm/kernel.sh" "$series")
base_tree="$top/build/kernel/$base"
# shellcheck source=tests/vm/apt-trixie.sh
. "$top/tests/vm/apt-trixie.sh"
# shellcheck source=tests/vm/kernel-source.sh
. "$top/tests/vm/kernel-source.sh"

mkdir -p "$work"
exec 8>"$work/.lock"
flock 8

# The source package of the same version as the Debian kernel.
srcpkg=linux-source-$series
source_version "$srcpkg" trixie_refresh "${trixie_apt_opts[@]}"
upstream=${ver%%-*}
kver="$upstream-aesloop-debug"
tree="$top/build/kernel/$kver"
stamp="$tree/.aesloop-tree-ok"
if [ -f "$stamp" ]; then
	echo "$kver"
	exit 0
fi

source_unpack "$srcpkg" "$ver" "$src" "$obj" "${trixie_apt_opts[@]}"

# The modules the guest loads, with what they depend on, named as lsmod names them: what
# localmodconfig reads.
lsmod_file="$work/guest.lsmod"
mapfile -t wanted < <(sed -e 's/#.*//' "$top/tests/vm/guest-modules" | tr -s ' \t' '\n' | grep .)
{
	echo "Module Size Used by"
	modprobe -d "$base_tree" -S "$base" --show-depends -a "${wanted[@]}" 2>/dev/null |
		sed -n 's|^insmod .*/\([^/]*\)\.ko\(\.[a-z]*\)\{0,1\} *.*$|\1|p' | tr - _ | sort -u |
		sed 's/$/ 16384 0/'
} >"$lsmod_file"

config() { "$src/scripts/config" --file "$obj/.config" "$@"; }
debug_options() {
	# The detectors.
	config -e KASAN -e KASAN_GENERIC -e KASAN_INLINE -e KFENCE \
		-e PROVE_LOCKING -e DEBUG_ATOMIC_SLEEP -e DEBUG_OBJECTS -e DEBUG_OBJECTS_WORK \
		-e DEBUG_OBJECTS_TIMERS -e DEBUG_KMEMLEAK -d DEBUG_KMEMLEAK_DEFAULT_OFF \
		--set-val DEBUG_KMEMLEAK_MEM_POOL_SIZE 16000 -e UBSAN -e UBSAN_BOUNDS -e UBSAN_SHIFT \
		-d UBSAN_ALIGNMENT -e DETECT_HUNG_TASK -e SOFTLOCKUP_DETECTOR -e DEBUG_FS
	# Faster to build and nothing to sign: a test kernel of this checkout only.
	config -d DEBUG_INFO -e DEBUG_INFO_NONE -d DEBUG_INFO_DWARF5 -d DEBUG_INFO_DWARF4 \
		-d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -d DEBUG_INFO_BTF -d MODULE_SIG \
		-d MODULE_SIG_ALL --set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" \
		-d MODULE_COMPRESS \
		--set-str LOCALVERSION "-aesloop-debug" -d LOCALVERSION_AUTO
}

if [ ! -f "$obj/.aesloop-config-ok" ]; then
	say "configuring $kver in ${obj#"$top"/}"
	rm -rf "$obj"
	mkdir -p "$obj"
	cp "$base_tree/usr/src/linux-headers-$base/.config" "$obj/.config"
	debug_options
	make -C "$src" O="$obj" -s olddefconfig >&2
	make -C "$src" O="$obj" -s LSMOD="$lsmod_file" localmodconfig >&2 </dev/null
	# localmodconfig may have dropped what a detector depends on: ask again.
	debug_options
	make -C "$src" O="$obj" -s olddefconfig >&2
	for opt in KASAN KFENCE PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_OBJECTS_WORK \
		DEBUG_OBJECTS_TIMERS DEBUG_KMEMLEAK UBSAN DETECT_HUNG_TASK; do
		grep -qx "CONFIG_$opt=y" "$obj/.config" || die "CONFIG_$opt did not stay set"
	done
	touch "$obj/.aesloop-config-ok"
fi

say "building $kver (over an hour on two cores, the first time only)"
start=$(date +%s)
make -C "$src" O="$obj" -j"$(nproc)" -s bzImage modules >&2
say "built in $(($(date +%s) - start)) s"

# The tree, in kernel.sh's layout.
tmp="$top/build/kernel/.$kver.tmp"
rm -rf "$tmp"
mkdir -p "$tmp/boot"
cp "$obj/arch/x86/boot/bzImage" "$tmp/boot/vmlinuz-$kver"
make -C "$src" O="$obj" -s INSTALL_MOD_PATH="$tmp" modules_install >&2
# modules_install links build to the object directory by absolute path: this checkout's.
ln -sfn "$obj" "$tmp/lib/modules/$kver/build"
echo gcc >"$tmp/.aesloop-compiler"
echo "built by tests/vm/debug-kernel.sh from $srcpkg $ver" >"$tmp/.aesloop-built-here"
rm -rf "$tree"
mv "$tmp" "$tree"
depmod -b "$tree" "$kver"
touch "$stamp"
say "ready: ${tree#"$top"/}"
echo "$kver"
