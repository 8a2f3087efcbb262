#!/bin/bash
# covers: source package, Debian packages
# Usage: tests/packaging/source-build.sh [--next SUITE]... [SUITE...]   (bookworm trixie when none)
# The Debian source package as a buildd builds it: make source makes it from the checkout,
# then, for each SUITE, dpkg-buildpackage builds its binary packages in a clean build root of
# that suite with no network (a network namespace of its own, in which only lo exists).  The
# build root is made by mmdebstrap (--variant=buildd, plus debian/control's Build-Depends),
# cached in build/buildroot/SUITE-srcbuild and made again when the Build-Depends change;
# each build unpacks the .dsc in build/srcbuild/SUITE, bind-mounted into it, and runs as
# nobody.  Then: both .debs built; lintian (the host's) finds no error or warning in the .dsc
# and the .debs; the built aesloop-losetup runs in the build root and its --version names
# aesloop's release; no file of either package is setuid or setgid.
# --next SUITE: SUITE's packages of the next release too, in build/srcbuild/SUITE-next: the
# same unpacked source with the Makefile's VERSION and debian/changelog one release on (0.1
# becomes 0.1.1), for the upgrade test (tests/system/t-upgrade.sh).
# Needs root (mmdebstrap, chroot, mount, unshare), and the network for the build root and
# for util-linux's release tarballs (make source), not for the builds.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
TAP_PREFIX=source-build/
# shellcheck source=tests/tap.sh
. "$top/tests/tap.sh"

next=" "
while [ "${1:-}" = --next ]; do
	next+="${2:?--next needs a SUITE} "
	shift 2
