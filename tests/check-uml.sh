#!/bin/bash
# The User-Mode Linux tier (make check-uml): loop.ko on this machine's own cores.  A UML
# kernel runs as an ordinary process, so the driver, the block layer and the AES-NI/VAES
# engines run natively, where QEMU's TCG emulates every instruction and hides races behind
# its slowness.  Kernels: UML built from Debian's linux-source-6.1 (one CPU: 6.1's UML has
# no SMP) and linux-source-7.3 (two CPUs), by tests/uml/kernel.sh, once, cached in build/.
# Suites: t-plain, t-crypt, t-multikey and t-driver, each with the guest's kernel log
# checked as in the QEMU tiers, and what t-crypt and t-multikey wrote read back by aespipe;
# then t-crypt and t-driver with lo_threads=4, so that reads are shared among workers and
# I/O spread over them on 6.1's single CPU too (by default a device has one worker per CPU);
# t-aes-path (the engine chosen on this CPU) and t-params; on 7.3, t-crypt and t-multikey
# with aes_impl=ssse3 (the constant-time engine, which only CPUs without AES-NI choose by
# themselves: this runs it in the kernel's workers at native speed) and t-driver with the
# KEYSCRUB=y module (keys moved under I/O, beside detach and LOOP_CHANGE_FD).
# Not run by CI: the two kernels take about 25 minutes to build on two cores (tests/README.md
# has the times).  Run it before resolving an issue that touches loop/ or aes-intel/.
# The last line is "N passed, N failed, N skipped".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
log=$top/build/check-uml
# shellcheck source=tests/check-lib.sh
. "$top/tests/check-lib.sh"

tier_build tests/deps.sh
share_vectors

for series in 6.1 7.3; do
	stage "UML $series"
	built_kernel "uml-kernel-$series" tests/uml/kernel.sh "$series" || continue
	keyscrub_ko=
	[ "$series" != 7.3 ] || keyscrub_module "$kver"
	if ! module_for "$kver"; then
		result skip "uml-$kver" "loop.ko did not build"
		continue
	fi
	ko=$log/loop-$kver.ko
	cp loop/loop.ko "$ko"
	share=$(share_for "$kver")
	vm=(-k "$kver" -m "$ko" -s "$share")
	for t in t-plain t-crypt t-multikey t-driver; do
		vm_results "${vm[@]}" -n "$kver/$t" "/aesloop/tests/vm/$t.sh"
	done
	NAME_PREFIX=$kver/ record "aespipe-$kver" tests/vm/host-aespipe.sh "$share/crypt"
	for t in t-crypt t-driver; do
		vm_results "${vm[@]}" -p lo_threads=4 -n "$kver/threads4/$t" "/aesloop/tests/vm/$t.sh"
	done
	vm_results "${vm[@]}" -n "$kver/aes-path" /aesloop/tests/vm/t-aes-path.sh max
	vm_results "${vm[@]}" -n "$kver/t-params" /aesloop/tests/vm/t-params.sh
	[ "$series" = 7.3 ] || continue
	for t in t-crypt t-multikey; do
		vm_results "${vm[@]}" -p aes_impl=ssse3 -n "$kver/ssse3/$t" "/aesloop/tests/vm/$t.sh"
	done
	if [ -n "$keyscrub_ko" ]; then
		vm_results -k "$kver" -m "$keyscrub_ko" -s "$share" -n "$kver/keyscrub/t-driver" \
			/aesloop/tests/vm/t-driver.sh
	else
		result fail "$kver/keyscrub" "the KEYSCRUB=y loop.ko did not build"
	fi
done

summary
