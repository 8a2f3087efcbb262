#!/bin/bash
# Builds util-linux's losetup, mount, swapon and swapoff with the aesloop
# patches, as BUILD_DIR/bin/losetup, BUILD_DIR/bin/mount, BUILD_DIR/bin/swapon
# and BUILD_DIR/bin/swapoff; and umount (unchanged but for the patched libmount
# it links) as BUILD_DIR/test-bin/umount, which nothing installs: util-linux's
# own tests of mount need the umount of the same release
# (tests/system/t-ul-upstream.sh).
#
#   patches/build-losetup.sh BUILD_DIR [SERIES]
#   patches/build-losetup.sh --fetch BUILD_DIR [SERIES]
#   UL_HOST=aarch64-linux-gnu patches/build-losetup.sh build/ul-arm64
#
# --fetch: step 1 only; prints the release tarball's path (make source
# collects each series' tarball so).
# CFLAGS, CPPFLAGS, LDFLAGS from the environment (a package build's
# dpkg-buildflags) replace the defaults below; the project's own flags
# (-I, -D, -z relro -z now) are always added.
#
# UL_HOST: a cross build for that GNU triplet (configure --host, CC
# UL_HOST-gcc unless CC is given; its libcrypto from the multiarch
# libssl-dev:ARCH), e.g. the arm64 test guest's programs (make losetup-arm64).
# SERIES is the util-linux series (patches/series.sh has the table): 2.38
# (the default; Debian bookworm's 2.38.1, what make losetup builds in build/),
# 2.41 (Debian trixie's) or 2.42 (forky's), what make losetup-SERIES builds
# in build/ul-SERIES.  Each series needs a BUILD_DIR of its own.
#
# 1. Takes the release tarball from the source package's util-linux component
#    (util-linux/util-linux_RELEASE.orig.tar.xz at the top of the tree, from
#    aesloop_VERSION.orig-util-linux.tar.xz) when the tree has one: then
#    nothing is fetched, as on a buildd without network.  Otherwise fetches
#    the suite's util-linux source package into BUILD_DIR/WORK/dl (WORK:
#    util-linux for 2.38, util-linux-SERIES for the others), with a private
#    apt sources list, lists and cache under BUILD_DIR/WORK/apt: the host's
#    apt configuration is not touched.  Skipped when the package is already
#    there.  Of it, only the upstream release tarball is used
#    (util-linux_RELEASE.orig.tar.xz).  Either way only if its SHA-256 is
#    the one patches/series.sh has for the series.
# 2. Unpacks the tarball (upstream's source; Debian's patches are not
#    applied), applies the series' patches in the order of its quilt series file
#    (patches/util-linux/series-SERIES; no fuzz: a patch that
#    does not apply stops the build, named) and configures a minimal build
#    (the four programs and the libraries they need, static, no
#    systemd/udev/ncurses...).  Done again only when a patch, the series,
#    this script or the tarball change.  (patches/mkpatch.sh edits
#    the patches with quilt.)
# 3. Builds aesloop's library (key setup, the util-linux hooks' helpers, AES)
#    from this tree with the project's Makefile, as BUILD_DIR/WORK/aesloop/
#    libaesloop.a: the loop-AES code itself is not in the patches, only the
#    hooks that call it.  It, the tree's libmount and libcrypto are linked
#    into the programs.
# 4. Installs the programs, which need only glibc and libcrypto at run
#    time, and checks that with readelf (their own NEEDED entries).
#
# It stays beside the patches rather than with the Makefile's build rules:
# what it does is take a series' release and apply that series to it (with
# series.sh, which mkpatch.sh and tests/host/t-ul-series.sh share), and what
# makes it run again is a patch or series file that changed.
#
# Needs: apt-get (to fetch), patch, xz-utils, a C toolchain, libssl-dev, pkg-config.
set -euo pipefail

mirror=http://deb.debian.org/debian
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=series.sh
. "$top/patches/series.sh"

die() {
	echo "build-losetup.sh: $*" >&2
	exit 1
}

fetch_only=
if [ "${1:-}" = --fetch ]; then
	fetch_only=1
	shift
fi
[ $# -eq 1 ] || [ $# -eq 2 ] || die "usage: $0 [--fetch] BUILD_DIR [$(ul_series_names | tr ' ' '|')]"
ul_series "${2:-}" || die "unknown util-linux series '$2' (known: $(ul_series_names))"
version=$ul_version
suite=$ul_suite
mkdir -p "$1"
build=$(cd "$1" && pwd)
work=$build/$ul_work_name
# BUILD_DIR/bin holds the programs of one series (a bin/ from before there
# were several has the default series').
series_mark=$build/bin/.util-linux-series
have_series=$(cat "$series_mark" 2>/dev/null ||
	{ [ ! -e "$build/bin/losetup" ] || echo "$ul_default_series"; })
[ -z "$have_series" ] || [ "$have_series" = "$ul_series" ] ||
	die "$build/bin has util-linux $have_series's programs: give $ul_series a BUILD_DIR of its own (e.g. $top/$ul_build_name)"
ul_host=${UL_HOST:-}
cc=${CC:-${ul_host:+$ul_host-}gcc}
jobs=$(nproc 2>/dev/null || echo 2)

[ -f "$ul_series_file" ] || die "$ul_series_file: no such series file"
patches=$(ul_series_patches) || die "$ul_series_file: a line with more than a patch name"
for tool in patch xz "$cc"; do
	command -v "$tool" >/dev/null || die "$tool is not installed (tests/deps.sh installs it)"
done

aesloop_version=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -C "$top" version)

