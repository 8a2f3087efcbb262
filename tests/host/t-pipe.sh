#!/bin/bash
# t-pipe.sh - aesloop-pipe against Debian's aespipe, the single-key vectors,
# bad input, and the terminal passphrase prompt.
#
# For AES128/192/256, several -H, -S, -C and -O settings and random data of
# several sizes (some not a multiple of 512 or 16): both tools must give the
# same ciphertext bytes, and each must decrypt what the other encrypted.  The
# passphrase goes on a -p descriptor (or -P key file).  Part of the runs use
# the ASan+UBSan build, aesloop-pipe-san.
#
# Environment (set by tests/host/run.sh): AESLOOP_TOP, AESLOOP_BUILD,
# AESLOOP_VECTORS (default: ../shared/vectors beside the project).
# Prints PASS/FAIL/SKIP lines; exits 1 if any check failed.
set -uo pipefail

top=${AESLOOP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${AESLOOP_BUILD:-$top/build}
vectors=${AESLOOP_VECTORS:-$top/../shared/vectors}
pipe=$build/bin/aesloop-pipe
pipe_san=$build/bin/aesloop-pipe-san
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

pass() { echo "PASS $1"; }
fail() {
	echo "FAIL $1: $2"
	failures=$((failures + 1))
}
skip() { echo "SKIP $1: $2"; }

for p in "$pipe" "$pipe_san"; do
	if [ ! -x "$p" ]; then
		fail build "$p is missing: run make userspace host-tests"
		exit 1
	fi
done

pass_long='correct horse battery staple 2026'
printf '%s\n' "$pass_long" >"$tmp/pass.long"
printf '%s\n' 'tiny' >"$tmp/pass.tiny"
printf '%s\n' 'Unhashed1.key/for-AES256_needs_43+chars.0123' >"$tmp/pass.u1"

# Input files: zero bytes, not a multiple of 16, of 512, of the tool's buffer.
sizes=(0 1 100 512 513 4113 70000 131072)
for n in "${sizes[@]}"; do
	head -c "$n" /dev/urandom >"$tmp/in.$n"
	# What a decryption gives back: the input, zero-padded to 16 bytes.
	cp "$tmp/in.$n" "$tmp/padded.$n"
	pad=$(((16 - n % 16) % 16))
	head -c "$pad" /dev/zero >>"$tmp/padded.$n"
done

# run_both NAME PASSFILE SIZES... -- OPTIONS...: compare the two tools both ways.
run_both() {
	local name=$1 passf=$2 ours=$pipe
	shift 2
	local -a szs=()
	while [ "$1" != "--" ]; do
		szs+=("$1")
		shift
	done
	shift
	case "$name" in *san*) ours=$pipe_san ;; esac
	local n tag cmd
	for n in "${szs[@]}"; do
		tag="$name-$n"
		cmd="$(basename "$ours") $* -p 3 < in.$n, passphrase file $(basename "$passf")"
		if ! aespipe "$@" -p 3 <"$tmp/in.$n" >"$tmp/a.enc" 3<"$passf" 2>"$tmp/a.err"; then
			fail "$tag-aespipe" "aespipe $* failed: $(head -c 300 "$tmp/a.err")"
			continue
		fi
		if ! "$ours" "$@" -p 3 <"$tmp/in.$n" >"$tmp/b.enc" 3<"$passf" 2>"$tmp/b.err"; then
			fail "$tag-encrypt" "$cmd failed: $(head -c 300 "$tmp/b.err")"
			continue
		fi
		if cmp -s "$tmp/a.enc" "$tmp/b.enc"; then
			pass "$tag-same-ciphertext"
		else
			fail "$tag-same-ciphertext" "$cmd: ciphertext differs from aespipe's ($(stat -c %s "$tmp/b.enc") vs $(stat -c %s "$tmp/a.enc") bytes)"
		fi
		# aespipe decrypts ours, ours decrypts aespipe's.
		if aespipe -d "$@" -p 3 <"$tmp/b.enc" 3<"$passf" 2>/dev/null | cmp -s - "$tmp/padded.$n"; then
			pass "$tag-aespipe-decrypts-ours"
		else
			fail "$tag-aespipe-decrypts-ours" "aespipe -d $* does not give back the (zero-padded) input of $cmd"
		fi
		if "$ours" -d "$@" -p 3 <"$tmp/a.enc" 3<"$passf" 2>"$tmp/b.err" | cmp -s - "$tmp/padded.$n"; then
			pass "$tag-ours-decrypts-aespipe"
		else
			fail "$tag-ours-decrypts-aespipe" "$(basename "$ours") -d $* does not give back the (zero-padded) input of aespipe $*: $(head -c 300 "$tmp/b.err")"
		fi
	done
}

