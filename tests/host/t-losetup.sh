#!/bin/bash
# covers: losetup, swapon, LOOP_CONFIGURE, LOOP_SET_FD, LOOP_SET_STATUS64, passphrase, key file, gpg key file, random keys, fstab, key wipe, invalid input
# t-losetup.sh - the patched util-linux losetup (build/bin/losetup), on the
# host, without touching any loop device.
#
# A "device" here is a regular file under a temporary folder, and
# tests/host/shim/loop_ioctl_shim.c, preloaded, answers every loop ioctl
# itself (nothing reaches the kernel) and logs the struct loop_info64 that
# losetup hands over: with it the test checks the encrypt type, key size,
# cipher name and all 32 key bytes against the vectors, through
# LOOP_CONFIGURE and through the LOOP_SET_FD + LOOP_SET_STATUS64 fallback,
# and that no copy of the key is left in losetup's memory at exit.  The
# loop-AES options: multi-key key files (-P, --cleartextkey, -p, gpg-encrypted
# -K with -G), -H random, -o @N, -s, -I, -F with an fstab of the test's own;
# a failing multi-key ioctl must detach the device again.  Bad passphrases,
# key files, cipher names and options must fail before any loop ioctl (and,
# checked with strace when installed, before any open of the device or
# backing file).  swapon -o loop=,encryption= sets its loop up through the
# same loop context.  Real attaches happen in the VM tests.
#
# Environment (set by tests/host/run.sh): AESLOOP_TOP, AESLOOP_BUILD,
# AESLOOP_VECTORS.  Prints TAP (tests/tap.sh); exits 1 on a failure.
set -uo pipefail

top=${AESLOOP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${AESLOOP_BUILD:-$top/build}
vectors=${AESLOOP_VECTORS:-$top/../shared/vectors}
losetup=$build/bin/losetup

# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
# shellcheck source=tests/host/type-at-prompts.sh
. "$(dirname "${BASH_SOURCE[0]}")/type-at-prompts.sh"

if [ ! -x "$losetup" ]; then
	skip losetup "$losetup is not built (make losetup)"
	tap_end
	exit
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dev=$tmp/fake-device	# no digits: losetup must not ask /dev/loop-control for it
backing=$tmp/backing
: >"$dev"
truncate -s 1M "$backing"
shim=$tmp/loop_ioctl_shim.so
# -z now as for losetup: lazy binding would copy registers (and so the key)
# to the stack, which the shim's key scan would then find.
if ! "${CC:-cc}" -shared -fPIC -O1 -Wall -Wextra -Werror -Wl,-z,now -o "$shim" \
	"$top/tests/host/shim/loop_ioctl_shim.c" -ldl 2>"$tmp/cc.err"; then
	fail shim-build "cannot build the ioctl shim: $(head -c 300 "$tmp/cc.err")"
	tap_end
	exit 1
fi
log=$tmp/shim.log
# The loop driver as losetup sees it (aesloop_driver_check()): aesloop's, whatever this host has
# loaded; sys-stock is the kernel's own driver, which has no aes_impl.
mkdir -p "$tmp/sys/module/loop/parameters" "$tmp/sys-stock/module/loop/parameters" \
	"$tmp/sys-builtin/module/loop/parameters"
echo generic >"$tmp/sys/module/loop/parameters/aes_impl"
echo live | tee "$tmp/sys/module/loop/initstate" >"$tmp/sys-stock/module/loop/initstate"
export AESLOOP_SYSFS=$tmp/sys
have_strace=0
command -v strace >/dev/null && have_strace=1

# --help shows the new options, and the stock ones are still there.
"$losetup" --help >"$tmp/help" 2>&1
for opt in '-e, --encryption <name>' '-p, --pass-fd <num>' '-H, --phash <name>' \
	'-S, --pseed <string>' '-C, --itercountk <num>' '-P, --partscan' \
	'-o, --offset <num>' '-f, --find' '-P <file>, --cleartextkey <file>' \
	'-K, --gpgkey <file>' '-G, --gpghome <dir>' '-T, --ask-twice' '-I, --loinit <num>' \
	'-s, --sizelimit <num>' '-o, --offset @<num>' '-F, --fstab' '-R, --recompute-size'; do
	if grep -qF -- "$opt" "$tmp/help"; then
		pass "help-shows '$opt'"
	else
		fail "help-shows '$opt'" "losetup --help does not list '$opt'"
	fi
done

# Each patched program says it carries aesloop (--version) and where its
# loop-AES options are documented (the end of --help).
aesloop_version=$(make -s --no-print-directory -C "$top" version)
for p in losetup mount swapon swapoff; do
	ver=$("$build/bin/$p" --version 2>&1)
	tail=$("$build/bin/$p" --help 2>&1 | tail -n 1)
	if [[ $ver == *"from util-linux "*", with aesloop $aesloop_version" ]] &&
	   [[ $tail == *"$p(8) and, for loop-AES, aesloop-losetup(8)." ]]; then
		pass "version-help-names-aesloop-$p"
	else
		fail "version-help-names-aesloop-$p" "--version: '$ver'; --help ends '$tail'"
	fi
done

# key_of CASE: key_buffer32 of a case in intermediates.tsv.
key_of() {
	awk -F'\t' -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == c { print $col["key_buffer32"] }' "$vectors/intermediates.tsv"
}

# run_losetup MODE STDIN-FILE ARGS...: losetup under the shim; sets $rc.
run_losetup() {
	local mode=$1 input=$2
	shift 2
	: >"$log"
	AESLOOP_SHIM_LOG=$log AESLOOP_SHIM_MODE=$mode LD_PRELOAD=$shim \
		"$losetup" "$@" <"$input" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# expect_key NAME MODE CASE KEYBYTES CRYPTNAME INPUT ARGS...: a good setup.
expect_key() {
	local name=$1 mode=$2 case=$3 keysize=$4 cname=$5 input=$6 want ioctl line
	shift 6
	want=$(key_of "$case")
	if [ -z "$want" ]; then
		fail "$name" "case $case not found in $vectors/intermediates.tsv"
		return
	fi
	run_losetup "$mode" "$input" "$@"
	if [ "$rc" -ne 0 ]; then
		fail "$name" "losetup $* (shim mode $mode) exited $rc: $(head -c 300 "$tmp/err")"
		return
	fi
	local ioctls=(LOOP_CONFIGURE)
	[ "$mode" = fallback ] && ioctls+=(LOOP_SET_STATUS64)
	for ioctl in "${ioctls[@]}"; do
		line=$(grep "^$ioctl " "$log")
		if [ -z "$line" ]; then
			fail "$name" "losetup $* issued no $ioctl; shim log: $(tr '\n' ';' <"$log")"
			return
		fi
		case "$line" in
		*" type=16 keysize=$keysize name=$cname key=$want "*) ;;
		*)
			fail "$name" "losetup $*: $ioctl carried '$line', expected type=16 keysize=$keysize name=$cname key=$want"
			return
			;;
		esac
	done
	if ! grep -qx 'KEYSCAN 0' "$log"; then
		fail "$name" "losetup $*: key left in memory at exit: $(grep KEYSCAN "$log")"
		return
	fi
	pass "$name"
}

