#!/bin/bash
# Usage: tests/bench/kernel.sh [-k SERIES] [-b BEFORE.ko] [-r ROUNDS] [-T]   (make bench-kernel)
# The driver at this CPU's own speed: boots a User-Mode Linux kernel (tests/uml/kernel.sh,
# default series 7.3, two CPUs) and runs tests/bench/kernel-guest.sh there: the stock loop,
# aesloop plain and encrypted (single-key AES-128 and AES-256, v2, v3; one worker and the
# default) and dm-crypt, taking turns on the same brd ramdisk and on a file in ext4, with
# the seeds' dd benchmark and fio.  Then prints the tables: MB/s, CPU seconds per GiB,
# same-round ratios (median and range of the rounds), the encrypted loops against the
# engine's own contiguous rate (aesloop-bench --engines on this host just before the boot:
# the same code, the same CPU, no kernel around it), and the
# single-key figures beside loop-AES's.  -b adds an older aesloop module built for the same
# UML kernel (before/after in one run).  About 40 minutes with 3 rounds (BENCH_RUNTIME=2
# seconds per fio job; BENCH_CFGS="stock aes128 ..." for some of the set-ups only).
# Builds this tree's loop.ko for the UML kernel first (in loop/).
# -T prints the tables of the last run again (build/vm/share-bench/bench), without a run.
# Not a test: nothing fails on a slow figure.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
die() { echo "bench/kernel.sh: $*" >&2; exit 2; }

series=7.3 before='' rounds=${BENCH_ROUNDS:-3} tables_only=''
while getopts k:b:r:T opt; do
	case $opt in
	k) series=$OPTARG ;;
	b) before=$(realpath "$OPTARG") ;;
	r) rounds=$OPTARG ;;
	T) tables_only=1 ;;
	*) die "usage: tests/bench/kernel.sh [-k SERIES] [-b BEFORE.ko] [-r ROUNDS] [-T]" ;;
	esac
done
kver=$("$top/tests/uml/kernel.sh" "$series") || die "uml/kernel.sh $series failed"
tree=$top/build/kernel/$kver/lib/modules/$kver

# A share of its own: build/vm/share is the test runs' (its vectors too).
share=$top/build/vm/share-bench
bench=$share/bench
# The run: the modules and vectors in the share, the engines' bound, the guest.
run_bench() {
	rm -rf "$share"
	mkdir -p "$bench"
	cp "$tree/kernel/drivers/block/loop.ko" "$bench/stock.ko"
	"$top/tests/vm/kmake.sh" "$kver" module KDIR="$tree/build" >/dev/null
	cp "$top/loop/loop.ko" "$bench/aesloop.ko"
	[ -z "$before" ] || cp "$before" "$bench/before.ko"
	cp -r "$("$top/tests/host/vectors-dir.sh")" "$share/vectors"
	make -C "$top" -s INTELAES=y build/bin/aesloop-bench >/dev/null
	echo "bench/kernel.sh: the engines on this host (aesloop-bench --engines)" >&2
	"$top/build/bin/aesloop-bench" --tsv --engines >"$bench/engines.tsv" ||
		die "aesloop-bench failed"

	# 2 GiB + 1.5 GiB of brd, the page cache and fio's buffers.
	"$top/tests/vm/run.sh" -k "$kver" -s "$share" -m none -M 7168 -C 2 -t 7200 \
		-e "BENCH_ROUNDS=$rounds" -e "BENCH_RUNTIME=${BENCH_RUNTIME:-2}" -e "BENCH_CFGS=${BENCH_CFGS:-}" \
		/aesloop/tests/bench/kernel-guest.sh || die "the guest run failed (build/vm/last)"
}

[ -n "$tables_only" ] || run_bench
[ -s "$bench/results.tsv" ] || die "no results in ${bench#"$top"/}"

cpu=$(sed -n 's/^model name[[:space:]]*: //p;T;q' /proc/cpuinfo)
AESLOOP_IMPL=$(cat "$bench/aes_impl" 2>/dev/null || echo unknown)
export AESLOOP_IMPL
echo
echo "bench-kernel $(date -u +%Y-%m-%d): UML $kver on $cpu, $(nproc) host CPUs, 2 guest CPUs;" \
	"aesloop's engine $AESLOOP_IMPL"
