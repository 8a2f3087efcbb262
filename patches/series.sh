# The util-linux series the aesloop patches exist for, sourced by
# build-losetup.sh and mkpatch.sh.  One line a series:
#
#   series  Debian suite  source version  quilt series file  work dir  default BUILD_DIR
#
# The source version is matched as a prefix of Debian's upstream version at
# a dot: 2.38.1 is 2.38.1 only, 2.41 is whatever 2.41.x the suite serves
# (the patches apply to every point release).  The series file, in
# patches/util-linux/, lists the series' patches in the order they apply
# (quilt's format; a patch both series share is listed in both).  The work
# dir is under BUILD_DIR; the default BUILD_DIR is relative to the top of
# the tree and is what `make losetup` and `make losetup-2.41` use.  Each
# series needs a BUILD_DIR of its own: the programs go to BUILD_DIR/bin.
# shellcheck shell=bash

ul_series_table='
2.38  bookworm  2.38.1  series-2.38  util-linux       build
2.41  trixie    2.41    series-2.41  util-linux-2.41  build/ul-2.41
'
ul_default_series=2.38
# The folder of the patches and series files.
ul_patch_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/util-linux

# ul_series SERIES: sets ul_series, ul_suite, ul_version, ul_series_file
# (its path), ul_work_name and ul_build_name for SERIES (empty: the
# default), for the script that sources this; fails for an unknown one.
# shellcheck disable=SC2034
ul_series() {
	local want=${1:-$ul_default_series} series suite version file work build
	while read -r series suite version file work build; do
		[ "$series" = "$want" ] || continue
		ul_series=$series ul_suite=$suite ul_version=$version
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

# ul_find_dsc DIR: the newest .dsc of util-linux $ul_version in DIR, or
# nothing.
ul_find_dsc() {
	local f
	for f in "$1/util-linux_$ul_version"-*.dsc "$1/util-linux_$ul_version".*-*.dsc; do
		if [ -f "$f" ]; then
			echo "$f"
		fi
	done | sort -V | tail -n 1
}

# ul_unpack DSC DEST LOG: DEST, new, holds the source of DSC: Debian's source
# package unpacked by dpkg-source (Debian's patches applied), without
# dpkg-source's quilt state (.pc), which is not our series'.  dpkg-source's
# output in LOG.
ul_unpack() {
	local dsc=$1 dest=$2 log=$3
	rm -rf "$dest"
	if ! dpkg-source --no-copy -x "$dsc" "$dest" >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		echo "dpkg-source -x $dsc failed" >&2
		return 1
	fi
	rm -rf "$dest/.pc"
}