# The distribution's flags when a package build gives them (set, even empty).
cflags=${CFLAGS--O2 -g -fstack-protector-strong}
cppflags=${CPPFLAGS--D_FORTIFY_SOURCE=2}
ldflags=${LDFLAGS-}

# Only what losetup needs; everything optional off.
configure_args=(
	--disable-all-programs --enable-losetup --enable-libsmartcols
	--enable-libblkid --enable-libmount --enable-mount --enable-swapon
	--disable-shared --enable-static --disable-nls --disable-asciidoc
	--disable-poman --disable-bash-completion
	--disable-makeinstall-chown --disable-makeinstall-setuid
	--without-systemd --without-udev --without-python --without-tinfo
	--without-ncursesw --without-ncurses --without-readline
	--without-selinux --without-audit --without-cap-ng --without-libz
	--without-libmagic --without-user --without-btrfs --without-econf
	${ul_host:+--host=$ul_host}
	# AESLOOP_VERSION: --version names aesloop's (version-help-name-aesloop.patch).
	CFLAGS="$cflags"
	CPPFLAGS="$cppflags -I$top/lib -DAESLOOP_VERSION=\\\"$aesloop_version\\\""
	# -z now: no lazy symbol binding, whose register save area on the
	# stack (xsave in ld.so's trampoline) would keep copies of the key
	# that happen to be in vector registers at the time.
	LDFLAGS="$ldflags -Wl,-z,relro -Wl,-z,now"
)

# Whatever the file dates say, make never re-runs autotools (see step 2).
no_autotools=(AUTOCONF=: AUTOHEADER=: AUTOMAKE=: ACLOCAL=:)

# --- 1. the release tarball, from the source package or Debian's -----------
# A tree unpacked from aesloop's source package has its util-linux component:
# that, and no network (a buildd has none).
component=$top/util-linux
if [ -d "$component" ]; then
	tarball=$(ul_tarball "$component")
	[ -f "$tarball" ] ||
		die "$component, the source package's util-linux component, has no ${tarball##*/} (it has: $(cd "$component" && echo *))"
else
	tarball=$(ul_tarball "$work/dl")
fi
if [ ! -f "$tarball" ]; then
	command -v apt-get >/dev/null || die "apt-get is not installed: it fetches util-linux's source"
	echo "build-losetup.sh: fetching util-linux $version source from Debian $suite"
	apt=$work/apt
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" \
		"$apt/sources.list.d" "$work/dl"
	echo "deb-src $mirror $suite main" >"$apt/sources.list"
	apt_opts=(
		-o "Dir::Etc::SourceList=$apt/sources.list"
		-o "Dir::Etc::SourceParts=$apt/sources.list.d"
		-o "Dir::State::Lists=$apt/lists"
		-o "Dir::Cache=$apt/cache"
		-o "APT::Sandbox::User=root"
	)
	apt-get -q "${apt_opts[@]}" update >"$work/apt.log" 2>&1 ||
		{ tail -n 20 "$work/apt.log" >&2; die "apt-get update of the private source list failed"; }
	# Only the release tarball is used: a mirror that lacks the .dsc or
	# Debian's .debian.tar.xz fails apt-get source, but the tarball it did
	# fetch (apt checked it against the signed index, we check its SHA-256)
	# is all the build needs.
	if ! (cd "$work/dl" && apt-get -q "${apt_opts[@]}" source --download-only util-linux) \
		>>"$work/apt.log" 2>&1; then
		[ -f "$tarball" ] ||
			{ tail -n 20 "$work/apt.log" >&2; die "apt-get source util-linux failed"; }
		echo "build-losetup.sh: apt-get source fetched the release tarball only (see $work/apt.log)"
	fi
	[ -f "$tarball" ] ||
		die "Debian $suite's util-linux source is not release $version (it has: $(cd "$work/dl" && echo util-linux_*.orig.tar.*)): the $ul_series line of patches/series.sh names the release and its SHA-256"
fi
# Every build, not only the first: the checksum is what says which source
# the programs are built from.
sum=$(sha256sum "$tarball" | cut -d' ' -f1)
[ "$sum" = "$ul_sha256" ] ||
	die "$tarball: SHA-256 mismatch: it is $sum, patches/series.sh has $ul_sha256 for util-linux $version; refusing to build from it"
if [ -n "$fetch_only" ]; then
	echo "$tarball"
	exit 0
fi

