#!/bin/bash
# covers: losetup, partitions, LOOP_SET_BLOCK_SIZE, direct I/O, LOOP_SET_CAPACITY, loop-control, sysfs, races, autoclear, mount, discard, LOOP_CHANGE_FD, compat ioctl, single-key
# VM test: what the stock loop driver does, on ours, with util-linux's own
# tools (losetup.stock, mount) and raw ioctls (lo-ioctl):
#   partscan     losetup -P on an MBR image: loopNp1 appears, goes on detach
#   bsize        losetup -b 4096, and LOOP_SET_BLOCK_SIZE (bad sizes refused;
#                on an encrypted loop, blocks larger than a page)
#   dio          --direct-io=on on a file in ext4 (tmpfs has no O_DIRECT):
#                sysfs dio is 1 and data round-trips; on tmpfs it is refused
#   dio-one-worker  a plain loop's direct I/O is all sent by its first worker
#                (the others are not woken for it); with dio off, all take part;
#                bdev-one-worker: the same for a plain loop over a block device;
#                dio-backlog-spreads: behind a frozen backing file system, past 32
#                requests waiting on the first worker the others take them too
#                sysfs-no-wait: the loop/ attributes, losetup -l and lsblk answer
#                while an ioctl holding lo_mutex waits for I/O behind a frozen file
#                system; sysfs-flap: during flapping LOOP_SET_STATUS64s they show
#                only values that were set
#   dio-4k       --direct-io=on on an ext4 with 4096-byte sectors: a
#                4096-byte loop with direct I/O, as the stock driver
#   capacity     losetup -c after the file grew
#   detach-all   losetup -D
#   control      LOOP_CTL_ADD and LOOP_CTL_REMOVE (a bound one is refused)
#   sysfs-detach-race  attach/detach against readers of loop/backing_file
#   bsize-reset  the block size goes back to 512 on detach
#   mount-loop   mount -o loop FILE, and umount frees the loop (autoclear)
#   discard      blkdiscard on a plain loop punches the file; refused on an
#                encrypted loop, which keeps its data
#   change-fd    LOOP_CHANGE_FD on a read-only loop
#   old-*        the old struct loop_info through the native ioctls
#   compat32-*   32-bit callers through compat_ioctl (old and new structs)
#   fio-*        fio verify=crc32c, random reads and writes, 4 jobs, on an
#                encrypted file-backed loop (with whatever lo_threads run.sh set)
#   fio-dio-*    the same with --direct-io=on under single-key and v3 loops and
#                16 requests in flight (asynchronous reads the workers decrypt)
#   dio-odd-buffer-*  an O_DIRECT write from a buffer 2 KiB into a page, to an
#                encrypted loop with 4096-byte blocks over a file with direct I/O:
#                the ciphertext still goes out in whole blocks, and reads back
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

lo_ioctl=$t_tools/lo-ioctl
fio=$(command -v fio || echo /aesloop/build/vm/lazy/bin/fio)
work=/tmp/t-driver
mkdir -p "$work" /mnt/t /mnt/e
pass='correct horse battery staple 2026'
sysfs() { cat "/sys/block/${1#/dev/}/$2"; }

# worker_runs DEV: "INDEX TIMES" for each worker kthread of DEV (named DEV-INDEX), the
# times it went to sleep (context switches): a worker that was not woken keeps its count.
worker_runs() {
	local p comm
	for p in /proc/[0-9]*; do
		comm=$(cat "$p/comm" 2>/dev/null) || continue
		[[ $comm == "${1#/dev/}"-* ]] || continue
		awk -v i="${comm##*-}" '/^(non)?voluntary_ctxt_switches:/ { n += $2 }
			END { print i, n }' "$p/status"
	done | sort -n
}

# workers_at_rest DEV: worker_runs DEV once udev's probe after a write is over and a worker
# that ran for what came before (a flush goes to any worker) has gone to sleep: two samples
# a second apart agree.
workers_at_rest() {
	local before after _
	udevadm settle 2>/dev/null
	before=$(worker_runs "$1")
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		sleep 1
		after=$(worker_runs "$1")
		[ "$after" = "$before" ] && break
		before=$after
	done
	echo "$before"
}

