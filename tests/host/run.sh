#!/bin/bash
# Runs the host tests: every C test program of tests/host, plain and under
# ASan+UBSan, and every tests/host/t-*.sh script; t-losetup.sh again for each other
# util-linux build there is (build/ul-SERIES, make losetup-SERIES), its results
# prefixed "ul-SERIES/".  Prints their results as one TAP stream (tests/tap.sh),
# each name prefixed with the program that printed it; exits non-zero if any
# failed.
# Build first with `make host-tests` (the Makefile's check-host does both).
#
# Usage: tests/host/run.sh [-b BUILD] [-e EMULATOR] [-p PREFIX] [-r FILE]
#   -b BUILD     the build folder, relative to the project root (default $BUILD,
#                else build)
#   -e EMULATOR  run the C programs through this command (words, e.g.
#                'qemu-aarch64 -L / -cpu max'), and only them: the shell suites
#                test the host's own build (tests/host/arm64.sh)
#   -p PREFIX    before every result name (e.g. arm64/)
#   -r FILE      append the results to FILE (numbered after its last line), with
#                no TAP header and plan: a part of the caller's stream
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
emulator=()
prefix=
results=
while getopts 'b:e:p:r:' opt; do
	case "$opt" in
	b) build=$OPTARG ;;
	e) read -r -a emulator <<<"$OPTARG" ;;
	p) prefix=$OPTARG ;;
	r) results=$OPTARG ;;
	*) sed -n '/^# Usage:/,/^[^#]/s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
case $build in /*) ;; *) build=$top/$build ;; esac
export AESLOOP_VECTORS=${AESLOOP_VECTORS:-$("$top/tests/host/vectors-dir.sh")}
export AESLOOP_TOP=$top AESLOOP_BUILD=$build
# LeakSanitizer cannot run under qemu-user (it needs ptrace); the rest of ASan
# and UBSan does.
leaks=1
[ "${#emulator[@]}" -eq 0 ] || leaks=0
export ASAN_OPTIONS=detect_leaks=$leaks:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1

# shellcheck source=tests/tap.sh
. "$top/tests/tap.sh"
own_stream=0
if [ -z "$results" ]; then
	own_stream=1
	results=$(mktemp)
	trap 'rm -f "$results"' EXIT
	echo "TAP version 13"
fi
failed_before=$(grep -c '^not ok ' "$results")

# run NAME CMD...: CMD's results, each name prefixed "NAME:"; a stream that
# ends without its plan, or whose plan does not match its results, failed.
run() {
	local name=$prefix$1 out rc problem
	shift
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | TAP_RELAY_COMMENTS=0 tap_relay "$results" "$name:"
	problem=$(printf '%s\n' "$out" | tap_plan_problem)
	if [ "$rc" -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^not ok '; then
		tap_append "$results" fail "$name" "exited with status $rc"
	elif [ -n "$problem" ]; then
		tap_append "$results" fail "$name-plan" "$problem"
	fi
	# Anything else the program said (sanitizer reports) is shown on failure.
	if [ "$rc" -ne 0 ]; then
		printf '%s\n' "$out" | grep -vE '^((not )?ok [0-9]+ |TAP version |1\.\.)' |
			tail -n 30 | sed 's/^/# /'
	fi
}

# The programs of tests/host/*.c, plain and -san: what the sources say, not
# what build/tests holds (a stale program of a removed source is not run, a
# missing one fails).  test_aesni is built only with INTELAES=y, test_arm64ce
# and test_arm64ce_abi only with ARM64AES=y (an arm64 build:
# tests/host/arm64.sh).
for src in "$top"/tests/host/*.c; do
	name=$(basename "$src" .c)
	for prog in "$build/tests/$name" "$build/tests/$name-san"; do
		tname=$prefix$(basename "$prog")
		if [ "${#emulator[@]}" -gt 0 ] && [ "$name" = test_spawn ]; then
			# Its children are the host's /bin/sh, which qemu-user's
			# fork and exec emulation does not run as the checks
			# expect; no arm64 code of ours is in it.
			tap_append "$results" skip "$tname" "starts /bin/sh children: not under qemu-user"
		elif [ "${#emulator[@]}" -gt 0 ] && [ "$name" = test_aesni ]; then
			tap_append "$results" skip "$tname" "x86_64 only (aes-intel/)"
		elif [ -x "$prog" ]; then
			run "$(basename "$prog")" "${emulator[@]}" "$prog"
		elif [ "$name" = test_aesni ]; then
			tap_append "$results" skip "$tname" \
				"not built (make host-tests INTELAES=y builds it)"
		elif [[ $name == test_arm64ce* ]]; then
			tap_append "$results" skip "$tname" \
				"arm64 only: tests/host/arm64.sh builds and runs it"
		else
			tap_append "$results" fail "$tname" \
				"not built: make host-tests"
		fi
	done
done
if [ "${#emulator[@]}" -eq 0 ]; then
	for script in "$top"/tests/host/t-*.sh; do
		[ -e "$script" ] || continue
		run "$(basename "$script" .sh)" bash "$script"
	done
	# Builds for this machine only: make losetup-arm64's build/ul-arm64 is another
	# architecture's (its ELF e_machine differs from the shell's).
	for ul in "$build"/ul-*/; do
		[ -x "$ul/bin/losetup" ] || continue
		[ "$(od -An -j18 -N2 -tx2 "$ul/bin/losetup")" = "$(od -An -j18 -N2 -tx2 /bin/sh)" ] ||
			continue
		run "$(basename "$ul")/t-losetup" env AESLOOP_BUILD="${ul%/}" \
			bash "$top/tests/host/t-losetup.sh"
	done
fi
[ "$own_stream" = 0 ] || echo "1..$(wc -l <"$results")"
[ "$(grep -c '^not ok ' "$results")" -eq "$failed_before" ]
