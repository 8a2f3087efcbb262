# The util-linux series the aesloop patch exists for, sourced by
# build-losetup.sh and mkpatch.sh.  One line a series:
#
#   series  Debian suite  source version  patch file  work dir  default BUILD_DIR
#
# The source version is matched as a prefix of Debian's upstream version at
# a dot: 2.38.1 is 2.38.1 only, 2.41 is whatever 2.41.x the suite serves
# (the patch applies to every point release).  The work dir is under
# BUILD_DIR; the default BUILD_DIR is relative to the top of the tree and
# is what `make losetup` and `make losetup-2.41` use.  Each series needs a
# BUILD_DIR of its own: the programs go to BUILD_DIR/bin.
# shellcheck shell=bash

ul_series_table='
2.38  bookworm  2.38.1  util-linux-2.38.1-aesloop.patch  util-linux       build
2.41  trixie    2.41    util-linux-2.41-aesloop.patch    util-linux-2.41  build/ul-2.41
'
ul_default_series=2.38

# ul_series SERIES: sets ul_series, ul_suite, ul_version, ul_patch,
# ul_work_name and ul_build_name for SERIES (empty: the default), for the
# script that sources this; fails for an unknown one.
# shellcheck disable=SC2034
ul_series() {
	local want=${1:-$ul_default_series} series suite version patch work build
	while read -r series suite version patch work build; do
		[ "$series" = "$want" ] || continue
		ul_series=$series ul_suite=$suite ul_version=$version ul_patch=$patch
		ul_work_name=$work ul_build_name=$build
		return 0
	done <<<"$ul_series_table"
	return 1
}

# ul_series_names: the known series, space-separated.
ul_series_names() {
	awk 'NF { printf "%s%s", sep, $1; sep = " " }' <<<"$ul_series_table"
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
