#!/bin/bash
# covers: block device backing, test vectors, single-key, cryptsetup compat, flush, LOOP_CHANGE_FD, LOOP_SET_BLOCK_SIZE, LOOP_SET_STATUS64, direct I/O, queue limits, discard, read-only
# VM test: loops whose backing file is a block device (brd's /dev/ram0).
# Their I/O goes to the device as bios, with bounce pages each worker
# preallocated (lo_prealloc), no file or page cache in between.
#   vector-*     plain64.img through an encrypted loop on the device gives
#                the ciphertext of ../shared/vectors (offsets 0 and 4096)
#   ext4         an encrypted ext4 survives detach and attach; no plaintext
#                on the device
#   cs-read      cryptsetup reads the device aesloop wrote
#   plain        a plain loop on the device reads and writes it as it is
#   fio-*        fio verify on an encrypted device-backed loop
#   flush, fua   a flush, and an O_DSYNC write, on the loop reach the backing
#                device as flushes
#   switch-*, bind-dirty-*, change-fd-dirty-*  data written before the I/O
#                path changes between the backing device's page cache and
#                bios (LOOP_SET_BLOCK_SIZE, LOOP_SET_STATUS offset, a bind or
#                LOOP_CHANGE_FD over another opener's dirty pages) reads back,
#                and no old cached page is written over newer data later
#   cfd-FROM-TO-*  LOOP_CHANGE_FD from a file or device to a file or device,
#                plain and encrypted, buffered and direct: the new store is
#                read, flushed and named in sysfs, also once the old is gone
#   4kn-*        a 512-byte loop over a 4096-byte device says at setup that
#                it goes through the page cache; with -b 4096 or
#                --direct-io=on it has 4096-byte blocks and sends bios
#   max-hw-*, mirror-*, discard-*, write-zeroes-*, rotational-*, write-cache-*
#                queue limits as the stock driver's: 1280 KiB requests,
#                discard and write-zeroes mirror the backing device (none on
#                brd, none when encrypted), its rotational flag; the write
#                cache is the device's when bios go to it
#   big-requests-*  1280 KiB requests average more than 127 KiB and read back
#   ro-backing-*  writes fail once the backing device is made read-only
#   req-sync-*, ioprio-*  REQ_SYNC and the I/O priority of a request reach
#                the backing device's bios and requests (tracefs)
#   read-error-* a read through the backing device's page cache that meets an
#                error after some data fails, instead of reading zeros
#   write-error-* an encrypted write whose pieces in flight meet an error
#                target fails as a whole, and the loop goes on working
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

vectors=/share/vectors
pass='correct horse battery staple 2026'
mkdir -p /mnt/t
if ! modprobe brd rd_nr=1 rd_size=65536 || [ ! -b /dev/ram0 ]; then
	t_fail brd "cannot load brd"
	exit 1
fi
ram=/dev/ram0
attach() { losetup -e AES128 -p 3 "$@" -f --show "$ram" 3<<<"$pass"; }
attach_to() { losetup -e AES128 -p 3 -f --show "$1" 3<<<"$pass"; }

