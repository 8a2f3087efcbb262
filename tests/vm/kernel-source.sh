# shellcheck shell=bash
# Sourced by tests/vm/debug-kernel.sh and tests/uml/kernel.sh (which set $top and define say
# and die): Debian's linux-source-SERIES package of the host's apt lists or of a private apt
# state (apt-state.sh), its version, and its tree unpacked.

: "${top:?set by the script that sources this file}"

# source_version SRCPKG REFRESH APT-OPTION...: ver set to the candidate version of SRCPKG in
# the lists the options name, after running REFRESH (a command: fetch the lists; : for none)
# if there was none; dies if there is still none.
source_version() {
	local srcpkg=$1 refresh=$2
	shift 2
	ver=$(apt-cache "$@" policy "$srcpkg" 2>/dev/null | sed -n 's/^  Candidate: //p')
	if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
		"$refresh"
		ver=$(apt-cache "$@" policy "$srcpkg" 2>/dev/null | sed -n 's/^  Candidate: //p')
	fi
	if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
		die "no candidate for $srcpkg"
	fi
}

# source_unpack SRCPKG VER SRC OBJ APT-OPTION...: the kernel tree of SRCPKG's VER in SRC (a
# folder named SRCPKG), unpacked from its .deb (kept in build/debs, downloaded once with the
# options) unless that version is there already; OBJ (its object tree) goes with an old tree.
source_unpack() {
	local srcpkg=$1 ver=$2 src=$3 obj=$4 debs=$top/build/debs deb
	shift 4
	mkdir -p "$debs"
	deb=$(compgen -G "$debs/${srcpkg}_${ver//:/%3a}_all.deb" || true)
	if [ -z "$deb" ]; then
		say "downloading $srcpkg $ver"
		(cd "$debs" && apt-get "$@" download -q "$srcpkg" 2>&1 |
			grep -v -e '^W: Download is performed unsandboxed' >&2) ||
			die "apt-get download $srcpkg failed"
		deb=$(compgen -G "$debs/${srcpkg}_${ver//:/%3a}_all.deb") ||
			die "no $srcpkg .deb after download"
	fi
	if [ ! -f "$src/.aesloop-unpacked-$ver" ]; then
		say "unpacking $srcpkg $ver"
		rm -rf "$src" "$obj"
		dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards "./usr/src/$srcpkg.tar.xz" |
			xz -dc | tar -x -C "$(dirname "$src")"
		touch "$src/.aesloop-unpacked-$ver"
	fi
}
