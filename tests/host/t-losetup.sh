#!/bin/bash
# t-losetup.sh - the patched util-linux losetup (build/bin/losetup), on the
# host, without touching any loop device.
#
# A "device" here is a regular file under a temporary folder, and
# tests/host/shim/loop_ioctl_shim.c, preloaded, answers every loop ioctl
# itself (nothing reaches the kernel) and logs the struct loop_info64 that
# losetup hands over: with it the test checks the encrypt type, key size,
# cipher name and all 32 key bytes against the vectors, through
# LOOP_CONFIGURE and through the LOOP_SET_FD + LOOP_SET_STATUS64 fallback,
# and that no copy of the key is left in losetup's memory at exit.  Bad
# passphrases, cipher names and options must fail before any loop ioctl
# (and, checked with strace when installed, before any open of the device
# or backing file).  Real attaches happen in the VM tests.
#
# Environment (set by tests/host/run.sh): AESLOOP_TOP, AESLOOP_BUILD,
# AESLOOP_VECTORS.  Prints PASS/FAIL/SKIP lines; exits 1 on a failure.
set -uo pipefail

top=${AESLOOP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${AESLOOP_BUILD:-$top/build}
vectors=${AESLOOP_VECTORS:-$top/../shared/vectors}
losetup=$build/bin/losetup

failures=0
pass() { echo "PASS $1"; }
fail() {
	echo "FAIL $1: $2"
	failures=$((failures + 1))
}
skip() { echo "SKIP $1: $2"; }

if [ ! -x "$losetup" ]; then
	skip losetup "$losetup is not built (make losetup)"
	exit 0
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
	exit 1
fi
log=$tmp/shim.log
have_strace=0
command -v strace >/dev/null && have_strace=1

# --help shows the new options, and the stock ones are still there.
"$losetup" --help >"$tmp/help" 2>&1
for opt in '-e, --encryption <name>' '-p, --pass-fd <num>' '-H, --phash <name>' \
	'-S, --pseed <string>' '-C, --itercountk <num>' '-P, --partscan' \
	'-o, --offset <num>' '-f, --find'; do
	if grep -qF -- "$opt" "$tmp/help"; then
		pass "help-shows '$opt'"
	else
		fail "help-shows '$opt'" "losetup --help does not list '$opt'"
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
expect_refusal refuse-multi-key 'multi-key is not supported yet' /dev/null \
	-e AES128 -p 3 "$dev" "$backing" 3<"$vectors/keys64.txt"
expect_refusal refuse-pass-fd-without-encryption 'require --encryption' "$tmp/pass.long" \
	-p 0 "$dev" "$backing"
expect_refusal refuse-encryption-with-list 'allowed during loop device setup only' "$tmp/pass.long" \
	-e AES128 -p 0 -a

# No terminal and no --pass-fd: a clear error, nothing touched.
if command -v setsid >/dev/null; then
	: >"$log"
	AESLOOP_SHIM_LOG=$log LD_PRELOAD=$shim setsid -w "$losetup" -e AES128 "$dev" "$backing" \
		</dev/null >/dev/null 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ] && grep -q 'cannot open /dev/tty' "$tmp/err" && ! grep -q '^LOOP' "$log"; then
		pass refuse-no-terminal
	else
		fail refuse-no-terminal "setsid losetup -e AES128 (exit $rc): '$(head -c 300 "$tmp/err")', shim log: $(tr '\n' ';' <"$log")"
	fi
fi

# The terminal prompt, without echo.
if command -v script >/dev/null && command -v timeout >/dev/null; then
	: >"$log"
	{ sleep 1; printf '%s\n' "$pass_long"; } |
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
else
	skip tty-prompt "script(1) or timeout(1) missing"
fi

exit $((failures > 0))
