#!/bin/bash
# The debug kernel's tier (make check-debug): every VM suite, the random ioctl abuse test at
# twice CI's length, and the real callers' sequences, on a 7.3 kernel built from Debian's
# source with KASAN, KFENCE, lockdep, DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS_WORK/TIMERS, kmemleak,
# UBSAN and the hung-task detector (tests/vm/debug-kernel.sh; built once, cached in build/).
# A report of any of them fails the run (guest-dmesg), as a WARNING or an oops does.
# Not run by CI: the kernel alone takes half an hour to over an hour to build on two cores
# (tests/README.md has the times). Run it before resolving an issue that touches loop/.
# The last line is "N passed, N failed, N skipped".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
log=$top/build/check-debug
# shellcheck source=tests/check-lib.sh
. "$top/tests/check-lib.sh"

# KASAN and lockdep make the guest several times slower under TCG.
export VM_LIMIT_FACTOR=4

tier_build tests/deps.sh
share_vectors

stage "Debug kernel"
if ! built_kernel debug-kernel tests/vm/debug-kernel.sh; then
	summary
	exit 1
fi
# Each TCG guest runs on one host thread: two lanes of guests at a time, each
# with results of its own (joined into the run's, renumbered, at the end) and a
# log of its own ($log/lane-N.log).  The KEYSCRUB=y module is built first.
lane_a() {
	local t
	for t in t-keys t-plain t-params t-crypt t-multikey t-bdev t-reconfig t-mount; do
		vm_results -k "$kver" -n "$kver/$t" "/aesloop/tests/vm/$t.sh"
	done
	vm_results -k "$kver" -n "$kver/aes-path" /aesloop/tests/vm/t-aes-path.sh max
	vm_results -k "$kver" -M 512 -d 768 -n "$kver/t-swap" /aesloop/tests/vm/t-swap.sh
}

lane_b() {
	local t
	for t in t-driver t-callers; do
		vm_results -k "$kver" -n "$kver/$t" "/aesloop/tests/vm/$t.sh"
	done
	vm_results -k "$kver" -u -e FUZZ_COUNT=40000 -e FUZZ_MT_COUNT=10000 \
		-n "$kver/t-abuse" /aesloop/tests/vm/t-abuse.sh
	for t in t-driver t-bdev t-callers t-crypt; do
		vm_results -k "$kver" -p "lo_threads=4 lo_prealloc=4" \
			-n "$kver/threads4/$t" "/aesloop/tests/vm/$t.sh"
	done
	if [ -n "$keyscrub_ko" ]; then
		for t in t-crypt t-callers; do
			vm_results -k "$kver" -m "$keyscrub_ko" \
				-n "$kver/keyscrub/$t" "/aesloop/tests/vm/$t.sh"
		done
	fi
}

keyscrub_module "$kver"
if module_for "$kver"; then
	kvers=" $kver"
	stage "Suites (two lanes; logs: $log/lane-a.log, $log/lane-b.log)"
	main_results=$results
	for l in a b; do
		(results=$log/lane-$l.txt; : >"$results"; "lane_$l") >"$log/lane-$l.log" 2>&1 &
	done
	wait
	results=$main_results
	for l in a b; do
		tap_relay "$results" <"$log/lane-$l.txt"
	done
else
	result skip "vm-$kver" "loop.ko did not build"
fi

summary
