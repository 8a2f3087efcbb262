#!/bin/bash
# The guest half of make bench-kernel (tests/bench/kernel.sh boots it in User-Mode Linux,
# where the kernel and its modules run on this machine's own cores; not a test: it prints
# tables).
#
# Drivers take turns on the same data, one set-up at a time, in each of BENCH_ROUNDS rounds:
#   brd            no loop: the ramdisk itself, the copy-only baseline of this kernel
#   stock          the UML kernel's own loop.ko, plain
#   plain          aesloop, plain; -t1: with lo_threads=1 (else the default, one per CPU)
#   aes128 aes256  aesloop single-key (losetup -e AES128/AES256); v2, v3: multi-key AES-128
#   aes128-c v3-c  the same with aes_impl=generic, aesloop's C AES: the fair pair of dm-crypt
#                  here (UML's crypto API has only the C AES); aes128-ssse3: aes_impl=ssse3
#   dm-cbc         dm-crypt aes-cbc-plain, AES-128 (cryptsetup --type plain)
#   dm-single      dm-crypt as cryptsetup opens loop-AES single-key (--type loopaes), dm-v3 v3
#   before-*       an older aesloop build (kernel.sh -b), default workers
# Backings: a 2 GiB brd ramdisk, written once before the first run (UML makes page
# allocation slow, so no job measures brd allocating its pages); and a 1 GiB file in ext4
# on a second brd.  Loops use direct I/O to their backing (--direct-io=on); dm-crypt sits
# on the brd itself, or on a stock loop of the file.
# Jobs: the seeds' benchmark (dd bs=1M, oflag=direct writes then iflag=direct reads of the
# whole device), and fio: sequential 1 MiB and random 4 KiB, read and write, direct at
# queue depth 1 and 16 (libaio), and buffered (psync; writes end with an fsync).
# Writes one line per job and round to /share/bench/results.tsv: MB/s and CPU seconds per
# GiB (the guest's busy time over the whole job, fio's start included: UML's own threads and
# its processes'); tests/bench/kernel.sh prints the tables.
set -u

bench=/share/bench
vectors=/share/vectors
fio=$(command -v fio) || { echo "bench-kernel: no fio" >&2; exit 1; }
rounds=${BENCH_ROUNDS:-3}
runtime=${BENCH_RUNTIME:-2}
out=/share/bench/results.tsv
: >"$out"

die() { echo "bench-kernel: $*" >&2; exit 1; }
say() { echo "bench-kernel: $*" >&2; }

modprobe brd rd_nr=2 rd_size=$((2 * 1024 * 1024)) || die "modprobe brd failed"
modprobe -a dm_crypt aes cbc md5 || die "modprobe dm_crypt failed"
brd=/dev/ram0
say "filling $brd once (brd allocates its pages on the first write)"
dd if=/dev/zero of="$brd" bs=1M count=$(($(blockdev --getsize64 "$brd") >> 20)) oflag=direct \
	status=none || die "cannot fill $brd"
mkfs.ext4 -q -F /dev/ram1 1536M || die "mkfs.ext4 on /dev/ram1 failed"
mkdir -p /mnt/bench
mount /dev/ram1 /mnt/bench || die "cannot mount /dev/ram1"
file=/mnt/bench/data.img
dd if=/dev/zero of="$file" bs=1M count=1024 conv=fsync status=none || die "cannot write $file"

busy_jiffies() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }

# dd_job DEV RW: "MB/s cpu-s/GiB" of the whole device (at most 2 GiB) in 1 MiB direct I/O
dd_job() {
	local dev=$1 rw=$2 b0 b1 t0 t1 bytes
	bytes=$(blockdev --getsize64 "$dev")
	b0=$(busy_jiffies)
	t0=$(date +%s%N)
	if [ "$rw" = write ]; then
		dd if=/dev/zero of="$dev" bs=1M count=$((bytes >> 20)) oflag=direct status=none
	else
		dd if="$dev" of=/dev/null bs=1M count=$((bytes >> 20)) iflag=direct status=none
	fi || die "dd $rw on $dev failed"
	t1=$(date +%s%N)
	b1=$(busy_jiffies)
	awk -v n="$bytes" -v ns="$((t1 - t0))" -v b="$((b1 - b0))" \
		'BEGIN { printf "%.1f %.2f\n", n / (ns / 1e9) / 1e6, b / 100 / (n / 1073741824) }'
}

# fio_job DEV RW BS DEPTH: DEPTH 0 is buffered (psync); "MB/s cpu-s/GiB"
fio_job() {
	local dev=$1 rw=$2 bs=$3 depth=$4 b0 b1 terse args
	args=(--ioengine=libaio --direct=1 --iodepth="$depth")
	[ "$depth" != 0 ] || args=(--ioengine=psync --direct=0 --end_fsync=1)
	sync
	echo 3 >/proc/sys/vm/drop_caches
	b0=$(busy_jiffies)
	terse=$("$fio" --name=j --filename="$dev" --rw="$rw" --bs="$bs" "${args[@]}" \
		--size=1G --runtime="$runtime" --time_based \
		--output-format=terse --terse-version=3 2>/dev/null) || die "fio $rw $bs on $dev failed"
	b1=$(busy_jiffies)
	# terse v3: fields 6/7 read KiB and KiB/s, 47/48 the same for writes; USER_HZ is 100.
	awk -F';' -v b="$((b1 - b0))" '{
		kib = $6 + $47; bw = $7 + $48
		printf "%.1f %.2f\n", bw * 1024 / 1e6, kib ? b / 100 / (kib / 1048576) : 0
	}' <<<"$terse"
}

