#!/bin/bash
# covers: single-key, losetup, passphrase, test vectors, cryptsetup compat, aespipe compat, LOOP_SET_FD, LOOP_SET_STATUS64, LOOP_CONFIGURE, shared decryption, invalid input
# VM test: encrypted loops with the patched losetup, against the peers.
#
# For AES128, AES192 and AES256 (doc/format.md sections 2.1, 3.2):
#   ext4       losetup -e -p, mkfs.ext4, files written, detached, attached
#              again with the same passphrase: the checksums match
#   plaintext  the backing file holds none of the plaintext written
#   wrongpass  a wrong passphrase does not mount and changes nothing
#   cs-read    cryptsetup (dm-crypt loopaes) reads the aesloop volume
#   cs-write   aesloop reads a volume written through cryptsetup
#   vector     plain64.img written through the loop gives the ciphertext of
#              ../shared/vectors (cases aesN-pass; for AES128 also -o 4096
#              and an IV sector of 2^32+7)
#   export     a backing file, its plaintext and passphrase left in /share
#              for tests/vm/host-aespipe.sh to decrypt with Debian's aespipe
#   key-after-set-fd  LOOP_SET_FD, then the key by LOOP_SET_STATUS64 (loop-AES's
#              order): data reads back, the ciphertext is LOOP_CONFIGURE's
#   split-read a large read's decryption shared among the workers, in single-key,
#              v2 and v3: what cryptsetup wrote reads back whole (see below)
# Invalid input (doc/format.md section 5), each leaving the device as it was:
#   key size 7, encrypt type 99, SET_STATUS64 on an unbound loop, a
#   passphrase under 20 characters, LOOP_CONFIGURE with a bad key.
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