# workers_verdict NAME MODE BEFORE AFTER: checks which workers ran between the two samples
# of worker_runs: MODE "first" (only the first) or "all".
workers_verdict() {
	local name=$1 mode=$2 before=$3 after=$4
	t_log "$name: workers (index switches) before: ${before//$'\n'/, }; after: ${after//$'\n'/, }"
	# The per-worker verdicts: "ran" or "idle", in index order.
	t_expect_eq "$name" \
		"$(awk -v m="$mode" '{ print (m == "all" || $1 == 0) ? "ran" : "idle" }' <<<"$before" | xargs)" \
		"$(printf '%s\n%s\n' "$before" "$after" | awk -v n="$(wc -l <<<"$before")" '
			NR <= n { b[NR] = $2; next } { print ($2 > b[NR - n] ? "ran" : "idle") }' | xargs)"
}

# worker_spread NAME DEV MODE: reads and writes 4 MiB of DEV with O_DIRECT, 64 KiB at a
# time, and checks which of its workers ran: MODE "first" (only the first) or "all".
worker_spread() {
	local name=$1 dev=$2 mode=$3 before
	before=$(workers_at_rest "$dev")
	if [ "$(wc -l <<<"$before")" -lt 2 ]; then
		t_skip "$name" "one worker per device (or not aesloop's): nothing to spread"
		return
	fi
	if ! dd if="$dev" of=/dev/null bs=64k count=64 iflag=direct 2>/dev/null ||
	   ! dd if="$dev" of="$dev" bs=64k count=64 iflag=direct oflag=direct conv=notrunc \
		2>/dev/null; then
		t_fail "$name" "O_DIRECT reads or writes of 64 KiB on $dev failed"
		return
	fi
	udevadm settle 2>/dev/null
	workers_verdict "$name" "$mode" "$before" "$(worker_runs "$dev")"
}

# backlog_spread NAME DEV MNT: DEV is a plain loop with direct I/O over a file in the file
# system at MNT.  With MNT frozen (as for a snapshot), fio queues 32 + 4 per worker writes of
# 4 KiB on DEV at once: the first worker waits for the file system (kiocb_start_write), and
# past its backlog of 32 (LOOP_SENDER_BACKLOG) the other workers must take requests too.
# After the thaw fio reads every write back.  The freeze is kept short: a worker that
# waits 30 s is a hung task to the guest's detector.
backlog_spread() {
	local name=$1 dev=$2 mnt=$3 before during n i flight=0 pid rc end _
	if [ ! -x "$fio" ]; then
		t_skip "$name" "fio is not in the guest"
		return
	fi
	before=$(workers_at_rest "$dev")
	if [ "$(wc -l <<<"$before")" -lt 2 ]; then
		t_skip "$name" "one worker per device (or not aesloop's): nothing to spread"
		return
	fi
	n=$((32 + 4 * $(wc -l <<<"$before")))
	if [ "$(sysfs "$dev" queue/nr_requests)" -lt "$n" ]; then
		t_skip "$name" "fewer than $n requests can be in flight on $dev"
		return
	fi
	if ! fsfreeze --freeze "$mnt"; then
		t_fail "$name" "fsfreeze --freeze $mnt failed"
		return
	fi
	t_cleanup fsfreeze --unfreeze "$mnt"
	# One submission of all of them; every other block (write:4k skips one after each
	# write), so that no two merge into one request.
	"$fio" --name=backlog --filename="$dev" --ioengine=libaio --direct=1 --rw=write:4k \
		--bs=4k --size=$((n * 8))k --iodepth="$n" --iodepth_batch_submit="$n" \
		--verify=crc32c --verify_fatal=1 --do_verify=1 >"$work/backlog.fio" 2>&1 &
	pid=$!
	# fio starting (it may take a while under KASAN), then up to 15 s by the clock (a
	# sample of worker_runs takes seconds in a slow guest) for all n writes to be in the
	# driver and every worker to have run.
	for ((i = 0; i < 150; i++)); do
		sleep 0.5
		read -r _ flight <"/sys/block/${dev#/dev/}/inflight" || flight=0
		[ "$flight" -gt 0 ] && break
	done
	end=$((SECONDS + 15))
	while [ "$SECONDS" -lt "$end" ]; do
		read -r _ flight <"/sys/block/${dev#/dev/}/inflight" || flight=0
		during=$(worker_runs "$dev")
		[ "$flight" -ge "$n" ] &&
			printf '%s\n%s\n' "$before" "$during" | awk -v n="$(wc -l <<<"$before")" '
				NR <= n { b[NR] = $2; next } $2 <= b[NR - n] { idle = 1 } END { exit idle }' &&
			break
		sleep 0.5
	done
	fsfreeze --unfreeze "$mnt"
	wait "$pid"
	rc=$?
	t_expect_eq "$name-in-flight" "$n" "$flight"
	workers_verdict "$name" all "$before" "$during"
	[ "$rc" -eq 0 ] || t_log "$(cat "$work/backlog.fio")"
	t_expect_eq "$name-fio-verify" 0 "$rc"
}