# record JOB FUNCTION ARGS...: one round's "MB/s cpu" of JOB, or the end of the run.
record() {
	local name=$1 got
	shift
	if ! got=$("$@") || [ -z "$got" ]; then
		die "$cfg on $back: $name failed"
	fi
	echo "$cfg $back $name $round $got" >>"$out"
}

# The jobs on DEV; the backing's name is $back.
run_jobs() {
	local dev=$1 rw bs depth
	record dd-write-1M dd_job "$dev" write
	record dd-read-1M dd_job "$dev" read
	for rw in read write randread randwrite; do
		bs=1M
		[[ "$rw" != rand* ]] || bs=4k
		for depth in 1 16 0; do
			record "$rw-$bs-$([ "$depth" = 0 ] && echo buffered || echo "qd$depth")" \
				fio_job "$dev" "$rw" "$bs" "$depth"
		done
	done
}

loaded=
load() { # MODULE [PARAMS...]: the loop driver, if not the one loaded now
	[ "$loaded" != "$*" ] || return 0
	if [ -e /sys/module/loop ]; then
		rmmod loop || die "rmmod loop failed (a device left attached?)"
	fi
	insmod "$bench/$1.ko" "${@:2}" || die "insmod $* failed"
	loaded="$*"
	[ "$*" != aesloop ] || cat /sys/module/loop/parameters/aes_impl >"$bench/aes_impl"
}

# setup CFG BACKING: sets dev, the device to measure (and dm_under, a loop under dm-crypt);
# teardown undoes it.  Not in a subshell: load() keeps its state in this shell.
dev='' dm_under=''
setup() {
	local cfg=$1 b=$2 key
	dev='' dm_under=''
	case "$cfg" in
	brd) dev=$b; return 0 ;;
	stock) load stock ;;
	plain-t1 | aes128-t1 | v3-t1) load aesloop lo_threads=1 ;;
	*-c) load aesloop aes_impl=generic ;;
	*-ssse3) load aesloop aes_impl=ssse3 ;;
	before-*) load before ;;
	dm-*) load stock ;;
	*) load aesloop ;;
	esac
	case "$cfg" in
	*single* | aes128* | aes256 | before-aes128) key=$vectors/keys1.txt ;;
	v2) key=$vectors/keys64.txt ;;
	*) key=$vectors/keys65.txt ;;
	esac
	case "$cfg" in
	stock | plain* | before-plain) dev=$(losetup.stock --direct-io=on -f --show "$b") ;;
	aes128* | v2 | v3* | before-aes128 | before-v3)
		dev=$(losetup -e AES128 -P "$key" --direct-io=on -f --show "$b") ;;
	aes256) dev=$(losetup -e AES256 -P "$key" --direct-io=on -f --show "$b") ;;
	dm-*)
		if [ ! -b "$b" ]; then
			dm_under=$(losetup.stock --direct-io=on -f --show "$b") || return 1
			b=$dm_under
		fi
		case "$cfg" in
		dm-cbc) cryptsetup open --type plain --cipher aes-cbc-plain --key-size 128 \
			--key-file "$key" "$b" bench ;;
		*) cryptsetup open --type loopaes --key-file "$key" --key-size 128 "$b" bench ;;
		esac >&2 || return 1
		dev=/dev/mapper/bench
		;;
	esac
	[ -b "$dev" ]
}
teardown() {
	case "$1" in
	"$brd") ;;
	/dev/mapper/*)
		cryptsetup close bench
		[ -z "$dm_under" ] || losetup.stock -d "$dm_under"
		;;
	*) losetup -d "$1" ;;
	esac
}

cfgs="brd stock plain-t1 plain aes128-t1 aes128 aes256 v2 v3-t1 v3 aes128-c v3-c aes128-ssse3"
cfgs="$cfgs dm-cbc dm-single dm-v3"
[ ! -f "$bench/before.ko" ] || cfgs="$cfgs before-plain before-aes128 before-v3"
# BENCH_CFGS: some of them only.
cfgs=${BENCH_CFGS:-$cfgs}
# The file in ext4: the main ones only (the run stays under an hour).
file_cfgs=" stock plain aes128 v3 dm-single dm-v3 before-plain before-aes128 before-v3 "
for round in $(seq "$rounds"); do
	for cfg in $cfgs; do
		for back in brd file; do
			b=$brd
			if [ "$back" = file ]; then
				[[ "$file_cfgs" == *" $cfg "* ]] || continue
				b=$file
			fi
			setup "$cfg" "$b" || die "setting up $cfg on $b failed"
			run_jobs "$dev"
			teardown "$dev"
		done
		say "round $round, $cfg done"
	done
done
rmmod loop
umount /mnt/bench
