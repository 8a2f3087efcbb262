#!/bin/bash
# The arm64 tier (make check-arm64): the driver and the ARMv8 Crypto Extensions engine on
# arm64, on this x86_64 machine.
#  - The host tests cross-built for arm64 and run in qemu-aarch64 (tests/host/arm64.sh):
#    the arm64-ce engine against OpenSSL, its ABI and over-read checks, and every other
#    host test program on the arm64 build.
#  - loop.ko cross-built against Debian's arm64 kernels of 6.1 (bookworm) and 7.3
#    (trixie-backports), W=1, no warnings, with the arm64-ce engine in it.
#  - The VM suites in an arm64 guest (qemu-system-aarch64 -M virt -cpu max, TCG): t-plain,
#    t-params, t-crypt, t-multikey, t-driver, t-queue and t-callers; the path chosen
#    (t-aes-path); t-crypt again with aes_impl=generic, the C code that arm64 CPUs without
#    the extensions run (QEMU 7.2 has no arm64 CPU model without them: tests/vm/README.md);
#    what t-crypt and t-multikey wrote read back by aespipe on the host.
#  - Volumes written on one architecture read on the other (t-xarch): an arm64 guest and
#    an x86_64 guest of 6.1, both ways.
# Not run by CI: TCG emulates an arm64 CPU several times slower than an x86 one (tests/README.md
# has the times).  Run it before resolving an issue that touches loop/, aes/ or
# aes-arm64/.  The last line is "N passed, N failed, N skipped".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
log=$top/build/check-arm64
# shellcheck source=tests/check-lib.sh
. "$top/tests/check-lib.sh"
# The suites' time limits, three times the x86 guests': TCG runs arm64 code slower.
export VM_LIMIT_FACTOR=3

tier_build env ARM64=1 tests/deps.sh
step build-vm-tools-arm64 make vm-tools-arm64
step build-losetup-arm64 make losetup-arm64

stage "Host tests on arm64 (qemu-aarch64)"
record host-arm64 tests/host/arm64.sh
share_vectors

# The x86_64 guest of the cross-architecture test: bookworm's 6.1.
x86_ko=
if x86_kver=$(tests/vm/kernel.sh 6.1 2>"$log/kernel-6.1.log") && module_for "$x86_kver"; then
	x86_ko=$log/loop-$x86_kver.ko
	cp loop/loop.ko "$x86_ko"
else
	result fail kernel-6.1 "no x86_64 6.1 kernel or loop.ko for the cross-architecture test"
fi

for series in 6.1-arm64 7.3-arm64; do
	stage "arm64 $series"
	if ! kver=$(tests/vm/kernel.sh "$series" 2>"$log/kernel-$series.log"); then
		sed 's/^/# /' "$log/kernel-$series.log"
		result fail "kernel-$series" "could not fetch the Debian $series kernel"
		continue
	fi
	if ! module_for "$kver"; then
		result skip "vm-$kver" "loop.ko did not build"
		continue
	fi
	ko=$log/loop-$kver.ko
	cp loop/loop.ko "$ko"
	# shellcheck disable=SC2016 # sh expands $1
	step "module-$kver-has-arm64-ce" sh -c 'nm "$1" | grep -q aesloop_cbc_enc_ce' sh "$ko"
	kvers+=" $kver"
	share=$(share_for "$kver")
	vm=(-k "$kver" -m "$ko" -s "$share")
	for t in t-plain t-params t-crypt t-multikey t-driver t-callers; do
		vm_results "${vm[@]}" -n "$kver/$t" "/aesloop/tests/vm/$t.sh"
	done
	vm_results "${vm[@]}" -d 128 -n "$kver/t-queue" /aesloop/tests/vm/t-queue.sh
	NAME_PREFIX=$kver/ record "aespipe-$kver" tests/vm/host-aespipe.sh "$share/crypt"
	vm_results "${vm[@]}" -n "$kver/aes-path" /aesloop/tests/vm/t-aes-path.sh max
	vm_results "${vm[@]}" -p aes_impl=generic -n "$kver/generic/t-crypt" \
		/aesloop/tests/vm/t-crypt.sh

	# Both ways across architectures, through one share.
	[ -n "$x86_ko" ] || continue
	x86=(-k "$x86_kver" -m "$x86_ko" -s "$share")
	vm_results "${vm[@]}" -n "$kver/xarch-write" /aesloop/tests/vm/t-xarch.sh write
	vm_results "${x86[@]}" -n "$kver/xarch-read-on-x86_64" /aesloop/tests/vm/t-xarch.sh read
	vm_results "${x86[@]}" -n "$kver/xarch-write-on-x86_64" /aesloop/tests/vm/t-xarch.sh write
	vm_results "${vm[@]}" -n "$kver/xarch-read" /aesloop/tests/vm/t-xarch.sh read
done

summary
