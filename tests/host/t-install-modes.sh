#!/bin/bash
# covers: no setuid or setgid install
# t-install-modes.sh - aesloop's programs are never installed set-user-ID or
# set-group-ID: a setuid mount that opens paths a user names is open to a
# symlink swapped between its check and its open, and aesloop's mount does
# not need it (root mounts; users get fstab's "user" lines from util-linux's
# own mount).  For every util-linux build there is (build/bin and each
# build/ul-*, make losetup and make losetup-SERIES): make install-tools into
# a DESTDIR of the test's own installs no file with the setuid or setgid
# bit, the programs as 0755; the build's own programs have neither bit; and
# the util-linux tree was configured with --disable-makeinstall-setuid (its
# Makefile's chmod 4755 of mount and umount commented out), so that not even
# its own make install would set them.
#
# Needs make userspace (aesloop-pipe) and a make losetup build; skips what is
# not built.  Environment (set by tests/host/run.sh): AESLOOP_TOP,
# AESLOOP_BUILD.  Prints TAP (tests/tap.sh); exits 1 on a failure.
set -uo pipefail

top=${AESLOOP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${AESLOOP_BUILD:-$top/build}

# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
# shellcheck source=patches/series.sh
. "$top/patches/series.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

uls=()
for ul in "$build" "$build"/ul-*; do
	[ -x "$ul/bin/losetup" ] && uls+=("$ul")
done
if [ "${#uls[@]}" -eq 0 ]; then
	skip install-modes "no util-linux build (make losetup)"
	tap_end
	exit 0
fi

for ul in "${uls[@]}"; do
	name=$(basename "$ul")
	[ "$ul" != "$build" ] || name=default

	# The build's own programs.
	bad=$(find "$ul/bin" -type f -perm /6000 2>/dev/null)
	if [ -z "$bad" ]; then
		pass "$name-built-no-setuid"
	else
		fail "$name-built-no-setuid" "setuid or setgid: $(echo "$bad" | tr '\n' ' ')"
	fi

	# The configured util-linux tree: its install hook would not chmod.
	series=$(cat "$ul/bin/.util-linux-series" 2>/dev/null || echo "$ul_default_series")
	if ! ul_series "$series"; then
		fail "$name-configure-no-setuid" "its series '$series' is not in patches/series.sh"
	elif [ ! -f "$ul/$ul_work_name/src/Makefile" ]; then
		skip "$name-configure-no-setuid" "no configured tree in $ul/$ul_work_name/src"
	elif grep -Eq '^[[:space:]]+chmod [0-7]*[2467][0-7]{3} ' "$ul/$ul_work_name/src/Makefile"; then
		fail "$name-configure-no-setuid" "$ul/$ul_work_name/src/Makefile would chmod a program setuid on install"
	elif ! grep -q -- '--disable-makeinstall-setuid' "$ul/$ul_work_name/src/config.log" 2>/dev/null; then
		fail "$name-configure-no-setuid" "not configured with --disable-makeinstall-setuid"
	else
		pass "$name-configure-no-setuid"
	fi

	# make install-tools, as a user or a package runs it.
	if [ ! -x "$build/bin/aesloop-pipe" ]; then
		skip "$name-install-tools" "no $build/bin/aesloop-pipe (make userspace)"
		continue
	fi
	dest=$tmp/$name
	if ! out=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -C "$top" \
		install-tools BUILD="$build" UL_BUILD="$ul" DESTDIR="$dest" PREFIX=/usr/local 2>&1); then
		fail "$name-install-tools" "make install-tools failed: $(tail -n 3 <<<"$out")"
		continue
	fi
	bad=$(find "$dest" -perm /6000)
	if [ -z "$bad" ]; then
		pass "$name-install-tools-no-setuid"
	else
		fail "$name-install-tools-no-setuid" "setuid or setgid: $(echo "${bad//$dest/}" | tr '\n' ' ')"
	fi
	modes=$(for p in losetup mount swapon swapoff; do
		stat -c '%a' "$dest/usr/local/sbin/aesloop-$p" 2>/dev/null || echo missing; done | sort -u)
	if [ "$modes" = 755 ]; then
		pass "$name-install-tools-mode-0755"
	else
		fail "$name-install-tools-mode-0755" "the programs' modes: $(echo "$modes" | tr '\n' ' ')"
	fi
done

tap_end
