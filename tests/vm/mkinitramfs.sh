#!/bin/bash
# Usage: tests/vm/mkinitramfs.sh KVER OUT.cpio.gz
# Packs the initramfs of the aesloop test VM for kernel KVER (unpacked by kernel.sh into
# build/kernel/KVER): busybox-static with its applet links, bash, the kernel modules the
# tests need, the host's cryptsetup/e2fsprogs/util-linux/kmod programs with the libraries ldd
# lists, and tests/vm/init.sh as /init. Big programs whose libraries would triple the image
# (fio, gpg) are not packed: they are staged in build/vm/lazy/ and run in the guest from the
# read-only 9p share through small wrappers.
# The guest's losetup is the patched one of build/bin/losetup, or with AESLOOP_UL_BUILD=DIR
# (relative to the project root, or absolute) that of DIR/bin/losetup, another util-linux
# build of patches/build-losetup.sh (run.sh -U sets it); the stock one when it is not built.
# Rebuilds only when an input changed (this script, init.sh, the kernel tree, a program or
# library, the patched losetup); otherwise it returns at once.
# An arm64 kernel tree (kernel.sh's .aesloop-arch) gets arm64 programs instead of the host's:
# those of the userland that userland.sh unpacks, with the libraries their ELF NEEDED entries
# name (ldd cannot run them); its modules are tests/vm/guest-modules-arm64, its patched
# losetup that of build/ul-arm64 (a cross build of patches/build-losetup.sh), its lazy
# programs in build/vm/lazy-arm64.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
say() { echo "mkinitramfs.sh: $*" >&2; }
die() { say "$*"; exit 1; }

