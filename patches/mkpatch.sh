#!/bin/bash
# Keeps patches/util-linux-2.38.1-aesloop.patch generated, never edited by
# hand: the patch is the difference between Debian's util-linux source and
# a work tree where the hooks are edited as ordinary C.
#
#   patches/mkpatch.sh edit [BUILD_DIR]   unpack BUILD_DIR/util-linux/pristine
#                                         and .../work (the patch applied)
#   (edit files under BUILD_DIR/util-linux/work)
#   patches/mkpatch.sh diff [BUILD_DIR]   rewrite the patch from work against
#                                         pristine; its text before the first
#                                         "--- " line (the description) is kept
#
# BUILD_DIR defaults to build/.  The source package must have been fetched
# already (make losetup does it).  The loop-AES code itself is not in the
# patch: it is tools/keysetup.c and tools/aesloop-util.c, which
# build-losetup.sh compiles into losetup, mount and swapon.
set -euo pipefail

die() {
	echo "mkpatch.sh: $*" >&2
	exit 1
}

version=2.38.1
top=$(cd "$(dirname "$0")/.." && pwd)
cmd=${1:-}
build=${2:-$top/build}
work=$build/util-linux
patch_file=$top/patches/util-linux-$version-aesloop.patch

dsc=
for f in "$work/dl/util-linux_$version"-*.dsc; do
	[ -f "$f" ] && dsc=$f
done
[ -n "$dsc" ] || die "no util-linux $version source in $work/dl: run make losetup first"

case "$cmd" in
edit)
	rm -rf "$work/pristine" "$work/work"
	dpkg-source --no-copy -x "$dsc" "$work/pristine" >/dev/null 2>&1 || die "dpkg-source -x $dsc failed"
	cp -a "$work/pristine" "$work/work"
	patch -d "$work/work" -p1 --forward --batch --no-backup-if-mismatch <"$patch_file" >/dev/null ||
		die "$patch_file does not apply"
	echo "mkpatch.sh: edit $work/work, then run: patches/mkpatch.sh diff"
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
*)
	die "usage: $0 edit|diff [BUILD_DIR]"
	;;
esac
