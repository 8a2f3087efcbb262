#!/bin/bash
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