# sysfs_no_wait NAME DEV MNT: DEV is a plain loop with direct I/O over a file in the file
# system at MNT.  With MNT frozen, a write to DEV waits in the driver, and udisks' autoclear
# round trip (LOOP_SET_STATUS64 with flags alone) waits in its queue freeze for that write,
# holding lo_mutex.  Meanwhile each attribute of DEV's loop/ group, losetup -l (util-linux's
# and the patched one) and lsblk must answer: the ioctl still waits when they are done.  They
# get 12 s by the clock (the attributes are read with the shell's own read, the tools are
# three programs); without the fix they wait for the thaw.  The freeze stays well under the
# guest's 30 s hung-task limit: at most 5 s for the write to be in flight, 5 s for the ioctl
# to wait, 12 s for the readers.
sysfs_no_wait() {
	local name=$1 dev=$2 mnt=$3 wpid spid rpid end flight=0 state="" now v answered=no stalled=no _
	local sys=/sys/block/${dev#/dev/}
	if ! fsfreeze --freeze "$mnt"; then
		t_fail "$name" "fsfreeze --freeze $mnt failed"
		return
	fi
	t_cleanup fsfreeze --unfreeze "$mnt"
	dd if=/dev/zero of="$dev" bs=4k count=1 oflag=direct 2>/dev/null &
	wpid=$!
	end=$((SECONDS + 5))
	while [ "$flight" = 0 ] && [ "$SECONDS" -lt "$end" ]; do
		read -r _ flight <"$sys/inflight" || flight=0
	done
	"$lo_ioctl" set-autoclear "$dev" 0 &
	spid=$!
	end=$((SECONDS + 5))
	while [ "$state" != D ] && [ "$SECONDS" -lt "$end" ]; do
		read -r _ _ state _ <"/proc/$spid/stat" 2>/dev/null || state=""
	done
	(
		for a in backing_file offset sizelimit autoclear partscan dio; do
			read -r v <"$sys/loop/$a"
			echo "$a=$v"
		done
		losetup.stock -l "$dev"
		losetup -l "$dev"
		lsblk "$dev"
	) >"$work/no-wait.out" 2>&1 &
	rpid=$!
	end=$((SECONDS + 12))
	while [ "$SECONDS" -lt "$end" ]; do
		kill -0 "$rpid" 2>/dev/null || { answered=yes; break; }
		sleep 0.2
	done
	read -r _ _ now _ <"/proc/$spid/stat" 2>/dev/null || now=""
	[ "$now" != D ] || stalled=yes
	fsfreeze --unfreeze "$mnt"
	wait "$wpid" "$spid" "$rpid"
	t_expect_eq "$name-ioctl-waited" D "$state"
	t_expect_eq "$name-answered" yes "$answered"
	t_expect_eq "$name-before-the-ioctl" yes "$stalled"
	t_check "$name-backing-file" grep -qx "backing_file=$(losetup.stock -nO BACK-FILE "$dev")" \
		"$work/no-wait.out"
	t_check "$name-lsblk" grep -q "^${dev#/dev/} " "$work/no-wait.out"
	[ "$answered" = yes ] || t_log "$(cat "$work/no-wait.out")"
}

# sysfs_flap NAME DEV: while LOOP_SET_STATUS64 flips DEV between two states (offset 0 and
# size limit 1 MiB, offset 4096 and size limit 2 MiB, autoclear set in both; DEV held open
# so that it stays bound), sysfs shows only values that were set: a torn offset, or
# autoclear read between its clearing and its setting again, would be another.
sysfs_flap() {
	local name=$1 dev=$2 sys=/sys/block/${2#/dev/}/loop fpid bad=0 reads=0 set=0 o l a i
	exec 8<"$dev"
	(
		for ((i = 0; i < 100; i++)); do
			"$lo_ioctl" set-status "$dev" -o 0 -l 1048576 -f 4 || exit 1
			"$lo_ioctl" set-status "$dev" -o 4096 -l 2097152 -f 4 || exit 1
		done
	) &
	fpid=$!
	while kill -0 "$fpid" 2>/dev/null; do
		read -r a <"$sys/autoclear"
		read -r o <"$sys/offset"
		read -r l <"$sys/sizelimit"
		reads=$((reads + 1))
		# Autoclear is 0 only until the first LOOP_SET_STATUS64, and so is the size limit
		# (read after autoclear, so it may have been set meanwhile).
		[ "$a" = 1 ] && set=1
		case "$set:$a:$o:$l" in
		[01]:[01]:0:1048576 | [01]:[01]:4096:2097152 | [01]:[01]:0:2097152 | [01]:[01]:4096:1048576) ;;
		0:0:0:0) ;;
		*) bad=$((bad + 1)); t_log "$name: read autoclear $a, offset $o, sizelimit $l" ;;
		esac
		[ "$set:$a" != 1:0 ] || { bad=$((bad + 1)); t_log "$name: autoclear read 0 after 1"; }
	done
	t_check "$name-flips" wait "$fpid"
	# Back as it was before the last close.
	"$lo_ioctl" set-status "$dev" -o 0 -l 0 -f 0
	exec 8<&-
	t_log "$name: $reads reads"
	t_expect_eq "$name-whole-values" 0 "$bad"
}

