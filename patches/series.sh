# The util-linux series the aesloop patches exist for, sourced by
# build-losetup.sh and mkpatch.sh.  One line a series:
#
#   series  Debian suite  release  its tarball's SHA-256  quilt series file  work dir  default BUILD_DIR
#
# The programs are built from util-linux's upstream release tarball, which
# Debian's source package of the suite carries as util-linux_RELEASE.orig.tar.xz
# (fetched with apt-get source), checked against the SHA-256 here: Debian's
# own patches are not applied.  When the suite moves to another release, the
# build stops until the line here names it (check that the patches apply:
# patches/mkpatch.sh check).  The series file, in
# patches/util-linux/, lists the series' patches in the order they apply
# (quilt's format; a patch both series share is listed in both).  The work
# dir is under BUILD_DIR; the default BUILD_DIR is relative to the top of
# the tree and is what `make losetup` and `make losetup-SERIES` use.  Each
# series needs a BUILD_DIR of its own: the programs go to BUILD_DIR/bin.
# shellcheck shell=bash

ul_series_table='
2.38  bookworm  2.38.1  60492a19b44e6cf9a3ddff68325b333b8b52b6c59ce3ebd6a0ecaa4c5117e84f  series-2.38  util-linux       build
2.41  trixie    2.41.5  f586e35d320ff537aab3ffeca37e9ecd482ccbe013590db4429a414d8aa6a728  series-2.41  util-linux-2.41  build/ul-2.41
2.42  forky     2.42.4  fbd62a100ab7bb8746ba0661255c3c48185b1e9021507c624da01fbc696330ec  series-2.42  util-linux-2.42  build/ul-2.42
'
ul_default_series=2.38
# The folder of the patches and series files.
ul_patch_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/util-linux

# ul_series SERIES: sets ul_series, ul_suite, ul_version, ul_sha256,
# ul_series_file (its path), ul_work_name and ul_build_name for SERIES
# (empty: the default), for the script that sources this; fails for an
# unknown one.
# shellcheck disable=SC2034
ul_series() {
	local want=${1:-$ul_default_series} series suite version sha256 file work build
	while read -r series suite version sha256 file work build; do
		[ "$series" = "$want" ] || continue
		ul_series=$series ul_suite=$suite ul_version=$version ul_sha256=$sha256
		ul_series_file=$ul_patch_dir/$file
		ul_work_name=$work ul_build_name=$build
		return 0
	done <<<"$ul_series_table"
	return 1
}

# ul_series_names: the known series, space-separated.
ul_series_names() {
	awk 'NF { printf "%s%s", sep, $1; sep = " " }' <<<"$ul_series_table"
}

# ul_series_patches: the paths of $ul_series_file's patches, in order, one
# a line (quilt's series format: a name a line, # comments, no -pN here).
ul_series_patches() {
	local name rest
	while read -r name rest; do
		case "$name" in '' | '#'*) continue ;; esac
		[ -z "$rest" ] || return 1
		echo "$ul_patch_dir/$name"
	done <"$ul_series_file"
}

# ul_apply_series TREE LOG: applies the series' patches to TREE in order,
# with no fuzz (offsets are fine), patch's output in LOG.  On a patch that
# does not apply: says which, with patch's output, and fails.
ul_apply_series() {
	local tree=$1 log=$2 p name patches out
	: >"$log"
	patches=$(ul_series_patches) || {
		echo "$ul_series_file: a line with more than a patch name" >&2
		return 1
	}
	[ -n "$patches" ] || { echo "$ul_series_file lists no patch" >&2; return 1; }
	while read -r p; do
		name=${p#"$ul_patch_dir"/}
		[ -f "$p" ] || { echo "$name, listed in ${ul_series_file##*/}, is missing" >&2; return 1; }
		if ! out=$(patch -d "$tree" -p1 --forward --batch --fuzz=0 --no-backup-if-mismatch <"$p" 2>&1); then
			printf '%s\n' "$out" >&2
			echo "$name (${ul_series_file##*/}) does not apply to this source (no fuzz is allowed)" >&2
			return 1
		fi
		printf '== %s\n%s\n' "$name" "$out" >>"$log"
	done <<<"$patches"
}

# ul_tarball DIR: where util-linux $ul_version's release tarball is in DIR
# (the name Debian's source package gives it).
ul_tarball() {
	echo "$1/util-linux_$ul_version.orig.tar.xz"
}

# ul_unpack TARBALL DEST LOG: DEST, new, holds util-linux's source from
# TARBALL, if its SHA-256 is the series'; tar's output in LOG.  A tarball
# with another checksum is refused: it is not the release the patches are
# for, or not the release at all.
ul_unpack() {
	local tarball=$1 dest=$2 log=$3 sum tmp
	sum=$(sha256sum "$tarball" | cut -d' ' -f1) || return 1
	if [ "$sum" != "$ul_sha256" ]; then
		echo "$tarball: SHA-256 $sum, not util-linux $ul_version's $ul_sha256 (patches/series.sh): refusing to build from it" >&2
		return 1
	fi
	rm -rf "$dest" "$dest.unpack"
	mkdir -p "$dest.unpack"
	if ! tar -xJf "$tarball" -C "$dest.unpack" >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		echo "tar cannot unpack $tarball" >&2
		return 1
	fi
	tmp=$dest.unpack/util-linux-$ul_version
	[ -d "$tmp" ] || { echo "$tarball has no util-linux-$ul_version/" >&2; return 1; }
	mv "$tmp" "$dest"
	rm -rf "$dest.unpack"
}