done
[ $# -gt 0 ] || set -- bookworm trixie
version=$(make -s --no-print-directory -C "$top" version)
deb_version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
dsc=$top/build/source/aesloop_$deb_version.dsc
log=$top/build/srcbuild
mkdir -p "$log"

if nice -n 19 make -C "$top" source >"$log/source.log" 2>&1 && [ -f "$dsc" ]; then
	pass make-source
else
	fail make-source "$(tail -n 3 "$log/source.log" | paste -sd' ')"
	tap_end
	exit 1
fi
# lintian as root says so on stderr; its tags go to stdout.
if lintian --fail-on error,warning "$dsc" >"$log/lintian-source" 2>/dev/null; then
	pass lintian-source
else
	fail lintian-source "$(grep -E '^[EW]: ' "$log/lintian-source" | head -n 5 | paste -sd' ')"
fi

# build_depends: debian/control's Build-Depends as package names, comma-separated (versions,
# architectures and profiles dropped, the first of alternatives), for mmdebstrap --include.
build_depends() {
	sed -n '/^Build-Depends:/,/^[^ ]/{s/^Build-Depends://;/^[^ ]/d;p}' "$top/debian/control" |
		tr ',' '\n' | sed -e 's/|.*//' -e 's/[[(<].*//' -e 's/ //g' | grep . | paste -sd,
}

# build_root SUITE: prints the path of SUITE's build root, made when missing or made from
# another package list (the stamp holds it), under a lock (two runs at once make it once).
build_root() {
	local suite=$1 root=$top/build/buildroot/$1-srcbuild include
	include=$(build_depends) || return 1
	if [ "$(cat "$root/.aesloop-root-ok" 2>/dev/null)" != "$include" ]; then
		mkdir -p "$top/build/buildroot"
		exec 8>"$top/build/buildroot/.lock"
		flock 8
		if [ "$(cat "$root/.aesloop-root-ok" 2>/dev/null)" != "$include" ]; then
			rm -rf "$root"
			# In a mount namespace of its own: a run that is killed leaves no mounts behind.
			unshare --mount --propagation private -- \
				nice -n 19 mmdebstrap --quiet --variant=buildd --include="$include" \
				--aptopt='APT::Install-Recommends "false"' "$suite" "$root" \
				"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
				>"$log/buildroot-$suite.log" 2>&1 || { exec 8>&-; return 1; }
			echo "$include" >"$root/.aesloop-root-ok"
		fi
		exec 8>&-
	fi
	echo "$root"
}

# in_root ROOT WORK COMMAND: COMMAND (sh) in ROOT as nobody, in /srcbuild (WORK bind-mounted),
# with no network: a network namespace of its own, whose only interface is lo (checked).
in_root() {
	# shellcheck disable=SC2016 # the inner shells expand their own arguments
	nice -n 19 unshare --mount --net --propagation private -- /bin/sh -c '
		set -e
		root=$1 work=$2
		mkdir -p "$root/srcbuild"
		mount --bind "$work" "$root/srcbuild"
		mount -t proc proc "$root/proc"
		exec chroot "$root" /bin/sh -c "
			[ \"\$(sed 1,2d /proc/net/dev | cut -d: -f1 | tr -d \" \")\" = lo ] ||
				{ echo \"the build root has a network: \$(cat /proc/net/dev)\"; exit 1; }
			cd /srcbuild && exec setpriv --reuid=65534 --regid=65534 --clear-groups \
				env HOME=/srcbuild sh -c \"\$0\"" "$3"
	' in_root "$1" "$2" "$3"
}

# copy_source FROM TO: the source package (the .dsc and the files it lists) from FROM into
# TO, owned by nobody, who builds it.
copy_source() {
	local f
	for f in $(sed -n '/^Files:/,/^[^ ]/s/^ [0-9a-f]* [0-9]* //p' "$dsc") "${dsc##*/}"; do
		cp "$1/$f" "$2/" || return 1
	done
	chown -R 65534:65534 "$2"
}

# bump_release TREE NEW: TREE's release moved on to NEW, as a maintainer does it: the
# Makefile's VERSION and a debian/changelog entry on top.
bump_release() {
	local tree=$1 new=$2
	sed -i "s/^VERSION *:= *$version\$/VERSION   := $new/" "$tree/Makefile"
	grep -qx "VERSION   := $new" "$tree/Makefile" || return 1
	{
		printf 'aesloop (%s-1) unstable; urgency=medium\n\n' "$new"
		printf '  * The next release, for the upgrade test.\n\n'
		printf ' -- aesloop developers <aesloop@lists.example.org>  %s\n\n' "$(date -R)"
		cat "$tree/debian/changelog"
	} >"$tree/debian/changelog.new" && mv "$tree/debian/changelog.new" "$tree/debian/changelog"
}

# build_next SUITE ROOT WORK ARCH: the next release's packages, built in ROOT as the suite's
# were, from the same source package unpacked afresh with its release moved on.
build_next() {
	local suite=$1 root=$2 work=$3 arch=$4 nver=$version.1 nwork=$log/$1-next
	rm -rf "$nwork"
	mkdir -p "$nwork"
	if copy_source "$work" "$nwork" &&
		in_root "$root" "$nwork" "dpkg-source -x ${dsc##*/} aesloop-$nver" >"$nwork/build.log" 2>&1 &&
		bump_release "$nwork/aesloop-$nver" "$nver" &&
		in_root "$root" "$nwork" "cd aesloop-$nver && dpkg-buildpackage -b --no-sign" \
			>>"$nwork/build.log" 2>&1 &&
		[ -f "$nwork/aesloop-dkms_$nver-1_all.deb" ] && [ -f "$nwork/aesloop-utils_$nver-1_$arch.deb" ]
	then
		pass next-release-built
	else
		fail next-release-built "$(tail -n 3 "$nwork/build.log" | paste -sd' ')"
	fi
}

for suite in "$@"; do
	start=$SECONDS
	TAP_PREFIX=source-build/$suite/
	work=$log/$suite
	rm -rf "$work"
	mkdir -p "$work"
	if ! root=$(build_root "$suite"); then
		fail build-root "mmdebstrap $suite failed: $(tail -n 3 "$log/buildroot-$suite.log" | paste -sd' ')"
		continue
	fi
	pass build-root
	# The source package as dget would give it.
	if copy_source "$top/build/source" "$work" &&
		in_root "$root" "$work" "dpkg-source -x ${dsc##*/} aesloop-$version &&
		cd aesloop-$version && dpkg-buildpackage -b --no-sign" >"$work/build.log" 2>&1; then
		pass dpkg-buildpackage-offline
	else
		fail dpkg-buildpackage-offline "$(tail -n 3 "$work/build.log" | paste -sd' ')"
	fi
	arch=$(chroot "$root" dpkg --print-architecture)
	dkms_deb=$work/aesloop-dkms_${deb_version}_all.deb
	utils_deb=$work/aesloop-utils_${deb_version}_$arch.deb
	if [ -f "$dkms_deb" ] && [ -f "$utils_deb" ]; then
		pass debs-built
	else
		fail debs-built "$(cd "$work" && echo *.deb)"
		continue
	fi
	if lintian --fail-on error,warning "$dkms_deb" "$utils_deb" >"$work/lintian" 2>/dev/null; then
		pass lintian-debs
	else
		fail lintian-debs "$(grep -E '^[EW]: ' "$work/lintian" | head -n 5 | paste -sd' ')"
	fi
	# The programs of the suite's series, run with the suite's C library and libcrypto.
	dpkg-deb -x "$utils_deb" "$work/utils"
	got=$(in_root "$root" "$work" "utils/usr/sbin/aesloop-losetup --version" 2>&1)
	if [[ $got == *aesloop*"$version"* ]]; then
		pass losetup-version
	else
		fail losetup-version "aesloop-losetup --version says: $got"
	fi
	# A mode's setuid or setgid bit in dpkg-deb's listing: its 4th or 7th character.
	special=$(for d in "$dkms_deb" "$utils_deb"; do dpkg-deb -c "$d"; done |
		awk 'substr($1, 4, 1) ~ /[sS]/ || substr($1, 7, 1) ~ /[sS]/ { print $NF }')
	if [ -z "$special" ]; then
		pass no-setuid-setgid
	else
		fail no-setuid-setgid "$(echo "$special" | paste -sd' ')"
	fi
	[[ $next != *" $suite "* ]] || build_next "$suite" "$root" "$work" "$arch"
	echo "# $suite: $((SECONDS - start)) s"
done

tap_end