# partscan: one primary partition of type 0x83 at LBA 2048, 8192 sectors.
img=$work/parted.img
t_zerofile "$img" 16M
printf '\x00\x00\x00\x00\x83\x00\x00\x00\x00\x08\x00\x00\x00\x20\x00\x00' |
	dd of="$img" bs=1 seek=446 conv=notrunc 2>/dev/null
printf '\x55\xaa' | dd of="$img" bs=1 seek=510 conv=notrunc 2>/dev/null
if dev=$(losetup.stock -P -f --show "$img"); then
	t_check partscan-p1 test -b "${dev}p1"
	t_expect_eq partscan-sysfs 1 "$(sysfs "$dev" loop/partscan)"
	t_expect_eq partscan-p1-size 8192 "$(sysfs "$dev" "${dev#/dev/}p1/size")"
	# A mounted partition claims the whole device: detach is refused.
	if t_run_quiet mkfs.ext4 -q "${dev}p1" && mount "${dev}p1" /mnt/t; then
		t_expect_fail partscan-p1-mounted-clr-busy EBUSY "$lo_ioctl" clr "$dev"
		umount /mnt/t
	else
		t_fail partscan-p1-mount "mkfs or mount of ${dev}p1 failed"
	fi
	losetup.stock -d "$dev"
	t_check partscan-gone-on-detach test ! -e "/sys/block/${dev#/dev/}/${dev#/dev/}p1"
else
	t_fail partscan "losetup -P failed"
fi

# Block size.
if dev=$(losetup.stock -b 4096 -f --show "$img"); then
	t_expect_eq bsize-4096 4096 "$(sysfs "$dev" queue/logical_block_size)"
	t_json_vs_sysfs bsize-4096 "$dev"
	t_check bsize-ioctl-512 "$lo_ioctl" raw "$dev" 0x4C09 512
	t_expect_eq bsize-ioctl-sysfs 512 "$(sysfs "$dev" queue/logical_block_size)"
	t_expect_fail bsize-ioctl-1000 EINVAL "$lo_ioctl" raw "$dev" 0x4C09 1000
	losetup.stock -d "$dev"
fi
if dev=$(losetup -e AES128 -p 3 -b 4096 -f --show "$work/enc4k.img" 3<<<"$pass" 2>/dev/null ||
	 { t_zerofile "$work/enc4k.img" 16M &&
	   losetup -e AES128 -p 3 -b 4096 -f --show "$work/enc4k.img" 3<<<"$pass"; }); then
	t_check bsize-4096-encrypted-ext4 sh -c "mkfs.ext4 -q $dev && mount $dev /mnt/t && echo x > /mnt/t/x && umount /mnt/t"
	# Blocks larger than a page (7.3 takes them on a plain loop) are refused on an
	# encrypted one, which is left as it was: its writes carry the rest of a block
	# from one bounce chunk to the next in a page.
	t_expect_fail bsize-encrypted-8192 EINVAL "$lo_ioctl" raw "$dev" 0x4C09 8192
	t_expect_eq bsize-encrypted-8192-unchanged 4096 "$(sysfs "$dev" queue/logical_block_size)"
	t_check bsize-encrypted-8192-data sh -c "mount $dev /mnt/t && grep -qx x /mnt/t/x && umount /mnt/t"
	losetup -d "$dev"
fi

# Direct I/O, on a file in an ext4 on a loop (nested loops).
t_zerofile "$work/outer.img" 64M
if outer=$(losetup.stock -f --show "$work/outer.img") &&
   t_run_quiet mkfs.ext4 -q "$outer" && mount "$outer" /mnt/e; then
	t_randfile /mnt/e/inner.img 4M
	if dev=$(losetup.stock --direct-io=on -f --show /mnt/e/inner.img); then
		t_expect_eq dio-on 1 "$(sysfs "$dev" loop/dio)"
		t_json_vs_sysfs dio-on "$dev"
		t_expect_eq dio-read "$(t_sha256 /mnt/e/inner.img)" "$(t_sha256 "$dev")"
		t_randfile "$work/patch" 1M
		dd if="$work/patch" of="$dev" bs=64k conv=fsync 2>/dev/null
		t_expect_eq dio-write "$(t_sha256 "$work/patch")" \
			"$(head -c $((1 << 20)) /mnt/e/inner.img | sha256sum | cut -d' ' -f1)"
		# Its worker only sends such a request on: waking others costs, gains nothing.
		worker_spread dio-one-worker "$dev" first
		backlog_spread dio-backlog-spreads "$dev" /mnt/e
		sysfs_no_wait sysfs-no-wait "$dev" /mnt/e
		sysfs_flap sysfs-flap "$dev"
		t_check dio-off "$lo_ioctl" raw "$dev" 0x4C08 0
		t_expect_eq dio-off-sysfs 0 "$(sysfs "$dev" loop/dio)"
		# Synchronous file I/O: the workers share it (and the check sees them run).
		worker_spread dio-off-all-workers "$dev" all
		losetup.stock -d "$dev"
	else
		t_fail dio-on "losetup --direct-io=on failed on ext4"
	fi
	umount /mnt/e
	losetup.stock -d "$outer"
fi
# A plain loop over a block device (another loop) sends its bios on: the first worker too.
t_zerofile "$work/bdev-low.img" 8M
if bdlow=$(losetup.stock -f --show "$work/bdev-low.img"); then
	if bdtop=$(losetup.stock -f --show "$bdlow"); then
		worker_spread bdev-one-worker "$bdtop" first
		losetup.stock -d "$bdtop"
	else
		t_fail bdev-one-worker "losetup on $bdlow failed"
	fi
	losetup.stock -d "$bdlow"
fi
# --direct-io=on on a file system with 4096-byte sectors (an ext4 on a
# loop with -b 4096): as the stock driver, the loop takes the file
# system's 4096-byte sectors and does direct I/O, instead of 512-byte I/O
# that O_DIRECT refuses there.
t_zerofile "$work/fs4k.img" 64M
if low=$(losetup.stock -b 4096 -f --show "$work/fs4k.img") &&
   t_run_quiet mkfs.ext4 -q "$low" && mount "$low" /mnt/e; then
	t_randfile /mnt/e/inner.img 4M
	if dev=$(losetup.stock --direct-io=on -f --show /mnt/e/inner.img); then
		t_expect_eq dio-4k-bsize 4096 "$(sysfs "$dev" queue/logical_block_size)"
		t_expect_eq dio-4k-on 1 "$(sysfs "$dev" loop/dio)"
		t_expect_eq dio-4k-read "$(t_sha256 /mnt/e/inner.img)" "$(t_sha256 "$dev")"
		t_randfile "$work/patch" 1M
		dd if="$work/patch" of="$dev" bs=64k conv=fsync 2>/dev/null
		t_expect_eq dio-4k-write "$(t_sha256 "$work/patch")" \
			"$(head -c $((1 << 20)) /mnt/e/inner.img | sha256sum | cut -d' ' -f1)"
		losetup.stock -d "$dev"
	else
		t_fail dio-4k "losetup --direct-io=on failed on an ext4 with 4096-byte sectors"
	fi
	umount /mnt/e
	losetup.stock -d "$low"
else
	t_fail dio-4k "no ext4 on a loop with 4096-byte blocks"
fi
# tmpfs has O_DIRECT from 6.6 on.  Without it LOOP_SET_DIRECT_IO says
# EINVAL and losetup gives up and detaches, as with the stock driver.
t_randfile "$work/tmpfs.img" 1M
if dd if="$work/tmpfs.img" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null; then
	if dev=$(losetup.stock --direct-io=on -f --show "$work/tmpfs.img"); then
		t_expect_eq dio-tmpfs 1 "$(sysfs "$dev" loop/dio)"
		losetup.stock -d "$dev"
	else
		t_fail dio-tmpfs "tmpfs does O_DIRECT here, but losetup --direct-io=on failed"
	fi
else
	t_expect_fail dio-tmpfs-refused 'Invalid argument' \
		losetup.stock --direct-io=on -f --show "$work/tmpfs.img"
	t_expect_eq dio-tmpfs-nothing-left "" "$(losetup.stock -a)"
fi

# Capacity after growing the file; detach all.
t_zerofile "$work/grow.img" 1M
if dev=$(losetup.stock -f --show "$work/grow.img"); then
	truncate -s 3M "$work/grow.img"
	losetup.stock -c "$dev"
	t_expect_eq capacity $((3 << 11)) "$(sysfs "$dev" size)"
	losetup.stock -f "$work/grow.img"
	t_check detach-all losetup.stock -D
	t_expect_eq detach-all-empty "" "$(losetup.stock -a)"
fi

# loop-control: add, remove, refuse to remove a bound device.
t_expect_eq control-add 40 "$("$lo_ioctl" raw /dev/loop-control 0x4C80 40)"
t_check control-add-node test -b /dev/loop40
t_expect_fail control-add-again EEXIST "$lo_ioctl" raw /dev/loop-control 0x4C80 40
t_check control-remove "$lo_ioctl" raw /dev/loop-control 0x4C81 40
t_check control-remove-gone test ! -e /sys/block/loop40
if dev=$(losetup.stock -f --show "$work/grow.img"); then
	t_expect_fail control-remove-bound EBUSY \
		"$lo_ioctl" raw /dev/loop-control 0x4C81 "${dev#/dev/loop}"
	losetup.stock -d "$dev"
fi

# mount -o loop, and the loop is freed on umount.
t_zerofile "$work/fs.img" 16M
mkfs.ext4 -q -F "$work/fs.img"
if t_check mount-loop mount -o loop "$work/fs.img" /mnt/t; then
	echo data >/mnt/t/f
	mdev=$(losetup.stock -j "$work/fs.img" | cut -d: -f1)
	t_expect_eq mount-loop-autoclear-sysfs 1 "$(sysfs "$mdev" loop/autoclear)"
	t_json_vs_sysfs mount-loop "$mdev"
	umount /mnt/t
	t_expect_eq mount-loop-autoclear "" "$(losetup.stock -a)"
fi

# Detach racing sysfs readers (losetup -a, udev, lsblk read backing_file):
# both sides must finish; a lock-order bug leaves them in D state for good.
# A slow kernel (the debug kernel's) only slows them down, so the check is
# for progress: each attach and detach adds a byte to a file, and 60 s
# without one is a hang.  The loop/ group is there only while the device is
# whole: a reader that finds it never reads an empty backing_file
# (util-linux takes the group to mean "in use" and reads the binding from
# it).  lo-ioctl, not losetup: a process per attach spends TCG's time on
# exec, not on the race.
t_zerofile "$work/race.img" 1M
dev=$(losetup.stock -f)
progress=$work/race.progress
: >"$progress"
"$lo_ioctl" sysfs-race "$dev" "$work/race.img" 200 "$progress" \
	>"$work/race.out" 2>&1 &
racer=$!
last=-1 still=0
while kill -0 "$racer" 2>/dev/null; do
	now=$(wc -c <"$progress")
	if [ "$now" = "$last" ]; then
		still=$((still + 1))
	else
		still=0 last=$now
	fi
	[ "$still" -lt 60 ] || break
	sleep 1
done
if kill -0 "$racer" 2>/dev/null; then
	t_fail sysfs-detach-race "no progress for 60 s after $last steps: $(
		grep -l '^State:.*D' /proc/[0-9]*/status 2>/dev/null | tr '\n' ' ')"
	# Stopped (not waited for: it may be stuck for good), so that the
	# checks after this one have the device to themselves.
	kill "$racer" 2>/dev/null