pass_long='correct horse battery staple 2026'
printf '%s\n' "$pass_long" >"$tmp/pass.long"
printf '%s\n' 'tiny-rmd' >"$tmp/pass.rmd"
printf '%s\n' 'rmd160-long-01234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789' >"$tmp/pass.rmd-long"
printf '%s\n' 'only-25-characters-long..' >"$tmp/pass.u1"
printf '%s\n' 'short-unhashed2' >"$tmp/pass.u2"

for mode in configure fallback; do
	expect_key "$mode-aes128-pass" "$mode" aes128-pass 16 AES128 "$tmp/pass.long" \
		-e AES128 -p 0 "$dev" "$backing"
	expect_key "$mode-aes-lowercase" "$mode" aes128-pass 16 AES128 "$tmp/pass.long" \
		-e aes -p 0 "$dev" "$backing"
	expect_key "$mode-aes192-pass" "$mode" aes192-pass 24 AES192 "$tmp/pass.long" \
		--encryption AES192 --pass-fd 0 "$dev" "$backing"
	expect_key "$mode-aes256-pass" "$mode" aes256-pass 32 AES256 "$tmp/pass.long" \
		-e AES256 -p 0 "$dev" "$backing"
	expect_key "$mode-aes128-seed-C5" "$mode" aes128-pass-seed-C5 16 AES128 "$tmp/pass.long" \
		-e AES128 -S pepper -C 5 -p 0 "$dev" "$backing"
	expect_key "$mode-aes256-seed-C5-long" "$mode" aes256-pass-seed-C5 32 AES256 "$tmp/pass.long" \
		--encryption=AES256 --pseed=pepper --itercountk=5 --pass-fd=0 "$dev" "$backing"
	expect_key "$mode-aes128-rmd160-short" "$mode" aes128-rmd160 16 AES128 "$tmp/pass.rmd" \
		-e AES128 -H rmd160 -p 0 "$dev" "$backing"
	expect_key "$mode-aes256-rmd160" "$mode" aes256-rmd160 32 AES256 "$tmp/pass.rmd-long" \
		-e AES256 --phash rmd160 -p 0 "$dev" "$backing"
	expect_key "$mode-unhashed1-forced128" "$mode" aes256-unhashed1-forced128 16 AES128 "$tmp/pass.u1" \
		-e AES256 -H unhashed1 -p 0 "$dev" "$backing"
	expect_key "$mode-aes128-unhashed2" "$mode" aes128-unhashed2 16 AES128 "$tmp/pass.u2" \
		-e AES128 -H unhashed2 -p 0 "$dev" "$backing"
	expect_key "$mode-keys1-on-fd3" "$mode" aes192-keys1 24 AES192 /dev/null \
		-e AES192 -p 3 "$dev" "$backing" 3<"$vectors/keys1.txt"
done

# -o reaches lo_offset next to the key (the size check after the ioctl
# fails on a fake device, so only the logged call is looked at).
run_losetup configure "$tmp/pass.long" -e AES128 -p 0 -o 4096 "$dev" "$backing"
if grep -q "^LOOP_CONFIGURE type=16 keysize=16 name=AES128 key=$(key_of aes128-pass-iv8) offset=4096 " "$log"; then
	pass offset-with-key
else
	fail offset-with-key "losetup -e AES128 -o 4096: shim log: $(tr '\n' ';' <"$log")"
fi

# col_of CASE COLUMN: a column of intermediates.tsv.
col_of() {
	awk -F'\t' -v c="$1" -v k="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == c { print $col[k] }' "$vectors/intermediates.tsv"
}