awk -F'[ \t]' -v seedw=1100 -v seedr=1300 '
	FILENAME ~ /engines/ { if ($1 == "inproc" && $3 == 1) eng[$2, $4] = $5; next }
	# cfg backing job round MB/s cpu
	{ k = $1 SUBSEP $2 SUBSEP $3; bw[k, $4] = $5; cpu[k, $4] = $6; has[k] = 1
	  if ($4 > rounds) rounds = $4
	  if (!($1 in cseen)) { cseen[$1] = 1; cfg[++nc] = $1 }
	  if (!($3 in jseen)) { jseen[$3] = 1; job[++nj] = $3 } }
	function median(v, m,   i, j, t) {
		for (i = 2; i <= m; i++)
			for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		lo = v[1]; hi = v[m]
		return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
	}
	function med(k, a,   r, m, v) {
		for (r = 1; r <= rounds; r++) if ((k, r) in bw) v[++m] = a == "bw" ? bw[k, r] : cpu[k, r]
		return m ? median(v, m) : -1
	}
	# same-round ratio of a to b on backing x, job j: "1.02 (0.95-1.10)"
	function ratio(a, b, x, j,   ka, kb, r, m, v) {
		ka = a SUBSEP x SUBSEP j; kb = b SUBSEP x SUBSEP j
		for (r = 1; r <= rounds; r++) if ((ka, r) in bw && bw[kb, r] > 0) v[++m] = bw[ka, r] / bw[kb, r]
		if (!m) return "-"
		r = median(v, m)
		return m == 1 ? sprintf("%.2f", r) : sprintf("%.2f (%.2f-%.2f)", r, lo, hi)
	}
	function table(title, what, fmt,   x, i, j, k, line) {
		for (x = 1; x <= 2; x++) {
			b = x == 1 ? "brd" : "file"
			printf "\n%s, %s\n%-22s", title, b == "brd" ? "over a 2 GiB brd" : "over a 1 GiB file in ext4 on a brd", "job"
			for (i = 1; i <= nc; i++) if (has[cfg[i], b, job[1]]) printf " %9s", substr(cfg[i], 1, 9)
			printf "\n"
			for (j = 1; j <= nj; j++) {
				line = sprintf("%-22s", job[j])
				for (i = 1; i <= nc; i++) {
					k = cfg[i] SUBSEP b SUBSEP job[j]
					if (has[cfg[i], b, job[1]]) line = line sprintf(" %9s", k in has ? sprintf(fmt, med(k, what)) : "-")
				}
				print line
			}
		}
	}
	function ratios(title, n, pa, pb,   x, i, j, line) {
		for (x = 1; x <= 2; x++) {
			b = x == 1 ? "brd" : "file"
			line = ""
			for (i = 1; i <= n; i++) if (has[pa[i], b, job[1]] && has[pb[i], b, job[1]]) line = line sprintf(" %17s", pa[i] "/" pb[i])
			if (line == "") continue
			printf "\n%s, %s\n%-22s%s\n", title, b, "job", line
			for (j = 1; j <= nj; j++) {
				line = sprintf("%-22s", job[j])
				for (i = 1; i <= n; i++) if (has[pa[i], b, job[1]] && has[pb[i], b, job[1]]) line = line sprintf(" %17s", ratio(pa[i], pb[i], b, job[j]))
				print line
			}
		}
	}
	END {
		table("MB/s (median of " rounds " rounds)", "bw", "%.0f")
		table("CPU seconds per GiB (guest busy time)", "cpu", "%.2f")
		n = split("stock plain plain-t1 aes128 v3 aes128 aes128-c v3-c aes128-ssse3 aes128 v3 before-plain before-aes128 before-v3", pa, " ")
		split("brd stock stock dm-single dm-v3 dm-cbc dm-single dm-v3 dm-single aes128-t1 v3-t1 plain aes128 v3", pb, " ")
		ratios("same-round ratios, median (range)", n, pa, pb)
		# The bound: the engine aes_impl names, on a contiguous buffer, one thread.
		ne = split("aes128-t1 aes256 v2 v3-t1 aes128-c v3-c aes128-ssse3", ec, " ")
		split("single single-aes256 v2 v3 single v3 single", eo, " ")
		impl = ENVIRON["AESLOOP_IMPL"]
		printf "\nagainst the engine (%s; -c: generic, -ssse3: ssse3; aesloop-bench, contiguous, 1 thread), over the brd\n%-22s", impl, "job"
		for (i = 1; i <= ne; i++) printf " %12s", ec[i]
		printf "\n"
		for (j = 1; j <= nj; j++) {
			if (job[j] !~ /^dd-|1M-qd/) continue
			line = sprintf("%-22s", job[j])
			for (i = 1; i <= ne; i++) {
				col = ec[i] ~ /-c$/ ? "generic" : ec[i] ~ /-ssse3$/ ? "ssse3" : impl
				op = eo[i]; sub(/^single-aes256/, "single-X-aes256", op)
				dir = job[j] ~ /write/ ? "enc" : "dec"
				key = op ~ /-X-/ ? op : op "-" dir
				sub(/-X-/, "-" dir "-", key)
				e = eng[key, col]
				k = ec[i] SUBSEP "brd" SUBSEP job[j]
				line = line sprintf(" %12s", (k in has) && e > 0 ? sprintf("%.2f", med(k, "bw") / e) : "-")
			}
			print line
		}
		printf "\nthe seeds (loop-AES, AES-NI, one 2011 thread: %d MB/s write, %d read) beside aesloop AES-128 single-key, one worker, brd:\n", seedw, seedr
		w = med("aes128-t1" SUBSEP "brd" SUBSEP "dd-write-1M", "bw"); r = med("aes128-t1" SUBSEP "brd" SUBSEP "dd-read-1M", "bw")
		printf "dd write %.0f MB/s (%.1fx), read %.0f MB/s (%.1fx)\n", w, w / seedw, r, r / seedr
	}' "$bench/engines.tsv" "$bench/results.tsv"