else
	wait "$racer"
	rc=$?
	t_log "$(cat "$work/race.out")"
	# 2: every attach and detach done, but a read found backing_file empty.
	if [ "$rc" = 0 ] || [ "$rc" = 2 ]; then
		t_pass sysfs-detach-race
		t_expect_eq sysfs-detach-race-never-empty 0 "$rc"
	else
		t_fail sysfs-detach-race "$(tr '\n' ' ' <"$work/race.out")"
	fi
fi
losetup.stock -d "$dev" 2>/dev/null

# The block size does not outlive a binding (as with the stock driver).
if dev=$(losetup.stock -b 4096 -f --show "$work/race.img"); then
	losetup.stock -d "$dev"
	t_expect_eq bsize-reset-on-detach 512 "$(sysfs "$dev" queue/logical_block_size)"
fi

# discard: a hole on a plain loop; refused on an encrypted loop.
t_randfile "$work/disc.img" 4M
if dev=$(losetup.stock -f --show "$work/disc.img"); then
	t_check discard blkdiscard "$dev"
	t_check discard-zeros cmp -n $((4 << 20)) "$work/disc.img" /dev/zero
	losetup.stock -d "$dev"
fi
t_randfile "$work/disc.img" 4M
before=$(t_sha256 "$work/disc.img")
if dev=$(losetup -e AES128 -p 3 -f --show "$work/disc.img" 3<<<"$pass"); then
	t_expect_fail discard-encrypted-refused '' blkdiscard "$dev"
	losetup -d "$dev"
	t_expect_eq discard-encrypted-unchanged "$before" "$(t_sha256 "$work/disc.img")"