for c in aes128-pass:0 aes128-pass-iv8:8; do
	name=${c%%:*} sector=${c#*:}
	want=$(awk -F'\t' -v c="$name" '$1 == c { print $8 }' "$vectors/vectors.tsv")
	if dev=$(attach -o $((sector * 512))); then
		dd if="$vectors/plain64.img" of="$dev" bs=32768 conv=fsync 2>/dev/null
		t_expect_eq "read-$name" "$(t_sha256 "$vectors/plain64.img")" \
			"$(head -c 32768 "$dev" | sha256sum | cut -d' ' -f1)"
		losetup -d "$dev"
		t_expect_eq "vector-$name" "$want" "$(dd if=$ram bs=512 skip="$sector" count=64 2>/dev/null | sha256sum | cut -d' ' -f1)"
	else
		t_fail "vector-$name" "losetup -e AES128 on $ram failed"
	fi
done

dd if=/dev/zero of=$ram bs=1M count=64 2>/dev/null
if dev=$(attach) && t_run_quiet mkfs.ext4 -q "$dev" && mount "$dev" /mnt/t &&
   t_randfile /mnt/t/big 4M &&
   yes AESLOOP-PLAINTEXT-MARKER | head -c $((1 << 20)) >/mnt/t/marker &&
   sum=$(sha256sum </mnt/t/big) && umount /mnt/t && losetup -d "$dev" &&
   dev=$(attach) && mount "$dev" /mnt/t &&
   [ "$(sha256sum </mnt/t/big)" = "$sum" ] && umount /mnt/t && losetup -d "$dev"; then
	t_pass ext4
else
	t_fail ext4 "encrypted ext4 on a device-backed loop did not survive detach and attach"
	umount /mnt/t 2>/dev/null
fi
if grep -q -F AESLOOP-PLAINTEXT-MARKER $ram; then
	t_fail no-plaintext "the device holds plaintext"
else
	t_pass no-plaintext
fi
printf '%s\n' "$pass" >/tmp/key1
if cryptsetup open --type loopaes --key-file /tmp/key1 -s 128 $ram bd &&
   mount -o ro /dev/mapper/bd /mnt/t; then
	t_expect_eq cs-read "$sum" "$(sha256sum </mnt/t/big)"
	umount /mnt/t
	cryptsetup close bd
else
	t_fail cs-read "cryptsetup could not open the device"
fi

# A plain loop on the device: the same bytes both ways.
t_randfile /tmp/chunk 1M
if dev=$(losetup.stock -o 1048576 -f --show $ram); then
	dd if=/tmp/chunk of="$dev" bs=64k conv=fsync 2>/dev/null
	t_expect_eq plain-write "$(t_sha256 /tmp/chunk)" \
		"$(dd if=$ram bs=1M skip=1 count=1 2>/dev/null | sha256sum | cut -d' ' -f1)"
	t_expect_eq plain-read "$(t_sha256 /tmp/chunk)" \
		"$(head -c $((1 << 20)) "$dev" | sha256sum | cut -d' ' -f1)"
	losetup.stock -d "$dev"
fi

fio=$(command -v fio || echo /aesloop/build/vm/lazy/bin/fio)
if dev=$(attach); then
	t_check fio-verify "$fio" --name=verify --filename="$dev" --rw=randwrite \
		--bs=4k --size=8M --numjobs=4 --offset_increment=8M --iodepth=4 \
		--ioengine=psync --verify=crc32c --verify_fatal=1 --do_verify=1 \
		--direct=1 --group_reporting
	t_check fio-randrw "$fio" --name=mixed --filename="$dev" --rw=randrw \
		--bs=64k --size=8M --numjobs=4 --offset_increment=8M \
		--ioengine=psync --verify=crc32c --verify_fatal=1 --direct=1 \
		--group_reporting
	losetup -d "$dev"
fi

# Flush and FUA reach the backing device.  brd has no write cache, so the
# backing device here is a plain loop on a file (ours advertises a volatile
# cache and counts flushes in field 16 of its stat); the encrypted loop on
# it takes the bio path.
flushes() { awk '{ print $16 }' "/sys/block/${1#/dev/}/stat"; }
t_zerofile /tmp/lower.img 16M
if lower=$(losetup.stock -f --show /tmp/lower.img) && dev=$(attach_to "$lower"); then
	t_expect_eq flush-backing-has-cache 'write back' \
		"$(cat "/sys/block/${lower#/dev/}/queue/write_cache")"
	before=$(flushes "$lower")
	dd if=/dev/urandom of="$dev" bs=4k count=4 conv=fsync 2>/dev/null
	after=$(flushes "$lower")
	t_check flush-reaches-backing test "$after" -gt "$before"
	# O_SYNC direct writes (busybox dd has no oflag=dsync) are FUA writes; without FUA on our queue the
	# block layer follows each with a flush, which must reach the file.
	before=$after
	t_run_quiet "$fio" --name=fua --filename="$dev" --rw=write --bs=4k \
		--size=16k --direct=1 --sync=1 --ioengine=psync
	after=$(flushes "$lower")
	t_check fua-reaches-backing test "$after" -ge $((before + 4))
	losetup -d "$dev"
	losetup.stock -d "$lower"
else
	t_fail flush "could not stack an encrypted loop on a plain one"
fi

# --- I/O path switches ---------------------------------------------------
# A loop on a block device sends bios straight to it when its offset and
# block size suit the device's logical block size, and goes through the
# device's page cache otherwise.  Each switch between the two (and a bind
# over pages another opener left dirty) must write back and drop that page
# cache: else what was written before the switch does not read back, and
# old cached pages are later written over newer data.  The lower device here
# is a loop with 4096-byte blocks, so a 512-byte upper loop goes through its
# page cache.  The periodic flusher is stopped: only the driver may write
# those pages back in time.
lo_ioctl=$t_tools/lo-ioctl
key=00112233445566778899aabbccddeeff
enc_opts=(-t 16 -s 16 -k "$key" -n AES128)
old_wb=$(cat /proc/sys/vm/dirty_writeback_centisecs)
echo 0 >/proc/sys/vm/dirty_writeback_centisecs
t_cleanup sh -c "echo $old_wb >/proc/sys/vm/dirty_writeback_centisecs"
t_randfile /tmp/r1 1M
t_randfile /tmp/r2 1M
r1=$(t_sha256 /tmp/r1)
r2=$(t_sha256 /tmp/r2)
head_sum() { head -c "$2" "$1" | sha256sum | cut -d' ' -f1; }
lower4k() { t_zerofile /tmp/low.img 16M && losetup.stock -b 4096 -f --show /tmp/low.img; }
MiB=$((1 << 20))

# The libblockdev sequence: LOOP_SET_FD, LOOP_SET_STATUS64, then
# LOOP_SET_BLOCK_SIZE 4096: from the lower's page cache to bios.
switch_bsize() {
	local name=$1 lower up
	shift
	if ! { lower=$(lower4k) && up=$(losetup.stock -f) &&
	       "$lo_ioctl" set-fd "$up" "$lower" -f 0 "$@"; }; then
		t_fail "$name" "could not bind a loop over a 4096-byte loop"
		return
	fi
	dd if=/tmp/r1 of="$up" bs=64k 2>/dev/null
	t_check "$name-set-block-size" "$lo_ioctl" raw "$up" 0x4C09 4096
	t_expect_eq "$name-bios" 4096 "$(cat "/sys/block/${up#/dev/}/queue/logical_block_size")"
	t_expect_eq "$name-reads-back" "$r1" "$(head_sum "$up" $MiB)"
	dd if=/tmp/r2 of="$up" bs=64k conv=fsync 2>/dev/null
	sync
	echo 3 >/proc/sys/vm/drop_caches
	t_expect_eq "$name-not-overwritten" "$r2" "$(head_sum "$up" $MiB)"
	losetup.stock -d "$up"
	losetup.stock -d "$lower"
}
switch_bsize switch-bsize
switch_bsize switch-bsize-encrypted "${enc_opts[@]}"

# LOOP_SET_STATUS moves the offset from 512 (page cache) to 4096 (bios);
# the data written at lower byte 4096 reads at the new offset 0.
switch_offset() {
	local name=$1 lower up
	shift
	if ! { lower=$(lower4k) && up=$(losetup.stock -f) &&
	       "$lo_ioctl" set-fd "$up" "$lower" -o 512 "$@" &&
	       "$lo_ioctl" raw "$up" 0x4C09 4096 >/dev/null; }; then
		t_fail "$name" "could not bind a loop at offset 512 over a 4096-byte loop"
		return
	fi
	dd if=/tmp/r1 of="$up" bs=64k 2>/dev/null
	t_check "$name-set-status" "$lo_ioctl" set-status "$up" -o 4096 "$@"
	t_expect_eq "$name-reads-back" "$(tail -c +3585 /tmp/r1 | sha256sum | cut -d' ' -f1)" \
		"$(head_sum "$up" $((MiB - 3584)))"
	dd if=/tmp/r2 of="$up" bs=64k conv=fsync 2>/dev/null
	sync
	echo 3 >/proc/sys/vm/drop_caches
	t_expect_eq "$name-not-overwritten" "$r2" "$(head_sum "$up" $MiB)"
	losetup.stock -d "$up"
	losetup.stock -d "$lower"
}
switch_offset switch-offset
switch_offset switch-offset-encrypted "${enc_opts[@]}"

# A bind over dirty pages that another opener (fd 7) left in the device's
# page cache: the loop reads them, and they are not written back over the
# loop's writes when that opener closes.
zero_ram() { dd if=/dev/zero of=$ram bs=64k count=16 conv=fsync 2>/dev/null; }
zero_ram
exec 7<>$ram
dd if=/tmp/r1 of=$ram bs=64k 2>/dev/null
if up=$(losetup.stock -f --show $ram); then
	t_expect_eq bind-dirty-reads-back "$r1" "$(head_sum "$up" $MiB)"
	dd if=/tmp/r2 of="$up" bs=64k conv=fsync 2>/dev/null
	losetup.stock -d "$up"
fi
exec 7>&-
t_expect_eq bind-dirty-not-overwritten "$r2" "$(head_sum $ram $MiB)"
# Encrypted: what the loop reads at a bind over dirty pages is what it reads
# once they are written back by the last close.
zero_ram
exec 7<>$ram
dd if=/tmp/r1 of=$ram bs=64k 2>/dev/null
if up=$(attach); then
	first=$(head_sum "$up" $MiB)
	losetup -d "$up"
	exec 7>&-
	up=$(attach)
	t_expect_eq bind-dirty-encrypted-reads-back "$(head_sum "$up" $MiB)" "$first"
	losetup -d "$up"
else
	exec 7>&-
	t_fail bind-dirty-encrypted "losetup -e on $ram failed"
fi

# LOOP_CHANGE_FD from a file to a device with dirty pages of another opener.
t_zerofile /tmp/cfd-a.img 4M
t_zerofile /tmp/cfd-b.img 4M
if lower=$(losetup.stock -f --show /tmp/cfd-b.img) &&
   up=$(losetup.stock -r -f --show /tmp/cfd-a.img); then
	exec 7<>"$lower"
	dd if=/tmp/r1 of="$lower" bs=64k 2>/dev/null
	t_check change-fd-dirty "$lo_ioctl" change-fd "$up" "$lower" -r
	t_expect_eq change-fd-dirty-reads-back "$r1" "$(head_sum "$up" $MiB)"
	exec 7>&-
	losetup.stock -d "$up"
	losetup.stock -d "$lower"
else
	t_fail change-fd-dirty "could not set up the loops"
fi

# LOOP_CHANGE_FD between every kind of backing store, as a table: from a
# file or a device to a file or a device, plain and encrypted, with and
# without direct I/O.  After the switch the loop reads the new store's data,
# buffered and O_DIRECT, names it in sysfs, keeps direct I/O as asked (the
# files are on ext4, which does O_DIRECT; the devices are plain loops),
# sends a flush to it and none to the old one, and goes on reading it once
# the old device is gone.  A device-to-file switch used to leave the bios
# going to the old device: its data was read, and once it was removed the
# next read met a freed device.
cfd_fs=/tmp/cfd-fs.img cfd_mnt=/mnt/cfd
t_zerofile "$cfd_fs" 64M
mkdir -p "$cfd_mnt"
if cfd_fsdev=$(losetup.stock -f --show "$cfd_fs") && t_run_quiet mkfs.ext4 -q "$cfd_fsdev" &&
   mount "$cfd_fsdev" "$cfd_mnt"; then
	t_randfile /tmp/cfd-pa 4M
	t_randfile /tmp/cfd-pb 4M
	pa=$(t_sha256 /tmp/cfd-pa)
	pb=$(t_sha256 /tmp/cfd-pb)
	dio_sum() { dd if="$1" bs=64k iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1; }
	# cfd_store KIND NAME PLAIN ENC: a backing store of KIND (file: in the ext4; dev: a plain
	# loop over a file in tmpfs) holding PLAIN, encrypted when ENC is aes; prints its path.
	cfd_store() {
		local path w
		if [ "$1" = file ]; then
			path=$cfd_mnt/$2.img
			t_zerofile "$path" 4M
		else
			t_zerofile "/tmp/$2.img" 4M
			path=$(losetup.stock -f --show "/tmp/$2.img") || return 1
		fi
		if [ "$4" = aes ]; then
			w=$(losetup.stock -f) && "$lo_ioctl" configure "$w" "$path" "${enc_opts[@]}" &&
				dd if="$3" of="$w" bs=64k conv=fsync 2>/dev/null &&
				"$lo_ioctl" clr "$w" || return 1
		else
			dd if="$3" of="$path" bs=64k conv=fsync,notrunc 2>/dev/null || return 1
		fi
		echo "$path"
	}
	cfd_drop() { case "$1" in /dev/*) losetup.stock -d "$1" ;; *) rm -f "$1" ;; esac; }
	for from in file dev; do
	for to in file dev; do
	for enc in plain aes; do
	for dio in 0 1; do
		name=cfd-$from-$to-$enc-$([ $dio = 1 ] && echo dio || echo buffered)
		opts=(-r -f $((1 | dio * 16)))
		[ $enc = plain ] || opts+=("${enc_opts[@]}")
		if ! { a=$(cfd_store $from cfd-a /tmp/cfd-pa $enc) &&
		       b=$(cfd_store $to cfd-b /tmp/cfd-pb $enc) &&
		       up=$(losetup.stock -f) && "$lo_ioctl" configure "$up" "$a" "${opts[@]}"; }; then
			t_fail "$name" "could not set up $enc $from-backed loop"
			continue
		fi
		t_expect_eq "$name-reads-old" "$pa" "$(t_sha256 "$up")"
		t_check "$name-change-fd" "$lo_ioctl" change-fd "$up" "$b" -r
		t_expect_eq "$name-reads-new" "$pb" "$(t_sha256 "$up")"
		t_expect_eq "$name-reads-new-direct" "$pb" "$(dio_sum "$up")"
		t_expect_eq "$name-sysfs-file" "$b" "$(cat "/sys/block/${up#/dev/}/loop/backing_file")"
		t_expect_eq "$name-sysfs-dio" $dio "$(cat "/sys/block/${up#/dev/}/loop/dio")"
		if [ $to = dev ]; then
			before=$(flushes "$b")
			t_check "$name-flush" sync "$up"
			t_check "$name-flush-reaches-new" test "$(flushes "$b")" -gt "$before"
		fi
		if [ $from = dev ]; then
			before=$(flushes "$a")
			sync "$up"
			t_expect_eq "$name-no-flush-to-old" "$before" "$(flushes "$a")"
			# The old device goes away (a USB stick pulled, a deleted LV).
			cfd_drop "$a"
			echo 3 >/proc/sys/vm/drop_caches
			t_expect_eq "$name-old-gone" "$pb" "$(dio_sum "$up")"
		else
			cfd_drop "$a"
		fi
		losetup.stock -d "$up"
		cfd_drop "$b"
	done
	done
	done
	done
	umount "$cfd_mnt"
else
	t_fail cfd "could not make an ext4 for the LOOP_CHANGE_FD table"
fi
[ -z "${cfd_fsdev:-}" ] || losetup.stock -d "$cfd_fsdev"
rm -f "$cfd_fs" /tmp/cfd-*

# A loop with 512-byte blocks over a device with 4096-byte sectors cannot
# send bios (swap on it would need memory for the page cache): it says so
# at setup.  With -b 4096 it sends bios and says nothing.
if lower=$(lower4k); then
	if up=$(losetup.stock -f --show "$lower"); then
		t_check 4kn-notice sh -c "dmesg | grep '${up#/dev/}: offset 0 and 512-byte blocks do not suit the 4096-byte sectors of ${lower#/dev/}: I/O goes through [i]ts page cache'"
		losetup.stock -d "$up"
	fi
	t_dmesg_mark 4kn-b4096
	if up=$(losetup.stock -b 4096 -f --show "$lower"); then
		t_expect_eq 4kn-b4096-no-notice 0 \
			"$(t_dmesg_since 4kn-b4096 | grep -c "${up#/dev/}: .*goes through its page cache")"
		losetup.stock -d "$up"
	fi
	# --direct-io=on without -b: the device's 4096-byte sectors, as the
	# stock driver picks them, so bios.
	t_dmesg_mark 4kn-direct-io
	if up=$(losetup.stock --direct-io=on -f --show "$lower"); then
		t_expect_eq 4kn-direct-io-bsize 4096 "$(cat "/sys/block/${up#/dev/}/queue/logical_block_size")"
		t_expect_eq 4kn-direct-io-dio 1 "$(cat "/sys/block/${up#/dev/}/loop/dio")"
		t_expect_eq 4kn-direct-io-no-notice 0 \
			"$(t_dmesg_since 4kn-direct-io | grep -c "${up#/dev/}: .*goes through its page cache")"
		losetup.stock -d "$up"
	else
		t_fail 4kn-direct-io "losetup --direct-io=on on $lower failed"
	fi
	losetup.stock -d "$lower"
fi

# --- Queue limits that mirror the backing store ---------------------------
# As the stock driver: 1280 KiB requests; discard and write-zeroes as far
# as the backing device can write zeroes (brd cannot: none), never on an
# encrypted loop; the rotational flag of the device.  The write cache is the
# device's when bios go straight to it (brd has none), else write back.
qattr() { cat "/sys/block/${1#/dev/}/queue/$2"; }
t_zerofile /tmp/low.img 16M
if lower=$(losetup.stock -f --show /tmp/low.img) && up=$(losetup.stock -f --show "$lower"); then
	t_expect_eq max-hw-sectors 1280 "$(qattr "$up" max_hw_sectors_kb)"
	t_expect_eq max-hw-sectors-file 1280 "$(qattr "$lower" max_hw_sectors_kb)"
	for a in discard_max_bytes write_zeroes_max_bytes discard_granularity write_cache; do
		t_expect_eq "mirror-$a" "$(qattr "$lower" $a)" "$(qattr "$up" $a)"
	done
	dd if=/tmp/r1 of="$up" bs=64k conv=fsync 2>/dev/null
	t_check discard-device blkdiscard -o 65536 -l 524288 "$up"
	t_check discard-device-zeros cmp -n 524288 /tmp/low.img /dev/zero 65536 0
	t_expect_eq discard-device-rest "$(head -c 65536 /tmp/r1 | sha256sum | cut -d' ' -f1)" \
		"$(head_sum /tmp/low.img 65536)"
	dd if=/tmp/r1 of="$up" bs=64k conv=fsync 2>/dev/null
	t_check write-zeroes-device "$lo_ioctl" zeroout "$up" 0 524288
	t_check write-zeroes-device-zeros cmp -n 524288 /tmp/low.img /dev/zero
	losetup.stock -d "$up"
	if up=$(attach_to "$lower"); then
		t_expect_eq discard-encrypted-none 0 "$(qattr "$up" discard_max_bytes)"
		before=$(t_sha256 /tmp/low.img)
		t_expect_fail discard-encrypted-refused '' blkdiscard "$up"
		t_expect_eq discard-encrypted-unchanged "$before" "$(t_sha256 /tmp/low.img)"
		losetup -d "$up"
	fi
	losetup.stock -d "$lower"
fi
for rot in 1 0; do
	echo $rot >/sys/block/ram0/queue/rotational
	if up=$(losetup.stock -f --show $ram); then
		t_expect_eq "rotational-$rot" $rot "$(qattr "$up" rotational)"
		if [ $rot = 0 ]; then
			# As stock: a bound loop caches writes, whatever is below it
			# (its I/O may fall back to the page cache; brd has no cache).
			t_expect_eq write-cache-brd 'write back' "$(qattr "$up" write_cache)"
			t_expect_eq discard-brd-none 0 "$(qattr "$up" discard_max_bytes)"
			t_expect_fail discard-brd-refused '' blkdiscard "$up"
		fi
		losetup.stock -d "$up"
	fi
done
# Through the page cache of a 4096-byte device: flushes are needed.
if lower=$(lower4k) && up=$(losetup.stock -f --show "$lower"); then
	t_expect_eq write-cache-page-cache 'write back' "$(qattr "$up" write_cache)"
	losetup.stock -d "$up"
	losetup.stock -d "$lower"
fi

# Requests of up to 1280 KiB on an encrypted loop on brd: each becomes
# several bios (of lo_prealloc pages), and the data comes back.
t_randfile /tmp/big 5M
stat_of() { awk -v f="$2" '{ print $f }' "/sys/block/${1#/dev/}/stat"; }
if up=$(attach); then
	ios=$(stat_of "$up" 5) sectors=$(stat_of "$up" 7)
	dd if=/tmp/big of="$up" bs=1280k oflag=direct 2>/dev/null
	ios=$(($(stat_of "$up" 5) - ios)) sectors=$(($(stat_of "$up" 7) - sectors))
	t_check big-requests test $((sectors / ios)) -gt 254
	t_expect_eq big-requests-read "$(t_sha256 /tmp/big)" \
		"$(dd if="$up" bs=1280k count=4 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
	losetup -d "$up"
	up=$(attach)
	t_expect_eq big-requests-reattach "$(t_sha256 /tmp/big)" "$(head_sum "$up" $((5 * MiB)))"
	losetup -d "$up"
fi

# A backing device made read-only after the bind (blockdev --setro): writes
# through the loop fail, as with the stock driver, on the bio path and
# through the page cache, and the device keeps its data.
if up=$(losetup.stock -f --show $ram); then
	dd if=/tmp/r1 of="$up" bs=64k count=16 oflag=direct 2>/dev/null
	blockdev --setro $ram
	t_expect_fail ro-backing-write-refused '' \
		dd if=/tmp/r2 of="$up" bs=64k count=16 oflag=direct
	t_expect_fail ro-backing-discard-refused '' blkdiscard -l 65536 "$up"
	blockdev --setrw $ram
	t_expect_eq ro-backing-unchanged "$r1" \
		"$(dd if=$ram bs=64k count=16 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
	losetup.stock -d "$up"
fi
if lower=$(lower4k) && up=$(losetup.stock -f --show "$lower"); then
	blockdev --setro "$lower"
	t_expect_fail ro-backing-page-cache-write-refused '' \
		dd if=/tmp/r2 of="$up" bs=64k count=16 conv=fsync
	blockdev --setrw "$lower"
	losetup.stock -d "$up"
	losetup.stock -d "$lower"
fi

# The request's REQ_SYNC and I/O priority reach the backing device: direct
# writes are REQ_SYNC (rwbs "WS" on brd's bios; submit_bio_wait() sets it
# on every bio anyway), and ionice's class and level show on the requests
# of a loop below (6.12's block_rq tracepoints carry the ioprio; 6.1's do
# not).
tr=/sys/kernel/tracing
[ -e $tr/trace ] || mount -t tracefs nodev $tr
# trace_of EVENT CMD...: the trace lines EVENT printed while CMD ran.
trace_of() {
	local ev=$tr/events/block/$1/enable
	shift
	echo >$tr/trace
	echo 1 >"$ev"
	"$@" >/dev/null 2>&1
	echo 0 >"$ev"
	grep -v '^#' $tr/trace
}
if up=$(losetup.stock -f --show $ram); then
	trace_of block_bio_queue dd if=/tmp/r1 of="$up" bs=64k count=4 oflag=direct >/tmp/trace
	t_check req-sync-writes grep -q ' 1,0 W' /tmp/trace
	t_check req-sync-passed sh -c "! grep ' 1,0 W' /tmp/trace | grep -v ' 1,0 WS'"
	losetup.stock -d "$up"
fi
if ! grep -q ioprio $tr/events/block/block_rq_complete/format; then
	t_skip ioprio-passed "this kernel's block_rq tracepoints carry no ioprio"
elif lower=$(losetup.stock -f --show /tmp/cfd-b.img) && up=$(losetup.stock -f --show "$lower"); then
	mm=$(cat "/sys/block/${lower#/dev/}/dev")
	trace_of block_rq_complete ionice -c 2 -n 6 \
		dd if=/tmp/r1 of="$up" bs=64k count=4 oflag=direct >/tmp/trace
	t_check ioprio-writes grep -q " ${mm/:/,} W" /tmp/trace
	t_check ioprio-passed sh -c "! grep ' ${mm/:/,} W' /tmp/trace | grep -v ' be,0,6 '"
	losetup.stock -d "$up"
	losetup.stock -d "$lower"
fi

# read-error-*: a read that meets an error after some data fails as a whole, on a loop that
# reads its backing device through the page cache (offset 512 over 4096-byte sectors), whose
# read_iter returns the data before the error first.  The stock driver fails it; zeros in
# place of the unreadable part, with success, would be silent corruption.
if ! command -v dmsetup >/dev/null; then
	t_skip read-error "dmsetup is not in the guest"
else
	t_zerofile /tmp/err.img 8M
	if lower=$(losetup.stock -b 4096 -f --show /tmp/err.img) &&
	   printf '0 8192 linear %s 0\n8192 8192 error\n' "$lower" | dmsetup create aesloop-err &&
	   up=$(losetup.stock -o 512 -f --show /dev/mapper/aesloop-err); then
		echo 3 >/proc/sys/vm/drop_caches
		t_check read-error-before dd if="$up" of=/dev/null bs=64k count=63 iflag=direct
		echo 3 >/proc/sys/vm/drop_caches
		t_expect_fail read-error-across 'Input/output error' \
			dd if="$up" of=/dev/null bs=64k skip=63 count=1 iflag=direct
		losetup.stock -d "$up"
	else
		t_fail read-error "no loop over a device-mapper device with an error target"
	fi
	dmsetup remove aesloop-err 2>/dev/null
	[ -z "${lower:-}" ] || losetup.stock -d "$lower"
fi

# write-error-*: an encrypted write of 1 MiB, sent as bios in pieces of the bounce area (the
# worker encrypts the next while the last is written), half of it onto a device-mapper error
# target.  The request fails as a whole with EIO, none of its pieces is lost track of (the
# loop detaches), and writes beside the error still work and read back.
if ! command -v dmsetup >/dev/null; then
	t_skip write-error "dmsetup is not in the guest"
else
	t_zerofile /tmp/werr.img 8M
	t_randfile /tmp/werr.data 1M
	if lower=$(losetup.stock -f --show /tmp/werr.img) &&
	   printf '0 8192 linear %s 0\n8192 8192 error\n' "$lower" | dmsetup create aesloop-werr &&
	   up=$(attach_to /dev/mapper/aesloop-werr); then
		t_expect_fail write-error-across 'Input/output error' \
			dd if=/tmp/werr.data of="$up" bs=1M count=1 oflag=direct,seek_bytes \
			seek=$((7 * 524288))
		t_check write-error-before dd if=/tmp/werr.data of="$up" bs=1M count=1 oflag=direct
		echo 3 >/proc/sys/vm/drop_caches
		t_expect_eq write-error-read-back "$(t_sha256 /tmp/werr.data)" \
			"$(dd if="$up" bs=1M count=1 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
		t_check write-error-detach losetup -d "$up"
	else
		t_fail write-error "no encrypted loop over a device-mapper device with an error target"
	fi
	dmsetup remove aesloop-werr 2>/dev/null
	[ -z "${lower:-}" ] || losetup.stock -d "$lower"
	rm -f /tmp/werr.img /tmp/werr.data
fi
