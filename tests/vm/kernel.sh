#!/bin/bash
# Usage: tests/vm/kernel.sh SERIES
#   SERIES: 6.1 (bookworm's kernel), 6.12 (bookworm-security's linux-6.12), or an exact
#   kernel release such as 6.1.0-57-amd64.
# Fetches the current Debian amd64 kernel of that series and turns it into a root tree under
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

[ $# -eq 1 ] || die "usage: $0 SERIES (6.1, 6.12 or an exact release like 6.1.0-57-amd64)"
series=$1

# apt knows a package when it has a candidate version (old point releases stay listed without one).
# (The output is read whole: grep -q would close the pipe early and, under pipefail, turn
# apt-cache's SIGPIPE into a false "no".)
has_candidate() {
	local policy
	policy=$(apt-cache policy "$1" 2>/dev/null)
	[[ "$policy" == *$'\n  Candidate: '[^\(]* ]]
}

# The kernel release (KVER) the archive currently offers for SERIES.
resolve_kver() {
	local meta cand
	if ! [[ "$series" =~ ^[0-9]+\.[0-9]+$ ]]; then
		# Already an exact release.
		has_candidate "linux-image-$series" || return 1
		echo "$series"
		return
	fi
	# The distribution's default flavour (bookworm: 6.1) is named by the meta-package.
	# (No `| head`: under pipefail, its early exit could fail the pipeline.)
	meta=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\([^ ]*-amd64\)$/\1/p')
	meta=${meta%%$'\n'*}
	if [ -n "$meta" ] && [[ "$meta" == "$series".* ]]; then
		echo "$meta"
		return
	fi
	# Other series (6.12 from bookworm-security) have no meta-package: take the newest
	# release named SERIES.N... that still has a candidate.
	while read -r cand; do
		if has_candidate "linux-image-$cand"; then
			echo "$cand"
			return
		fi
	done < <(apt-cache pkgnames "linux-image-$series." |
		sed -n "s/^linux-image-\(${series//./\\.}\.[0-9][0-9.+a-z-]*-amd64\)\$/\1/p" |
		grep -v -e '-cloud-' -e '-rt-' | sort -rV)
	return 1
}

# apt-cache takes about a second per call here, so the answer is remembered until the apt
# lists change (apt-get update renames new lists into the directory, updating its mtime).
memo="$kroot/.series-$series"
if ! [[ "$series" =~ ^[0-9]+\.[0-9]+$ ]] && [ -f "$kroot/$series/.aesloop-tree-ok" ]; then
	# An exact release already unpacked needs no apt (it may be gone from the lists).
	kver=$series
elif [ -s "$memo" ] && [ "$memo" -nt /var/lib/apt/lists ] && [ -f "$kroot/$(cat "$memo")/.aesloop-tree-ok" ]; then
	kver=$(cat "$memo")
else
	kver=$(resolve_kver) || die "no linux-image for series '$series' in the apt lists (try: apt-get update)"
fi
tree="$kroot/$kver"
stamp="$tree/.aesloop-tree-ok"

# The header packages a build tree needs: the flavour's headers, the common headers and the
# kbuild helpers. linux-compiler-gcc-* packages only carry a dependency on the compiler (no
# files), so instead of unpacking them the compiler they name is checked for on the host.
want_packages() {
	echo "linux-image-$kver"
	echo "linux-headers-$kver"
	apt-cache depends "linux-headers-$kver" |
		sed -n 's/^ *|\{0,1\}Depends: \(linux-\(headers\|kbuild\)-[^ <>]*\)$/\1/p' | sort -u
}

# The .deb of PKG's candidate version in build/debs. Exact versions matter: linux-kbuild-6.1
# keeps its name across kernel updates, so an older cached one must not be reused.
deb_path() {
	local ver
	ver=$(apt-cache policy "$1" | sed -n 's/^  Candidate: //p')
	if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
		die "no candidate version for $1 (try: apt-get update)"
	fi
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
		# apt-get download writes into the current directory; its _apt sandbox warning is noise.
		(cd "$debs" && apt-get download -q "$pkg" 2>&1 | grep -v -e '^W: Download is performed unsandboxed' >&2) ||
			die "apt-get download $pkg failed (try: apt-get update)"
		have=$(deb_path "$pkg")
		[ -n "$have" ] || die "apt-get download $pkg produced no .deb"
	done
}

# Notes the release a series resolved to (see memo above).
remember() {
	if [[ "$series" =~ ^[0-9]+\.[0-9]+$ ]]; then
		echo "$kver" >"$memo"
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
	# Relative links keep working whatever the tree's path is.
	relink "../../../usr/src/linux-headers-$kver" "$tree/lib/modules/$kver/build"
	relink "../../../usr/src/$common_dir" "$tree/lib/modules/$kver/source"
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

compiler=$(apt-cache depends "linux-headers-$kver" "${pkgs[@]}" 2>/dev/null |
	sed -n 's/^ *Depends: \(gcc-[0-9]*\)$/\1/p')
compiler=${compiler%%$'\n'*}
if [ -n "$compiler" ] && ! command -v "$compiler" >/dev/null; then
	say "warning: $compiler (the kernel's compiler) is not installed; module builds will fail"
fi

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
rm -rf "$tree"
mv "$tmp" "$tree"
fix_paths
# The image package ships no modules.dep; modprobe -d and the guest need one.
depmod -b "$tree" "$kver"
printf '%s\n' "${pkgs[@]}" >"$stamp"
remember
say "ready: ${tree#"$top"/}"
echo "$kver"