# expect_multi NAME MODE CASE KEYBYTES CRYPTNAME INPUT ARGS...: a multi-key
# setup: the info ioctl(s) with type 16 and the key size, lo_encrypt_key the
# untweaked hash of line 1, then LOOP_MULTI_KEY_SETUP(_V3) with K0, K63 and
# the v3 seed of the case; nothing left in memory.
expect_multi() {
	local name=$1 mode=$2 case=$3 keysize=$4 cname=$5 input=$6 k0 k63 seed n ioctl line tweak key0 i
	shift 6
	k0=$(col_of "$case" K0)
	k63=$(col_of "$case" K63)
	seed=$(col_of "$case" v3_seed16)
	if [ -z "$k0" ]; then
		fail "$name" "case $case not found in $vectors/intermediates.tsv"
		return
	fi
	n=64 ioctl=LOOP_MULTI_KEY_SETUP tweak=0x55
	if [ "$seed" != - ]; then
		n=65 ioctl=LOOP_MULTI_KEY_SETUP_V3 tweak=0xf4
	fi
	# lo_encrypt_key: slot 0 before the tweak of its first byte
	key0=$(printf '%02x%s' $((0x${k0:0:2} ^ tweak)) "${k0:2}")
	run_losetup "$mode" "$input" "$@"
	if [ "$rc" -ne 0 ]; then
		fail "$name" "losetup $* (shim mode $mode) exited $rc: $(head -c 300 "$tmp/err")"
		return
	fi
	local infos=(LOOP_CONFIGURE)
	[ "$mode" = fallback ] && infos+=(LOOP_SET_STATUS64)
	for i in "${infos[@]}"; do
		line=$(grep "^$i " "$log")
		case "$line" in
		*" type=16 keysize=$keysize name=$cname key=$key0"*) ;;
		*)
			fail "$name" "losetup $*: $i carried '$line', expected type=16 keysize=$keysize name=$cname key=$key0..."
			return
			;;
		esac
	done
	line=$(grep "^$ioctl " "$log")
	case "$line" in
	"$ioctl n=$n s0=$k0"*" s63=$k63"*)
		if [ "$n" = 65 ] && [[ "$line" != *" s64=$seed"* ]]; then
			fail "$name" "losetup $*: v3 seed differs: '$line', expected s64=$seed..."
			return
		fi
		;;
	*)
		fail "$name" "losetup $*: expected $ioctl n=$n s0=$k0... s63=$k63..., shim log: $(tr '\n' ';' <"$log" | head -c 600)"
		return
		;;
	esac
	if grep -q '^LOOP_CLR_FD' "$log"; then
		fail "$name" "losetup $*: detached after a good setup"
	elif ! grep -qx 'KEYSCAN 0' "$log"; then
		fail "$name" "losetup $*: key left in memory at exit: $(grep KEYSCAN "$log")"
	else
		pass "$name"
	fi
}

for mode in configure fallback; do
	for bits in 128 192 256; do
		expect_multi "$mode-aes$bits-keys64-P" "$mode" "aes$bits-v2-keys64" $((bits / 8)) "AES$bits" \
			/dev/null -e "AES$bits" -P "$vectors/keys64.txt" "$dev" "$backing"
		expect_multi "$mode-aes$bits-keys65-P" "$mode" "aes$bits-v3-keys65" $((bits / 8)) "AES$bits" \
			/dev/null -e "AES$bits" -P "$vectors/keys65.txt" "$dev" "$backing"
		expect_multi "$mode-aes$bits-keys65-p-fd" "$mode" "aes$bits-v3-keys65" $((bits / 8)) "AES$bits" \
			"$vectors/keys65.txt" -e "AES$bits" -p 0 "$dev" "$backing"
	done
	expect_multi "$mode-aes128-keys64-sha512" "$mode" aes128-v2-keys64-sha512 16 AES128 \
		/dev/null -e AES128 -H sha512 --cleartextkey "$vectors/keys64.txt" "$dev" "$backing"
	expect_key "$mode-keys1-P-single" "$mode" aes256-keys1 32 AES256 /dev/null \
		-e AES256 -P "$vectors/keys1.txt" "$dev" "$backing"
done
# Long options and a cluster ("-rP" is read-only + key file with -e).
expect_multi keys64-long-options configure aes256-v2-keys64 32 AES256 /dev/null \
	--encryption=AES256 --cleartextkey="$vectors/keys64.txt" "$dev" "$backing"
expect_multi keys65-P-cluster configure aes128-v3-keys65 16 AES128 /dev/null \
	-e AES128 -rP "$vectors/keys65.txt" "$dev" "$backing"
# -p wins over -P, as in loop-AES.
expect_multi p-wins-over-P configure aes128-v3-keys65 16 AES128 "$vectors/keys65.txt" \
	-e AES128 -p 0 -P "$vectors/keys64.txt" "$dev" "$backing"

# gpg-encrypted key files (-K, -G), made here; the passphrase on -p or in -P.
if command -v gpg >/dev/null; then
	gh=$tmp/gnupg
	mkdir -m 700 "$gh"
	printf '%s\n' 'gpg secret passphrase 4711' >"$tmp/gpg.pass"
	printf '%s\n' 'wrong gpg secret passphrase' >"$tmp/gpg.wrong"
	printf '%s\n' 12345678901234567890 >"$tmp/gpg.upstream"
	for f in keys1 keys64 keys65; do
		gpg --homedir "$gh" --batch --quiet --pinentry-mode loopback --passphrase-fd 3 \
			--symmetric -o "$tmp/$f.gpg" "$vectors/$f.txt" 3<"$tmp/gpg.pass" 2>/dev/null ||
			fail "gpg-make-$f" "gpg --symmetric failed"
	done
	expect_key gpg-keys1-single configure aes128-keys1 16 AES128 "$tmp/gpg.pass" \
		-e AES128 -K "$tmp/keys1.gpg" -G "$gh" -p 0 "$dev" "$backing"
	expect_multi gpg-keys64-v2 fallback aes192-v2-keys64 24 AES192 "$tmp/gpg.pass" \
		-e AES192 -K "$tmp/keys64.gpg" -G "$gh" -p 0 "$dev" "$backing"
	expect_multi gpg-keys65-v3 configure aes256-v3-keys65 32 AES256 "$tmp/gpg.pass" \
		-e AES256 --gpgkey "$tmp/keys65.gpg" --gpghome "$gh" -p 0 "$dev" "$backing"
	expect_multi gpg-keys65-pass-in-P configure aes128-v3-keys65 16 AES128 /dev/null \
		-e AES128 -K "$tmp/keys65.gpg" -G "$gh" -P "$tmp/gpg.pass" "$dev" "$backing"
	# Upstream aespipe's gpg key files give what their cleartext gives.
	for i in 1 2 3; do
		up=$vectors/aespipe/gpgkey$i
		[ -r "$up.asc" ] || continue
		run_losetup configure /dev/null -e AES128 -P "$up.txt" "$dev" "$backing"
		grep '^LOOP' "$log" >"$tmp/want.log"
		run_losetup configure "$tmp/gpg.upstream" -e AES128 -K "$up.asc" -G "$gh" -p 0 "$dev" "$backing"
		if [ "$rc" -eq 0 ] && [ -s "$tmp/want.log" ] && grep '^LOOP' "$log" | cmp -s - "$tmp/want.log"; then
			pass "gpg-upstream-gpgkey$i"
		else
			fail "gpg-upstream-gpgkey$i" "losetup -K gpgkey$i.asc (exit $rc) differs from -P gpgkey$i.txt: $(head -c 300 "$tmp/err")"
		fi
	done
