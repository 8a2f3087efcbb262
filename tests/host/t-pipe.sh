#!/bin/bash
# covers: aesloop-pipe, aespipe compat, single-key, multi-key v2, multi-key v3, key file, gpg key file, test vectors, passphrase prompt, invalid input
# t-pipe.sh - aesloop-pipe against Debian's aespipe, the vectors (single-key,
# multi-key-v2 and v3), gpg-encrypted key files, bad input, and the terminal
# passphrase prompt.
#
# For AES128/192/256, several -H, -S, -C and -O settings and random data of
# several sizes (some not a multiple of 512 or 16): both tools must give the
# same ciphertext bytes, and each must decrypt what the other encrypted.  The
# passphrase or key lines go on a -p descriptor or in a -P key file (1, 63,
# 64, 65 and 66 lines), or in a gpg-encrypted key file (-K, made here with
# gpg --symmetric in a temporary gpg home, and upstream aespipe's own).
# Part of the runs use the ASan+UBSan build, aesloop-pipe-san.
#
# Environment (set by tests/host/run.sh): AESLOOP_TOP, AESLOOP_BUILD,
# AESLOOP_VECTORS (default: ../shared/vectors beside the project).
# Prints TAP (tests/tap.sh); exits 1 if any check failed.
set -uo pipefail

