#!/bin/bash
# covers: release version
# t-version.sh - one release number: the Makefile's VERSION is the source
# (make -s version).  loop/Kbuild, dkms.conf (through dh_dkms -V in
# debian/rules), tools/aesloop-keygen (make install-tools) and make dist take
# it at build time; what must stay literal is checked against it here:
# debian/changelog's latest entry and the Gentoo overlay's ebuild file names
# (each package has an ebuild of that release, or a revision of it).  And the
# derived places still carry their placeholder, not a number of their own.
#
# Environment (set by tests/host/run.sh): AESLOOP_TOP.  Prints TAP
# (tests/tap.sh); exits 1 on a failure.
set -uo pipefail

top=${AESLOOP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"

version=$(make -s --no-print-directory -C "$top" version)
if [[ $version =~ ^[0-9][0-9a-z.+~]*$ ]]; then
	pass makefile-version
else
	fail makefile-version "make -s version says '$version'"
fi

# debian/changelog: "aesloop (VERSION) ..." or, for a non-native package,
# "aesloop (VERSION-REVISION) ...".
changelog=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' "$top/debian/changelog")
if [ "${changelog%-*}" = "$version" ]; then
	pass debian-changelog
else
	fail debian-changelog "debian/changelog's latest entry is $changelog, the Makefile's VERSION $version"
fi

why=()
for dir in "$top"/ebuild/*/*/; do
	pkg=$(basename "$dir")
	compgen -G "$dir$pkg-*.ebuild" >/dev/null || continue
	found=0
	for e in "$dir$pkg-$version".ebuild "$dir$pkg-$version"-r[0-9]*.ebuild; do
		[ -f "$e" ] && found=1
	done
	[ "$found" = 1 ] || why+=("${dir#"$top"/} has no $pkg-$version.ebuild (nor -rN)")
done
if [ ${#why[@]} -eq 0 ]; then
	pass ebuild-names
else
	fail ebuild-names "${why[*]}"
fi

# shellcheck disable=SC2016 # the line as written in the script
if grep -qx 'PACKAGE_VERSION="#MODULE_VERSION#"' "$top/dkms.conf" &&
   grep -q 'dh_dkms -V' "$top/debian/rules" &&
   grep -qx 'version=@VERSION@' "$top/tools/aesloop-keygen"; then
	pass derived-placeholders
else
	fail derived-placeholders "dkms.conf's PACKAGE_VERSION or aesloop-keygen's version is written out, or debian/rules lost dh_dkms -V"
fi
got=$("$top/tools/aesloop-keygen" --version 2>&1)
if [ "$got" = "aesloop-keygen (aesloop) $version" ]; then
	pass keygen-version-in-checkout
else
	fail keygen-version-in-checkout "tools/aesloop-keygen --version says '$got'"
fi
tap_end
