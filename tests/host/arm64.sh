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
# The programs in qemu-aarch64, by tests/host/run.sh's runner (without the
# shell suites, which test the host's build; the libraries come from /: the
# cross compiler's copies in /usr/aarch64-linux-gnu/lib bring their own C
# library, under which test_changing_source's threads crawl in qemu-user).
"$top/tests/host/run.sh" -r "$results" -b "$build" -p arm64/ \
	-e "qemu-aarch64 -L / -cpu $cpu"
echo "1..$(wc -l <"$results")"
! grep -q '^not ok ' "$results"
