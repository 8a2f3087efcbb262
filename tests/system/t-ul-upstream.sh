#!/bin/bash
# covers: util-linux upstream tests, losetup, mount, plain loop
# System suite: util-linux's own tests of losetup and mount (its tests/ts/losetup and
# tests/ts/mount, from the release each series builds) run against aesloop's patched programs
# of every util-linux series built in this checkout (patches/series.sh), on aesloop's loop
# driver, with the same release's umount (build-losetup.sh's test-bin/) and the image's own
# findmnt, lsblk and blkid (util-linux's --use-system-commands).  The patches add loop-AES
# options and must change nothing util-linux's tests see: each of its tests is a result here,
# passed, skipped (with util-linux's reason, or one of its known failures) or failed (with its
# diff).
#   t-ul-upstream.sh [SERIES...]    the series to run (default: every one that is built)
# shellcheck source=tests/vm/lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"
# shellcheck source=tests/system/lib.sh
. /aesloop/tests/system/lib.sh
# shellcheck source=patches/series.sh
. /aesloop/patches/series.sh

top=/aesloop
# The components of util-linux's tests/ts that exercise the programs aesloop patches.
components=(losetup mount)

# run_series SERIES: util-linux's tests of SERIES's release, a result each.
run_series() {
	local series=$1 bin src umount work line lines comp name status why n=0
	ul_series "$series" || { t_fail "ul-$series" "no util-linux series $series in patches/series.sh"; return; }
	bin=$top/$ul_build_name/bin
	src=$top/$ul_build_name/$ul_work_name/src
	umount=$top/$ul_build_name/test-bin/umount
	if [ ! -x "$bin/losetup" ] || [ ! -x "$bin/mount" ] || [ ! -x "$umount" ] ||
	   [ ! -f "$src/tests/run.sh" ]; then
		t_fail "ul-$series" "$bin, $umount or $src is not built (make losetup-$series)"
		return
	fi
	# util-linux writes its outputs beside its tests: a copy off the read-only share.
	work=/var/tmp/ul-upstream-$series
	rm -rf "$work"
	mkdir -p "$work"
	cp -a "$src/tests" "$work/"
	# umount: the same release's (build-losetup.sh's test-bin), not the image's, whose
	# older umount --recursive leaves an over-mounted tree that 2.42's test expects gone.
	TS_CMD_LOSETUP=$bin/losetup TS_CMD_MOUNT=$bin/mount TS_CMD_UMOUNT=$umount \
		"$work/tests/run.sh" --use-system-commands --srcdir="$work" --builddir="$work" \
		--parsable --show-diff "${components[@]}" >"$work/log" 2>&1
	# "  component: name [NN] subtest ... STATUS (why)": a result each.
	mapfile -t lines <"$work/log"
	for line in "${lines[@]}"; do
		[[ "$line" =~ ^[[:space:]]*([a-z0-9_-]+):[[:space:]](.*[^[:space:]])[[:space:]]*\.\.\.[[:space:]]?(OK|FAILED|SKIPPED|KNOWN[[:space:]]FAILED)(.*)$ ]] ||
			continue
		comp=${BASH_REMATCH[1]} name=${BASH_REMATCH[2]} status=${BASH_REMATCH[3]} why=${BASH_REMATCH[4]}
		name=$(tr -cs 'A-Za-z0-9_.-' '-' <<<"$name" | sed 's/-*$//')
		n=$((n + 1))
		case "$status" in
		OK) t_pass "ul-$series/$comp/$name" ;;
		SKIPPED) t_skip "ul-$series/$comp/$name" "util-linux: ${why# }" ;;
		# util-linux's own known failures, which it does not count as failed
		KNOWN*) t_skip "ul-$series/$comp/$name" "util-linux: known failure${why}" ;;
		*) t_fail "ul-$series/$comp/$name" "util-linux says $status$why (its diff on the console)"
		   # "(mount/umount-recursive)": its diff and error log under tests/diff and output.
		   if [[ "$why" =~ \(([a-z0-9_.-]+/[a-z0-9_.-]+)\) ]]; then
			cat "$work/tests/diff/${BASH_REMATCH[1]}" \
			    "$work/tests/output/${BASH_REMATCH[1]}.err" 2>/dev/null |
				head -n 60 | sed 's/^/    | /'
		   fi ;;
		esac
	done
	# A run that reported no test at all says why, rather than passing on nothing.
	if [ "$n" -eq 0 ]; then
		t_fail "ul-$series/ran" "util-linux's tests reported nothing (their output on the console)"
		tail -n 40 "$work/log" | sed 's/^/    | /'
	fi
	t_check "ul-$series/no-loop-left" no_loop_left
}

if [ $# -gt 0 ]; then
	for s in "$@"; do
		run_series "$s"
	done
else
	for s in $(ul_series_names); do
		run_series "$s"
	done
fi