if command -v aespipe >/dev/null; then
	all=("${sizes[@]}")
	some=(100 513 70000)
	run_both aes128 "$tmp/pass.long" "${all[@]}" -- -e AES128
	run_both aes192-san "$tmp/pass.long" "${all[@]}" -- -e AES192
	run_both aes256 "$tmp/pass.long" "${all[@]}" -- -e AES256
	run_both aes-lowercase "$tmp/pass.long" 513 -- -e aes
	run_both default-cipher "$tmp/pass.long" 513 -- -S x
	run_both aes128-seed "$tmp/pass.long" "${some[@]}" -- -e AES128 -S pepper
	run_both aes192-seed-C3 "$tmp/pass.long" "${some[@]}" -- -e AES192 -S pepper -C 3
	run_both aes256-C2-san "$tmp/pass.long" "${some[@]}" -- -e AES256 -C 2
	run_both aes128-sha512 "$tmp/pass.long" "${some[@]}" -- -e AES128 -H sha512
	run_both aes256-sha384 "$tmp/pass.long" 513 -- -e AES256 -H sha384
	run_both aes256-sha256-san "$tmp/pass.long" 513 -- -e AES256 -H sha256
	run_both aes128-rmd160-short "$tmp/pass.tiny" "${some[@]}" -- -e AES128 -H rmd160
	run_both aes256-rmd160-seed-san "$tmp/pass.long" 513 -- -e AES256 -H rmd160 -S pepper
	run_both aes256-unhashed1 "$tmp/pass.u1" "${some[@]}" -- -e AES256 -H unhashed1
	run_both aes128-unhashed1-forced192 "$tmp/pass.long" 513 -- -e AES128 -H unhashed1
	run_both aes128-unhashed2-short "$tmp/pass.tiny" "${some[@]}" -- -e AES128 -H unhashed2
	run_both aes256-unhashed2-san "$tmp/pass.long" 513 -- -e AES256 -H unhashed2
	run_both aes128-O7 "$tmp/pass.long" "${some[@]}" -- -e AES128 -O 7
	run_both aes256-O-carry-san "$tmp/pass.long" 4113 -- -e AES256 -O 4294967295
	run_both aes192-all-options "$tmp/pass.long" 70000 -- -e AES192 -H sha512 -S s33d -C 1 -O 123456

	# -P: a 1-line cleartext key file.
	for n in 513 70000; do
		aespipe -e AES256 -P "$vectors/keys1.txt" <"$tmp/in.$n" >"$tmp/a.enc" 2>/dev/null
		if "$pipe_san" -e AES256 -P "$vectors/keys1.txt" <"$tmp/in.$n" 2>"$tmp/b.err" | cmp -s - "$tmp/a.enc"; then
			pass "aes256-keyfile-$n-same-ciphertext"
		else
			fail "aes256-keyfile-$n-same-ciphertext" "aesloop-pipe-san -e AES256 -P keys1.txt differs from aespipe: $(head -c 300 "$tmp/b.err")"
		fi
	done
else
	skip aespipe-comparison "aespipe is not installed (tests/deps.sh installs it)"
fi