else
	skip gpg "gpg is not installed"
fi

# -H random: 65 distinct random keys, v3, nothing read (no terminal either).
: >"$log"
AESLOOP_SHIM_LOG=$log AESLOOP_SHIM_MODE=configure LD_PRELOAD=$shim setsid -w "$losetup" \
	-e AES256 -H random "$dev" "$backing" </dev/null >/dev/null 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^LOOP_CONFIGURE type=16 keysize=32 name=AES256 ' "$log" &&
   grep -q '^LOOP_MULTI_KEY_SETUP_V3 n=65 .* distinct=65$' "$log" && grep -qx 'KEYSCAN 0' "$log"; then
	pass random-keys
else
	fail random-keys "losetup -H random (exit $rc): $(head -c 200 "$tmp/err") shim log: $(tr '\n' ';' <"$log" | head -c 600)"
fi
run_losetup configure /dev/null -e AES128 -H random "$dev" "$backing"
s0a=$(sed -n 's/^LOOP_MULTI_KEY_SETUP_V3 n=65 s0=\([0-9a-f]*\) .*/\1/p' "$log")
run_losetup configure /dev/null -e AES128 -H random "$dev" "$backing"
s0b=$(sed -n 's/^LOOP_MULTI_KEY_SETUP_V3 n=65 s0=\([0-9a-f]*\) .*/\1/p' "$log")
if [ -n "$s0a" ] && [ "$s0a" != "$s0b" ]; then
	pass random-keys-fresh
else
	fail random-keys-fresh "two runs of -H random gave slot 0 '$s0a' and '$s0b'"
fi

# -o @N: lo_offset -N; -s is --sizelimit; -I sets lo_init[0].
run_losetup configure "$tmp/pass.long" -e AES128 -p 0 -o @8192 -s 16384 -I 7 "$dev" "$backing"
if grep -q "^LOOP_CONFIGURE type=16 keysize=16 name=AES128 key=$(key_of aes128-pass) offset=-8192 sizelimit=16384 .* init=7$" "$log"; then
	pass offset-at-sizelimit-loinit
else
	fail offset-at-sizelimit-loinit "losetup -o @8192 -s 16384 -I 7: shim log: $(tr '\n' ';' <"$log")"
fi
run_losetup configure /dev/null -o @4096 "$dev" "$backing"
if grep -q "^LOOP_CONFIGURE type=0 .* offset=-4096 " "$log"; then
	pass offset-at-plain
else
	fail offset-at-plain "losetup -o @4096 (no -e): shim log: $(tr '\n' ';' <"$log")"
fi

# -F: the options and the file from the fstab line with loop=<device>.
fstab=$tmp/fstab
{
	echo '# a comment line'
	echo '/dev/sdz9  /other  ext4  defaults,loop=/dev/loop9,encryption=AES128  0 0'
	echo "$backing  /secret  ext4  defaults,noauto,loop=$dev,encryption=AES256,offset=@4096,cleartextkey=$vectors/keys65.txt  0 0"
} >"$fstab"
# (The fake device has the size the offset leaves, for util-linux's size check.)
truncate -s $((1048576 - 4096)) "$dev"
LIBMOUNT_FSTAB=$fstab expect_multi fstab-F configure aes256-v3-keys65 32 AES256 /dev/null -F "$dev"
if grep -q "^LOOP_CONFIGURE .* offset=-4096 .* file=$backing" "$log"; then
	pass fstab-F-offset-file
else
	fail fstab-F-offset-file "losetup -F: shim log: $(tr '\n' ';' <"$log" | head -c 400)"
fi
# The command line wins over the fstab line.
LIBMOUNT_FSTAB=$fstab expect_multi fstab-F-cmdline-wins configure aes128-v2-keys64 16 AES128 /dev/null \
	-F -e AES128 -P "$vectors/keys64.txt" "$dev"
truncate -s 0 "$dev"

# A failing multi-key ioctl: the device is detached again, with a message.
for mode in configure fallback; do
	: >"$log"
	AESLOOP_SHIM_LOG=$log AESLOOP_SHIM_MODE=$mode AESLOOP_SHIM_FAIL=multi LD_PRELOAD=$shim \
		"$losetup" -e AES128 -P "$vectors/keys65.txt" "$dev" "$backing" </dev/null >/dev/null 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ] && grep -q 'multi-key set-up (multi-key-v3) failed: Invalid argument' "$tmp/err" &&
	   grep -q '^LOOP_MULTI_KEY_SETUP_V3 ' "$log" &&
	   sed -n '/^LOOP_MULTI_KEY_SETUP_V3 /,$p' "$log" | grep -q '^LOOP_CLR_FD' &&
	   grep -qx 'KEYSCAN 0' "$log"; then
		pass "$mode-multi-key-failure-detaches"
	else
		fail "$mode-multi-key-failure-detaches" "exit $rc, '$(head -c 300 "$tmp/err")', shim log: $(tr '\n' ';' <"$log" | head -c 500)"
	fi