fi

# LOOP_CHANGE_FD: read-only loops only, same size.
t_randfile "$work/a.img" 1M
t_randfile "$work/b.img" 1M
t_randfile "$work/c.img" 2M
if dev=$(losetup.stock -r -f --show "$work/a.img"); then
	t_expect_fail change-fd-other-size EINVAL "$lo_ioctl" change-fd "$dev" "$work/c.img" -r
	t_check change-fd "$lo_ioctl" change-fd "$dev" "$work/b.img" -r
	echo 3 >/proc/sys/vm/drop_caches
	t_expect_eq change-fd-reads-new "$(t_sha256 "$work/b.img")" "$(t_sha256 "$dev")"
	t_expect_eq change-fd-sysfs "$work/b.img" "$(sysfs "$dev" loop/backing_file)"
	losetup.stock -d "$dev"
fi
if dev=$(losetup.stock -f --show "$work/a.img"); then
	t_expect_fail change-fd-writable-refused EINVAL "$lo_ioctl" change-fd "$dev" "$work/b.img" -r
	losetup.stock -d "$dev"
fi

# fio with verification on an encrypted loop.
t_zerofile "$work/fio.img" 64M
if [ ! -x "$fio" ] && ! command -v fio >/dev/null; then
	t_skip fio-verify "fio is not in the guest"
