#!/bin/bash
# Usage: tests/bench/io.sh [-k KVER] [-b BEFORE.ko [-p PARAMS]] [-m] [-P]   (make bench-io)
# The in-guest I/O comparison: boots a QEMU (TCG) guest with the Debian kernel KVER (a
# release or a series, default 7.3) and runs tests/bench/io-guest.sh there, which prints
# aesloop's plain loops against the kernel's own loop.ko and its encrypted loops against
# dm-crypt, as ratios from the one run.  -b adds an older aesloop module (built for the
# same kernel) as a third driver, for before/after tables; -p gives it module parameters
# (-b loop/loop.ko -p lo_threads=1 measures a setting against the default).  -P runs only
# the plain loops' table (about 10 minutes, 15 with -b).  -m runs the guest's two CPUs on
# two host threads (multi-threaded TCG) instead of in turn on one, as the tests do: the only
# way to see work shared among CPUs (aesloop's workers, dm-crypt's) here; such boots are less
# reliable (tests/vm/run.sh says why).  Builds this tree's loop.ko for KVER first.  About 25
# minutes under TCG (30 with -b).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
die() { echo "io.sh: $*" >&2; exit 2; }

kver=7.3 before='' params='' plain_only=''
while getopts k:b:p:mP opt; do
	case $opt in
	k) kver=$OPTARG ;;
	b) before=$(realpath "$OPTARG") ;;
	p) params=$OPTARG ;;
	m) export VM_TCG_THREAD=multi ;;
	P) plain_only=1 ;;
	*) die "usage: tests/bench/io.sh [-k KVER] [-b BEFORE.ko [-p PARAMS]] [-m] [-P]" ;;
	esac
done
[ -z "$params" ] || [ -n "$before" ] || die "-p gives the parameters of the -b module"
kver=$("$top/tests/vm/kernel.sh" "$kver") || die "kernel.sh $kver failed"
tree=$top/build/kernel/$kver/lib/modules/$kver

share=$top/build/vm/share
rm -rf "$share/bench"
mkdir -p "$share/bench"
stock=$(find "$tree/kernel/drivers/block" -maxdepth 1 -name 'loop.ko*' | head -n 1)
[ -n "$stock" ] || die "no stock loop.ko in $tree"
case $stock in
*.xz) xz -dc "$stock" >"$share/bench/stock.ko" ;;
*.zst) zstd -qdc "$stock" >"$share/bench/stock.ko" ;;
*) cp "$stock" "$share/bench/stock.ko" ;;
esac
"$top/tests/vm/kmake.sh" "$kver" module KDIR="$tree/build" >/dev/null
cp "$top/loop/loop.ko" "$share/bench/aesloop.ko"
[ -z "$before" ] || cp "$before" "$share/bench/before.ko"
rm -rf "$share/vectors"
cp -r "$("$top/tests/host/vectors-dir.sh")" "$share/vectors"

limit=3600
[ -z "$before" ] || limit=5400
# BENCH_ROUNDS and BENCH_RUNTIME (seconds per job) pass through to the guest.
exec "$top/tests/vm/run.sh" -k "$kver" -m none -d 1200 -t "$limit" \
	-e "BENCH_BEFORE_PARAMS=$params" -e "BENCH_PLAIN_ONLY=$plain_only" \
	-e "BENCH_ROUNDS=${BENCH_ROUNDS:-3}" -e "BENCH_RUNTIME=${BENCH_RUNTIME:-5}" \
	/aesloop/tests/bench/io-guest.sh