done

# A busy page cache (udev probing the device just bound): the driver answers
# the slots with EAGAIN and changes nothing; losetup tries again, as util-linux
# does for LOOP_SET_STATUS64, and the setup stands.  Seen in a guest as a
# "multi-key set-up (multi-key-v3) failed: Resource temporarily unavailable".
AESLOOP_SHIM_BUSY=3 run_losetup configure /dev/null -e AES128 -P "$vectors/keys65.txt" "$dev" "$backing"
if [ "$rc" -eq 0 ] && [ "$(grep -c '^LOOP_MULTI_KEY_SETUP_V3 ' "$log")" = 4 ] &&
   ! grep -q '^LOOP_CLR_FD' "$log" && grep -qx 'KEYSCAN 0' "$log"; then
	pass multi-key-busy-retried
else
	fail multi-key-busy-retried "exit $rc, '$(head -c 300 "$tmp/err")', shim log: $(tr '\n' ';' <"$log" | head -c 500)"
fi
# Busy for good: the retries end (39 pauses of 250 ms), the device is
# detached, the message says why, and a v3 driver is not given v2 instead
# (the fallback -H random keys take on a driver without v3).
t0=$SECONDS
AESLOOP_SHIM_BUSY=1000 run_losetup configure /dev/null -e AES128 -H random "$dev" "$backing"
if [ "$rc" -ne 0 ] &&
   grep -q 'multi-key set-up (multi-key-v3) failed: Resource temporarily unavailable' "$tmp/err" &&
   [ "$(grep -c '^LOOP_MULTI_KEY_SETUP_V3 ' "$log")" = 40 ] &&
   ! grep -q '^LOOP_MULTI_KEY_SETUP ' "$log" && [ $((SECONDS - t0)) -ge 9 ] &&
   sed -n '/^LOOP_MULTI_KEY_SETUP_V3 /,$p' "$log" | grep -q '^LOOP_CLR_FD' &&
   grep -qx 'KEYSCAN 0' "$log"; then
	pass multi-key-busy-gives-up
else
	fail multi-key-busy-gives-up "exit $rc after $((SECONDS - t0)) s, '$(head -c 300 "$tmp/err")', shim log: $(tr '\n' ';' <"$log" | head -c 500)"
fi

# Stock setups still work and carry no key.
zero_key=$(printf '0%.0s' $(seq 64))
run_losetup configure /dev/null -P "$dev" "$backing"
if [ "$rc" -eq 0 ] && grep -q "^LOOP_CONFIGURE type=0 keysize=0 name= key=$zero_key offset=0 sizelimit=0 flags=8 " "$log"; then
	pass stock-partscan
else
	fail stock-partscan "losetup -P (exit $rc): $(head -c 200 "$tmp/err") shim log: $(tr '\n' ';' <"$log")"
fi
run_losetup fallback /dev/null -r --sizelimit 8192 -o 512 "$dev" "$backing"
if grep -q "^LOOP_SET_STATUS64 type=0 keysize=0 name= key=$zero_key offset=512 sizelimit=8192 flags=1 " "$log"; then
	pass stock-readonly-offset-sizelimit
else
	fail stock-readonly-offset-sizelimit "losetup -r --sizelimit -o: shim log: $(tr '\n' ';' <"$log")"
fi

# losetup --list --json and --raw: MAJ:MIN and BACK-MAJ:MIN as bare values
# ("7:0"), not padded for the table ("  7:0  ") as util-linux 2.38.1 printed
# them (bare upstream since 2.39.3; series-2.38 backports it).  The shim
# answers LOOP_GET_STATUS64 as for a device bound to a file on 8:17; the
# node is a real loop device's (MAJ:MIN comes from its node or sysfs),
# opened read-only, and no loop ioctl reaches its driver.
loopnode=
for n in /dev/loop[0-9]*; do
	if [ -b "$n" ]; then
		loopnode=$n
		break
	fi
done
if [ -z "$loopnode" ]; then
	skip list-bare-majmin "no /dev/loopN block device on this host"
else
	majmin=$((0x$(stat -c %t "$loopnode"))):$((0x$(stat -c %T "$loopnode")))
	AESLOOP_SHIM_STATUS=8:17 run_losetup configure /dev/null --list --json \
		-O NAME,MAJ:MIN,BACK-MAJ:MIN "$loopnode"
	if [ "$rc" -eq 0 ] && grep -qx "  *\"maj:min\": \"$majmin\"," "$tmp/out" &&
	   grep -qx '  *"back-maj:min": "8:17"' "$tmp/out"; then
		pass list-json-bare-majmin
	else
		fail list-json-bare-majmin "losetup --list --json (exit $rc), expected \"$majmin\" and \"8:17\": $(tr '\n' ' ' <"$tmp/out" | head -c 300)"
	fi
	AESLOOP_SHIM_STATUS=8:17 run_losetup configure /dev/null --list --raw --noheadings \
		-O MAJ:MIN,BACK-MAJ:MIN "$loopnode"
	if [ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = "$majmin 8:17" ]; then
		pass list-raw-bare-majmin
	else
		fail list-raw-bare-majmin "losetup --list --raw (exit $rc): '$(head -c 200 "$tmp/out")', expected '$majmin 8:17'"
	fi
	# The table still lines them up.
	AESLOOP_SHIM_STATUS=8:17 run_losetup configure /dev/null --list --noheadings \
		-O BACK-MAJ:MIN,NAME "$loopnode"
	if [ "$rc" -eq 0 ] && grep -q "^       8:17  *$loopnode" "$tmp/out"; then
		pass list-table-aligned-majmin
	else
		fail list-table-aligned-majmin "losetup --list (exit $rc): '$(head -c 200 "$tmp/out")'"
	fi
fi