top=${AESLOOP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${AESLOOP_BUILD:-$top/build}
vectors=${AESLOOP_VECTORS:-$top/../shared/vectors}
pipe=$build/bin/aesloop-pipe
pipe_san=$build/bin/aesloop-pipe-san
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
# shellcheck source=tests/host/type-at-prompts.sh
. "$(dirname "${BASH_SOURCE[0]}")/type-at-prompts.sh"

for p in "$pipe" "$pipe_san"; do
	if [ ! -x "$p" ]; then
		fail build "$p is missing: run make userspace host-tests"
		tap_end
		exit 1
	fi
done

pass_long='correct horse battery staple 2026'
printf '%s\n' "$pass_long" >"$tmp/pass.long"
printf '%s\n' 'tiny' >"$tmp/pass.tiny"
printf '%s\n' 'Unhashed1.key/for-AES256_needs_43+chars.0123' >"$tmp/pass.u1"

# Input files: zero bytes, not a multiple of 16, of 512, of the tool's buffer, more than
# all its buffers together (4 x 64 KiB, the writer thread's ring).
sizes=(0 1 100 512 513 4113 70000 131072 1000003)
for n in "${sizes[@]}"; do
	head -c "$n" /dev/urandom >"$tmp/in.$n"
	# What a decryption gives back: the input, zero-padded to 16 bytes.
	cp "$tmp/in.$n" "$tmp/padded.$n"
	pad=$(((16 - n % 16) % 16))
	head -c "$pad" /dev/zero >>"$tmp/padded.$n"
	# ... in the multi-key modes, to a whole sector.
	cp "$tmp/in.$n" "$tmp/padded-sector.$n"
	head -c $(((512 - n % 512) % 512)) /dev/zero >>"$tmp/padded-sector.$n"
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
		# aespipe decrypts ours, ours decrypts aespipe's: the input,
		# zero-padded as the ciphertext was (16 bytes, or a sector in
		# the multi-key modes).
		cp "$tmp/in.$n" "$tmp/want"
		truncate -s "$(stat -c %s "$tmp/a.enc")" "$tmp/want"
		if aespipe -d "$@" -p 3 <"$tmp/b.enc" 3<"$passf" 2>/dev/null | cmp -s - "$tmp/want"; then
			pass "$tag-aespipe-decrypts-ours"
		else
			fail "$tag-aespipe-decrypts-ours" "aespipe -d $* does not give back the (zero-padded) input of $cmd"
		fi
		if "$ours" -d "$@" -p 3 <"$tmp/a.enc" 3<"$passf" 2>"$tmp/b.err" | cmp -s - "$tmp/want"; then
			pass "$tag-ours-decrypts-aespipe"
		else
			fail "$tag-ours-decrypts-aespipe" "$(basename "$ours") -d $* does not give back the (zero-padded) input of aespipe $*: $(head -c 300 "$tmp/b.err")"
		fi
	done
}

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

	# Single-key: every key size with every -H, and with -S and -C.
	for e in AES128 AES192 AES256; do
		for h in sha256 sha384 sha512 rmd160 unhashed1 unhashed2; do
			n=pass-$e-$h
			case "$h" in sha384 | unhashed2) n=$n-san ;; esac
			run_both "$n" "$tmp/pass.long" 513 -- -e "$e" -H "$h"
		done
		run_both "pass-$e-seed-C" "$tmp/pass.long" 4113 -- -e "$e" -S pepper -C 1
	done

	# Multi-key key data (64 and 65 lines, and the odd counts aespipe
	# takes with a warning) on a descriptor, for every key size and -H.
	mk=$tmp/mk
	mkdir -p "$mk"
	head -n 63 "$vectors/keys65.txt" >"$mk/keys63.txt"
	{ cat "$vectors/keys65.txt"; head -n 1 "$vectors/keys64.txt"; } >"$mk/keys66.txt"
	{ head -n 2 "$vectors/keys64.txt"; } >"$mk/keys2.txt"
	for e in AES128 AES192 AES256; do
		for h in default sha256 sha384 sha512 rmd160 unhashed1 unhashed2; do
			hopt=()
			[ "$h" = default ] || hopt=(-H "$h")
			n=keys64-$e-$h
			case "$h" in sha512 | unhashed1) n=$n-san ;; esac
			run_both "$n" "$vectors/keys64.txt" 513 -- -e "$e" "${hopt[@]}"
			n=keys65-$e-$h
			case "$h" in sha384 | rmd160) n=$n-san ;; esac
			run_both "$n" "$vectors/keys65.txt" 513 -- -e "$e" "${hopt[@]}"
		done
		run_both "keys64-$e-sizes" "$vectors/keys64.txt" 1 100 70000 131072 -- -e "$e" -O 1000
		run_both "keys65-$e-sizes-san" "$vectors/keys65.txt" 1 100 70000 131072 -- -e "$e" -O 4294967295
		# Seed and -C do not apply to multi-key, in either tool.
		run_both "keys65-$e-seed-C-ignored" "$vectors/keys65.txt" 4113 -- -e "$e" -S pepper -C 2
		for odd in 2 63 66; do
			run_both "keys$odd-$e-lenient-as-aespipe" "$mk/keys$odd.txt" 513 -- -e "$e"
		done
	done
	if "$pipe" -e AES128 -p 3 <"$tmp/in.513" 3<"$mk/keys63.txt" 2>"$tmp/w.err" >/dev/null &&
	   grep -q 'warning: .*unknown key data format: 63 lines' "$tmp/w.err"; then
		pass keys63-warns
	else
		fail keys63-warns "no clear warning for a 63-line key file: $(head -c 300 "$tmp/w.err")"
	fi

	# Key files that loop-AES and cryptsetup read differently (CRLF line ends, lines of
	# unequal length): the keys are loop-AES's (aespipe's ciphertext), and the warning
	# names the difference.
	sed 's/$/\r/' "$vectors/keys65.txt" >"$mk/keys65-crlf.txt"
	sed '7s/$/xyz/' "$vectors/keys65.txt" >"$mk/keys65-unequal.txt"
	for v in crlf:'line 1 ends in a carriage return' unequal:'key lines of unequal length (line 7'; do
		f=$mk/keys65-${v%%:*}.txt
		run_both "keys65-${v%%:*}-as-aespipe" "$f" 513 -- -e AES256
		if "$pipe" -e AES256 -P "$f" <"$tmp/in.513" 2>"$tmp/w.err" >/dev/null &&
		   grep -qF "warning: key file $f: ${v#*:}" "$tmp/w.err"; then
			pass "keys65-${v%%:*}-warns"
		else
			fail "keys65-${v%%:*}-warns" "no clear warning: $(head -c 300 "$tmp/w.err")"
		fi
	done

	# -P: cleartext key files of 1, 64 and 65 lines; aespipe gives the same.
	for f in keys1 keys64 keys65; do
		want=padded-sector
		[ "$f" = keys1 ] && want=padded
		for e in AES128 AES192 AES256; do
			aespipe -e "$e" -P "$vectors/$f.txt" <"$tmp/in.70000" >"$tmp/a.enc" 2>/dev/null
			if "$pipe_san" -e "$e" -P "$vectors/$f.txt" <"$tmp/in.70000" 2>"$tmp/b.err" | cmp -s - "$tmp/a.enc" &&
			   "$pipe" -d -e "$e" -P "$vectors/$f.txt" <"$tmp/a.enc" | cmp -s - "$tmp/$want.70000"; then
				pass "$f-$e-P-both-ways"
			else
				fail "$f-$e-P-both-ways" "-P $f.txt -e $e: differs from aespipe or does not decrypt back: $(head -c 300 "$tmp/b.err")"
			fi
		done
	done

	# gpg-encrypted key files (-K), made here with gpg --symmetric, and
	# upstream aespipe's own (passphrase 12345678901234567890).
	if command -v gpg >/dev/null; then
		gh=$tmp/gnupg
		mkdir -m 700 "$gh"
		gpg_pass='gpg secret passphrase 4711'
		printf '%s\n' "$gpg_pass" >"$tmp/gpg.pass"
		printf '%s\n' 'wrong gpg secret passphrase' >"$tmp/gpg.wrong"
		printf '%s\n' 12345678901234567890 >"$tmp/gpg.upstream"
		gpg_ok=1
		for f in keys1 keys64 keys65; do
			if ! gpg --homedir "$gh" --batch --quiet --pinentry-mode loopback \
				--passphrase-fd 3 --symmetric --cipher-algo AES256 \
				-o "$mk/$f.gpg" "$vectors/$f.txt" 3<"$tmp/gpg.pass" 2>"$tmp/g.err"; then
				fail "gpg-make-$f" "gpg --symmetric failed: $(head -c 300 "$tmp/g.err")"
				gpg_ok=0
			fi
		done
		if [ "$gpg_ok" = 1 ]; then
			for f in keys1 keys64 keys65; do
				for e in AES128 AES256; do
					n=gpg-$f-$e
					[ "$e" = AES256 ] && n=$n-san
					run_both "$n" "$tmp/gpg.pass" 513 70000 -- -e "$e" -K "$mk/$f.gpg" -G "$gh"
				done
				# The passphrase from a -P file works as well (its line 1).
				aespipe -e AES192 -K "$mk/$f.gpg" -G "$gh" -P "$tmp/gpg.pass" \
					<"$tmp/in.4113" >"$tmp/a.enc" 2>/dev/null
				if "$pipe" -e AES192 -K "$mk/$f.gpg" -G "$gh" -P "$tmp/gpg.pass" \
					<"$tmp/in.4113" 2>"$tmp/b.err" | cmp -s - "$tmp/a.enc"; then
					pass "gpg-$f-passphrase-from-P"
				else
					fail "gpg-$f-passphrase-from-P" "-K $f.gpg -P passfile differs from aespipe: $(head -c 300 "$tmp/b.err")"
				fi
				# The same keys as the cleartext file.
				"$pipe" -e AES192 -P "$vectors/$f.txt" <"$tmp/in.4113" >"$tmp/c.enc" 2>/dev/null
				if cmp -s "$tmp/a.enc" "$tmp/c.enc"; then
					pass "gpg-$f-same-as-cleartext"
				else
					fail "gpg-$f-same-as-cleartext" "-K $f.gpg gives other keys than -P $f.txt"
				fi
			done
		fi
		for i in 1 2 3; do
			up=$vectors/aespipe/gpgkey$i.asc
			if [ -r "$up" ]; then
				run_both "upstream-gpgkey$i" "$tmp/gpg.upstream" 513 -- -e AES128 -K "$up" -G "$gh"
				if "$pipe" -e AES128 -P "$vectors/aespipe/gpgkey$i.txt" <"$tmp/in.513" 2>/dev/null |
				   cmp -s - <("$pipe" -e AES128 -K "$up" -G "$gh" -p 3 <"$tmp/in.513" 3<"$tmp/gpg.upstream" 2>/dev/null); then
					pass "upstream-gpgkey$i-same-as-txt"
				else
					fail "upstream-gpgkey$i-same-as-txt" "-K gpgkey$i.asc gives other keys than -P gpgkey$i.txt"
				fi
			fi
		done
		for p in "$pipe" "$pipe_san"; do
			b=$(basename "$p")
			expect_error "$b-gpg-wrong-passphrase" 'decryption failed (wrong passphrase?): gpg: decryption failed' \
				"$p" -e AES128 -K "$mk/keys64.gpg" -G "$gh" -p 3 3<"$tmp/gpg.wrong"
			expect_error "$b-gpg-empty-passphrase" 'decryption failed' \
				"$p" -e AES128 -K "$mk/keys64.gpg" -G "$gh" -p 3 3</dev/null
			expect_error "$b-gpg-not-encrypted" 'decryption failed' \
				"$p" -e AES128 -K "$vectors/keys64.txt" -G "$gh" -p 3 3<"$tmp/gpg.pass"
		done
		# No -G, and the user's home has no ~/.gnupg yet (a fresh root, as in t-fstab):
		# gpg --no-options would decrypt and still exit 2; the home is made, 0700.
		if [ "$(id -u)" = 0 ] && unshare --mount true 2>/dev/null; then
			# shellcheck disable=SC2016 # the inner shell's arguments
			out=$(unshare --mount --propagation private sh -c '
				mount -t tmpfs -o mode=0700 none "$6" || exit 9
				"$1" -e AES192 -K "$2" -p 3 <"$3" 3<"$4" >"$5" || exit 1
				stat -c %a "$6/.gnupg"
				gpgconf --kill gpg-agent >/dev/null 2>&1
			' sh "$pipe" "$mk/keys64.gpg" "$tmp/in.4113" "$tmp/gpg.pass" "$tmp/d.enc" \
				"$(getent passwd "$(id -u)" | cut -d: -f6)" 2>&1)
			"$pipe" -e AES192 -P "$vectors/keys64.txt" <"$tmp/in.4113" >"$tmp/c.enc" 2>/dev/null
			if [ "$out" = 700 ] && cmp -s "$tmp/c.enc" "$tmp/d.enc"; then
				pass gpg-default-home-made
			else
				fail gpg-default-home-made "without -G and ~/.gnupg: $out"
			fi
		else
			skip gpg-default-home-made "needs root and a mount namespace"
		fi
		gpgconf --homedir "$gh" --kill gpg-agent >/dev/null 2>&1 || true
	else
		skip gpg "gpg is not installed"
	fi
else
	skip aespipe-comparison "aespipe is not installed (tests/deps.sh installs it)"
fi

# The vectors, single-key and multi-key: plain64.img through aesloop-pipe
# (64-bit -O too), key files given with -P and on a -p descriptor.
if [ -r "$vectors/vectors.tsv" ]; then
	while IFS=$'\t' read -r name cipher src hash seed iter iv sha mode _; do
		[ "$name" = case ] && continue
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
			if [ "$mode" != single ]; then
				# The same on a descriptor, and back again.
				"$ours" "${args[@]}" -p 3 <"$vectors/plain64.img" >"$tmp/v.enc" \
					3<"$vectors/${src#file:}" 2>>"$tmp/b.err"
				got2=$(sha256sum <"$tmp/v.enc" | cut -d' ' -f1)
				if [ "$got2" != "$got" ]; then
					got="-p 3 gave $got2, -P gave $got"
				elif ! "$ours" -d "${args[@]}" -P "$vectors/${src#file:}" <"$tmp/v.enc" 2>>"$tmp/b.err" |
					cmp -s - "$vectors/plain64.img"; then
					got="decrypting did not give plain64.img back"
				fi
			fi
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

printf '%s\n' 'short-secret' >"$tmp/pass.short"
printf '%s\n' 'nineteen-characters' >"$tmp/pass.19"
for p in "$pipe" "$pipe_san"; do
	b=$(basename "$p")
	expect_error "$b-short-passphrase" 'passphrase is too short' "$p" -e AES128 -p 3 3<"$tmp/pass.short"
	expect_error "$b-19-characters" 'at least 20' "$p" -e AES256 -p 3 3<"$tmp/pass.19"
	expect_error "$b-unknown-cipher" "unsupported cipher 'AES512'" "$p" -e AES512 -p 3 3<"$tmp/pass.long"
	expect_error "$b-unknown-cipher-twofish" "unsupported cipher 'twofish'" "$p" -e twofish -p 3 3<"$tmp/pass.long"
	expect_error "$b-unknown-hash" "unknown password hash 'md5'" "$p" -e AES128 -H md5 -p 3 3<"$tmp/pass.long"
	expect_error "$b-random-hash" "is for losetup and mount" "$p" -e AES128 -H random -p 3 3<"$tmp/pass.long"
	expect_error "$b-C-not-a-number" "iteration count 'abc' is not a decimal number" "$p" -e AES128 -C abc -p 3 3<"$tmp/pass.long"
	expect_error "$b-C-trailing-garbage" "iteration count '5x'" "$p" -e AES128 -C 5x -p 3 3<"$tmp/pass.long"
	expect_error "$b-O-not-a-number" "-O: 'abc' is not a sector number" "$p" -e AES128 -O abc -p 3 3<"$tmp/pass.long"
	expect_error "$b-O-negative" "-O: '-1' is not a sector number" "$p" -e AES128 -O -1 -p 3 3<"$tmp/pass.long"
	expect_error "$b-p-not-a-number" "-p: 'x' is not a file descriptor number" "$p" -e AES128 -p x
	expect_error "$b-p-closed-fd" 'descriptor 7: cannot read: Bad file descriptor' "$p" -e AES128 -p 7
	expect_error "$b-keyfile-missing" 'cannot open key file /nonexistent/key' "$p" -e AES128 -P /nonexistent/key
	expect_error "$b-extra-argument" "unexpected argument 'file'" "$p" -e AES128 -p 3 file 3<"$tmp/pass.long"
	expect_error "$b-unsupported-option" 'option -A (gpg-agent socket) is not supported' "$p" -A /tmp/socket
	expect_error "$b-gpg-missing-file" 'cannot open gpg key file /nonexistent/k.gpg' "$p" -K /nonexistent/k.gpg -p 3 3<"$tmp/pass.long"
	expect_error "$b-gpg-not-runnable" 'cannot run gpg /nonexistent/gpg: No such file' env AESLOOP_GPG=/nonexistent/gpg "$p" -K "$vectors/aespipe/gpgkey1.asc" -p 3 3<"$tmp/pass.long"
	expect_error "$b-write-error" 'write to standard output failed' sh -c "'$p' -e AES128 -p 3 3<'$tmp/pass.long' >/dev/full"
	expect_error "$b-missing-argument" 'option -e needs an argument' "$p" -e
	if command -v setsid >/dev/null; then
		expect_error "$b-no-terminal" 'cannot open /dev/tty' setsid -w "$p" -e AES128
	fi
done

# The terminal: the prompt, no echo, and the terminal restored on SIGTERM.
if command -v script >/dev/null && command -v timeout >/dev/null; then
	aespipe_ref=$tmp/tty.ref
	"$pipe" -e AES128 -p 3 <"$tmp/in.513" >"$aespipe_ref" 3<"$tmp/pass.long"
	: >"$tmp/tty.screen"
	# shellcheck disable=SC2094 # the screen is read while script writes it, as meant
	type_at_prompts "$tmp/tty.screen" "$pass_long" |
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


# -v names the AES code really in use: one of the AES-NI/VAES engines when the program has
# them and this CPU has AES-NI (loop_aes_probe()), else the generic C code.
printf 'a passphrase of twenty characters\n' >"$tmp/verbose.pw"
said=$(head -c 4096 /dev/zero | "$pipe" -v -P "$tmp/verbose.pw" 2>&1 >/dev/null)
engine=$(sed -n 's/^aesloop-pipe: AES code \([a-z0-9-]*\), .*/\1/p' <<<"$said")
if [[ $(nm "$pipe" 2>/dev/null) == *aesloop_cbc_enc_aesni* ]] && grep -qw aes /proc/cpuinfo; then
	want='aesni|vaes-avx2|vaes-avx512'
else
	want=generic
fi
if [[ $engine =~ ^($want)$ ]]; then
	pass verbose-names-engine
else
	fail verbose-names-engine "-v said '$said', want the AES code $want"
fi

# Fed through a pipe: on two CPUs or fewer the tool writes in line then, with a file on
# standard input through its writer thread; the same bytes either way.
"$pipe" -e AES128 -p 3 3<"$tmp/pass.long" <"$tmp/in.1000003" >"$tmp/file.enc" 2>/dev/null
cat <"$tmp/in.1000003" | "$pipe" -e AES128 -p 3 3<"$tmp/pass.long" >"$tmp/piped.enc" 2>/dev/null
cat <"$tmp/file.enc" | "$pipe" -d -e AES128 -p 3 3<"$tmp/pass.long" >"$tmp/piped.dec" 2>/dev/null
if ! cmp -s "$tmp/file.enc" "$tmp/piped.enc"; then
	fail piped-input "cat | aesloop-pipe gave other bytes than aesloop-pipe <file"
elif ! cmp -s "$tmp/piped.dec" "$tmp/padded.1000003"; then
	fail piped-input "cat | aesloop-pipe -d did not give the input back"
else
	pass piped-input
fi

# A user without CAP_IPC_LOCK: mlockall(MCL_FUTURE) then counts every later mapping against
# RLIMIT_MEMLOCK (8 MiB by default), the writer thread's stack too; with the default 8 MiB
# stack the thread could not start.  The same output as root's.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	udir=$(mktemp -d)
	chmod 755 "$udir"
	cp "$pipe" "$tmp/in.1000003" "$tmp/pass.long" "$udir/"
	chmod 644 "$udir/in.1000003" "$udir/pass.long"
	"$pipe" -e AES128 -p 3 3<"$tmp/pass.long" <"$tmp/in.1000003" >"$tmp/root.enc" 2>/dev/null
	# shellcheck disable=SC2016 # the inner shell expands its own arguments
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		bash -c 'ulimit -S -l 8192 2>/dev/null; exec "$0" -e AES128 -p 3 3<"$1" <"$2"' \
		"$udir/aesloop-pipe" "$udir/pass.long" "$udir/in.1000003" >"$tmp/user.enc" 2>"$tmp/user.err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		fail unprivileged-memlock "as nobody (exit $rc): $(head -c 300 "$tmp/user.err")"
	elif ! cmp -s "$tmp/user.enc" "$tmp/root.enc"; then
		fail unprivileged-memlock "as nobody the output differs from root's"
	else
		pass unprivileged-memlock
	fi
	rm -rf "$udir"
else
	skip unprivileged-memlock "needs root, setpriv(1) and the user nobody"
fi

# --help and --version, as every program of the project answers them.
version=$(make -s --no-print-directory -C "$top" version)
if [ "$("$pipe" --version 2>&1)" = "aesloop-pipe (aesloop) $version" ] &&
   "$pipe" --help 2>&1 | grep -q '^usage: aesloop-pipe '; then
	pass help-version
else
	fail help-version "--version said '$("$pipe" --version 2>&1)'"
fi

tap_end