elif dev=$(losetup -e AES256 -p 3 -f --show "$work/fio.img" 3<<<"$pass"); then
	t_check fio-verify "$fio" --name=verify --filename="$dev" --rw=randwrite \
		--bs=4k --size=16M --numjobs=4 --offset_increment=16M --iodepth=4 \
		--ioengine=psync --verify=crc32c --verify_fatal=1 --do_verify=1 \
		--direct=1 --group_reporting
	t_check fio-randrw "$fio" --name=mixed --filename="$dev" --rw=randrw \
		--bs=16k --size=16M --numjobs=4 --offset_increment=16M \
		--ioengine=psync --verify=crc32c --verify_fatal=1 --direct=1 \
		--group_reporting
	losetup -d "$dev"
fi

# fio with verification on encrypted loops with direct I/O under them, single-key and v3:
# reads go asynchronously (16 in flight) and the workers decrypt them as they come in.
t_zerofile "$work/dio-outer.img" 96M
if [ ! -x "$fio" ] && ! command -v fio >/dev/null; then
	t_skip fio-dio "fio is not in the guest"
elif outer=$(losetup.stock -f --show "$work/dio-outer.img") &&
     t_run_quiet mkfs.ext4 -q "$outer" && mount "$outer" /mnt/e; then
	t_zerofile /mnt/e/enc.img 64M
	for mode in single v3; do
		keys=(-p 3)
		[ "$mode" = single ] || keys=(-P /share/vectors/keys65.txt)
		if dev=$(losetup -e AES128 "${keys[@]}" --direct-io=on -f --show \
			 /mnt/e/enc.img 3<<<"$pass"); then
			t_expect_eq "fio-dio-$mode-on" 1 "$(sysfs "$dev" loop/dio)"
			t_check "fio-dio-$mode" "$fio" --name=dio --filename="$dev" \
				--rw=randrw --bs=16k --size=32M --numjobs=2 --offset_increment=32M \
				--ioengine=libaio --iodepth=16 --direct=1 --verify=crc32c \
				--verify_fatal=1 --group_reporting
			losetup -d "$dev"
		else
			t_fail "fio-dio-$mode" "losetup -e AES128 --direct-io=on failed on ext4"
		fi
	done
	umount /mnt/e
	losetup.stock -d "$outer"
else
	t_fail fio-dio "no ext4 on a loop for the direct I/O file"
fi
rm -f "$work/dio-outer.img"