# The size warnings after a setup: from what the device gets of the file,
# its size less the offset (-o N, or loop-AES's -o @N), or the size limit.
# (The fake device has the size the kernel would give it, whole 512-byte
# sectors of that, for util-linux's size check.)
# expect_size_warning NAME WARNING-PATTERN|none DEVSIZE INPUT ARGS...
expect_size_warning() {
	local name=$1 want=$2 devsize=$3 input=$4
	shift 4
	truncate -s 1000 "$tmp/file1000"
	truncate -s "$devsize" "$dev"
	run_losetup configure "$input" "$@" "$dev" "$tmp/file1000"
	if [ "$rc" -ne 0 ]; then
		fail "$name" "losetup $* (exit $rc): $(head -c 300 "$tmp/err")"
	elif [ "$want" = none ] && grep -q 'Warning' "$tmp/err"; then
		fail "$name" "losetup $*: unexpected warning: $(head -c 300 "$tmp/err")"
	elif [ "$want" != none ] && ! grep -q "$want" "$tmp/err"; then
		fail "$name" "losetup $*: no warning matching '$want': '$(head -c 300 "$tmp/err")'"
	else
		pass "$name"
	fi
}
partial='Warning: file does not \(fit into\|end on\) a 512-byte sector'
expect_size_warning size-warn-partial-sector "$partial" 512 /dev/null
expect_size_warning size-offset-leaves-512 none 512 /dev/null -o 488
expect_size_warning size-offset-leaves-400 'Warning: file is smaller than 512 bytes' 0 /dev/null -o 600
expect_size_warning size-sizelimit-512 none 512 /dev/null --sizelimit 512
expect_size_warning size-offset-sizelimit-600 "$partial" 512 /dev/null -o 100 --sizelimit 600
expect_size_warning size-at-offset-leaves-512 none 512 "$tmp/pass.long" -e AES128 -p 0 -o @488
expect_size_warning size-at-offset-leaves-900 "$partial" 512 "$tmp/pass.long" -e AES128 -p 0 -o @100
truncate -s 0 "$dev"

# expect_refusal NAME PATTERN INPUT ARGS...: fails with a clear message
# before any loop ioctl, open of the device or backing file, or loop-control.
expect_refusal() {
	local name=$1 pattern=$2 input=$3
	shift 3
	run_losetup configure "$input" "$@"
	if [ "$rc" -eq 0 ]; then
		fail "$name" "losetup $* exited 0, expected a failure"
	elif ! grep -q -- "$pattern" "$tmp/err"; then
		fail "$name" "losetup $* (exit $rc): message '$(head -c 300 "$tmp/err")' does not match '$pattern'"
	elif grep -q '^LOOP' "$log"; then
		fail "$name" "losetup $* issued loop ioctls: $(tr '\n' ';' <"$log")"
	elif grep -qF -e "$pass_long" -e 'short-secret' "$tmp/err"; then
		fail "$name" "losetup $*: the passphrase appears in the message"
	elif [ "$have_strace" = 1 ] && ! no_device_touched "$input" "$@"; then
		fail "$name" "losetup $* touched devices: $(head -c 300 "$tmp/strace.hits")"
	else
		pass "$name"
	fi
}

# no_device_touched INPUT ARGS...: under strace, losetup opens neither the
# device, the backing file nor any /dev/loop*, and issues no loop ioctl.
no_device_touched() {
	local input=$1
	shift
	strace -f -qq -e trace=open,openat,ioctl -o "$tmp/strace" \
		env AESLOOP_SHIM_LOG=/dev/null LD_PRELOAD="$shim" "$losetup" "$@" \
		<"$input" >/dev/null 2>&1
	! grep -E "\"($dev|$backing|/dev/loop[^\"]*)\"|ioctl\([0-9]+, (LOOP_|0x4c)" \
		"$tmp/strace" >"$tmp/strace.hits"
}

printf '%s\n' 'short-secret' >"$tmp/pass.short"
printf '%s\n' 'nineteen-characters' >"$tmp/pass.19"
# A key file that cryptsetup would read differently (CRLF line ends): set up with loop-AES's
# keys, and a warning that names the difference.
sed 's/$/\r/' "$vectors/keys65.txt" >"$tmp/keys65-crlf.txt"
run_losetup configure /dev/null -e AES128 -P "$tmp/keys65-crlf.txt" "$dev" "$backing"
if [ "$rc" -eq 0 ] && grep -q 'LOOP_MULTI_KEY_SETUP_V3' "$log" &&
   grep -q "warning: key file $tmp/keys65-crlf.txt: line 1 ends in a carriage return" "$tmp/err"; then
	pass crlf-key-file-warns
else
	fail crlf-key-file-warns "exit $rc: $(head -c 300 "$tmp/err")"
fi

# The kernel's own loop driver: said, with what to do, before the key is read.
AESLOOP_SYSFS=$tmp/sys-stock expect_refusal refuse-stock-driver \
	"the loop driver in the kernel is not aesloop's.*rmmod loop and modprobe loop" \
	"$tmp/pass.long" -e AES128 -p 0 "$dev" "$backing"
AESLOOP_SYSFS=$tmp/sys-builtin expect_refusal refuse-builtin-driver \
	"the loop driver is built into this kernel" \
	"$tmp/pass.long" -e AES128 -p 0 "$dev" "$backing"
expect_refusal refuse-short-passphrase 'passphrase is too short' "$tmp/pass.short" \
	-e AES128 -p 0 "$dev" "$backing"
expect_refusal refuse-19-characters 'at least 20' "$tmp/pass.19" \
	-e AES256 -p 0 "$dev" "$backing"
expect_refusal refuse-short-passphrase-find 'passphrase is too short' "$tmp/pass.short" \
	-f --show -e AES128 -p 0 "$backing"
expect_refusal refuse-empty-input 'passphrase is too short' /dev/null \
	-e AES128 -p 0 "$dev" "$backing"
