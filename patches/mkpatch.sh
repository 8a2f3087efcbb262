#!/bin/bash
# Keeps the util-linux patches (patches/util-linux-2.38.1-aesloop.patch,
# patches/util-linux-2.41-aesloop.patch) generated, never edited by hand:
# a patch is the difference between Debian's util-linux source and a work
# tree where the hooks are edited as ordinary C.
#
#   patches/mkpatch.sh edit [BUILD_DIR] [SERIES]
#                         unpack BUILD_DIR/WORK/pristine and .../work (the
#                         patch applied; a patch that is only a description
#                         starts a new series)
#   (edit files under BUILD_DIR/WORK/work)
#   patches/mkpatch.sh diff [BUILD_DIR] [SERIES]
#                         rewrite the patch from work against pristine; its
#                         text before the first "--- " line (the
#                         description) is kept
#
# SERIES is 2.38 (the default) or 2.41; WORK and the default BUILD_DIR are
# the series' (patches/series.sh): build/util-linux for 2.38,
# build/ul-2.41/util-linux-2.41 for 2.41.  The source package must have been
# fetched already (make losetup, make losetup-2.41 do it).  The loop-AES
# code itself is not in the patch: it is tools/keysetup.c and
# tools/aesloop-util.c, which build-losetup.sh compiles into losetup,
# mount and swapon.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=series.sh
. "$top/patches/series.sh"

die() {
	echo "mkpatch.sh: $*" >&2
	exit 1
}

usage="usage: $0 edit|diff [BUILD_DIR] [SERIES]"
cmd=${1:-}
case "$cmd" in
edit | diff) shift ;;
*) die "$usage" ;;
esac
build='' series=''
for arg in "$@"; do
	if [[ "$arg" =~ ^[0-9]+\.[0-9]+$ ]] && [ -z "$series" ]; then
		series=$arg
	elif [ -z "$build" ]; then
		build=$arg
	else
		die "$usage"
	fi
done
ul_series "$series" || die "unknown util-linux series '$series' (known: $(ul_series_names))"
build=${build:-$top/$ul_build_name}
[ -d "$build" ] || die "$build: no such folder"
# Absolute: diff runs in a temporary folder, through links to the trees.
build=$(cd "$build" && pwd)
work=$build/$ul_work_name
patch_file=$top/patches/$ul_patch
[ -f "$patch_file" ] || die "$patch_file: no such patch (its description at least)"

dsc=$(ul_find_dsc "$work/dl")
[ -n "$dsc" ] || die "no util-linux $ul_version source in $work/dl: run patches/build-losetup.sh $build $ul_series first"

case "$cmd" in
edit)
	rm -rf "$work/pristine" "$work/work"
	dpkg-source --no-copy -x "$dsc" "$work/pristine" >/dev/null 2>&1 || die "dpkg-source -x $dsc failed"
	cp -a "$work/pristine" "$work/work"
	if grep -q '^--- ' "$patch_file"; then
		patch -d "$work/work" -p1 --forward --batch --no-backup-if-mismatch <"$patch_file" >/dev/null ||
			die "$patch_file does not apply"
	fi
	echo "mkpatch.sh: edit $work/work, then run: patches/mkpatch.sh diff $build $ul_series"
	;;
diff)
	if [ ! -d "$work/pristine" ] || [ ! -d "$work/work" ]; then
		die "no work tree: run patches/mkpatch.sh edit first"
	fi
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	ln -s "$work/pristine" "$tmp/a"
	ln -s "$work/work" "$tmp/b"
	sed -n '/^--- /q;p' "$patch_file" >"$tmp/header"
	rc=0
	(cd "$tmp" && LC_ALL=C diff -Naur -x '*.orig' -x '*.rej' -x '*~' a/ b/) >"$tmp/body" || rc=$?
	[ "$rc" -le 1 ] || die "diff failed"
	# Plain "--- a/FILE" lines, without diff's command lines and dates.
	sed -e '/^diff -Naur/d' -e 's/^\(--- [^\t]*\)\t.*/\1/' -e 's/^\(+++ [^\t]*\)\t.*/\1/' \
		"$tmp/body" >"$tmp/body2"
	cat "$tmp/header" "$tmp/body2" >"$patch_file"
	echo "mkpatch.sh: wrote $patch_file ($(grep -c '^+++ ' "$patch_file") files)"
	;;
esac