# The single-key vectors: plain64.img through aesloop-pipe (64-bit -O too).
if [ -r "$vectors/vectors.tsv" ]; then
	while IFS=$'\t' read -r name cipher src hash seed iter iv sha mode _; do
		[ "$name" = case ] && continue
		[ "$mode" = single ] || continue
		args=(-e "$cipher" -O "$iv")
		[ "$hash" = default ] || args+=(-H "$hash")
		[ "$seed" = - ] || args+=(-S "$seed")
		[ "$iter" = 0 ] || args+=(-C "$iter")
		ours=$pipe
		case "$name" in *C5*) ours=$pipe_san ;; esac
		case "$src" in
		pass:*)
			printf '%s\n' "${src#pass:}" >"$tmp/vpass"
			got=$("$ours" "${args[@]}" -p 3 <"$vectors/plain64.img" 3<"$tmp/vpass" 2>"$tmp/b.err" | sha256sum | cut -d' ' -f1)
			;;
		file:*)
			got=$("$ours" "${args[@]}" -P "$vectors/${src#file:}" <"$vectors/plain64.img" 2>"$tmp/b.err" | sha256sum | cut -d' ' -f1)
			;;
		esac
		if [ "$got" = "$sha" ]; then
			pass "vector-$name"
		else
			fail "vector-$name" "$(basename "$ours") ${args[*]} on plain64.img: SHA-256 $got, expected $sha; $(head -c 300 "$tmp/b.err")"
		fi
	done <"$vectors/vectors.tsv"
else
	fail vectors "cannot read $vectors/vectors.tsv (set AESLOOP_VECTORS)"
fi

# expect_error NAME PATTERN CMD...: non-zero exit, no output, a clear message,
# and the passphrase never printed.
expect_error() {
	local name=$1 pattern=$2 rc
	shift 2
	"$@" <"$tmp/in.513" >"$tmp/err.out" 2>"$tmp/err.msg"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		fail "$name" "$* exited 0, expected an error"
	elif [ -s "$tmp/err.out" ]; then
		fail "$name" "$* wrote $(stat -c %s "$tmp/err.out") bytes to stdout despite the error"
	elif ! grep -q -- "$pattern" "$tmp/err.msg"; then
		fail "$name" "$* (exit $rc): message '$(head -c 300 "$tmp/err.msg")' does not match '$pattern'"
	elif grep -q -e "$pass_long" -e 'short-secret' "$tmp/err.msg"; then
		fail "$name" "$*: the passphrase appears in the error message"
	else
		pass "$name"
	fi
}

