#!/bin/bash
# The host tests for arm64: cross-builds libaesloop, aesloop-pipe and the C
# test programs of tests/host with aarch64-linux-gnu-gcc into build/arm64
# (ARM64AES=y, the arm64-ce engine), and runs each program, plain and under
# ASan+UBSan, in qemu-aarch64 (-cpu max: AES, as Cortex-A76 and
# Neoverse-N1 have it).  test_arm64ce also checks the choice on a CPU
# without AES (QEMU has no such arm64 model: it hides HWCAP_AES itself);
# test_arm64ce_abi checks the assembly's calling contract (registers,
# nsect == 0, reads past the inputs).
# Prints one TAP stream (tests/tap.sh); exits non-zero if a check failed.
#
# Needs gcc-aarch64-linux-gnu, qemu-user and arm64 libcrypto and libmount
# (ARM64=1 tests/deps.sh installs them).  QEMU's timings say nothing about
# arm64 hardware.
#
#   ARM64_BUILD=DIR  the build folder (build/arm64)
#   ARM64_CPU=NAME   QEMU's CPU model (max; cortex-a76, neoverse-n1 ...)
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${ARM64_BUILD:-build/arm64}
cpu=${ARM64_CPU:-max}
cross=aarch64-linux-gnu
# shellcheck source=tests/tap.sh
. "$top/tests/tap.sh"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
echo "TAP version 13"

for tool in "$cross-gcc" qemu-aarch64; do
	if ! command -v "$tool" >/dev/null; then
		tap_append "$results" fail "arm64-tools" "$tool is not installed (ARM64=1 tests/deps.sh)"
		echo "1..$(wc -l <"$results")"
		exit 1
	fi
done

if out=$(cd "$top" && make -j"$(nproc)" CC="$cross-gcc" AR="$cross-ar" \
	BUILD="$build" ARM64AES=y userspace host-tests 2>&1); then
	tap_append "$results" pass "arm64-build"
else
	tap_append "$results" fail "arm64-build" "make failed (are libssl-dev:arm64 and libmount-dev:arm64 installed?)"
	tail -n 30 <<<"$out" | sed 's/^/# /'
	echo "1..$(wc -l <"$results")"
	exit 1
fi
case $build in /*) ;; *) build=$top/$build ;; esac

export AESLOOP_VECTORS=${AESLOOP_VECTORS:-$("$top/tests/host/vectors-dir.sh")}
export AESLOOP_TOP=$top AESLOOP_BUILD=$build
# LeakSanitizer cannot run under qemu-user (it needs ptrace); the rest of
# ASan and UBSan does (libasan8:arm64, libubsan1:arm64: the cross
# compiler's copies in /usr/aarch64-linux-gnu/lib bring their own C library,
# under which test_changing_source's threads crawl in qemu-user).
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1

# run NAME PROG: PROG's results in qemu-aarch64, each name prefixed "NAME:".
run() {
	local name=$1 prog=$2 out rc problem
	out=$(qemu-aarch64 -L / -cpu "$cpu" \
		"$prog" 2>&1)
	rc=$?
	printf '%s\n' "$out" | TAP_RELAY_COMMENTS=0 tap_relay "$results" "$name:"
	problem=$(printf '%s\n' "$out" | tap_plan_problem)
	if [ "$rc" -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^not ok '; then
		tap_append "$results" fail "$name" "exited with status $rc"
	elif [ -n "$problem" ]; then
		tap_append "$results" fail "$name-plan" "$problem"
	fi
	if [ "$rc" -ne 0 ]; then
		printf '%s\n' "$out" | grep -vE '^((not )?ok [0-9]+ |TAP version |1\.\.)' |
			tail -n 30 | sed 's/^/# /'
	fi
}

for src in "$top"/tests/host/*.c; do
	name=$(basename "$src" .c)
	for prog in "$build/tests/$name" "$build/tests/$name-san"; do
		tname=arm64/$(basename "$prog")
		if [ "$name" = test_spawn ]; then
			# Its children are the host's /bin/sh, which qemu-user's
			# fork and exec emulation does not run as the checks
			# expect; no arm64 code of ours is in it.
			tap_append "$results" skip "$tname" "starts /bin/sh children: not under qemu-user"
		elif [ "$name" = test_aesni ]; then
			tap_append "$results" skip "$tname" "x86_64 only (aes-intel/)"
		elif [ -x "$prog" ]; then
			run "$tname" "$prog"
		else
			tap_append "$results" fail "$tname" "not built"
		fi
	done
done
echo "1..$(wc -l <"$results")"
! grep -q '^not ok ' "$results"
