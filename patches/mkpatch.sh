#!/bin/bash
# Edits the util-linux patches with quilt.  patches/util-linux/ holds the
# patches and one quilt series file a util-linux series (series-2.38,
# series-2.41, series-2.42; patches/series.sh has the table); a patch several
# series share is one file, listed in each.
#
#   patches/mkpatch.sh edit [BUILD_DIR] [SERIES]
#         a fresh quilt work tree, BUILD_DIR/WORK/quilt: the series' util-linux
#         release (its tarball, checked as build-losetup.sh checks it) with
#         all its patches pushed (quilt push -a)
#   patches/mkpatch.sh quilt [BUILD_DIR] [SERIES] [--] QUILT-ARGS...
#         quilt QUILT-ARGS in that work tree, with patches/quiltrc's settings
#         (e.g. pop, push, edit FILE, refresh, new 2.41/NAME.patch, header -e)
#   patches/mkpatch.sh check [SERIES...]
#         every patch of each series (default: all) applies, in order and
#         with no fuzz, to a fresh copy of the series' release
#
# SERIES is 2.38 (the default), 2.41 or 2.42; WORK and the default BUILD_DIR
# are the series' (patches/series.sh): build/util-linux for 2.38,
# build/ul-SERIES/util-linux-SERIES for the others.  The source package must
# have been fetched already (make losetup, make losetup-SERIES do it).  After a refresh
# of a patch both series share, run check: it must still apply to the other.
# The loop-AES code itself is not in the patches: it is libaesloop (lib/),
# which build-losetup.sh compiles and links into losetup, mount and swapon.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=series.sh
. "$top/patches/series.sh"

die() {
	echo "mkpatch.sh: $*" >&2
	exit 1
}

usage="usage: $0 edit [BUILD_DIR] [SERIES] | quilt [BUILD_DIR] [SERIES] [--] QUILT-ARGS... | check [SERIES...]"
cmd=${1:-}
case "$cmd" in
edit | quilt | check) shift ;;
*) die "$usage" ;;
esac

# source_of BUILD: the release tarball of the current series under BUILD,
# or die.
source_of() {
	local tarball
	tarball=$(ul_tarball "$1/$ul_work_name/dl")
	[ -f "$tarball" ] || die "no util-linux $ul_version source in $1/$ul_work_name/dl: run patches/build-losetup.sh $1 $ul_series first"
	echo "$tarball"
}

if [ "$cmd" = check ]; then
	[ $# -gt 0 ] || read -r -a args <<<"$(ul_series_names)"
	[ $# -eq 0 ] || args=("$@")
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	status=0
	for s in "${args[@]}"; do
		ul_series "$s" || die "unknown util-linux series '$s' (known: $(ul_series_names))"
		tarball=$(source_of "$top/$ul_build_name")
		ul_unpack "$tarball" "$tmp/$s" "$tmp/unpack.log" || die "cannot unpack $tarball"
		if ul_apply_series "$tmp/$s" "$tmp/patch.log"; then
			echo "mkpatch.sh: $s: $(ul_series_patches | wc -l) patches apply to util-linux $ul_version"
		else
			status=1
		fi
		rm -rf "${tmp:?}/$s"
	done
	exit "$status"
fi

# edit and quilt: up to two leading arguments name the BUILD_DIR and SERIES.
build='' series=''
while [ $# -gt 0 ]; do
	if [ "$1" = -- ]; then
		shift
		break
	elif [[ "$1" =~ ^[0-9]+\.[0-9]+$ ]] && [ -z "$series" ]; then
		series=$1
	elif [ -z "$build" ] && [ -d "$1" ]; then
		build=$1
	else
		break
	fi
	shift
done
[ "$cmd" = quilt ] || [ $# -eq 0 ] || die "$usage"
[ "$cmd" = edit ] || [ $# -gt 0 ] || die "$usage"
ul_series "$series" || die "unknown util-linux series '$series' (known: $(ul_series_names))"
build=${build:-$top/$ul_build_name}
[ -d "$build" ] || die "$build: no such folder"
build=$(cd "$build" && pwd)
tree=$build/$ul_work_name/quilt
command -v quilt >/dev/null || die "quilt is not installed (tests/deps.sh installs it)"
export QUILTRC=$top/patches/quiltrc

case "$cmd" in
edit)
	tarball=$(source_of "$build")
	ul_unpack "$tarball" "$tree" "$build/$ul_work_name/quilt-unpack.log" ||
		die "cannot unpack $tarball"
	# quilt keeps where the patches and the series file are in .pc/.
	(cd "$tree" && QUILT_PATCHES=$ul_patch_dir QUILT_SERIES=${ul_series_file##*/} \
		quilt push -a -q) || die "the series does not apply: see above"
	echo "mkpatch.sh: $tree has util-linux $ul_series's patches pushed; change them with"
	echo "  patches/mkpatch.sh quilt${build:+ $build} $ul_series pop|push|edit FILE|refresh|..."
	;;
quilt)
	[ -d "$tree/.pc" ] || die "no quilt work tree in $tree: run patches/mkpatch.sh edit $build $ul_series first"
	cd "$tree"
	exec quilt "$@"
	;;
esac