# --- 2. unpack, patch, configure (when an input changed) --------------------
# The release tarball as it is, without Debian's patches: ours apply to
# upstream's code.  Its autotools output is the release's own, older than
# nothing it was made from, and the patches touch no autotools input, so
# make has no reason to re-run autotools (and is told not to, below).
src=$work/src
# shellcheck disable=SC2086 # $patches: paths without blanks, a line each
stamp_want=$( { sha256sum "$ul_series_file" $patches "$0" "$top/patches/series.sh" "$tarball"
	printf '%s\n' "${configure_args[@]}"; } |
	sha256sum | cut -d' ' -f1)
stamp_have=$(cat "$work/configured.stamp" 2>/dev/null || true)
if [ "$stamp_want" != "$stamp_have" ] || [ ! -f "$src/Makefile" ]; then
	echo "build-losetup.sh: unpacking $(basename "$tarball") (SHA-256 checked), patching, configuring"
	rm -rf "$work/configured.stamp"
	ul_unpack "$tarball" "$src" "$work/unpack.log" || die "cannot unpack $tarball"
	ul_apply_series "$src" "$work/patch.log" ||
		die "the $ul_series series does not apply to util-linux $version"
	(cd "$src" && ./configure "${configure_args[@]}") >"$work/configure.log" 2>&1 ||
		{ tail -n 30 "$work/configure.log" >&2; die "configure failed (see $work/configure.log)"; }
	echo "$stamp_want" >"$work/configured.stamp"
fi

# --- 3. aesloop's key setup and AES, from this tree --------------------------
# The Makefile's own list of sources (AES_SRCS, LIBAESLOOP_SRCS) and warnings, with
# hardening flags; no engine of the CPU's own (INTELAES=n, ARM64AES=n): these
# programs derive keys, the driver encrypts.  The make that may have run this
# script passes none of its flags down (MAKEFLAGS): its BUILD or INTELAES are
# not this build's.
obj=$work/aesloop
# libmount's header is the tree's own, the library the programs link.
# CPPFLAGS through the environment: the Makefile adds its own to it.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL CPPFLAGS="$cppflags" make -C "$top" -s --no-print-directory \
	-j"$jobs" BUILD="$obj" CC="$cc" INTELAES=n ARM64AES=n MOUNT_CFLAGS="-I$src/libmount/src" \
	CFLAGS="$cflags" "$obj/libaesloop.a" ||
	die "building aesloop's library failed"

# --- 4. build, install, check ----------------------------------------------
programs=(losetup mount swapon swapoff)
test_programs=(umount)
echo "build-losetup.sh: building ${programs[*]} (and ${test_programs[*]} for util-linux's tests)"
# LIBS (empty in util-linux's configure) adds our archive, the tree's
# libmount (which lib/ parses options and fstab with; losetup
# does not link it of its own) and libcrypto to every link; the archive is
# not a make prerequisite, so always relink, and libmount is built first.
(cd "$src" && rm -f "${programs[@]}" "${test_programs[@]}")
make -C "$src" -j"$jobs" libmount.la "${no_autotools[@]}" >"$work/make.log" 2>&1 ||
	{ tail -n 30 "$work/make.log" >&2; die "make libmount.la failed (see $work/make.log)"; }
make -C "$src" -j"$jobs" "${programs[@]}" "${test_programs[@]}" \
	"LIBS=$obj/libaesloop.a $src/libmount.la -lcrypto" \
	"${no_autotools[@]}" \
	>>"$work/make.log" 2>&1 ||
	{ grep -E 'error|warning' "$work/make.log" | tail -n 30 >&2; die "make ${programs[*]} failed (see $work/make.log)"; }
if grep -E 'warning:' "$work/make.log" |
	grep -E '(^|/)(losetup|mount|swapon|swapoff|loopdev|context_loopdev|hook_loopdev|optmap|context)\.c:' >&2; then
	die "the patched sources compile with warnings (see $work/make.log)"
fi

# The libraries a program needs: its own ELF NEEDED entries, not ldd's list, which has
# libcrypto's own (trixie's links zlib and zstd).
needed() {
	"${ul_host:+$ul_host-}readelf" -d "$1" | sed -n 's/^.*(NEEDED).*\[\(.*\)\]$/\1/p'
}
for p in "${programs[@]}"; do
	libs=$(needed "$src/$p" |
		grep -v -e '^linux-vdso' -e '^/lib64/ld-linux' -e '^ld-linux' -e '^libc\.so' -e '^libcrypto\.so' || true)
	[ -z "$libs" ] || die "$p needs more than glibc and libcrypto: $libs"
	install -D -m 0755 "$src/$p" "$build/bin/$p"
done
for p in "${test_programs[@]}"; do
	install -D -m 0755 "$src/$p" "$build/test-bin/$p"
done
echo "$ul_series" >"$series_mark"
echo "build-losetup.sh: installed ${programs[*]} in $build/bin, ${test_programs[*]} in $build/test-bin (util-linux $version + aesloop)"
