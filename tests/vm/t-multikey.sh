#!/bin/bash
# covers: multi-key v2, multi-key v3, LOOP_MULTI_KEY_SETUP, LOOP_GET_STATUS64, test vectors, cryptsetup compat, changing source, invalid input
# VM test: multi-key v2 and v3 in the driver (doc/format.md 2.2, 2.3, 4, 5), set up
# with raw ioctls (lo-ioctl) so that only the kernel is under test:
#   vector-*    plain64.img written through the loop gives the ciphertext of
#               ../shared/vectors, for AES128 and AES256, v2 and v3, at IV
#               sector 0, 8 (-o 4096) and 2^32+7; and reads back
#   cs-read-*   cryptsetup (aes:64-cbc-lmk) reads what aesloop wrote, with
#               -o 8192 (cryptsetup -o 16) and -o @8192 (--skip 0)
#   cs-write-*  aesloop reads what cryptsetup wrote, the same offsets
#   flags-*     LOOP_GET_STATUS64 reports multi-key (0x100000) and v3 (0x080000)
#   no-aes      LOOP_MULTI_KEY_SETUP on a plain loop is refused (EINVAL)
#   flip-*      O_DIRECT writes to a v3 loop from a buffer a second thread
#               keeps changing (flip-write): every 16-byte block read back
#               is that block of one of the versions; a driver that hashed
#               one read of the page and encrypted another left sectors
#               whose first block was data nobody wrote
# The key slots are derived here as losetup does (t_mk_slots); AES192 needs
# SHA-384, which busybox lacks: the losetup key-file tests cover it.
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

lo_ioctl=$t_tools/lo-ioctl
vectors=/share/vectors
work=/tmp/t-multikey
mkdir -p "$work" /share/crypt
rm -f /share/crypt/mk-*.img
plain_sum=$(t_sha256 "$vectors/plain64.img")

dev=$(losetup.stock -f)
for mode in v2:keys64.txt:0x55 v3:keys65.txt:0xf4; do
	IFS=: read -r v file tweak <<<"$mode"
	for bits in 128 256; do
		hash=sha256sum
		[ "$bits" = 128 ] || hash=sha512sum
		slots=$work/$v-$bits.slots
		t_mk_slots "$vectors/$file" "$tweak" "$hash" >"$slots"
		name=aes$bits-$v-${file%.txt}

		cases="$name:0"
		[ "$bits" != 128 ] || cases+=" $name-iv8:8 $name-iv4294967303:4294967303"
		for c in $cases; do
			case_name=${c%%:*} sector=${c#*:}
			want=$(awk -F'\t' -v c="$case_name" '$1 == c { print $8 }' "$vectors/vectors.tsv")
			img=$work/vector.img
			t_zerofile "$img" $((sector * 512 + 32768))
			if t_mk_attach "$dev" "$img" "$bits" "$slots" -o $((sector * 512)); then
				[ "$sector" != 0 ] || t_check "flags-$v-$bits" sh -c \
					"'$lo_ioctl' status $dev | grep -E 'flags=0x$([ "$v" = v3 ] && echo 18 || echo 10)0000$'"
				dd if="$vectors/plain64.img" of="$dev" bs=32768 conv=fsync 2>/dev/null
				echo 3 >/proc/sys/vm/drop_caches
				t_expect_eq "read-$case_name" "$plain_sum" "$(t_sha256 "$dev")"
				"$lo_ioctl" clr "$dev"
				got=$(tail -c 32768 "$img" | sha256sum)
				t_expect_eq "vector-$case_name" "$want" "${got%% *}"
				# For tests/vm/host-aespipe.sh on the host.
				[ "$sector" != 0 ] || cp "$img" "/share/crypt/mk-$v-$bits.img"
			else
				t_fail "vector-$case_name" "could not set up $v with $bits-bit keys"
			fi
			rm -f "$img"
		done

		# cryptsetup both ways, with offsets counted in the IV and not.
		for off in 8192 @8192; do
			bytes=${off#@}
			skip=$((bytes / 512))
			[ "$off" = "$bytes" ] || skip=0
			loff=$bytes
			[ "$off" = "$bytes" ] || loff=-$bytes
			img=$work/cs.img
			t_zerofile "$img" $((bytes + 32768))
			tag=$v-$bits-o$off
			if t_mk_attach "$dev" "$img" "$bits" "$slots" -o "$loff" &&
			   dd if="$vectors/plain64.img" of="$dev" bs=32768 conv=fsync 2>/dev/null &&
			   "$lo_ioctl" clr "$dev" &&
			   cryptsetup open --type loopaes --key-file "$vectors/$file" -s "$bits" \
				-o $((bytes / 512)) --skip "$skip" "$img" mk; then
				t_expect_eq "cs-read-$tag" "$plain_sum" "$(head -c 32768 /dev/mapper/mk | sha256sum | cut -d' ' -f1)"
				cryptsetup close mk
			else
				t_fail "cs-read-$tag" "aesloop write or cryptsetup open failed"
			fi
			t_zerofile "$img" $((bytes + 32768))
			if cryptsetup open --type loopaes --key-file "$vectors/$file" -s "$bits" \
				-o $((bytes / 512)) --skip "$skip" "$img" mk &&
			   dd if="$vectors/plain64.img" of=/dev/mapper/mk bs=32768 conv=fsync 2>/dev/null &&
			   cryptsetup close mk && t_mk_attach "$dev" "$img" "$bits" "$slots" -o "$loff"; then
				t_expect_eq "cs-write-$tag" "$plain_sum" "$(head -c 32768 "$dev" | sha256sum | cut -d' ' -f1)"
				"$lo_ioctl" clr "$dev"
			else
				t_fail "cs-write-$tag" "cryptsetup write or aesloop attach failed"
			fi
			rm -f "$img"
		done
	done
done

t_zerofile "$work/plain.img" 1M
"$lo_ioctl" configure "$dev" "$work/plain.img"
t_expect_fail no-aes EINVAL "$lo_ioctl" multi "$dev" "$work/v2-128.slots"
"$lo_ioctl" clr "$dev"

flip=$t_tools/flip-write
t_zerofile "$work/flip.img" 1M
if t_mk_attach "$dev" "$work/flip.img" 128 "$work/v3-128.slots"; then
	t_check flip-write "$flip" write "$dev" 8
	t_check flip-read-back "$flip" check "$dev"
	"$lo_ioctl" clr "$dev"
else
	t_fail flip-write "could not set up v3 with 128-bit keys"
fi
rm -f "$work/flip.img"