lo_ioctl=$t_tools/lo-ioctl
vectors=/share/vectors
export_dir=/share/crypt
pass='correct horse battery staple 2026'
wrong='this is not the passphrase at all'
work=/tmp/t-crypt
mkdir -p "$work" /mnt/t "$export_dir"
rm -f "$export_dir"/*

# attach CIPHER PASSPHRASE FILE [OPTIONS...]: an encrypted loop on FILE, the
# passphrase on fd 3 (never on a command line); prints the device.
attach() {
	local cipher=$1 p=$2 file=$3
	shift 3
	losetup -e "$cipher" -p 3 "$@" -f --show "$file" 3<<<"$p"
}

# Whether a loop device is unbound: GET_STATUS64 says ENXIO, no sysfs dir.
unbound() {
	! "$lo_ioctl" status "$1" >/dev/null 2>&1 &&
		[ ! -e "/sys/block/${1#/dev/}/loop" ]
}

sums_of() { (cd "$1" && sha256sum big small marker); }

write_files() {
	t_randfile "$1/big" 3M
	echo "a small file" >"$1/small"
	# A recognisable plaintext, to look for in the backing file.
	yes AESLOOP-PLAINTEXT-MARKER-0123456789 | head -c $((1 << 20)) >"$1/marker"
}

bits_of() { echo "${1#AES}"; }

for cipher in AES128 AES192 AES256; do
	bits=$(bits_of "$cipher")
	img=$work/$cipher.img
	t_zerofile "$img" 32M

	# ext4: make, fill, detach, attach again, compare.
	if dev=$(attach "$cipher" "$pass" "$img") &&
	   t_run_quiet mkfs.ext4 -q "$dev" &&
	   mount "$dev" /mnt/t && write_files /mnt/t &&
	   sums=$(sums_of /mnt/t) && umount /mnt/t &&
	   losetup -d "$dev" &&
	   dev=$(attach "$cipher" "$pass" "$img") &&
	   mount "$dev" /mnt/t && again=$(sums_of /mnt/t) &&
	   umount /mnt/t && losetup -d "$dev" &&
	   [ "$sums" = "$again" ]; then
		t_pass "$cipher-ext4"
	else
		t_fail "$cipher-ext4" "ext4 on losetup -e $cipher over a 32M file did not survive detach and attach"
		umount /mnt/t 2>/dev/null
		[ -z "${dev:-}" ] || losetup -d "$dev" 2>/dev/null
	fi

	if grep -q -F AESLOOP-PLAINTEXT-MARKER "$img"; then
		t_fail "$cipher-plaintext" "the backing file holds plaintext"
	else
		t_pass "$cipher-plaintext"
	fi

	# A wrong passphrase: mount fails, the file is untouched.
	before=$(t_sha256 "$img")
	if dev=$(attach "$cipher" "$wrong" "$img"); then
		if mount "$dev" /mnt/t 2>/dev/null; then
			umount /mnt/t
			t_fail "$cipher-wrongpass" "a wrong passphrase mounted"
		elif ! losetup -d "$dev"; then
			t_fail "$cipher-wrongpass" "could not detach $dev"
		elif [ "$(t_sha256 "$img")" != "$before" ]; then
			t_fail "$cipher-wrongpass" "the backing file changed"
		else
			t_pass "$cipher-wrongpass"
		fi
	else
		t_fail "$cipher-wrongpass" "losetup refused a 33-character passphrase"
	fi

	# cryptsetup reads what aesloop wrote: a one-line key file.
	printf '%s\n' "$pass" >"$work/key1"
	if cryptsetup open --type loopaes --key-file "$work/key1" -s "$bits" \
		"$img" "cs$bits" &&
	   mount -o ro "/dev/mapper/cs$bits" /mnt/t &&
	   again=$(sums_of /mnt/t) && umount /mnt/t &&
	   cryptsetup close "cs$bits" && [ "$sums" = "$again" ]; then
		t_pass "$cipher-cs-read"
	else
		t_fail "$cipher-cs-read" "cryptsetup open --type loopaes -s $bits did not read the aesloop volume"
		umount /mnt/t 2>/dev/null
		cryptsetup close "cs$bits" 2>/dev/null
	fi

	# aesloop reads what cryptsetup wrote.
	csimg=$work/$cipher-cs.img
	t_zerofile "$csimg" 32M
	if cryptsetup open --type loopaes --key-file "$work/key1" -s "$bits" \
		"$csimg" "cs$bits" &&
	   t_run_quiet mkfs.ext4 -q "/dev/mapper/cs$bits" &&
	   mount "/dev/mapper/cs$bits" /mnt/t && write_files /mnt/t &&
	   sums=$(sums_of /mnt/t) && umount /mnt/t &&
	   cryptsetup close "cs$bits" &&
	   dev=$(attach "$cipher" "$pass" "$csimg") &&
	   mount "$dev" /mnt/t && again=$(sums_of /mnt/t) &&
	   umount /mnt/t && losetup -d "$dev" && [ "$sums" = "$again" ]; then
		t_pass "$cipher-cs-write"
	else
		t_fail "$cipher-cs-write" "aesloop did not read a volume written by cryptsetup loopaes -s $bits"
		umount /mnt/t 2>/dev/null
		cryptsetup close "cs$bits" 2>/dev/null
		[ -z "${dev:-}" ] || losetup -d "$dev" 2>/dev/null
	fi
	rm -f "$csimg"

	# The known answers of ../shared/vectors: plain64.img through the loop.
	cases="aes$bits-pass:0"
	[ "$cipher" != AES128 ] || cases+=" aes128-pass-iv8:8 aes128-pass-iv4294967303:4294967303"
	for c in $cases; do
		name=${c%%:*} sector=${c#*:}
		want=$(awk -F'\t' -v c="$name" '$1 == c { print $8 }' "$vectors/vectors.tsv")
		vimg=$work/vector.img
		t_zerofile "$vimg" $((sector * 512 + 32768))
		if dev=$(attach "$cipher" "$pass" "$vimg" -o $((sector * 512))) &&
		   dd if="$vectors/plain64.img" of="$dev" bs=32768 conv=fsync 2>/dev/null &&
		   losetup -d "$dev"; then
			got=$(tail -c 32768 "$vimg" | sha256sum)
			t_expect_eq "$cipher-vector-$name" "$want" "${got%% *}"
		else
			t_fail "$cipher-vector-$name" "could not write plain64.img through losetup -e $cipher -o $((sector * 512))"
		fi
		rm -f "$vimg"
	done

	# For the host: aespipe -d must give back what was written here.
	t_randfile "$export_dir/$cipher.plain" 1M
	t_zerofile "$export_dir/$cipher.img" 1M
	if dev=$(attach "$cipher" "$pass" "$export_dir/$cipher.img") &&
	   dd if="$export_dir/$cipher.plain" of="$dev" bs=64k conv=fsync 2>/dev/null &&
	   losetup -d "$dev"; then
		printf '%s\n' "$pass" >"$export_dir/$cipher.pass"
		t_pass "$cipher-export"
	else
		t_fail "$cipher-export" "could not write the image for aespipe"
	fi
	rm -f "$img"
done

# loop-AES's own order: LOOP_SET_FD of a plain loop, then LOOP_SET_STATUS64 with the key.
# The plain loop had no bounce pages; the key brings them before the first encrypted
# write.  The ciphertext must equal what a LOOP_CONFIGURE with the same key writes.
key=00112233445566778899aabbccddeeff
t_randfile "$work/later.data" 2M
t_zerofile "$work/later.img" 2M
t_zerofile "$work/configured.img" 2M
if dev=$("$lo_ioctl" get-free) && dev=/dev/loop$dev &&
   "$lo_ioctl" set-fd "$dev" "$work/later.img" &&
   "$lo_ioctl" set-status "$dev" -t 16 -s 16 -k "$key" &&
   dd if="$work/later.data" of="$dev" bs=64k oflag=direct 2>/dev/null &&
   echo 3 >/proc/sys/vm/drop_caches && back=$(t_sha256 "$dev") &&
   "$lo_ioctl" clr "$dev" &&
   "$lo_ioctl" configure "$dev" "$work/configured.img" -t 16 -s 16 -k "$key" &&
   dd if="$work/later.data" of="$dev" bs=64k oflag=direct 2>/dev/null &&
   "$lo_ioctl" clr "$dev"; then
	t_expect_eq key-after-set-fd-read "$(t_sha256 "$work/later.data")" "$back"
	t_expect_eq key-after-set-fd-ciphertext "$(t_sha256 "$work/configured.img")" \
		"$(t_sha256 "$work/later.img")"
	t_check key-after-set-fd-not-plaintext \
		test "$(t_sha256 "$work/later.img")" != "$(t_sha256 "$work/later.data")"
else
	t_fail key-after-set-fd "LOOP_SET_FD, then LOOP_SET_STATUS64 with a key, and writes failed"
	"$lo_ioctl" clr "$dev" 2>/dev/null
fi
rm -f "$work/later.data" "$work/later.img" "$work/configured.img"

# split-read-MODE-BACKING-*: a large read's decryption is shared with the device's idle
# workers (lo_decrypt_read(): pieces of 128 KiB or more).  A volume written by cryptsetup
# (dm-crypt loopaes) in single-key, v2 and v3 is read through aesloop, backed by the file
# (read synchronously by a worker) and by a plain loop over it (read by bios, decrypted
# once they are in).  Direct I/O one request at a time, so that the other workers are
# idle and take pieces: 512 KiB requests (a larger read from user pages is more than one
# request, which keep two workers busy by themselves), 775-sector ones (the sectors do
# not divide evenly among two or three pieces), 320 KiB ones from sector 7 on; then
# through the page cache after a drop.  Each must give what cryptsetup was given, and for each direct size the
# kernel's trace of kthread works must show pieces run on other workers.
tr=/sys/kernel/tracing
[ -e $tr/trace ] || mount -t tracefs nodev $tr 2>/dev/null
ev=$tr/events/sched/sched_kthread_work_execute_start/enable
# shared_read NAME DEV CMD...: t_check NAME CMD with the kthread works traced, then
# NAME-pieces: some of them were pieces of DEV's reads.
shared_read() {
	local name=$1 dev=$2 workers pieces
	shift 2
	workers=$(cat /proc/[0-9]*/comm 2>/dev/null | grep -c -x "${dev#/dev/}-[0-9]*")
	if [ ! -e "$ev" ] || [ "$workers" -lt 2 ]; then
		t_check "$name" "$@"
		if [ ! -e "$ev" ]; then
			t_skip "$name-pieces" "this kernel traces no kthread works"
		else
			t_skip "$name-pieces" "one worker per device: nothing to share a read with"
		fi
		return
	fi
	echo >$tr/trace
	echo 1 >"$ev"
	t_check "$name" "$@"
	echo 0 >"$ev"
	pieces=$(grep -c 'function loop_piece_work' $tr/trace)
	t_log "$name: $pieces pieces ran on the other $((workers - 1)) workers"
	t_check "$name-pieces" test "$pieces" -gt 0
}
t_randfile "$work/split.plain" 4M
printf '%s\n' "$pass" >"$work/key1"
img=$work/split.img
for mode in single:"$work/key1" v2:"$vectors/keys64.txt" v3:"$vectors/keys65.txt"; do
	keys=${mode#*:}
	t_zerofile "$img" 4M
	if ! cryptsetup open --type loopaes --key-file "$keys" -s 128 "$img" split ||
	   ! dd if="$work/split.plain" of=/dev/mapper/split bs=1M conv=fsync 2>/dev/null ||
	   ! cryptsetup close split; then
		t_fail "split-read-${mode%%:*}" "cryptsetup open --type loopaes could not write the volume"
		cryptsetup close split 2>/dev/null
		continue
	fi
	for backing in file bdev; do
		name=split-read-${mode%%:*}-$backing lower=
		if [ $backing = bdev ] && ! lower=$(losetup.stock -f --show "$img"); then
			t_fail "$name" "no plain loop over the volume"
			continue
		fi
		if ! dev=$(losetup -e AES128 -P "$keys" -f --show "${lower:-$img}"); then
			t_fail "$name" "losetup -e AES128 -P ${keys##*/} refused the volume"
			[ -z "$lower" ] || losetup.stock -d "$lower"
			continue
		fi
		shared_read "$name-512k" "$dev" \
			cmp <(dd if="$dev" bs=512K iflag=direct 2>/dev/null) "$work/split.plain"
		shared_read "$name-775-sectors" "$dev" \
			cmp <(dd if="$dev" bs=396800 iflag=direct 2>/dev/null) "$work/split.plain"
		shared_read "$name-from-sector-7" "$dev" cmp \
			<(dd if="$dev" bs=320K skip=3584 iflag=direct,skip_bytes 2>/dev/null) \
			<(tail -c +3585 "$work/split.plain")
		echo 3 >/proc/sys/vm/drop_caches
		t_check "$name-buffered" cmp "$dev" "$work/split.plain"
		losetup -d "$dev"
		[ -z "$lower" ] || losetup.stock -d "$lower"
	done
done
[ ! -e $tr/trace ] || echo >$tr/trace
rm -f "$work/split.plain" "$img" "$work/key1"

# Invalid input: refused with an errno or a message, nothing half set up.
img=$work/invalid.img
t_zerofile "$img" 4M
dev=$(losetup.stock -f)
t_expect_fail invalid-unbound-set-status ENXIO \
	"$lo_ioctl" set-status "$dev" -t 16 -s 16 -k 00112233445566778899aabbccddeeff
t_expect_fail invalid-configure-keysize-7 EINVAL \
	"$lo_ioctl" configure "$dev" "$img" -t 16 -s 7
t_check invalid-configure-keysize-7-unbound unbound "$dev"
t_expect_fail invalid-configure-type-99 EINVAL \
	"$lo_ioctl" configure "$dev" "$img" -t 99 -s 16
t_check invalid-configure-type-99-unbound unbound "$dev"

# On a bound encrypted device, a refused SET_STATUS64 keeps the old key.
if dev=$(attach AES128 "$pass" "$img"); then
	t_cleanup losetup.stock -d "$dev"
	before=$("$lo_ioctl" status "$dev")
	t_expect_fail invalid-set-status-keysize-7 EINVAL \
		"$lo_ioctl" set-status "$dev" -t 16 -s 7
	t_expect_fail invalid-set-status-type-99 EINVAL \
		"$lo_ioctl" set-status "$dev" -t 99 -s 16
	t_expect_eq invalid-set-status-unchanged "$before" "$("$lo_ioctl" status "$dev")"
	losetup -d "$dev"
else
	t_fail invalid-set-status "could not attach $img"
fi

dev=$(losetup.stock -f)
t_expect_fail invalid-short-passphrase '[Pp]assphrase|too short|20' \
	losetup -e AES128 -p 3 "$dev" "$img" 3<<<"too short"
t_check invalid-short-passphrase-unbound unbound "$dev"
t_expect_fail invalid-cipher-name '' \
	losetup -e BLOWFISH -p 3 "$dev" "$img" 3<<<"$pass"
t_check invalid-cipher-name-unbound unbound "$dev"
t_expect_eq invalid-no-loops-left "" "$(losetup.stock -a)"
