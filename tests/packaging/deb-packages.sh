#!/bin/bash
# covers: Debian packages, DKMS, release version
# Usage: tests/packaging/deb-packages.sh KDIR [DEB-DIR]
# The Debian packages "make deb" built (DEB-DIR, default build/deb), before any system
# installs them (tests/system/t-deb.sh does that): lintian finds no error or warning; one
# version everywhere (debian/changelog's less its Debian revision, the Makefile's VERSION,
# dkms.conf, the module's MODULE_VERSION); no file of aesloop-utils is one that util-linux's
# packages own (merged /usr counted: /sbin/losetup is /usr/sbin/losetup), and each program
# has its page; DKMS builds loop.ko, with the AES-NI/VAES code, from aesloop-dkms's /usr/src
# tree for the kernel tree KDIR, in a DKMS tree of its own (nothing is installed).
set -u

kdir=${1:?usage: $0 KDIR [DEB-DIR]}
top=$(cd "$(dirname "$0")/../.." && pwd)
debs=${2:-$top/build/deb}
TAP_PREFIX=deb/
# shellcheck source=tests/tap.sh
. "$top/tests/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

dkms_deb=$(ls "$debs"/aesloop-dkms_*_all.deb 2>/dev/null)
utils_deb=$(ls "$debs"/aesloop-utils_*_"$(dpkg --print-architecture)".deb 2>/dev/null)
changes=$(ls "$debs"/aesloop_*.changes 2>/dev/null)
if [ -z "$dkms_deb" ] || [ -z "$utils_deb" ] || [ -z "$changes" ]; then
	fail built "no aesloop-dkms, aesloop-utils or .changes in $debs (make deb)"
	tap_end
	exit 1
fi
pass built

# lintian as root says so on stderr; its tags go to stdout.
if lintian --fail-on error,warning "$changes" >"$tmp/lintian" 2>/dev/null; then
	pass lintian
else
	fail lintian "$(grep -E '^[EW]: ' "$tmp/lintian" | head -n 5 | paste -sd' ')"
fi

dpkg-deb -x "$dkms_deb" "$tmp/dkms"
dpkg-deb -x "$utils_deb" "$tmp/utils"
version=$(make -s --no-print-directory -C "$top" version)
changelog=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
src=$(ls -d "$tmp/dkms/usr/src/aesloop-"*)
# shellcheck disable=SC1090,SC1091 # dkms.conf is shell, as dkms reads it
conf=$(set +u && . "$src/dkms.conf" && echo "$PACKAGE_VERSION")
if [ "${changelog%-*}" = "$version" ] && [ "$conf" = "$version" ] && [ "$src" = "$tmp/dkms/usr/src/aesloop-$version" ]; then
	pass one-version
else
	fail one-version "Makefile $version, debian/changelog $changelog, dkms.conf $conf, ${src#"$tmp"/dkms}"
fi

# util-linux's files (bookworm: util-linux and mount; trixie adds util-linux-extra), both
# spellings of a merged-/usr path.
dpkg -L util-linux mount util-linux-extra 2>/dev/null | sed -e 's|^/usr/|/|' | sort -u >"$tmp/ul-files"
clash=$(cd "$tmp/utils" && find . ! -type d | sed -e 's|^\.||' -e 's|^/usr/|/|' | sort -u |
	comm -12 - "$tmp/ul-files")
if [ ! -s "$tmp/ul-files" ]; then
	fail no-util-linux-file "dpkg -L util-linux listed nothing"
elif [ -z "$clash" ]; then
	pass no-util-linux-file
else
	fail no-util-linux-file "util-linux owns $(echo "$clash" | paste -sd' ')"
fi
# Both packages refuse removal under a root on aesloop (debian/prerm-root-guard, whose
# behaviour tests/system/t-deb.sh checks on aesloop-dkms).
why=()
for d in "$dkms_deb" "$utils_deb"; do
	dpkg-deb -e "$d" "$tmp/ctl"
	[ -s "$tmp/ctl/prerm" ] && [ "$(sed -n '/^if /,/^fi/p' "$tmp/ctl/prerm")" = \
		"$(sed -n '/^if /,/^fi/p' "$top/debian/prerm-root-guard")" ] ||
		why+=("${d##*/}'s prerm has no root guard")
	rm -rf "$tmp/ctl"
done
if [ ${#why[@]} -eq 0 ]; then
	pass prerm-root-guard
else
	fail prerm-root-guard "${why[*]}"
fi
why=()
for p in "$tmp"/utils/usr/sbin/* "$tmp"/utils/usr/bin/*; do
	n=${p##*/}
	ls "$tmp"/utils/usr/share/man/man[18]/"$n".[18].gz >/dev/null 2>&1 || why+=("$n has no page")
done
if [ ${#why[@]} -eq 0 ]; then
	pass programs-have-pages
else
	fail programs-have-pages "${why[*]}"
fi

# DKMS from the package's tree, for KDIR's kernel, in a tree of its own.
kver=$(make -s --no-print-directory -C "$top" kernelrelease KDIR="$kdir" 2>/dev/null)
mkdir -p "$tmp/srctree" "$tmp/dkmstree"
cp -r "$src" "$tmp/srctree/"
d=(--sourcetree "$tmp/srctree" --dkmstree "$tmp/dkmstree")
if dkms add -m aesloop -v "$version" "${d[@]}" >"$tmp/dkms.log" 2>&1 &&
   dkms build -m aesloop -v "$version" -k "$kver" --kernelsourcedir "$kdir" "${d[@]}" \
	>>"$tmp/dkms.log" 2>&1; then
	pass dkms-build
else
	fail dkms-build "$(tail -n 3 "$tmp/dkms.log" | paste -sd' ')"
fi
ko=$(find "$tmp/dkmstree/aesloop/$version/$kver" -name 'loop.ko*' 2>/dev/null | head -n 1)
syms=$([ -z "$ko" ] || nm "$ko" 2>/dev/null)
if [ -n "$ko" ] && [ "$(modinfo -F version "$ko")" = "$version" ] &&
   { [ "$(uname -m)" != x86_64 ] || [[ $syms == *aesloop_cbc_enc_aesni* ]]; }; then
	pass dkms-module
else
	fail dkms-module "${ko:-no loop.ko}: version $([ -z "$ko" ] || modinfo -F version "$ko"), AES-NI code $([[ $syms == *aesloop_cbc_enc_aesni* ]] && echo in || echo missing)"
fi

tap_end
