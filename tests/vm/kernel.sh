#!/bin/bash
# Usage: tests/vm/kernel.sh SERIES
#   SERIES: 6.1 (bookworm's kernel), 6.12 (bookworm-security's linux-6.12), 7.3 (trixie-backports),
#   a series with a flavour (7.3-rt: PREEMPT_RT), an arm64 series (6.1-arm64, 7.3-arm64,
#   7.3-rt-arm64), or an exact kernel release such as 6.1.0-57-amd64, 7.3.4+deb13-rt-amd64 or
#   6.1.0-57-arm64.
# bookworm's series come from the host's apt lists; trixie's (+deb13 releases) from a private apt
# state under build/apt/trixie-backports, so the host's sources are never touched.  arm64
# kernels come from private arm64 apt states (apt-arm64.sh), with the amd64 kbuild helpers of
# the same upload, so that modules cross-build against them here (kmake.sh, ARCH=arm64).
# Fetches the current Debian kernel of that series and turns it into a root tree under
# build/kernel/KVER/ that a guest can boot (boot/vmlinuz-KVER), that modules can be taken from
# (lib/modules/KVER, with modules.dep) and that out-of-tree modules build against:
#   make -C build/kernel/KVER/lib/modules/KVER/build M=DIR modules
# Prints only KVER on stdout; progress goes to stderr. Quick when already done.
# Kernel packages are only downloaded and unpacked, never installed on the host.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
debs="$top/build/debs"
kroot="$top/build/kernel"

say() { echo "kernel.sh: $*" >&2; }
die() { say "$*"; exit 1; }

