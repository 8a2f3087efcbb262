#!/bin/bash
# Runs the host tests: every C test program, plain and under ASan+UBSan, and
# every tests/host/t-*.sh script; t-losetup.sh again for each other
# util-linux build there is (build/ul-2.41, make losetup-2.41), its results
# prefixed "ul-2.41/".  Prints their PASS/FAIL/SKIP lines, each prefixed
# with the program that printed it; exits non-zero if any failed.
# Build first with `make host-tests` (the Makefile's check-host does both).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
export AESLOOP_VECTORS=${AESLOOP_VECTORS:-$("$top/tests/host/vectors-dir.sh")}
export AESLOOP_TOP=$top AESLOOP_BUILD=$build
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1

status=0
run() {	# run NAME CMD...: prefix each result line with NAME
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | awk -v name="$name" \
		'/^(PASS|FAIL|SKIP) / { print $1 " " name ":" substr($0, length($1) + 2) }'
	# Anything else the program said (sanitizer reports) is shown on failure.
	if [ "$rc" -ne 0 ]; then
		status=1
		if ! printf '%s\n' "$out" | grep -q '^FAIL '; then
			echo "FAIL $name: exited with status $rc"
		fi
		printf '%s\n' "$out" | grep -v '^\(PASS\|FAIL\|SKIP\) ' | sed 's/^/    /' | tail -n 30
	fi
}

for prog in "$build"/tests/*; do
	[ -x "$prog" ] || continue
	run "$(basename "$prog")" "$prog"
done
for script in "$top"/tests/host/t-*.sh; do
	[ -e "$script" ] || continue
	run "$(basename "$script" .sh)" bash "$script"
done
for ul in "$build"/ul-*/; do
	[ -x "$ul/bin/losetup" ] || continue
	run "$(basename "$ul")/t-losetup" env AESLOOP_BUILD="${ul%/}" \
		bash "$top/tests/host/t-losetup.sh"
done
exit $status
