#!/bin/bash
# covers: build and install targets
# Usage: tests/packaging/make-targets.sh KDIR
# The build and install conventions a user and a packager rely on, against the kernel tree
# KDIR (one the host's compiler builds for): "make -C KDIR M=$PWD" builds loop/loop.ko
# through the top Kbuild and says its version; "make clean" leaves the source folders as
# they were; "make install" and "make uninstall" go to KDIR's release, not the running
# kernel's, under INSTALL_MOD_PATH or DESTDIR, with depmod run for that tree; install-tools
# builds and fetches nothing, and the uninstall targets remove what the install targets
# put there.  It works on a copy of the checkout, so nothing here touches build/.
# check.sh runs it with the 6.1 tree; it is not one of run.sh's t-*.sh, which need no kernel.
set -u

kdir=${1:?usage: $0 KDIR}
top=$(cd "$(dirname "$0")/../.." && pwd)
TAP_PREFIX=make-targets/
# shellcheck source=tests/tap.sh
. "$top/tests/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

kver=$(make -s --no-print-directory -C "$top" kernelrelease KDIR="$kdir" 2>/dev/null)
version=$(make -s --no-print-directory -C "$top" version)
[ -n "$kver" ] || { fail make-targets "no UTS_RELEASE in $kdir"; tap_end; exit 1; }

# The checkout's files as git sees them, uncommitted edits included, in a copy.
src=$tmp/aesloop
mkdir -p "$src"
(cd "$top" && git ls-files -z --cached --others --exclude-standard | grep -zv '^build/' |
	xargs -0 cp --parents -t "$src") || { fail make-targets "copying the checkout failed"; tap_end; exit 1; }
listing() { (cd "$src" && find . -path ./build -prune -o -type f -print | LC_ALL=C sort); }
listing >"$tmp/files-before"

# kbuild's own way in, as DKMS runs it.
if make -C "$kdir" M="$src" modules >"$tmp/kbuild.log" 2>&1 && [ -f "$src/loop/loop.ko" ]; then
	pass kbuild-m-top-builds-loop-ko
else
	fail kbuild-m-top-builds-loop-ko "$(tail -n 3 "$tmp/kbuild.log" | paste -sd' ')"
fi
got=$(modinfo -F version "$src/loop/loop.ko" 2>/dev/null)
if [ -n "$version" ] && [ "$got" = "$version" ]; then
	pass module-version
else
	fail module-version "modinfo says '$got', the Makefile's VERSION is '$version'"
fi

# make clean: kbuild's output gone from loop/, aes/, aes-intel/ and the top, with no kernel
# tree to ask (KDIR points nowhere).
make -C "$src" clean KDIR="$tmp/no-such-tree" >"$tmp/clean.log" 2>&1
if listing | diff "$tmp/files-before" - >"$tmp/clean.diff"; then
	pass clean-leaves-no-objects
else
	fail clean-leaves-no-objects "left: $(grep '^>' "$tmp/clean.diff" | head -n 5 | paste -sd' ')"
fi

# make install for KDIR's kernel into a root of its own, then uninstall (DESTDIR's spelling).
# An aesloop loop.ko where installs before the top Kbuild put it (updates/loop.ko) goes.
root=$tmp/root
ko=$root/lib/modules/$kver/updates/loop/loop.ko
mkdir -p "$root/lib/modules/$kver/updates"
make -C "$kdir" M="$src" modules >/dev/null 2>&1 &&
	cp "$src/loop/loop.ko" "$root/lib/modules/$kver/updates/loop.ko"
if make -C "$src" install KDIR="$kdir" INSTALL_MOD_PATH="$root" >"$tmp/install.log" 2>&1 &&
   [ -f "$ko" ] && grep -q '^updates/loop/loop\.ko:' "$root/lib/modules/$kver/modules.dep"; then
	pass install-into-kdir-release
else
	fail install-into-kdir-release "no $kver/updates/loop/loop.ko in modules.dep: $(tail -n 2 "$tmp/install.log" | paste -sd' ')"
fi
if [ ! -e "$root/lib/modules/$kver/updates/loop.ko" ]; then
	pass install-removes-older-copy
else
	fail install-removes-older-copy "updates/loop.ko of an older install is still there"
fi
others=$(find "$root/lib/modules" -mindepth 1 -maxdepth 1 ! -name "$kver")
if [ -z "$others" ]; then
	pass install-only-that-release
else
	fail install-only-that-release "also wrote $others"
fi
if make -C "$src" uninstall KDIR="$kdir" DESTDIR="$root" >"$tmp/uninstall.log" 2>&1 &&
   [ -z "$(find "$root" -name 'loop.ko*')" ] &&
   ! grep -q 'loop\.ko' "$root/lib/modules/$kver/modules.dep"; then
	pass uninstall
else
	fail uninstall "loop.ko left: $(find "$root" -name 'loop.ko*') $(tail -n 2 "$tmp/uninstall.log" | paste -sd' ')"
fi