# dio-odd-buffer: an O_DIRECT write of 256 KiB from a buffer 2 KiB past a page boundary to an
# encrypted loop with 4096-byte blocks, over a file with direct I/O on an ext4 with 4096-byte
# sectors.  The request's segments are 2K, 4K..., 2K: the ciphertext must still go to the
# file in whole blocks (the file refuses anything else), and read back.
t_zerofile "$work/odd-outer.img" 64M
if outer=$(losetup.stock -b 4096 -f --show "$work/odd-outer.img") &&
   t_run_quiet mkfs.ext4 -q "$outer" && mount "$outer" /mnt/e; then
	t_zerofile /mnt/e/enc.img 16M
	t_randfile "$work/odd.data" 256K
	if dev=$(losetup -e AES128 -p 3 -b 4096 --direct-io=on -f --show /mnt/e/enc.img \
		 3<<<"$pass"); then
		t_expect_eq dio-odd-buffer-dio 1 "$(sysfs "$dev" loop/dio)"
		t_check dio-odd-buffer-write "$lo_ioctl" dio-write "$dev" "$work/odd.data" 2048
		echo 3 >/proc/sys/vm/drop_caches
		t_expect_eq dio-odd-buffer-read "$(t_sha256 "$work/odd.data")" \
			"$(head -c 262144 "$dev" | sha256sum | cut -d' ' -f1)"
		losetup -d "$dev"
	else
		t_fail dio-odd-buffer "losetup -e AES128 -b 4096 --direct-io=on failed"
	fi
	umount /mnt/e
	losetup.stock -d "$outer"
else
	t_fail dio-odd-buffer "no ext4 with 4096-byte sectors on a loop"
fi
rm -f "$work/odd-outer.img" "$work/odd.data"

# The old struct loop_info through the native ioctls: its one name is the file name on a
# keyed device too (not the cipher's), no key byte comes back, and a value it cannot hold (an offset of 2^31) is
# EOVERFLOW, not cut short; an lo_init of 2^32 fits its 64-bit unsigned long.
key=00112233445566778899aabbccddeeff
if n=$("$lo_ioctl" get-free 2>/dev/null); then
	dev=/dev/loop$n
	t_check old-configure "$lo_ioctl" configure "$dev" "$work/a.img" \
		-t 16 -s 16 -k "$key" -n AES128 -N "$work/a.img" -i 0x100000000
	old=$("$lo_ioctl" status-old "$dev")
	t_expect_eq old-status-name "name=$work/a.img" "$(grep '^name=' <<<"$old")"
	t_expect_eq old-status-no-key "encrypt_key=$(printf '0%.0s' {1..64})" \
		"$(grep '^encrypt_key=' <<<"$old")"
	t_check old-status-type sh -c "'$lo_ioctl' status-old $dev | grep -x encrypt_type=16"
	t_check old-clr "$lo_ioctl" clr "$dev"
	truncate -s 3G "$work/big.img"
	t_check old-configure-far "$lo_ioctl" configure "$dev" "$work/big.img" -o 0x80000000
	t_expect_fail old-status-offset-overflow EOVERFLOW "$lo_ioctl" status-old "$dev"
	t_check old-status64-offset sh -c "'$lo_ioctl' status $dev | grep -x offset=2147483648"
	t_check old-clr-far "$lo_ioctl" clr "$dev"
	rm -f "$work/big.img"
else
	t_fail old-get-free "LOOP_CTL_GET_FREE failed"
fi

# 32-bit callers: struct loop_info and loop_info64 through compat_ioctl.  The 32-bit
# struct loop_info's lo_init is 32 bits: one of 2^32 is EOVERFLOW, for root too.
l32=$t_tools/lo-ioctl32
if n=$("$l32" get-free 2>/dev/null); then
	dev=/dev/loop$n
	t_check compat32-configure "$l32" configure "$dev" "$work/a.img" \
		-t 16 -s 16 -k "$key" -n AES128
	t_expect_eq compat32-status64 "$("$lo_ioctl" status "$dev")" "$("$l32" status "$dev")"
	t_check compat32-status-old sh -c "'$l32' status-old $dev | grep -x encrypt_key_size=16"
	t_check compat32-set-status-old "$l32" set-status-old "$dev" -o 512 -t 16 -s 16 -k "$key"
	t_expect_eq compat32-set-status-old-offset 512 "$(sysfs "$dev" loop/offset)"
	t_check compat32-clr "$l32" clr "$dev"
	t_check compat32-configure-init "$lo_ioctl" configure "$dev" "$work/a.img" -i 0x100000000
	t_expect_fail compat32-status-old-init-overflow EOVERFLOW "$l32" status-old "$dev"
	t_check compat32-status64-init sh -c "'$l32' status $dev | grep -x init=4294967296"
	t_check compat32-clr-init "$l32" clr "$dev"
else
	t_skip compat32 "the guest kernel does not run 32-bit programs"
fi
