#!/bin/bash
# Runs every test of aesloop, from a fresh Debian 12 machine (as root): installs
# what is missing, builds, then runs the static checks, the host tests and
# the VM suites.  Every result is one line "PASS name", "FAIL name: why" or
# "SKIP name: why"; the last line is "N passed, N failed, N skipped".
#
#   tests/check.sh            everything
#   KSERIES=6.1 tests/check.sh   the guest kernel series (default 6.1)
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

vm_results() { # the VM harness appends "PASS|FAIL|SKIP NAME" lines itself
	tests/vm/run.sh -q -r "$results" "$@"
}

stage "Dependencies"
step setup-deps tests/deps.sh || exit 1

stage "Build"
kser=${KSERIES:-6.1}
step build-userspace make userspace host-tests vm-tools
step build-losetup make losetup
if kver=$(tests/vm/kernel.sh "$kser" 2>"$log/kernel.log"); then
	kdir=$top/build/kernel/$kver/lib/modules/$kver/build
	if step "build-module-$kver" make module KDIR="$kdir"; then
		# W=1 and objtool must have nothing to say.
		if grep -Ei 'warning|error' "$log/build-module-$kver.log"; then
			echo "FAIL build-module-$kver-warnings: see $log/build-module-$kver.log" | tee -a "$results"
		else
			echo "PASS build-module-$kver-warnings" | tee -a "$results"
		fi
	fi
else
	cat "$log/kernel.log"
	echo "FAIL kernel-$kser: could not fetch the Debian $kser kernel" | tee -a "$results"
fi

stage "Static checks"
record lint tests/lint.sh

stage "Host tests"
record host tests/host/run.sh

stage "VM tests (kernel ${kver:-none})"
if [ -f loop/loop.ko ] && [ -n "${kver:-}" ]; then
	# The guest sees the project and build/vm/share, not ../shared.
	rm -rf build/vm/share/vectors
	mkdir -p build/vm/share
	cp -r "$(tests/host/vectors-dir.sh)" build/vm/share/vectors
	vm_results -k "$kver" -n "$kver/plain" /aesloop/tests/vm/t-plain.sh
	vm_results -k "$kver" -n "$kver/crypt" /aesloop/tests/vm/t-crypt.sh
	record aespipe tests/vm/host-aespipe.sh
else
	echo "SKIP vm: no loop.ko or kernel to test (see the build failures above)" | tee -a "$results"
fi

pass=$(grep -c '^PASS ' "$results")
fail=$(grep -c '^FAIL ' "$results")
skip=$(grep -c '^SKIP ' "$results")
if [ "$fail" -gt 0 ]; then
	stage "Failures"
	grep '^FAIL ' "$results"
fi
echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
