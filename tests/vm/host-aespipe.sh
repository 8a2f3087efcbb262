#!/bin/bash
# Host side of the VM tests, against Debian's aespipe:
#  - t-crypt.sh: the backing files aesloop wrote in the guest
#    (build/vm/share/crypt/CIPHER.img) decrypt to the plaintext written there;
#  - t-multikey.sh: the v2/v3 volumes it wrote (mk-V-BITS.img) decrypt with
#    aespipe -P keys64.txt / keys65.txt to plain64.img.
# Run after the VM runs; prints TAP (tests/tap.sh).
# Usage: tests/vm/host-aespipe.sh [DIR]: DIR is crypt/ in the share the guests had (run.sh -s;
# default build/vm/share/crypt); the vectors are read from the same share.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$top/build/vm/share/crypt}
vectors=$(dirname "$dir")/vectors
TAP_PREFIX=${NAME_PREFIX:-}
# shellcheck source=tests/tap.sh
. "$top/tests/tap.sh"
if [ "$(find "$dir" -name 'mk-*.img' | wc -l)" -ne 4 ]; then
	fail aespipe-multikey "expected 4 images from t-multikey.sh in $dir"
fi
for img in "$dir"/mk-*.img; do
	[ -e "$img" ] || continue
	tag=${img##*/mk-}
	tag=${tag%.img}
	v=${tag%-*} bits=${tag#*-}
	keys=$vectors/keys64.txt
	[ "$v" = v2 ] || keys=$vectors/keys65.txt
	name=aespipe-decrypts-multikey-$tag
	if aespipe -d -e "AES$bits" -P "$keys" <"$img" | cmp -s - "$vectors/plain64.img"; then
		pass "$name"
	else
		fail "$name" "aespipe -d -e AES$bits -P $keys of $img is not plain64.img"
	fi
done
for cipher in AES128 AES192 AES256; do
	name=aespipe-decrypts-$cipher
	if [ ! -f "$dir/$cipher.img" ] || [ ! -f "$dir/$cipher.pass" ]; then
		fail "$name" "$dir/$cipher.img or .pass is missing (did t-crypt.sh run?)"
	elif aespipe -d -e "$cipher" -p 3 <"$dir/$cipher.img" 3<"$dir/$cipher.pass" |
		cmp -s - "$dir/$cipher.plain"; then
		pass "$name"
	else
		fail "$name" "aespipe -d -e $cipher of $dir/$cipher.img differs from $cipher.plain"
	fi
done
tap_end
