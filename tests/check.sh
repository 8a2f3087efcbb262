#!/bin/bash
# Runs every test of aesloop, from a fresh Debian 12 machine (as root): installs
# what is missing, builds, then runs the static checks, the host tests and
# the VM suites.  Every result is one line "PASS name", "FAIL name: why" or
# "SKIP name: why"; the last line is "N passed, N failed, N skipped".
#
#   tests/check.sh                everything
#   KSERIES=6.1 tests/check.sh    only the 6.1 guest kernel (default: 6.1 6.12)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
log=$top/build/check
mkdir -p "$log"
results=$log/results.txt
: >"$results"

stage() { printf '\n=== %s\n' "$*"; }

# record NAME CMD...: runs CMD; its PASS/FAIL/SKIP lines are results, and a
# non-zero exit without a FAIL line of its own is one more failure.
record() {
	local name=$1 out=$log/$1.log rc
	shift
	"$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	grep -E '^(PASS|FAIL|SKIP) ' "$out" >>"$results"
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
		echo "FAIL $name: exit status $rc (log: $out)" | tee -a "$results"
	fi
	return "$rc"
}

# step NAME CMD...: one result for the whole command.
step() {
	local name=$1 out=$log/$1.log
	shift
	if "$@" >"$out" 2>&1; then
		echo "PASS $name" | tee -a "$results"
	else
		tail -n 30 "$out"
		echo "FAIL $name: $* (log: $out)" | tee -a "$results"
		return 1
	fi
}

# The wall-clock limit of a VM run of SUITE: about eight times what the
# suite took on this project's two-core machine with other guests running
# (the README has the measured times), and never under 300 s, so that a
# busy machine makes a run slow, not failed.
vm_limit() {
	case "$1" in
	t-driver | t-bdev | t-keys | t-mount | t-swap) echo 1200 ;;
	t-callers | t-abuse | t-crypt | t-multikey) echo 600 ;;
	*) echo 300 ;;
	esac
}

vm_results() { # the VM harness appends "PASS|FAIL|SKIP NAME" lines itself
	local a suite=
	for a in "$@"; do
		case "$a" in
		*/t-*.sh) suite=${a##*/} suite=${suite%.sh} ;;
		esac
	done
	tests/vm/run.sh -q -r "$results" -t "$(vm_limit "$suite")" "$@"
}

stage "Dependencies"
step setup-deps tests/deps.sh || exit 1

stage "Build"
# INTELAES=y: the host tests then cover the AES-NI/VAES paths as well as
# the generic code, which every build keeps.
step build-userspace make userspace host-tests vm-tools INTELAES=y
step build-losetup make losetup
step build-losetup-2.41 make losetup-2.41

stage "Static checks"
record lint tests/lint.sh

stage "Host tests"
record host tests/host/run.sh

stage "Gentoo overlay (ebuild phases run with stand-ins for Portage)"
record gentoo tests/gentoo/run.sh

stage "Benchmark (printed, not asserted: ratios in one run)"
step bench make bench && cat "$log/bench.log"

# The guest sees the project and build/vm/share, not ../shared.
rm -rf build/vm/share/vectors
mkdir -p build/vm/share
cp -r "$(tests/host/vectors-dir.sh)" build/vm/share/vectors

