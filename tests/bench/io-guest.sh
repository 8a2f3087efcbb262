#!/bin/bash
# The guest half of make bench-io (tests/bench/io.sh boots it; not a test: it prints a table).
#
# The same fio jobs on the same file in ext4 on a virtio disk, through each loop driver
# io.sh put in /share/bench (stock.ko: the kernel's own; aesloop.ko; before.ko, if given:
# an older aesloop build), one module loaded at a time, the drivers in turn in each of
# three rounds (BENCH_ROUNDS).  Then aesloop's AES-128 single-key and v3 loops against
# dm-crypt (cryptsetup's loopaes mode, over a plain aesloop loop of the same file).  Jobs:
# sequential 1 MiB and random 4 KiB, read and write; "buffered" through the page cache
# of the loop device and of the backing file (psync, one at a time), "direct" with O_DIRECT
# on the loop device and --direct-io=on under it (libaio, 16 in flight).  The encrypted
# loops also get sequential 512 KiB direct reads one at a time (qd1): a single large
# request (128 pages, the most one request of user pages takes), whose decryption
# aesloop shares among its idle workers.
# Prints MB/s, the ratios to the stock driver (plain) or to dm-crypt (encrypted) with
# their spread over the rounds, and the CPU time of the whole guest per GiB moved.  TCG
# makes absolute numbers meaningless and each AES instruction a helper call; ratios from
# one run are what to read.
set -u

bench=/share/bench
fio=$(command -v fio || echo /aesloop/build/vm/lazy/bin/fio)
vectors=/share/vectors
rounds=${BENCH_ROUNDS:-3}
runtime=${BENCH_RUNTIME:-5}
file=/mnt/bench/data.img
out=/tmp/bench-io.tsv
: >"$out"

die() { echo "bench-io: $*" >&2; exit 1; }

modprobe virtio_blk
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -b /dev/vda ] && break; sleep 1; done
mkfs.ext4 -q -F /dev/vda || die "no scratch disk (io.sh passes -d)"
mkdir -p /mnt/bench
mount /dev/vda /mnt/bench || die "cannot mount the scratch disk"
dd if=/dev/zero of="$file" bs=1M count=512 conv=fsync 2>/dev/null || die "cannot write $file"

busy_jiffies() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }

# job DEV RW BS DIRECT [DEPTH]: prints "MB/s cpu-seconds-per-GiB"
job() {
	local dev=$1 rw=$2 bs=$3 direct=$4 engine=psync depth=1 b0 b1 terse
	[ "$direct" = 0 ] || engine=libaio depth=${5:-16}
	sync
	echo 3 >/proc/sys/vm/drop_caches
	b0=$(busy_jiffies)
	terse=$("$fio" --name=j --filename="$dev" --rw="$rw" --bs="$bs" --direct="$direct" \
		--ioengine="$engine" --iodepth="$depth" --size=448M --runtime="$runtime" \
		--time_based --ramp_time=1 --output-format=terse --terse-version=3 2>/dev/null)
	b1=$(busy_jiffies)
	# terse v3: field 6/7 read KiB and KiB/s, 47/48 the same for writes.
	# /proc/stat counts in USER_HZ, 100 on every architecture Linux runs this on.
	awk -F';' -v b="$((b1 - b0))" -v hz=100 '{
		kib = $6 + $47; bw = $7 + $48
		printf "%.1f %.2f\n", bw * 1024 / 1e6, kib ? b / hz / (kib / 1048576) : 0
	}' <<<"$terse"
}

jobs="read:1M write:1M randread:4k randwrite:4k"
# Rewritten as the names in the table: seq-read-1M, rand-read-4k, ...
job_name() { # RW BS DIRECT
	local rw=$1
	case "$rw" in rand*) rw=rand-${rw#rand} ;; *) rw=seq-$rw ;; esac
	echo "$rw-$2-$([ "$3" = 1 ] && echo direct || echo buffered)"
}

# record DRIVER JOB "MB/s cpu": one round's result (the table takes the medians)
record() { echo "$1 $2 $3 $round" >>"$out"; }

load() { # MODULE
	local params=
	# io.sh -p: the parameters of the -b module, words for insmod
	[ "$1" != before ] || params=${BENCH_BEFORE_PARAMS:-}
	rmmod loop 2>/dev/null
	# shellcheck disable=SC2086
	insmod "$bench/$1.ko" $params || die "insmod $1.ko $params failed"
}

drivers="stock aesloop"
[ -f "$bench/before.ko" ] && drivers="stock before aesloop"