expect_refusal refuse-unknown-cipher "unsupported cipher 'twofish'" "$tmp/pass.long" \
	-e twofish -p 0 "$dev" "$backing"
expect_refusal refuse-AES512 "unsupported cipher 'AES512'" "$tmp/pass.long" \
	-e AES512 -p 0 "$dev" "$backing"
expect_refusal refuse-unknown-hash "unknown password hash 'md5'" "$tmp/pass.long" \
	-e AES128 -H md5 -p 0 "$dev" "$backing"
expect_refusal refuse-C-not-a-number "iteration count 'abc'" "$tmp/pass.long" \
	-e AES128 -C abc -p 0 "$dev" "$backing"
expect_refusal refuse-bad-pass-fd 'invalid passphrase file descriptor' "$tmp/pass.long" \
	-e AES128 -p x "$dev" "$backing"
expect_refusal refuse-closed-pass-fd 'descriptor 9: cannot read: Bad file descriptor' "$tmp/pass.long" \
	-e AES128 -p 9 "$dev" "$backing"
head -n 63 "$vectors/keys64.txt" >"$tmp/keys63.txt"
head -c -5 "$vectors/keys65.txt" >"$tmp/keys65-cut.txt"
head -n 64 "$vectors/keys65.txt" >"$tmp/keys64-cut.txt"
printf 'abcdefg' >>"$tmp/keys64-cut.txt"
expect_refusal refuse-63-line-key-file 'unknown key data format: 63 lines' /dev/null \
	-e AES128 -P "$tmp/keys63.txt" "$dev" "$backing"
expect_refusal refuse-63-lines-on-fd 'unknown key data format: 63 lines' "$tmp/keys63.txt" \
	-e AES128 -p 0 "$dev" "$backing"
expect_refusal refuse-unterminated-last-line 'ends in the middle of line 65 .*truncated' /dev/null \
	-e AES128 -P "$tmp/keys65-cut.txt" "$dev" "$backing"
expect_refusal refuse-cut-line-after-64 'ends in the middle of line 65' /dev/null \
	-e AES128 -P "$tmp/keys64-cut.txt" "$dev" "$backing"
expect_refusal refuse-missing-key-file 'cannot open key file /nonexistent/keys' /dev/null \
	-e AES128 -P /nonexistent/keys "$dev" "$backing"
expect_refusal refuse-random-read-only 'phash=random makes a new volume' /dev/null \
	-e AES128 -H random -r "$dev" "$backing"
expect_refusal refuse-bad-random-mode "after 'random/' comes an octal mode" /dev/null \
	-e AES128 -H random/99 "$dev" "$backing"
expect_refusal refuse-cleartextkey-without-encryption 'require --encryption' /dev/null \
	--cleartextkey "$vectors/keys64.txt" "$dev" "$backing"
expect_refusal refuse-gpgkey-without-encryption 'require --encryption' /dev/null \
	-K /tmp/x.gpg "$dev" "$backing"
expect_refusal refuse-bad-at-offset "invalid offset '@0'" /dev/null \
	-e AES128 -P "$vectors/keys64.txt" -o @0 "$dev" "$backing"
expect_refusal refuse-bad-loinit 'failed to parse loinit' /dev/null \
	-e AES128 -P "$vectors/keys64.txt" -I x "$dev" "$backing"
printf '%s\n' "$backing /x ext4 loop=$dev,encryption=AES128 0 0" >>"$fstab"
LIBMOUNT_FSTAB=$fstab expect_refusal refuse-fstab-twice "2 lines of $fstab have the option loop=$dev" /dev/null \
	-F "$dev"
LIBMOUNT_FSTAB=$fstab expect_refusal refuse-fstab-missing "no line of $fstab has the option loop=/dev/loop-none" /dev/null \
	-F /dev/loop-none
if command -v gpg >/dev/null; then
	expect_refusal refuse-gpg-wrong-passphrase 'decryption failed (wrong passphrase?): gpg: decryption failed' \
		"$tmp/gpg.wrong" -e AES128 -K "$tmp/keys65.gpg" -G "$gh" -p 0 "$dev" "$backing"
	expect_refusal refuse-gpg-not-encrypted 'decryption failed' \
		"$tmp/gpg.pass" -e AES128 -K "$vectors/keys65.txt" -G "$gh" -p 0 "$dev" "$backing"
	expect_refusal refuse-gpg-missing-file 'cannot open gpg key file /nonexistent/k.gpg' \
		"$tmp/gpg.pass" -e AES128 -K /nonexistent/k.gpg -G "$gh" -p 0 "$dev" "$backing"
	AESLOOP_GPG=/nonexistent/gpg expect_refusal refuse-gpg-missing 'cannot run gpg /nonexistent/gpg: No such file' \
		"$tmp/gpg.pass" -e AES128 -K "$tmp/keys65.gpg" -G "$gh" -p 0 "$dev" "$backing"
	gpgconf --homedir "$gh" --kill gpg-agent >/dev/null 2>&1 || true
fi
expect_refusal refuse-pass-fd-without-encryption 'require --encryption' "$tmp/pass.long" \
	-p 0 "$dev" "$backing"
expect_refusal refuse-encryption-with-list 'allowed during loop device setup only' "$tmp/pass.long" \
	-e AES128 -p 0 -a

# -d: the key type is asked (LOOP_GET_STATUS64) before LOOP_CLR_FD, and a
# detach that leaves nothing bound says nothing more.  The notice of a
# detach deferred to the last close needs a bound block device, its sysfs
# and /proc: tests/vm/t-keys.sh (held-*) checks it.
run_losetup configure /dev/null -d "$dev"
if [ "$rc" -ne 0 ] && grep -q 'failed to use device' "$tmp/err"; then
	skip detach-status-first "this util-linux refuses -d of a regular file (is_loopdev)"