# Each kernel series: build loop.ko against it (W=1 and objtool must say
# nothing), then run the VM suites on it.
kvers=
for kser in ${KSERIES:-6.1 6.12}; do
	stage "Kernel $kser"
	if ! kver=$(tests/vm/kernel.sh "$kser" 2>"$log/kernel-$kser.log"); then
		cat "$log/kernel-$kser.log"
		echo "FAIL kernel-$kser: could not fetch the Debian $kser kernel" | tee -a "$results"
		continue
	fi
	kdir=$top/build/kernel/$kver/lib/modules/$kver/build
	if ! step "build-module-$kver" make module KDIR="$kdir"; then
		echo "SKIP vm-$kver: loop.ko did not build" | tee -a "$results"
		continue
	fi
	if grep -Ei 'warning|error' "$log/build-module-$kver.log"; then
		echo "FAIL build-module-$kver-warnings: see $log/build-module-$kver.log" | tee -a "$results"
	else
		echo "PASS build-module-$kver-warnings" | tee -a "$results"
	fi
	kvers+=" $kver"
	for t in t-plain t-params t-crypt t-multikey t-driver t-bdev t-mount t-keys t-callers; do
		vm_results -k "$kver" -n "$kver/$t" "/aesloop/tests/vm/$t.sh"
	done
	# What t-crypt and t-multikey left in build/vm/share, against aespipe.
	NAME_PREFIX=$kver/ record "aespipe-$kver" tests/vm/host-aespipe.sh
	# The default module has the AES-NI/VAES code (x86_64): the suites above
	# ran it on -cpu max; the path it picks there, and the generic fallback
	# on a CPU without AES-NI (qemu64), with the same answers.
	for cpu in max qemu64; do
		[ "$cpu" = max ] ||
			vm_results -k "$kver" -c "$cpu" -n "$kver/intelaes-$cpu/t-crypt" \
				/aesloop/tests/vm/t-crypt.sh
		vm_results -k "$kver" -c "$cpu" -n "$kver/intelaes-$cpu/aes-path" \
			/aesloop/tests/vm/t-aes-path.sh "$cpu"
	done
	# KEYSCRUB=y: keys move and are inverted every second under I/O.
	if step "build-module-$kver-keyscrub" make module KDIR="$kdir" KEYSCRUB=y; then
		for t in t-crypt t-driver t-callers; do
			vm_results -k "$kver" -n "$kver/keyscrub/$t" "/aesloop/tests/vm/$t.sh"
		done
	fi
	# INTELAES=n: no aes-intel code in loop.ko, the generic C AES in the
	# kernel even on a CPU with AES-NI.
	if step "build-module-$kver-no-intelaes" make module KDIR="$kdir" INTELAES=n &&
	   step "module-$kver-no-intelaes-has-no-aes-intel" \
		sh -c '! nm loop/loop.ko | grep aesloop_intel_'; then
		for t in t-crypt t-multikey; do
			vm_results -k "$kver" -n "$kver/no-intelaes/$t" "/aesloop/tests/vm/$t.sh"
		done
	fi
	step "build-module-$kver-again" make module KDIR="$kdir"
	# Random ioctls and a user without privileges; -u: the module must
	# unload afterwards, so nothing holds a reference.
	vm_results -k "$kver" -u -n "$kver/t-abuse" /aesloop/tests/vm/t-abuse.sh
	# Durability across a hard reset: two boots.
	vm_results -k "$kver" -n "$kver/t-crash-write" /aesloop/tests/vm/t-crash.sh write
	vm_results -k "$kver" -n "$kver/t-crash-check" /aesloop/tests/vm/t-crash.sh check
	# Swap on an encrypted device-backed loop in a 256 MiB guest that
	# dirties more than it has (about 3.5 minutes).
	vm_results -k "$kver" -M 256 -d 512 -n "$kver/t-swap" /aesloop/tests/vm/t-swap.sh
	# The I/O suites again with parallel workers; small bounce sets make
	# device-backed writes span several bios.
	for t in t-driver t-bdev; do
		vm_results -k "$kver" -p "lo_threads=4 lo_prealloc=4" \
			-n "$kver/threads4/$t" "/aesloop/tests/vm/$t.sh"
	done
	# util-linux 2.41 (make losetup-2.41): its losetup, mount, swapon and
	# swapoff with the loop-AES suites, on the newer kernel.
	if [ "$kser" = 6.12 ]; then
		if [ -x build/ul-2.41/bin/losetup ]; then
			for t in t-keys t-mount; do
				vm_results -k "$kver" -U build/ul-2.41 -n "$kver/ul-2.41/$t" \
					"/aesloop/tests/vm/$t.sh"
			done
		else
			echo "SKIP $kver/ul-2.41: build/ul-2.41/bin/losetup is not built" | tee -a "$results"
		fi
	fi
done

pass=$(grep -c '^PASS ' "$results")
fail=$(grep -c '^FAIL ' "$results")
skip=$(grep -c '^SKIP ' "$results")
stage "Per kernel"
for kver in $kvers; do
	echo "$kver: $(grep -c "^PASS $kver/" "$results") passed," \
		"$(grep -c "^FAIL $kver/" "$results") failed," \
		"$(grep -c "^SKIP $kver/" "$results") skipped in the VM"
done
if [ "$fail" -gt 0 ]; then
	stage "Failures"
	grep '^FAIL ' "$results"
fi
echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
