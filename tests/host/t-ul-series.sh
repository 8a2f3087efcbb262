#!/bin/bash
# covers: util-linux patches
# t-ul-series.sh - the util-linux patch series (patches/util-linux/) and how
# patches/build-losetup.sh takes its source: every series applies, in order
# and with no fuzz, to its release tarball; a patch that does not apply (or
# only with fuzz) stops it, named; a tarball whose SHA-256 is not the one
# patches/series.sh records is refused before anything is unpacked; every
# patch has a DEP-3 description; the ebuild applies its series' patches.
#
# Needs the release tarballs that make losetup and make losetup-SERIES fetch
# (a series without one is skipped).  Environment (set by tests/host/run.sh):
# AESLOOP_TOP, AESLOOP_BUILD.  Prints TAP (tests/tap.sh); exits 1 on a
# failure.
set -uo pipefail

top=${AESLOOP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}

# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
# shellcheck source=patches/series.sh
. "$top/patches/series.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Every patch: a Description with a long part, and Forwarded or Origin.
for p in "$ul_patch_dir"/*.patch "$ul_patch_dir"/*/*.patch; do
	name=${p#"$ul_patch_dir"/}
	if grep -q '^Description: .' "$p" && grep -q '^ [^ ]' "$p" &&
	   grep -Eq '^(Forwarded|Origin): .' "$p" && grep -q '^Last-Update: ' "$p"; then
		pass "dep3-header $name"
	else
		fail "dep3-header $name" "no DEP-3 header (Description with a long part, Forwarded or Origin, Last-Update)"
	fi
	listed=0
	for s in "$ul_patch_dir"/series-*; do
		grep -qx -- "$name" "$s" && listed=1
	done
	if [ "$listed" = 1 ]; then
		pass "listed $name"
	else
		fail "listed $name" "no series file lists it"
	fi
done

for series in $(ul_series_names); do
	ul_series "$series"
	tarball=$(ul_tarball "$top/$ul_build_name/$ul_work_name/dl")
	if [ ! -f "$tarball" ]; then
		skip "series-$series" "no $tarball (make losetup / make losetup-$series fetches it)"
		continue
	fi
	if ul_unpack "$tarball" "$tmp/src-$series" "$tmp/unpack.log" 2>"$tmp/err" &&
	   ul_apply_series "$tmp/src-$series" "$tmp/patch.log" 2>>"$tmp/err"; then
		pass "series-$series-applies"
	else
		fail "series-$series-applies" "$(head -c 400 "$tmp/err")"
	fi
	rm -rf "${tmp:?}/src-$series"
done

# The failure paths, on 2.38's tarball.
ul_series 2.38
tarball=$(ul_tarball "$top/$ul_build_name/$ul_work_name/dl")
if [ ! -f "$tarball" ]; then
	skip series-failures "no $tarball (make losetup fetches it)"
else
	ul_unpack "$tarball" "$tmp/pristine" "$tmp/unpack.log" || fail unpack "cannot unpack $tarball"
	# A copy of the patches in which one patch needs fuzz (a context line
	# changed), another in which a hunk's lines are not there at all.
	for how in fuzz missing; do
		mkdir -p "$tmp/$how"
		cp -r "$ul_patch_dir" "$tmp/$how/"
		p=$tmp/$how/util-linux/2.38/swapon-swapoff-encrypted-swap-context.patch
		if [ "$how" = fuzz ]; then
			# The first context line of the first hunk, changed: patch could
			# still place the hunk with fuzz 1.
			awk '!done && /^@@ / { print; getline; print " /* not in util-linux */"; done = 1; next } 1' \
				"$p" >"$p.new"
		else
			sed 's/^-\([^-].*\)$/-\1 (not in util-linux)/' "$p" >"$p.new"
		fi
		mv "$p.new" "$p"
		rm -rf "$tmp/tree"
		cp -a "$tmp/pristine" "$tmp/tree"
		if (ul_patch_dir=$tmp/$how/util-linux ul_series_file=$tmp/$how/util-linux/series-2.38 \
			ul_apply_series "$tmp/tree" "$tmp/patch.log") 2>"$tmp/err"; then
			fail "refuse-$how" "a series whose 2.38/swapon-swapoff-encrypted-swap-context.patch needs $how applied"
		elif ! grep -q '^2.38/swapon-swapoff-encrypted-swap-context.patch (series-2.38) does not apply' "$tmp/err"; then
			fail "refuse-$how" "the message does not name the patch: $(tail -n 3 "$tmp/err")"
		else
			pass "refuse-$how"
		fi
	done

	# build-losetup.sh with a tarball whose SHA-256 differs: refused, named,
	# nothing unpacked.
	bad=$tmp/bad-build
	mkdir -p "$bad/$ul_work_name/dl"
	cp "$tarball" "$bad/$ul_work_name/dl/"
	printf 'x' | dd of="$bad/$ul_work_name/dl/${tarball##*/}" bs=1 seek=1000 conv=notrunc status=none
	out=$("$top/patches/build-losetup.sh" "$bad" 2.38 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && grep -q "SHA-256 mismatch" <<<"$out" && grep -q "$ul_sha256" <<<"$out" &&
	   [ ! -e "$bad/$ul_work_name/src" ] && [ ! -e "$bad/bin" ]; then
		pass refuse-checksum-mismatch
	else
		fail refuse-checksum-mismatch "build-losetup.sh exited $rc: $(head -c 300 <<<"$out")"
	fi
fi

# The ebuild applies the patches of its util-linux's series, in its order.
for ebuild in "$top"/ebuild/app-crypt/aesloop-losetup/aesloop-losetup-*.ebuild; do
	[ -f "$ebuild" ] || continue
	series=$(sed -n 's/^UL_PV=\([0-9]*\.[0-9]*\).*/\1/p' "$ebuild")
	if [ ! -f "$ul_patch_dir/series-$series" ]; then
		fail "ebuild-patches ${ebuild##*/}" "its util-linux '$series' has no series file"
		continue
	fi
	got=$(sed -n '/^PATCHES=(/,/^)/p' "$ebuild" | sed -n 's|.*AESLOOP_UL_PATCHES}"/||p' | paste -sd' ' -)
	want=$(grep -v '^#' "$ul_patch_dir/series-$series" | paste -sd' ' -)
	if [ "$got" = "$want" ]; then
		pass "ebuild-patches ${ebuild##*/}"
	else
		fail "ebuild-patches ${ebuild##*/}" "it applies [$got], series-$series has [$want]"
	fi
done

tap_end