elif [ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] &&
     [ "$(grep '^LOOP' "$log" | tr '\n' ';')" = 'LOOP_OTHER 0x4c05;LOOP_CLR_FD;' ]; then
	pass detach-status-first
else
	fail detach-status-first "losetup -d (exit $rc): '$(head -c 300 "$tmp/err")', shim log: $(tr '\n' ';' <"$log")"
fi

# No terminal and no --pass-fd: a clear error, nothing touched.
if command -v setsid >/dev/null; then
	: >"$log"
	AESLOOP_SHIM_LOG=$log LD_PRELOAD=$shim setsid -w "$losetup" -e AES128 "$dev" "$backing" \
		</dev/null >/dev/null 2>"$tmp/err"
	rc=$?
	# Where systemd runs, its password agents are asked instead (and nobody answers here).
	if [ "$rc" -ne 0 ] && grep -Eq 'no terminal|got no answer' "$tmp/err" && ! grep -q '^LOOP' "$log"; then
		pass refuse-no-terminal
	else
		fail refuse-no-terminal "setsid losetup -e AES128 (exit $rc): '$(head -c 300 "$tmp/err")', shim log: $(tr '\n' ';' <"$log")"
	fi
fi

# The terminal prompt, without echo.
if command -v script >/dev/null && command -v timeout >/dev/null; then
	: >"$log"
	: >"$tmp/screen"
	# shellcheck disable=SC2094 # the screen is read while script writes it, as meant
	type_at_prompts "$tmp/screen" "$pass_long" |
		AESLOOP_SHIM_LOG=$log LD_PRELOAD=$shim timeout 20 \
			script -qec "'$losetup' -e AES128 '$dev' '$backing'" /dev/null >"$tmp/screen" 2>&1
	if ! grep -q 'Password: ' "$tmp/screen"; then
		fail tty-prompt "no 'Password: ' prompt: $(head -c 200 "$tmp/screen")"
	elif grep -qF "$pass_long" "$tmp/screen"; then
		fail tty-prompt "the passphrase was echoed"
	elif ! grep -q "^LOOP_CONFIGURE type=16 keysize=16 name=AES128 key=$(key_of aes128-pass) " "$log"; then
		fail tty-prompt "the typed passphrase did not give the aes128-pass key: $(tr '\n' ';' <"$log")"
	else
		pass tty-prompt-no-echo
	fi
	# -T: asked twice; the same twice works, two different ones do not.
	: >"$log"
	: >"$tmp/screen"
	# shellcheck disable=SC2094 # the screen is read while script writes it, as meant
	type_at_prompts "$tmp/screen" "$pass_long" "$pass_long" |
		AESLOOP_SHIM_LOG=$log LD_PRELOAD=$shim timeout 20 \
			script -qec "'$losetup' -e AES128 -T '$dev' '$backing'" /dev/null >"$tmp/screen" 2>&1
	if grep -q 'Retype password: ' "$tmp/screen" &&
	   grep -q "^LOOP_CONFIGURE type=16 keysize=16 name=AES128 key=$(key_of aes128-pass) " "$log"; then
		pass tty-ask-twice
	else
		fail tty-ask-twice "losetup -T: screen '$(head -c 200 "$tmp/screen")', shim log: $(tr '\n' ';' <"$log")"
	fi
	: >"$log"
	: >"$tmp/screen"
	# shellcheck disable=SC2094 # the screen is read while script writes it, as meant
	type_at_prompts "$tmp/screen" "$pass_long" "$pass_long, not the same" |
		AESLOOP_SHIM_LOG=$log LD_PRELOAD=$shim timeout 20 \
			script -qec "'$losetup' -e AES128 -T '$dev' '$backing'" /dev/null >"$tmp/screen" 2>&1
	if grep -q 'passphrases typed on /dev/tty are not identical' "$tmp/screen" && ! grep -q '^LOOP' "$log"; then
		pass tty-ask-twice-mismatch
	else
		fail tty-ask-twice-mismatch "losetup -T with two passphrases: screen '$(head -c 300 "$tmp/screen")', shim log: $(tr '\n' ';' <"$log")"
	fi
else
	skip tty-prompt "script(1) or timeout(1) missing"
fi

# swapon -o loop=,encryption=: the loop set up through util-linux's loop
# context, as losetup's (LOOP_CONFIGURE with the key, or LOOP_SET_FD and
# LOOP_SET_STATUS64 where the kernel has no LOOP_CONFIGURE), not by raw
# ioctls of its own.  swapon(2) on the stand-in device then fails.
swapon=$build/bin/swapon
want=$(key_of aes256-keys1)
for mode in configure fallback; do
	: >"$log"
	AESLOOP_SHIM_LOG=$log AESLOOP_SHIM_MODE=$mode LD_PRELOAD=$shim "$swapon" \
		-o "loop=$dev,encryption=AES256,cleartextkey=$vectors/keys1.txt" "$backing" \
		</dev/null >"$tmp/out" 2>"$tmp/err"
	swap_ioctls=(LOOP_CONFIGURE)
	[ "$mode" = fallback ] && swap_ioctls+=(LOOP_SET_STATUS64)
	why=
	for ioctl in "${swap_ioctls[@]}"; do
		grep -q "^$ioctl type=16 keysize=32 name=AES256 key=$want " "$log" ||
			why="no $ioctl with the keys1.txt key"
	done
	[ "$mode" = configure ] && grep -q '^LOOP_SET_STATUS64' "$log" &&
		why="LOOP_SET_STATUS64 although LOOP_CONFIGURE worked"
	grep -qx 'KEYSCAN 0' "$log" || why="key left in memory at exit: $(grep KEYSCAN "$log")"
	if [ -z "$why" ]; then
		pass "swapon-loop-context-$mode"
	else
		fail "swapon-loop-context-$mode" "$why; shim log: $(tr '\n' ';' <"$log"); stderr: $(head -c 200 "$tmp/err")"
	fi
done

tap_end