for round in $(seq "$rounds"); do
	for drv in $drivers; do
		load "$drv"
		for direct in 0 1; do
			dio=off
			[ "$direct" = 0 ] || dio=on
			dev=$(losetup.stock --direct-io="$dio" -f --show "$file") ||
				die "losetup on $drv failed"
			for j in $jobs; do
				record "$drv" "$(job_name "${j%:*}" "${j#*:}" "$direct")" \
					"$(job "$dev" "${j%:*}" "${j#*:}" "$direct")"
			done
			losetup.stock -d "$dev"
		done
		echo "bench-io: round $round, $drv done" >&2
	done
done

# Encrypted: aesloop's loops (and the older build's) against dm-crypt on the same file.
printf '%s\n' 'correct horse battery staple 2026' >/tmp/key1
cjobs=$jobs
# io.sh -P: the plain loops only
[ -z "${BENCH_PLAIN_ONLY:-}" ] || rounds=0
for round in $(seq "$rounds"); do
	for drv in ${drivers#stock }; do
		load "$drv"
		for mode in single:/tmp/key1 v3:"$vectors/keys65.txt"; do
			dev=$(losetup -e AES128 -P "${mode#*:}" --direct-io=on -f --show "$file") ||
				die "losetup -e AES128 ($mode) on $drv failed"
			for j in $cjobs; do
				record "$drv-${mode%%:*}" "$(job_name "${j%:*}" "${j#*:}" 1)" \
					"$(job "$dev" "${j%:*}" "${j#*:}" 1)"
			done
			record "$drv-${mode%%:*}" seq-read-512k-direct-qd1 "$(job "$dev" read 512k 1 1)"
			losetup -d "$dev"
			[ "$drv" = aesloop ] || continue
			plain=$(losetup.stock --direct-io=on -f --show "$file") || die "plain loop failed"
			cryptsetup open --type loopaes --key-file "${mode#*:}" -s 128 "$plain" bench ||
				die "cryptsetup loopaes ($mode) failed"
			for j in $cjobs; do
				record "dm-crypt-${mode%%:*}" "$(job_name "${j%:*}" "${j#*:}" 1)" \
					"$(job /dev/mapper/bench "${j%:*}" "${j#*:}" 1)"
			done
			record "dm-crypt-${mode%%:*}" seq-read-512k-direct-qd1 \
				"$(job /dev/mapper/bench read 512k 1 1)"
			cryptsetup close bench
			losetup.stock -d "$plain"
		done
	done
done
rmmod loop

# The table.  A ratio is taken within each round (the two drivers' runs of a job are
# minutes apart, not the whole run), and the median of the rounds is printed with the
# lowest and highest: a ratio whose range spans 1.00 is not a difference this run can
# show.  MB/s and CPU s/GiB are the medians of the rounds.
awk -v drivers="$drivers" '
	# bw and cpu by driver, job and round; nr counts the rounds of a driver and job
	{ k = $1 SUBSEP $2; nr[k]++; bw[k, $5] = $3; cpu[k, $5] = $4
	  if ($5 > rounds) rounds = $5
	  if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
	# median of v[1..m], sorted in place; lo and hi left in vmin, vmax
	function median(v, m,   i, j, t) {
		for (i = 2; i <= m; i++)
			for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		vmin = v[1]; vmax = v[m]
		return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
	}
	function med(k, what,   r, m, v) {
		for (r = 1; r <= rounds; r++)
			if ((k, r) in bw) v[++m] = what == "bw" ? bw[k, r] : cpu[k, r]
		return median(v, m)
	}
	# the per-round ratios of driver d to driver b on job j, as "1.02 (0.95-1.10)"
	function ratio(d, b, j,   kd, kb, r, m, v) {
		kd = d SUBSEP j; kb = b SUBSEP j
		for (r = 1; r <= rounds; r++)
			if ((kd, r) in bw && bw[kb, r] > 0) v[++m] = bw[kd, r] / bw[kb, r]
		if (!m) return "-"
		r = median(v, m)
		return m == 1 ? sprintf("%.2f", r) : sprintf("%.2f (%.2f-%.2f)", r, vmin, vmax)
	}
	function row(name, cols, base,   i, c, line) {
		line = sprintf("%-26s", name)
		for (i = 1; i <= cols[0]; i++) {
			c = cols[i] SUBSEP name
			line = line sprintf(" %9s", (c in nr) ? sprintf("%.1f", med(c, "bw")) : "-")
		}
		for (i = 1; i <= cols[0]; i++)
			if (cols[i] != base) line = line sprintf(" %17s", ratio(cols[i], base, name))
		for (i = 1; i <= cols[0]; i++) {
			c = cols[i] SUBSEP name
			line = line sprintf(" %7s", (c in nr) ? sprintf("%.2f", med(c, "cpu")) : "-")
		}
		print line
	}
	END {
		nc = split(drivers, cols, " ")
		cols[0] = nc
		printf "\nplain loops: MB/s; ratio to the stock loop.ko, median (range) of the rounds; CPU seconds per GiB (whole guest)\n"
		printf "%-26s", "job"
		for (i = 1; i <= cols[0]; i++) printf " %9s", cols[i]
		for (i = 1; i <= cols[0]; i++) if (cols[i] != "stock") printf " %17s", cols[i] "/st"
		for (i = 1; i <= cols[0]; i++) printf " %7s", "cpu:" substr(cols[i], 1, 3)
		printf "\n"
		for (j = 1; j <= n; j++) if (order[j] ~ /buffered|direct/ && ("stock" SUBSEP order[j]) in nr) row(order[j], cols, "stock")
		for (m = 1; m <= 2; m++) {
			mode = m == 1 ? "single" : "v3"
			k = 0
			if (drivers ~ /before/) ec[++k] = "before-" mode
			ec[++k] = "aesloop-" mode
			ec[++k] = "dm-crypt-" mode
			ec[0] = k
			if (!(("dm-crypt-" mode SUBSEP "seq-read-1M-direct") in nr)) continue
			printf "\nAES-128 %s, direct: MB/s; ratio to dm-crypt (cryptsetup loopaes), median (range); CPU s/GiB\n", mode
			printf "%-26s", "job"
			for (i = 1; i <= k; i++) printf " %9s", substr(ec[i], 1, 9)
			for (i = 1; i < k; i++) printf " %17s", substr(ec[i], 1, 6) "/dm"
			for (i = 1; i <= k; i++) printf " %7s", "cpu:" substr(ec[i], 1, 3)
			printf "\n"
			for (j = 1; j <= n; j++) if (("dm-crypt-" mode SUBSEP order[j]) in nr) row(order[j], ec, "dm-crypt-" mode)
		}
	}' "$out"