[ $# -eq 1 ] || die "usage: $0 SERIES (6.1, 6.12, 7.3, 7.3-rt or an exact release like 6.1.0-57-amd64)"
series=$1

# SERIES as NUMBER[-FLAVOUR][-arm64]: the flavour's package suffix (amd64, rt-amd64,
# cloud-amd64, arm64, rt-arm64).  An exact release names its architecture at its end.
exact=
arch=amd64
if [[ "$series" =~ ^([0-9]+\.[0-9]+)(-(rt|cloud))?(-arm64)?$ ]]; then
	number=${BASH_REMATCH[1]}
	[ -z "${BASH_REMATCH[4]}" ] || arch=arm64
	flavour=${BASH_REMATCH[3]:+${BASH_REMATCH[3]}-}$arch
else
	exact=$series
	number=${series%%.[0-9]*-*}
	[[ "$exact" != *-arm64 ]] || arch=arm64
fi

# Where the series is published. bookworm's kernels (6.x) are in the host's lists; trixie's
# (7.x, releases named +deb13) in trixie-backports, read through a private apt state.
apt_opts=()
lists=/var/lib/apt/lists
private=0
suite=bookworm
if [[ "$series" == *+deb13-* ]] || [[ -z "$exact" && "${number%%.*}" -ge 7 ]]; then
	# shellcheck source=tests/vm/apt-trixie.sh
	. "$top/tests/vm/apt-trixie.sh"
	apt_opts=("${trixie_apt_opts[@]}")
	lists=$trixie_lists
	private=1
	suite=trixie-backports
fi
# The kbuild helpers (modpost, fixdep) run on this host: always the amd64 package, from the
# amd64 lists of the suite; everything else from the kernel's architecture.
kbuild_apt_opts=("${apt_opts[@]}")
if [ "$arch" = arm64 ]; then
	# shellcheck source=tests/vm/apt-arm64.sh
	. "$top/tests/vm/apt-arm64.sh"
	arm64_apt "$suite"
	apt_opts=("${arm64_apt_opts[@]}")
	lists=$arm64_lists
fi
apt_cache() { apt-cache "${apt_opts[@]}" "$@"; }
refresh_private_lists() {
	[ "$private" = 0 ] || trixie_refresh
	[ "$arch" != arm64 ] || arm64_refresh
}

# apt knows a package when it has a candidate version (old point releases stay listed without one).
# (The output is read whole: grep -q would close the pipe early and, under pipefail, turn
# apt-cache's SIGPIPE into a false "no".)
has_candidate() {
	local policy
	policy=$(apt_cache policy "$1" 2>/dev/null)
	[[ "$policy" == *$'\n  Candidate: '[^\(]* ]]
}

# The kernel release (KVER) the archive currently offers for SERIES.
resolve_kver() {
	local meta cand
	if [ -n "$exact" ]; then
		has_candidate "linux-image-$exact" || return 1
		echo "$exact"
		return
	fi
	# The distribution's default flavour (bookworm: 6.1) is named by the meta-package.
	# (No `| head`: under pipefail, its early exit could fail the pipeline.)
	meta=$(apt_cache depends "linux-image-$flavour" 2>/dev/null |
		sed -n "s/^ *Depends: linux-image-\([^ ]*-$flavour\)\$/\1/p")
	meta=${meta%%$'\n'*}
	if [ -n "$meta" ] && [[ "$meta" == "$number".* ]]; then
		echo "$meta"
		return
	fi
	# Other series (6.12 from bookworm-security, the backports) have no meta-package of their
	# own: take the newest release named NUMBER.N...-FLAVOUR that still has a candidate (the
	# plain amd64 pattern also matches rt-amd64 and cloud-amd64, hence the filter).
	while read -r cand; do
		if has_candidate "linux-image-$cand"; then
			echo "$cand"
			return
		fi
	done < <(apt_cache pkgnames "linux-image-$number." |
		sed -n "s/^linux-image-\(${number//./\\.}\.[0-9][0-9.+a-z-]*-$flavour\)\$/\1/p" |
		{ if [ "$flavour" = "$arch" ]; then grep -v -e '-cloud-' -e '-rt-'; else cat; fi; } | sort -rV)
	return 1
}

# apt-cache takes about a second per call here, so the answer is remembered until the apt
# lists change (apt-get update renames new lists into the directory, updating its mtime).
memo="$kroot/.series-$series"
# A kernel built here (tests/vm/debug-kernel.sh) is complete as it is.
if [ -n "$exact" ] && [ -f "$kroot/$exact/.aesloop-built-here" ] && [ -f "$kroot/$exact/.aesloop-tree-ok" ]; then
	echo "$exact"
	exit 0
fi
if [ -n "$exact" ] && [ -f "$kroot/$exact/.aesloop-tree-ok" ]; then
	# An exact release already unpacked needs no apt (it may be gone from the lists).
	kver=$exact
elif [ -s "$memo" ] && [ "$memo" -nt "$lists" ] && [ -f "$kroot/$(cat "$memo")/.aesloop-tree-ok" ]; then
	kver=$(cat "$memo")
else
	refresh_private_lists
	kver=$(resolve_kver) || die "no linux-image for series '$series' in the apt lists (try: apt-get update)"
fi
tree="$kroot/$kver"
stamp="$tree/.aesloop-tree-ok"

# The header packages a build tree needs: the flavour's headers, the common headers and the
# kbuild helpers. linux-compiler-gcc-* packages only carry a dependency on the compiler (no
# files), so instead of unpacking them the compiler they name is checked for on the host.
# From 7.x, linux-image-KVER is only a dependency package: the kernel is in linux-binary-KVER,
# its modules in linux-modules-KVER and its config and System.map in linux-base-KVER.
want_packages() {
	echo "linux-image-$kver"
	echo "linux-headers-$kver"
	apt_cache depends "linux-image-$kver" "linux-headers-$kver" |
		sed -n "s/^ *|\{0,1\}Depends: \(linux-\(headers\|kbuild\|binary\|modules\|base\)-[^ <>]*\)\$/\1/p" |
		sort -u
}

# An arm64 kernel's kbuild helpers are the amd64 package of its own upload: the version of
# its headers, which the amd64 lists must have too.
foreign_kbuild() { [ "$arch" != amd64 ] && [[ "$1" == linux-kbuild-* ]]; }

# The version of PKG to fetch: its candidate (see foreign_kbuild for the exception).
pkg_version() {
	local ver
	if foreign_kbuild "$1"; then
		ver=$(apt_cache policy "linux-headers-$kver" | sed -n 's/^  Candidate: //p')
	else
		ver=$(apt_cache policy "$1" | sed -n 's/^  Candidate: //p')
	fi
	if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
		die "no candidate version for $1 (try: apt-get update)"
	fi
	echo "$ver"
}

# The .deb of PKG's candidate version in build/debs. Exact versions matter: linux-kbuild-6.1
# keeps its name across kernel updates, so an older cached one must not be reused.
deb_path() {
	local ver
	ver=$(pkg_version "$1") || exit 1
	# apt writes an epoch's ':' as %3a in file names; the architecture part is amd64 or all.
	local found
	found=$(compgen -G "$debs/${1}_${ver//:/%3a}_*.deb" || true)
	echo "${found%%$'\n'*}"
}

fetch() {
	local pkg have
	mkdir -p "$debs"
	for pkg in "$@"; do
		have=$(deb_path "$pkg")
		if [ -n "$have" ]; then
			continue
		fi
		say "downloading $pkg"
		local opts=("${apt_opts[@]}") spec=$pkg
		if foreign_kbuild "$pkg"; then
			opts=("${kbuild_apt_opts[@]}")
			spec="$pkg=$(pkg_version "$pkg")"
		fi
		# apt-get download writes into the current directory; its _apt sandbox warning is noise.
		(cd "$debs" && apt-get "${opts[@]}" download -q "$spec" 2>&1 | grep -v -e '^W: Download is performed unsandboxed' >&2) ||
			die "apt-get download $spec failed (try: apt-get update)"
		have=$(deb_path "$pkg")
		[ -n "$have" ] || die "apt-get download $pkg produced no .deb"
	done
}

# Notes the release a series resolved to (see memo above), on every call so that it stays newer
# than the lists.  Written beside it and renamed over it: a kernel.sh running at the same time
# (check.sh's lanes) reads the old note or the new one, never an empty file.
remember() {
	if [ -z "$exact" ]; then
		echo "$kver" >"$memo.$$"
		mv -f "$memo.$$" "$memo"
	fi
}

# The pieces that depend on where the tree lives are redone on every call, so a moved
# checkout still works; they are cheap.
fix_paths() {
	local mk common_dir
	mk="$tree/usr/src/linux-headers-$kver/Makefile"
	# The flavour Makefile includes the common one by absolute path; point it into this tree.
	common_dir=$(sed -n 's|^include .*/usr/src/\(linux-headers-[^/]*\)/Makefile$|\1|p' "$mk")
	[ -n "$common_dir" ] || die "$mk: no include line for the common headers"
	[ -d "$tree/usr/src/$common_dir" ] || die "$tree/usr/src/$common_dir missing"
	# Files are only touched when wrong: builds may be reading them right now.
	if ! grep -qx "include $tree/usr/src/$common_dir/Makefile" "$mk"; then
		sed -i "s|^include .*/usr/src/$common_dir/Makefile\$|include $tree/usr/src/$common_dir/Makefile|" "$mk"
	fi
	# From 7.x it also names itself as the output directory.
	if grep -q '^KBUILD_OUTPUT=' "$mk" && ! grep -qx "KBUILD_OUTPUT=$tree/usr/src/linux-headers-$kver" "$mk"; then
		sed -i "s|^KBUILD_OUTPUT=.*\$|KBUILD_OUTPUT=$tree/usr/src/linux-headers-$kver|" "$mk"
	fi
	# Relative links keep working whatever the tree's path is (merged /usr: lib/modules is
	# usr/lib/modules, one level deeper).
	local up=../../..
	[ ! -L "$tree/lib" ] || up=../../../..
	relink "$up/usr/src/linux-headers-$kver" "$tree/lib/modules/$kver/build"
	relink "$up/usr/src/$common_dir" "$tree/lib/modules/$kver/source"
}

relink() {
	[ "$(readlink "$2" || true)" = "$1" ] || ln -sfn "$1" "$2"
}

if [ -f "$stamp" ]; then
	fix_paths
	remember
	echo "$kver"
	exit 0
fi

# Two runs fetching the same kernel at once must not unpack over each other; the second one
# finds the tree ready once it gets the lock.
mkdir -p "$kroot"
exec 8>"$kroot/.lock"
flock 8
if [ -f "$stamp" ]; then
	fix_paths
	remember
	echo "$kver"
	exit 0
fi

mapfile -t pkgs < <(want_packages)
[ "${#pkgs[@]}" -ge 4 ] || die "unexpected dependencies of linux-headers-$kver: ${pkgs[*]}"
fetch "${pkgs[@]}"

# The kernel's compiler (gcc-12, or gcc-14-for-host from trixie on) is named by the headers.
# When the host has no such compiler (trixie's kernels on bookworm), modules are built in a
# build root of the kernel's own distribution: tests/vm/kmake.sh reads .aesloop-compiler.
compiler=$(apt_cache depends "linux-headers-$kver" "${pkgs[@]}" 2>/dev/null |
	sed -n 's/^ *Depends: <\{0,1\}\(gcc-[0-9]*\)\(-for-host\)\{0,1\}>\{0,1\}$/\1/p')
compiler=${compiler%%$'\n'*}

# Unpack into a scratch tree and rename it at the end, so an interrupted run leaves nothing
# that looks finished.
say "unpacking $kver into ${tree#"$top"/}"
tmp="$kroot/.$kver.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
for pkg in "${pkgs[@]}"; do
	deb=$(deb_path "$pkg")
	dpkg-deb -x "$deb" "$tmp"
done
# trixie's packages use the merged-/usr layout, with the kernel image beside its modules
# (/usr/lib/modules/KVER/vmlinuz): links give the tree the layout bookworm's have.
if [ ! -e "$tmp/lib" ] && [ -d "$tmp/usr/lib/modules" ]; then
	ln -s usr/lib "$tmp/lib"
fi
if [ ! -e "$tmp/boot/vmlinuz-$kver" ] && [ -f "$tmp/usr/lib/modules/$kver/vmlinuz" ]; then
	mkdir -p "$tmp/boot"
	ln -s "../usr/lib/modules/$kver/vmlinuz" "$tmp/boot/vmlinuz-$kver"
fi
rm -rf "$tree"
mv "$tmp" "$tree"
fix_paths
# The image package ships no modules.dep; modprobe -d and the guest need one.
depmod -b "$tree" "$kver"
echo "${compiler:-gcc}" >"$tree/.aesloop-compiler"
# The kernel's architecture, for kmake.sh (a cross build), mkinitramfs.sh and run.sh.
echo "$arch" >"$tree/.aesloop-arch"
printf '%s\n' "${pkgs[@]}" >"$stamp"
remember
say "ready: ${tree#"$top"/}"
echo "$kver"
