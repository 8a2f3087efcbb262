#!/bin/bash
# Host side of tests/vm/t-crypt.sh: the backing files that aesloop wrote in
# the guest (build/vm/share/crypt/CIPHER.img) decrypt with Debian's aespipe
# to the plaintext written there.  Run after the VM run; prints PASS/FAIL.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$top/build/vm/share/crypt}
status=0
for cipher in AES128 AES192 AES256; do
	name=${NAME_PREFIX:-}aespipe-decrypts-$cipher
	if [ ! -f "$dir/$cipher.img" ] || [ ! -f "$dir/$cipher.pass" ]; then
		echo "FAIL $name: $dir/$cipher.img or .pass is missing (did t-crypt.sh run?)"
		status=1
	elif aespipe -d -e "$cipher" -p 3 <"$dir/$cipher.img" 3<"$dir/$cipher.pass" |
		cmp -s - "$dir/$cipher.plain"; then
		echo "PASS $name"
	else
		echo "FAIL $name: aespipe -d -e $cipher of $dir/$cipher.img differs from $cipher.plain"
		status=1
	fi
done
exit $status