# install-tools in a copy with nothing built: refused, naming "make tools", nothing fetched
# or built, nothing installed.
dest=$tmp/dest
if make -C "$src" install-tools DESTDIR="$dest" >"$tmp/tools.log" 2>&1; then
	fail install-tools-builds-nothing "it succeeded with nothing built"
elif ! grep -q 'run make tools' "$tmp/tools.log"; then
	fail install-tools-builds-nothing "no word of make tools: $(tail -n 2 "$tmp/tools.log" | paste -sd' ')"
elif [ -e "$dest" ] || [ -n "$(find "$src/build" -name 'util-linux*' 2>/dev/null)" ]; then
	fail install-tools-builds-nothing "it installed, fetched or built something"
else
	pass install-tools-builds-nothing
fi

# What the checkout built (check.sh builds the tools first): installed and removed again,
# and the boot integration with a dracut module folder present, every @NAME@ filled in.
if [ -x "$top/build/bin/losetup" ] && [ -x "$top/build/bin/aesloop-pipe" ]; then
	if make -C "$top" install-tools DESTDIR="$dest" >"$tmp/tools.log" 2>&1; then
		pass install-tools
	else
		fail install-tools "$(tail -n 2 "$tmp/tools.log" | paste -sd' ')"
	fi
	# Each program under its own name and the plain one, and a page whatis finds by the
	# installed name (lexgrog reads NAME as mandb does; the others are .so links to it).
	man=$dest/usr/local/share/man
	why=()
	for p in losetup mount swapon swapoff; do
		[ -x "$dest/usr/local/sbin/aesloop-$p" ] || why+=("no sbin/aesloop-$p")
		[ "$(readlink "$dest/usr/local/sbin/$p")" = "aesloop-$p" ] || why+=("sbin/$p is no link to it")
		lexgrog "$man/man8/aesloop-losetup.8" 2>/dev/null | grep -q "\"aesloop-$p - " ||
			why+=("aesloop-losetup.8 does not name aesloop-$p")
		[ "$p" = losetup ] || grep -qx '\.so man8/aesloop-losetup\.8' "$man/man8/aesloop-$p.8" ||
			why+=("no aesloop-$p.8")
	done
	for p in aesloop-pipe aesloop-keygen; do
		[ -x "$dest/usr/local/bin/$p" ] || why+=("no bin/$p")
		lexgrog "$man/man1/$p.1" 2>/dev/null | grep -q "\"$p - " || why+=("no $p(1) naming it")
	done
	[ -x "$dest/usr/local/sbin/aesloop-reencrypt" ] || why+=("no sbin/aesloop-reencrypt")
	lexgrog "$man/man8/aesloop-reencrypt.8" 2>/dev/null | grep -q '"aesloop-reencrypt - ' ||
		why+=("no aesloop-reencrypt(8) naming it")
	if [ ${#why[@]} -eq 0 ]; then
		pass tools-named-with-pages
	else
		fail tools-named-with-pages "${why[*]}"
	fi
	if make -C "$top" uninstall-tools DESTDIR="$dest" >>"$tmp/tools.log" 2>&1 &&
	   [ -z "$(find "$dest" ! -type d)" ]; then
		pass uninstall-tools
	else
		fail uninstall-tools "left: $(find "$dest" ! -type d | head -n 3 | paste -sd' ')"
	fi
	# A losetup of the same name that install-tools did not make (util-linux's, with
	# PREFIX=/usr) stays.
	make -C "$top" install-tools DESTDIR="$dest" TOOL_LINKS=no >>"$tmp/tools.log" 2>&1
	echo foreign >"$dest/usr/local/sbin/losetup"
	make -C "$top" uninstall-tools DESTDIR="$dest" >>"$tmp/tools.log" 2>&1
	if [ "$(cat "$dest/usr/local/sbin/losetup" 2>/dev/null)" = foreign ] &&
	   [ ! -e "$dest/usr/local/sbin/aesloop-losetup" ]; then
		pass uninstall-tools-keeps-foreign
	else
		fail uninstall-tools-keeps-foreign "a losetup it did not install was removed"
	fi
else
	skip install-tools "the checkout's tools are not built (make tools)"
fi
boot=$tmp/boot
mkdir -p "$boot/usr/lib/dracut/modules.d"
if make -C "$top" install-boot DESTDIR="$boot" >"$tmp/boot.log" 2>&1 &&
   [ -f "$boot/usr/lib/dracut/modules.d/90aesloop/module-setup.sh" ] &&
   [ -x "$boot/etc/initramfs-tools/hooks/aesloop" ] &&
   ! grep -rq '@[A-Z]*@' "$boot" &&
   grep -q '/usr/local/sbin/aesloop-losetup' "$boot/etc/initramfs-tools/hooks/aesloop" &&
   make -C "$top" uninstall-boot DESTDIR="$boot" >>"$tmp/boot.log" 2>&1 &&
   [ -z "$(find "$boot" -type f)" ]; then
	pass install-uninstall-boot
else
	fail install-uninstall-boot "$(find "$boot" -type f | head -n 3 | paste -sd' ') $(tail -n 2 "$tmp/boot.log" | paste -sd' ')"
fi

tap_end