[ $# -eq 2 ] || die "usage: $0 KVER OUT.cpio.gz"
kver=$1
out=$2
tree="$top/build/kernel/$kver"
moddir="$tree/lib/modules/$kver"
[ -f "$tree/.aesloop-tree-ok" ] || die "$tree is not ready: run tests/vm/kernel.sh first"
arch=$(cat "$tree/.aesloop-arch" 2>/dev/null || echo amd64)

# Where the guest's programs come from: this host (sysroot empty), or a foreign userland.
sysroot=
suffix=
modlist="$top/tests/vm/guest-modules"
multiarch=x86_64-linux-gnu
cross=
if [ "$arch" != amd64 ]; then
	sysroot=$("$top/tests/vm/userland.sh" "$arch") || die "userland.sh $arch failed"
	suffix=-$arch
	modlist="$top/tests/vm/guest-modules-$arch"
	multiarch=aarch64-linux-gnu
	cross=aarch64-linux-gnu-
fi

# Guest path of the lazy programs; run.sh shares the project root as /aesloop.
lazy="$top/build/vm/lazy$suffix"
lazy_guest=/aesloop/build/vm/lazy$suffix

# Kernel modules for the tests: tests/vm/guest-modules (-ARCH).
mapfile -t modules < <(sed -e 's/#.*//' "$modlist" | tr -s ' \t' '\n' | grep .)

# Programs packed into the initramfs: "SOURCE DEST [LINK...]" (links sit beside DEST).
programs=(
	"/usr/bin/bash /usr/bin/bash"
	# modprobe must be kmod: request_module() runs CONFIG_MODPROBE_PATH=/sbin/modprobe for
	# dm-crypt's ciphers, and busybox's modprobe does not read compressed modules.
	"/usr/bin/kmod /usr/bin/kmod /usr/sbin/modprobe /usr/sbin/insmod /usr/sbin/rmmod /usr/sbin/lsmod /usr/sbin/modinfo /usr/sbin/depmod"
	"/usr/sbin/mke2fs /usr/sbin/mke2fs /usr/sbin/mkfs.ext4 /usr/sbin/mkfs.ext2"
	"/usr/sbin/e2fsck /usr/sbin/e2fsck /usr/sbin/fsck.ext4"
	"/usr/sbin/cryptsetup /usr/sbin/cryptsetup"
	"/usr/sbin/dmsetup /usr/sbin/dmsetup"
	"/usr/sbin/losetup /usr/sbin/losetup.stock"
	"/usr/bin/mount /usr/bin/mount"
	"/usr/bin/umount /usr/bin/umount"
	"/usr/sbin/blkid /usr/sbin/blkid"
	"/usr/sbin/blockdev /usr/sbin/blockdev"
	"/usr/bin/lsblk /usr/bin/lsblk"
	"/usr/sbin/sfdisk /usr/sbin/sfdisk"
	"/usr/bin/partx /usr/bin/partx"
	"/usr/bin/addpart /usr/bin/addpart"
	"/usr/bin/delpart /usr/bin/delpart"
	"/usr/bin/aespipe /usr/bin/aespipe"
)
optional_programs=(/usr/sbin/dmsetup /usr/bin/aespipe)
lazy_programs=(/usr/bin/fio /usr/bin/gpg /usr/bin/gpg-agent)
# glibc loads libgcc_s itself when a thread is cancelled (libcryptsetup runs threads).
extra_libs=("/lib/$multiarch/libgcc_s.so.1")

ul_default=build
[ "$arch" = amd64 ] || ul_default=build/ul-$arch
ul_build=${AESLOOP_UL_BUILD:-$ul_default}
[[ "$ul_build" == /* ]] || ul_build=$top/$ul_build
patched_losetup="$ul_build/bin/losetup"

# The host file behind a guest path: the path itself, or in a foreign userland the file it
# names there, symbolic links (absolute ones too) followed inside that root.  bookworm's
# packages are not merged-/usr (bash is /bin/bash), so /usr/bin/X is also looked for as /bin/X.
src_of() {
	if [ -z "$sysroot" ] || [[ "$1" == "$top"/* ]]; then
		echo "$1"
		return
	fi
	local p cand n
	for cand in "$1" "${1#/usr}"; do
		p=$cand n=0
		while [ -L "$sysroot$p" ] && [ $((n += 1)) -lt 40 ]; do
			local t
			t=$(readlink "$sysroot$p")
			case "$t" in
			/*) p=$t ;;
			*) p=$(dirname "$p")/$t ;;
			esac
		done
		if [ -e "$sysroot$p" ]; then
			echo "$sysroot$p"
			return
		fi
	done
	echo "$sysroot$1"
}

# The libraries of foreign programs: the closure of their ELF NEEDED entries, searched in the
# file's RUNPATH and the userland's library folders, and their interpreter at the path they
# name; guest paths, one a line.
elf_libs_of() {
	local todo=("$@") seen=" " f name dir found elf runpath
	while [ "${#todo[@]}" -gt 0 ]; do
		f=${todo[0]}
		todo=("${todo[@]:1}")
		elf=$("${cross}readelf" -dl "$f" 2>/dev/null)
		runpath=$(sed -n 's/^.*(R\(UN\)\{0,1\}PATH).*: \[\(.*\)\]$/\2/p' <<<"$elf" | tr ':' ' ')
		while read -r name; do
			[[ "$seen" != *" $name "* ]] || continue
			seen+="$name "
			found=
			[[ "$name" != /* ]] || found=$name
			# shellcheck disable=SC2086 # RUNPATH's folders, split at the ':'
			for dir in $runpath "/lib/$multiarch" "/usr/lib/$multiarch" /lib /usr/lib; do
				[ -z "$found" ] || break
				if [ -e "$(src_of "$dir/$name")" ]; then
					found=$dir/$name
					break
				fi
			done
			[ -n "$found" ] || die "$f: library $name missing in $sysroot"
			echo "$found"
			todo+=("$(src_of "$found")")
		done < <(sed -n -e 's/^.*(NEEDED).*Shared library: \[\(.*\)\]$/\1/p' \
				-e 's|^.*\[Requesting program interpreter: \(/.*\)\]$|\1|p' <<<"$elf")
	done | sort -u
}

# Libraries ldd lists for the given programs, one path a line.
libs_of() {
	local prog line
	if [ -n "$sysroot" ]; then
		for prog in "$@"; do src_of "$prog"; done | { mapfile -t progs; elf_libs_of "${progs[@]}"; }
		return
	fi
	for prog in "$@"; do
		while IFS= read -r line; do
			case "$line" in
			*"not found"*) die "$prog: library missing on the host: $line" ;;
			*" => /"*) line=${line#*=> }; echo "${line%% (*}" ;;
			*/ld-linux*) line=${line#"${line%%/*}"}; echo "${line%% (*}" ;;
			esac
		# A static program has no libraries (ldd then says so and fails).
		done < <(ldd "$prog" 2>/dev/null || true)
	done | sort -u
}

present() { [ -e "$(src_of "$1")" ]; }

main_progs=()
for entry in "${programs[@]}"; do
	read -r src _ <<<"$entry"
	if ! present "$src"; then
		[[ " ${optional_programs[*]} " == *" $src "* ]] && continue
		die "$src is missing on the host (run tests/deps.sh)"
	fi
	main_progs+=("$src")
done
if [ -x "$patched_losetup" ] && [ -n "$sysroot" ] &&
	! LC_ALL=C readelf -h "$patched_losetup" | grep -q 'Machine:.*AArch64'; then
	[ -z "${AESLOOP_UL_BUILD:-}" ] || die "$patched_losetup is not an $arch program"
	say "warning: $patched_losetup is not an $arch program; the guest's losetup is the stock one"
	patched_losetup=/nonexistent
fi
if [ -x "$patched_losetup" ]; then
	main_progs+=("$patched_losetup")
elif [ -n "${AESLOOP_UL_BUILD:-}" ]; then
	die "$patched_losetup is not built (AESLOOP_UL_BUILD=$AESLOOP_UL_BUILD)"
else
	say "warning: $patched_losetup not built yet; the guest's losetup is the stock one"
fi
lazy_progs=()
for src in "${lazy_programs[@]}"; do
	present "$src" && lazy_progs+=("$src")
done

mapfile -t main_libs < <(libs_of "${main_progs[@]}"; printf '%s\n' "${extra_libs[@]}")
mapfile -t lazy_libs < <(libs_of "${lazy_progs[@]}")

# An input's identity is its path, size and mtime (content for the scripts we edit). The
# lazy programs are shared by every kernel's initramfs, so they have their own fingerprint.
fingerprint() {
	{
		sha256sum <"${BASH_SOURCE[0]}"
		stat -L -c '%n %s %Y' "$@"
	} | sha256sum | cut -d' ' -f1
}

mkdir -p "$top/build/vm" "$(dirname "$out")"
# Two run.sh started together must not pack into the same files.
exec 8>"$top/build/vm/.mkinitramfs.lock"
flock 8

# The host files behind guest paths (see src_of).
srcs_of() { local p; for p in "$@"; do src_of "$p"; done; }
mapfile -t main_files < <(srcs_of /usr/bin/busybox /etc/mke2fs.conf "${main_progs[@]}" "${main_libs[@]}")
mapfile -t lazy_files < <(srcs_of "${lazy_progs[@]}" "${lazy_libs[@]}" "${main_libs[@]}")
want=$(fingerprint "$top/tests/vm/init.sh" "$modlist" "$tree/.aesloop-tree-ok" "${main_files[@]}")
want_lazy=$(fingerprint "${lazy_files[@]}")
if [ -f "$out" ] && [ "$(cat "$out.inputs" 2>/dev/null)" = "$want" ] &&
	[ "$(cat "$lazy/.inputs" 2>/dev/null)" = "$want_lazy" ]; then
	exit 0
fi
say "packing $(basename "$out") for $kver"

stage=$(mktemp -d "$top/build/vm/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# Merged /usr, as on the host, so /sbin/modprobe and /lib/... paths from ldd resolve.
mkdir -p "$stage"/usr/{bin,sbin,lib,lib64} "$stage"/{dev,proc,sys,tmp,run,aesloop,share,mnt,etc,root,var}
for d in bin sbin lib lib64; do
	ln -s "usr/$d" "$stage/$d"
done
ln -s /proc/self/mounts "$stage/etc/mtab"
printf 'root:x:0:0:root:/root:/bin/bash\n' >"$stage/etc/passwd"
printf 'root:x:0:\n' >"$stage/etc/group"
: >"$stage/etc/fstab"
# Without its configuration mke2fs falls back to ext2-era defaults.
cp "$(src_of /etc/mke2fs.conf)" "$stage/etc/"

# Copies a host file to the same path in the merged-/usr stage.
put() {
	local dst=$2
	case "$dst" in
	/bin/* | /sbin/* | /lib/* | /lib64/*) dst=/usr$dst ;;
	esac
	mkdir -p "$(dirname "$stage$dst")"
	cp -L --remove-destination "$(src_of "$1")" "$stage$dst"
}

# busybox first, so that the real programs below replace the applets they shadow.
put /usr/bin/busybox /usr/bin/busybox
while read -r applet; do
	applet=/$applet
	case "$applet" in
	/bin/* | /sbin/*) applet=/usr$applet ;;
	esac
	[ -e "$stage$applet" ] || ln -s /usr/bin/busybox "$stage$applet"
done < <(if [ -n "$sysroot" ]; then
	# A static program: qemu-user runs it without the userland's libraries.
	"qemu-${multiarch%%-*}" "$(src_of /usr/bin/busybox)" --list-full
else
	/usr/bin/busybox --list-full
fi)

for entry in "${programs[@]}"; do
	read -r src dst links <<<"$entry"
	present "$src" || continue
	put "$src" "$dst"
	for l in $links; do
		if [ "$(dirname "$l")" = "$(dirname "$dst")" ]; then
			ln -sfn "$(basename "$dst")" "$stage$l"
		else
			ln -sfn "$dst" "$stage$l"
		fi
	done
done
if [ -x "$patched_losetup" ]; then
	# Its debug information is only weight here (there is no debugger in the guest).
	"${cross}strip" --strip-debug -o "$stage/usr/sbin/losetup" "$patched_losetup"
else
	ln -sfn losetup.stock "$stage/usr/sbin/losetup"
fi
for lib in "${main_libs[@]}"; do
	put "$lib" "$lib"
done

# The lazy programs: wrappers in the initramfs; binaries, and the libraries the initramfs
# lacks, on the share.
for src in "${lazy_progs[@]}"; do
	name=$(basename "$src")
	cat >"$stage/usr/bin/$name" <<-EOF
		#!/bin/bash
		# $name and its libraries live on the 9p share to keep the initramfs small.
		LD_LIBRARY_PATH=$lazy_guest/lib exec $lazy_guest/bin/$name "\$@"
	EOF
	chmod 755 "$stage/usr/bin/$name"
done
if [ "$(cat "$lazy/.inputs" 2>/dev/null)" != "$want_lazy" ]; then
	rm -rf "$lazy"
	mkdir -p "$lazy/bin" "$lazy/lib"
	for src in "${lazy_progs[@]}"; do
		cp -L "$(src_of "$src")" "$lazy/bin/$(basename "$src")"
	done
	for lib in "${lazy_libs[@]}"; do
		[[ " ${main_libs[*]} " == *" $lib "* ]] || cp -L "$(src_of "$lib")" "$lazy/lib/$(basename "$lib")"
	done
	echo "$want_lazy" >"$lazy/.inputs"
fi

# Modules: the closure modprobe computes, decompressed (6.12 ships .ko.xz), then a fresh depmod.
mkdir -p "$stage/lib/modules/$kver"
cp "$moddir"/modules.builtin* "$moddir"/modules.order "$stage/lib/modules/$kver/"
while read -r kind path _; do
	[ "$kind" = insmod ] || continue
	rel=${path#"$moddir"/}
	rel=${rel#./}
	case "$rel" in
	*/drivers/block/loop.ko*) die "the stock loop module was pulled in; refusing to pack it" ;;
	esac
	dst="$stage/lib/modules/$kver/${rel%.xz}"
	mkdir -p "$(dirname "$dst")"
	case "$path" in
	*.ko.xz) xz -dc "$path" >"$dst" ;;
	*) cp "$path" "$dst" ;;
	esac
done < <(modprobe -d "$tree" -S "$kver" --show-depends -a "${modules[@]}" 2> >(grep -v '^modprobe: FATAL: Module .* not found' >&2 || true))
# Names that were neither packed nor built in would leave a test without its module.
for m in "${modules[@]}"; do
	mod_file=$(modprobe -d "$tree" -S "$kver" --show-depends "$m" 2>/dev/null | tail -n1 || true)
	[ -n "$mod_file" ] || die "module $m: neither built into $kver nor found in its tree"
done
depmod -b "$stage" "$kver"

install -m 755 "$top/tests/vm/init.sh" "$stage/init"

# cpio of the stage, owned by root, in a stable order; gzip because TCG decompresses it
# faster than xz.
tmp_out="$out.tmp.$$"
(cd "$stage" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
	cpio --null --create --format=newc --owner=0:0 --reproducible --quiet) | gzip -6 -n >"$tmp_out"
mv "$tmp_out" "$out"
echo "$want" >"$out.inputs"
say "wrote $(basename "$out"): $(du -k "$out" | cut -f1) KiB, $(du -sk "$stage" | cut -f1) KiB unpacked"