printf '%s\n' 'short-secret' >"$tmp/pass.short"
printf '%s\n' 'nineteen-characters' >"$tmp/pass.19"
for p in "$pipe" "$pipe_san"; do
	b=$(basename "$p")
	expect_error "$b-short-passphrase" 'passphrase is too short' "$p" -e AES128 -p 3 3<"$tmp/pass.short"
	expect_error "$b-19-characters" 'at least 20' "$p" -e AES256 -p 3 3<"$tmp/pass.19"
	expect_error "$b-unknown-cipher" "unsupported cipher 'AES512'" "$p" -e AES512 -p 3 3<"$tmp/pass.long"
	expect_error "$b-unknown-cipher-twofish" "unsupported cipher 'twofish'" "$p" -e twofish -p 3 3<"$tmp/pass.long"
	expect_error "$b-unknown-hash" "unknown password hash 'md5'" "$p" -e AES128 -H md5 -p 3 3<"$tmp/pass.long"
	expect_error "$b-random-hash" "not supported yet" "$p" -e AES128 -H random -p 3 3<"$tmp/pass.long"
	expect_error "$b-C-not-a-number" "iteration count 'abc' is not a decimal number" "$p" -e AES128 -C abc -p 3 3<"$tmp/pass.long"
	expect_error "$b-C-trailing-garbage" "iteration count '5x'" "$p" -e AES128 -C 5x -p 3 3<"$tmp/pass.long"
	expect_error "$b-O-not-a-number" "-O: 'abc' is not a sector number" "$p" -e AES128 -O abc -p 3 3<"$tmp/pass.long"
	expect_error "$b-O-negative" "-O: '-1' is not a sector number" "$p" -e AES128 -O -1 -p 3 3<"$tmp/pass.long"
	expect_error "$b-p-not-a-number" "-p: 'x' is not a file descriptor number" "$p" -e AES128 -p x
	expect_error "$b-p-closed-fd" 'descriptor 7: cannot read: Bad file descriptor' "$p" -e AES128 -p 7
	expect_error "$b-keyfile-missing" 'cannot open key file /nonexistent/key' "$p" -e AES128 -P /nonexistent/key
	expect_error "$b-keyfile-multi-key" 'multi-key is not supported yet' "$p" -e AES128 -P "$vectors/keys64.txt"
	expect_error "$b-extra-argument" "unexpected argument 'file'" "$p" -e AES128 -p 3 file 3<"$tmp/pass.long"
	expect_error "$b-unsupported-option" 'option -K is not supported yet' "$p" -K key.gpg
	expect_error "$b-missing-argument" 'option -e needs an argument' "$p" -e
	if command -v setsid >/dev/null; then
		expect_error "$b-no-terminal" 'cannot open /dev/tty' setsid -w "$p" -e AES128
	fi
done

# The terminal: the prompt, no echo, and the terminal restored on SIGTERM.
if command -v script >/dev/null && command -v timeout >/dev/null; then
	aespipe_ref=$tmp/tty.ref
	"$pipe" -e AES128 -p 3 <"$tmp/in.513" >"$aespipe_ref" 3<"$tmp/pass.long"
	{ sleep 1; printf '%s\n' "$pass_long"; } |
		timeout 20 script -qec "'$pipe' -e AES128 <'$tmp/in.513' >'$tmp/tty.enc'" /dev/null >"$tmp/tty.screen" 2>&1
	if ! grep -q 'Password: ' "$tmp/tty.screen"; then
		fail tty-prompt "no 'Password: ' prompt on the terminal: $(head -c 200 "$tmp/tty.screen" | od -c | head -3)"
	elif grep -q "$pass_long" "$tmp/tty.screen"; then
		fail tty-no-echo "the passphrase was echoed on the terminal"
	elif ! cmp -s "$tmp/tty.enc" "$aespipe_ref"; then
		fail tty-passphrase "the passphrase typed on the terminal gave another ciphertext than the same one on -p"
	else
		pass tty-prompt-no-echo
	fi

	rm -f "$tmp/pid"
	(timeout 20 script -qec "sh -c '\"$pipe\" -e AES128 <\"$tmp/in.513\" >/dev/null & echo \$! >\"$tmp/pid\"; wait; stty -a'" \
		/dev/null < <(sleep 5) >"$tmp/tty.stty" 2>&1) &
	spawner=$!
	for _ in $(seq 100); do
		[ -s "$tmp/pid" ] && break
		sleep 0.1
	done
	sleep 0.5
	if [ -s "$tmp/pid" ] && kill -TERM "$(cat "$tmp/pid")" 2>/dev/null; then
		wait "$spawner"
		if grep -qE -- '(^| )-echo( |$)' "$tmp/tty.stty"; then
			fail tty-restored-on-sigterm "echo stayed off after SIGTERM during the prompt"
		elif grep -qE -- '(^| )echo( |$)' "$tmp/tty.stty"; then
			pass tty-restored-on-sigterm
		else
			fail tty-restored-on-sigterm "no stty output: $(head -c 300 "$tmp/tty.stty")"
		fi
	else
		wait "$spawner"
		fail tty-restored-on-sigterm "aesloop-pipe did not start under script(1)"
	fi
else
	skip tty "script(1) or timeout(1) missing"
fi

exit $((failures > 0))
