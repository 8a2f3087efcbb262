#!/bin/bash
# covers: aesloop-reencrypt, crash consistency, aespipe compat, single-key, multi-key v2, multi-key v3, key file, gpg key file, invalid input
# t-reencrypt.sh - aesloop-reencrypt on files: each conversion (single-key to
# v3, v2 to v3, v3 to single-key, a new passphrase, another key length, with
# -o N, -o @N and -s) checked with Debian's aespipe, which must decrypt the
# result to the original plaintext, byte for byte; the bytes outside the
# data area untouched.  Then the crash tests: the program killed (SIGKILL,
# delivered by strace on entry to its Nth pwrite64, fdatasync, rename or
# unlink, N at random) at 100 points, each run resumed (sometimes killed
# again) and the volume compared; torn writes (a journal data area, a
# record, a volume chunk half written) made by hand and resumed; write
# errors (EIO injected); resumes with a wrong key refused with nothing
# written; and the refusals of bad input.  Part of the runs use the
# ASan+UBSan build, aesloop-reencrypt-san.
#
# Environment (set by tests/host/run.sh): AESLOOP_TOP, AESLOOP_BUILD,
# AESLOOP_VECTORS.  REENCRYPT_KILLS: how many kill points (default 100).
# Prints TAP (tests/tap.sh); exits 1 if any check failed.
set -uo pipefail

top=${AESLOOP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${AESLOOP_BUILD:-$top/build}
vectors=${AESLOOP_VECTORS:-$top/../shared/vectors}
re=$build/bin/aesloop-reencrypt
re_san=$build/bin/aesloop-reencrypt-san
kills=${REENCRYPT_KILLS:-100}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"

for p in "$re" "$re_san"; do
	if [ ! -x "$p" ]; then
		fail build "$p is missing: run make userspace host-tests"
		tap_end
		exit 1
	fi
done
if ! command -v aespipe >/dev/null; then
	skip reencrypt "no aespipe (Debian's aespipe package, tests/deps.sh installs it)"
	tap_end
	exit 0
fi

# The keys: a passphrase (single-key), and the vectors' key files of 64
# lines (multi-key-v2) and 65 (v3); a second passphrase and a v3 key file of
# other keys.
printf '%s\n' 'correct horse battery staple 2026' >"$tmp/pass1"
printf '%s\n' 'another passphrase of twenty chars' >"$tmp/pass2"
printf '%s\n' 'wrong passphrase, twenty chars long' >"$tmp/wrong"
cp "$vectors/keys64.txt" "$tmp/keys64"
cp "$vectors/keys65.txt" "$tmp/keys65"
# keys65b: keys65's lines reversed (still 65 keys of equal length).
tac "$vectors/keys65.txt" >"$tmp/keys65b"

# The plaintext: an ext4 file system (the old key's check wants a known
# signature) with random data in it, 4 MiB, plus a tail that is not a
# whole sector.
plain=$tmp/plain.img
head -c 4M /dev/zero >"$plain"
mkfs.ext4 -q -F -E root_owner=0:0 "$plain" >/dev/null 2>&1 ||
	mke2fs -q -F -t ext4 "$plain" >/dev/null 2>&1
head -c 2M /dev/urandom | dd of="$plain" bs=1M seek=1 conv=notrunc status=none

# aespipe_enc KEYFILE CIPHER IVSECT <in >out: aespipe's encryption, -O the IV sector.
aespipe_enc() { aespipe -e "$2" -O "$3" -P "$1" -q; }
aespipe_dec() { aespipe -d -e "$2" -O "$3" -P "$1" -q; }

# make_volume NAME KEYFILE CIPHER [OFFSET [IV-FREE]]: NAME = a random head of
# OFFSET bytes, then the plaintext encrypted by aespipe (IV sector
# OFFSET/512 unless IV-FREE), then 300 random bytes (not a whole sector).
make_volume() {
	local v=$tmp/$1 off=${4:-0} iv=0
	[ -n "${5-}" ] || iv=$((off / 512))
	head -c "$off" /dev/urandom >"$v"
	aespipe_enc "$2" "$3" "$iv" <"$plain" >>"$v"
	head -c 300 /dev/urandom >>"$v"
	cp "$v" "$v.orig"
}

# outside_same NAME OFFSET DATALEN: the bytes before and after the data area unchanged.
outside_same() {
	local v=$tmp/$1 off=$2 len=$3
	cmp -s <(head -c "$off" "$v") <(head -c "$off" "$v.orig") &&
		cmp -s <(tail -c +$((off + len + 1)) "$v") <(tail -c +$((off + len + 1)) "$v.orig")
}

# decrypts_to_plain NAME KEYFILE CIPHER OFFSET IVSECT: aespipe decrypts the data area of
# NAME with the key to the plaintext.
decrypts_to_plain() {
	local v=$tmp/$1 len
	len=$(stat -c %s "$plain")
	# (head first: it reads a file, so that no stage of the pipe ends before
	# its writer and fails it by SIGPIPE under pipefail)
	head -c $(($4 + len)) "$v" | tail -c "$len" | aespipe_dec "$2" "$3" "$5" |
		cmp -s - "$plain"
}

# convert NAME ARGS...: reencrypt NAME (tmp/NAME) with ARGS; the output in tmp/NAME.out.
convert() {
	local v=$1
	shift
	"$re" "$@" "$tmp/$v" >"$tmp/$v.out" 2>&1
}

plain_len=$(stat -c %s "$plain")

# --- conversions, each checked with aespipe --------------------------------------------
# name, old key, old cipher, new key, new cipher, offset, iv-free (@), extra options
conversions=(
	"single-to-v3 pass1 AES128 keys65 AES128 0 -"
	"single-to-v3-aes256 pass1 AES128 keys65 AES256 0 -"
	"v2-to-v3 keys64 AES256 keys65 AES256 0 -"
	"v3-to-single keys65 AES192 pass2 AES192 0 -"
	"single-new-passphrase pass1 AES256 pass2 AES256 0 -"
	"v3-new-keys keys65 AES128 keys65b AES128 0 -"
	"single-to-v3-offset pass1 AES128 keys65 AES128 8192 -"
	"single-to-v3-at-offset pass1 AES128 keys65 AES128 4096 @"
	"v2-to-single-odd-offset keys64 AES128 pass2 AES256 1000 -"
)
for c in "${conversions[@]}"; do
	read -r name ok oc nk nc off at <<<"$c"
	ivfree=
	oarg=()
	iv=$((off / 512))
	if [ "$at" = @ ]; then
		ivfree=1
		iv=0
		oarg=(-o "@$off")
	elif [ "$off" != 0 ]; then
		oarg=(-o "$off")
	fi
	make_volume "$name" "$tmp/$ok" "$oc" "$off" "$ivfree"
	# -s: exactly the plaintext's length, so that the 300 bytes after it stay.
	if convert "$name" -e "$oc" -P "$tmp/$ok" --new-encryption "$nc" \
		--new-cleartextkey "$tmp/$nk" "${oarg[@]}" -s "$plain_len"; then
		pass "$name-runs"
	else
		fail "$name-runs" "$(head -c 400 "$tmp/$name.out")"
		continue
	fi
	if decrypts_to_plain "$name" "$tmp/$nk" "$nc" "$off" "$iv"; then
		pass "$name-aespipe-decrypts"
	else
		fail "$name-aespipe-decrypts" "aespipe -d with the new key does not give the plaintext back"
	fi
	if outside_same "$name" "$off" "$plain_len"; then
		pass "$name-outside-untouched"
	else
		fail "$name-outside-untouched" "bytes before the offset or after -s changed"
	fi
	if [ ! -e "$tmp/$name.reencrypt" ]; then
		pass "$name-journal-removed"
	else
		fail "$name-journal-removed" "the journal is left after a finished run"
	fi
done

# Without -s, the data is the whole file after the offset, whole sectors only:
# aesloop-pipe's encryption of the padded plaintext, back with aespipe.
cp "$plain" "$tmp/whole.plain"
head -c 700 /dev/urandom >>"$tmp/whole.plain"
aespipe -e AES128 -P "$tmp/pass1" -q <"$tmp/whole.plain" >"$tmp/whole"
truncate -s $((plain_len + 700)) "$tmp/whole"
tail -c 188 "$tmp/whole" >"$tmp/whole.tail"
if convert whole -e AES128 -P "$tmp/pass1" --new-cleartextkey "$tmp/keys65" --chunk-size 65536 &&
	head -c $((plain_len + 512)) "$tmp/whole" | aespipe_dec "$tmp/keys65" AES128 0 |
	cmp -s - <(head -c $((plain_len + 512)) "$tmp/whole.plain") &&
	cmp -s <(tail -c 188 "$tmp/whole") "$tmp/whole.tail"; then
	pass whole-file-whole-sectors
else
	fail whole-file-whole-sectors "$(head -c 300 "$tmp/whole.out")"
fi

# The sanitizer build, a conversion with a partial last chunk.
make_volume san "$tmp/keys64" AES128
if "$re_san" -e AES128 -P "$tmp/keys64" --new-cleartextkey "$tmp/keys65" \
	--chunk-size 196608 -s "$plain_len" "$tmp/san" >"$tmp/san.out" 2>&1 &&
	decrypts_to_plain san "$tmp/keys65" AES128 0 0; then
	pass san-v2-to-v3
else
	fail san-v2-to-v3 "$(head -c 400 "$tmp/san.out")"
fi

# A gpg-encrypted new key file (-K / --new-gpgkey), as aesloop-keygen makes them.
if command -v gpg >/dev/null; then
	gh=$tmp/gnupg
	mkdir -m 700 "$gh"
	printf '%s\n' 'gpg secret passphrase 4711' >"$tmp/gpg.pass"
	if gpg --homedir "$gh" --batch --quiet --pinentry-mode loopback --passphrase-fd 3 \
		--symmetric --cipher-algo AES256 -o "$tmp/keys65.gpg" "$tmp/keys65" \
		3<"$tmp/gpg.pass" 2>"$tmp/gpg.err"; then
		make_volume gpg "$tmp/pass1" AES128
		if convert gpg -e AES128 -P "$tmp/pass1" --new-gpgkey "$tmp/keys65.gpg" \
			--new-gpghome "$gh" --new-cleartextkey "$tmp/gpg.pass" -s "$plain_len" &&
			decrypts_to_plain gpg "$tmp/keys65" AES128 0 0; then
			pass gpg-new-key
		else
			fail gpg-new-key "$(head -c 400 "$tmp/gpg.out")"
		fi
	else
		fail gpg-make "$(head -c 300 "$tmp/gpg.err")"
	fi
else
	skip gpg-new-key "no gpg"
fi

# Passphrases on descriptors: -p and --new-pass-fd.
make_volume fds "$tmp/pass1" AES128
if convert fds -e AES128 -p 3 --new-pass-fd 4 -s "$plain_len" 3<"$tmp/pass1" 4<"$tmp/pass2" &&
	decrypts_to_plain fds "$tmp/pass2" AES128 0 0; then
	pass pass-fds
else
	fail pass-fds "$(head -c 300 "$tmp/fds.out")"
fi

# --- refusals: each changes nothing ----------------------------------------------------
# refuse NAME WANT-IN-MESSAGE ARGS...: the run fails, says WANT, and the volume
# (tmp/ref) and its journal are as before.
make_volume ref "$tmp/pass1" AES128
refuse() {
	local name=$1 want=$2 before jbefore=none
	shift 2
	before=$(sha256sum <"$tmp/ref")
	[ ! -e "$tmp/ref.reencrypt" ] || jbefore=$(sha256sum <"$tmp/ref.reencrypt")
	if "$re" "$@" >"$tmp/ref.out" 2>&1; then
		fail "$name" "succeeded"
	elif ! grep -q -- "$want" "$tmp/ref.out"; then
		fail "$name" "the message does not say '$want': $(head -c 300 "$tmp/ref.out")"
	elif [ "$(sha256sum <"$tmp/ref")" != "$before" ]; then
		fail "$name" "the volume changed"
	elif [ -e "$tmp/ref.reencrypt" ] && [ "$(sha256sum <"$tmp/ref.reencrypt")" != "$jbefore" ]; then
		fail "$name" "the journal changed"
	elif [ "$jbefore" = none ] && [ -e "$tmp/ref.reencrypt" ]; then
		fail "$name" "a journal was made"
	else
		pass "$name"
	fi
}
k=(--new-cleartextkey "$tmp/keys65")
refuse refuse-wrong-old-key "no file system" -e AES128 -P "$tmp/wrong" "${k[@]}" "$tmp/ref"
refuse refuse-wrong-old-cipher "no file system" -e AES256 -P "$tmp/pass1" "${k[@]}" "$tmp/ref"
refuse refuse-same-key "the new keys are the old keys" -e AES128 -P "$tmp/pass1" \
	--new-cleartextkey "$tmp/pass1" "$tmp/ref"
refuse refuse-random "phash=random" -e AES128 -P "$tmp/pass1" --new-phash random "$tmp/ref"
refuse refuse-no-cipher "-e" -P "$tmp/pass1" "${k[@]}" "$tmp/ref"
refuse refuse-bad-cipher "unsupported cipher" -e AES512 -P "$tmp/pass1" "${k[@]}" "$tmp/ref"
refuse refuse-bad-new-cipher "unsupported cipher" -e AES128 -P "$tmp/pass1" \
	--new-encryption twofish "${k[@]}" "$tmp/ref"
refuse refuse-missing-key-file "new keys" -e AES128 -P "$tmp/pass1" \
	--new-cleartextkey "$tmp/nonexistent" "$tmp/ref"
refuse refuse-same-fd "same descriptor" -e AES128 -p 3 --new-pass-fd 3 "$tmp/ref"
refuse refuse-no-volume "no volume" -e AES128 -P "$tmp/pass1" "${k[@]}"
refuse refuse-two-volumes "one volume" -e AES128 -P "$tmp/pass1" "${k[@]}" "$tmp/ref" "$tmp/ref"
refuse refuse-offset-outside "not inside" -e AES128 -P "$tmp/pass1" "${k[@]}" -o 99999999 "$tmp/ref"
refuse refuse-bad-offset "not an offset" -e AES128 -P "$tmp/pass1" "${k[@]}" -o 12x "$tmp/ref"
refuse refuse-bad-chunk "chunk-size" -e AES128 -P "$tmp/pass1" "${k[@]}" --chunk-size 1000 "$tmp/ref"
refuse refuse-char-device "neither a regular file" -e AES128 -P "$tmp/pass1" "${k[@]}" /dev/null
blockdev=$(find /dev -maxdepth 1 -type b 2>/dev/null | head -n 1)
if [ -n "$blockdev" ]; then
	refuse refuse-block-without-journal "needs --journal" -e AES128 -P "$tmp/pass1" "${k[@]}" "$blockdev"
else
	skip refuse-block-without-journal "no block device in /dev"
fi
printf 'not a journal\n' >"$tmp/ref.reencrypt"
refuse refuse-foreign-journal "not a whole" -e AES128 -P "$tmp/pass1" "${k[@]}" "$tmp/ref"
rm -f "$tmp/ref.reencrypt"
# Another aesloop-reencrypt (or anything) holding the volume's lock.
if command -v flock >/dev/null; then
	before=$(sha256sum <"$tmp/ref")
	if flock "$tmp/ref" "$re" -e AES128 -P "$tmp/pass1" "${k[@]}" "$tmp/ref" >"$tmp/ref.out" 2>&1; then
		fail refuse-locked "succeeded"
	elif ! grep -q "locked by another program" "$tmp/ref.out"; then
		fail refuse-locked "$(head -c 300 "$tmp/ref.out")"
	elif [ "$(sha256sum <"$tmp/ref")" != "$before" ] || [ -e "$tmp/ref.reencrypt" ]; then
		fail refuse-locked "the volume changed, or a journal was made"
	else
		pass refuse-locked
	fi
fi
# The journal in memory while the volume is on a disk: a power cut would lose it.
if [ "$(stat -f -c %T "$tmp")" != tmpfs ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
	refuse refuse-journal-in-memory "in memory" -e AES128 -P "$tmp/pass1" "${k[@]}" \
		--journal "/dev/shm/aesloop-test-journal.$$" "$tmp/ref"
	rm -f "/dev/shm/aesloop-test-journal.$$"
else
	skip refuse-journal-in-memory "this test's folder is in memory itself, or /dev/shm is not"
fi
# A file bound to a loop device (the kernel's own driver will do): refused.
if [ "$(id -u)" = 0 ] && lodev=$(/sbin/losetup -f --show "$tmp/ref" 2>/dev/null); then
	refuse refuse-bound "bound to $lodev" -e AES128 -P "$tmp/pass1" "${k[@]}" "$tmp/ref"
	/sbin/losetup -d "$lodev"
else
	skip refuse-bound "no loop device here (needs root and a loop driver)"
fi
# The wrong IV convention: -o N where the volume was made with -o @N, and the other way.
# The file system's signatures survive the wrong IVs; the garbled sector heads do not.
make_volume ref "$tmp/pass1" AES128 4096 @
refuse refuse-wrong-iv-counted "wrong IVs" -e AES128 -P "$tmp/pass1" "${k[@]}" -o 4096 "$tmp/ref"
make_volume ref "$tmp/pass1" AES128 8192
refuse refuse-wrong-iv-free "wrong IVs" -e AES128 -P "$tmp/pass1" "${k[@]}" -o @8192 "$tmp/ref"
make_volume ref "$tmp/pass1" AES128

# --- crash tests ----------------------------------------------------------------------
# A single-key volume of 4 MiB in chunks of 64 KiB: 64 chunks, about 200
# journal and volume writes, syncs and renames, each a place to be killed.
make_volume crash "$tmp/pass1" AES128
crash_args=(-e AES128 -P "$tmp/pass1" --new-cleartextkey "$tmp/keys65" -s "$plain_len"
	--chunk-size 65536)
# The syscalls of a whole run, counted with strace: where kills can land.
cp "$tmp/crash.orig" "$tmp/crash"
declare -A calls=()
if ! command -v strace >/dev/null; then
	skip crash-kills "no strace (tests/deps.sh installs it)"
elif ! strace -f -qq -o "$tmp/trace" -e trace=pwrite64,fdatasync,renameat2,unlink \
	"$re" "${crash_args[@]}" "$tmp/crash" >"$tmp/crash.out" 2>&1; then
	fail crash-trace "a run under strace failed: $(head -c 300 "$tmp/crash.out")"
else
	for sc in pwrite64 fdatasync renameat2 unlink; do
		calls[$sc]=$(grep -c "^[0-9]* *$sc(" "$tmp/trace")
	done
	# kill_at SYSCALL N ARGS...: a run killed on entry to its Nth SYSCALL.
	kill_at() {
		local sc=$1 n=$2
		shift 2
		# (a subshell that waits, whose stderr takes bash's "Killed")
		(strace -f -qq -o /dev/null -e inject="$sc:signal=SIGKILL:when=$n" \
			"$re" "$@" >/dev/null 2>&1; exit $?) 2>/dev/null
	}
	bad=0 mid=0 first_bad=
	for ((i = 1; i <= kills; i++)); do
		cp "$tmp/crash.orig" "$tmp/crash"
		rm -f "$tmp/crash.reencrypt" "$tmp/crash.reencrypt.new"
		scs=(pwrite64 pwrite64 fdatasync fdatasync renameat2 unlink)
		sc=${scs[RANDOM % ${#scs[@]}]}
		n=$((RANDOM % calls[$sc] + 1))
		# A run that does not reach its Nth call finishes (status 0).
		finished=0
		kill_at "$sc" "$n" "${crash_args[@]}" "$tmp/crash" && finished=1
		[ ! -e "$tmp/crash.reencrypt" ] || mid=$((mid + 1))
		what="$sc #$n"
		# One run in three is killed again while it resumes.
		if ((i % 3 == 0)) && [ "$finished" = 0 ]; then
			sc2=${scs[RANDOM % ${#scs[@]}]}
			n2=$((RANDOM % calls[$sc2] + 1))
			kill_at "$sc2" "$n2" "${crash_args[@]}" "$tmp/crash" && finished=1
			what="$what, then $sc2 #$n2"
		fi
		if [ "$finished" = 0 ] && ! "$re" "${crash_args[@]}" "$tmp/crash" >"$tmp/crash.out" 2>&1; then
			bad=$((bad + 1))
			first_bad=${first_bad:-"killed at $what: the resume failed: $(head -c 300 "$tmp/crash.out")"}
		elif ! decrypts_to_plain crash "$tmp/keys65" AES128 0 0; then
			bad=$((bad + 1))
			first_bad=${first_bad:-"killed at $what: after the resume the volume is not the plaintext under the new key"}
			[ -z "${REENCRYPT_KEEP:-}" ] || cp "$tmp/crash" "$tmp/crash.orig" "$REENCRYPT_KEEP/"
		elif ! outside_same crash 0 "$plain_len"; then
			bad=$((bad + 1))
			first_bad=${first_bad:-"killed at $what: the bytes after the data area changed"}
		elif [ -e "$tmp/crash.reencrypt" ]; then
			bad=$((bad + 1))
			first_bad=${first_bad:-"killed at $what: the journal is left after the resume"}
		fi
	done
	if [ "$bad" = 0 ]; then
		pass "crash-kills-$kills"
	else
		fail "crash-kills-$kills" "$bad of $kills; the first: $first_bad"
	fi
	# Most kills must land mid-conversion (a journal left), or the runs above
	# tested little: about four in five do, the syscalls being mostly the chunks'.
	if [ $((mid * 2)) -ge "$kills" ]; then
		pass crash-kills-mid-conversion
	else
		fail crash-kills-mid-conversion "only $mid of $kills kills came while a journal existed"
	fi
fi

# crash_state SYSCALL N: the crash volume killed at the Nth SYSCALL (a journal left).
crash_state() {
	cp "$tmp/crash.orig" "$tmp/crash"
	rm -f "$tmp/crash.reencrypt"
	(strace -f -qq -o /dev/null -e inject="$1:signal=SIGKILL:when=$2" \
		"$re" "${crash_args[@]}" "$tmp/crash" >/dev/null 2>&1; exit $?) 2>/dev/null
	[ -e "$tmp/crash.reencrypt" ]
}
# resume_ok NAME: a resume finishes, and the volume is the plaintext under the new key.
resume_ok() {
	if "$re" "${crash_args[@]}" "$tmp/crash" >"$tmp/crash.out" 2>&1 &&
		decrypts_to_plain crash "$tmp/keys65" AES128 0 0; then
		pass "$1"
	else
		fail "$1" "$(head -c 300 "$tmp/crash.out")"
	fi
}
# Journal offsets: header 4096, slot i at 4096 + i * (4096 + 65536), its data after its
# record; chunk k's record and copy are in slot k % 2.
slot_at() { echo $((4096 + $1 * (4096 + 65536))); }
garble() { head -c "$3" /dev/urandom | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }
# old_sectors FILE CHUNK FIRST: sectors FIRST to 127 of CHUNK back to the original's old
# ciphertext, as a write torn at a sector boundary leaves them.
old_sectors() {
	dd if="$tmp/crash.orig" of="$1" bs=512 skip=$(($2 * 128 + $3)) seek=$(($2 * 128 + $3)) \
		count=$((128 - $3)) conv=notrunc status=none
}
# sync_index journal|volume K: which fdatasync of a whole run (the trace above) is the
# journal's sync of chunk K's record (the last before K is written to the volume), or the
# volume's sync of chunk K (the first after that write).
jfd=$(sed -n 's/.*pwrite64(\([0-9]*\), "AESLOOP-REENC-J1.*/\1/p' "$tmp/trace" 2>/dev/null | head -n 1)
sync_index() {
	awk -v want="$1" -v at=$(($2 * 65536)) -v jfd="$jfd" '
		/ fdatasync\(/ {
			n++
			fd = $0; sub(/.*fdatasync\(/, "", fd); sub(/\).*/, "", fd)
			if (fd == jfd)
				lastj = n
			else if (written && want == "volume") {
				print n
				exit
			}
		}
		/ pwrite64\(/ && index($0, ", 65536, " at ")") {
			fd = $0; sub(/.*pwrite64\(/, "", fd); sub(/,.*/, "", fd)
			if (fd == jfd)
				next
			if (want == "journal") {
				print lastj
				exit
			}
			written = 1
		}' "$tmp/trace"
}
if command -v strace >/dev/null && [ -n "$jfd" ]; then
	js9=$(sync_index journal 9) vs9=$(sync_index volume 9)
	echo "# the journal's sync of chunk 9 is fdatasync #$js9, the volume's #$vs9"
	# Killed before the journal's sync of chunk 9: its copy and record may
	# be torn, the chunk is untouched on the volume.
	if crash_state fdatasync "$js9"; then
		garble "$tmp/crash.reencrypt" $(($(slot_at 1) + 4096 + 30000)) 1000
		resume_ok torn-journal-data
	else
		fail torn-journal-data "no journal after the kill"
	fi
	if crash_state fdatasync "$js9"; then
		garble "$tmp/crash.reencrypt" $(($(slot_at 1) + 40)) 100
		resume_ok torn-record
	else
		fail torn-record "no journal after the kill"
	fi
	# Killed before the volume's sync of chunk 9: the chunk is written; its
	# sectors from 50 on back to the old ones stand for a torn write.
	if crash_state fdatasync "$vs9"; then
		old_sectors "$tmp/crash" 9 50
		resume_ok torn-volume-chunk
	else
		fail torn-volume-chunk "no journal after the kill"
	fi
	# The journal's synced copy damaged later (a bad disk): the volume's chunk
	# is whole and new, which its SHA-256 in the record shows.
	if crash_state fdatasync "$vs9"; then
		garble "$tmp/crash.reencrypt" $(($(slot_at 1) + 4096 + 30000)) 1000
		resume_ok damaged-journal-chunk-written
	else
		fail damaged-journal-chunk-written "no journal after the kill"
	fi
	# ... and the volume's chunk torn too: refused, nothing written.
	if crash_state fdatasync "$vs9"; then
		garble "$tmp/crash.reencrypt" $(($(slot_at 1) + 4096 + 30000)) 1000
		old_sectors "$tmp/crash" 9 50
		cp "$tmp/crash" "$tmp/ref"
		cp "$tmp/crash.reencrypt" "$tmp/ref.reencrypt"
		refuse damaged-journal-torn-chunk-refused "give neither the old nor the new" \
			"${crash_args[@]}" "$tmp/ref"
		rm -f "$tmp/ref.reencrypt"
	else
		fail damaged-journal-torn-chunk-refused "no journal after the kill"
	fi
	# The journal resumed against another volume of the same size and keys
	# (a device name that a reboot gave to another disk): refused, whether
	# it holds other data or is a clone of this one made before the run.
	if crash_state fdatasync "$vs9"; then
		head -c 4M /dev/urandom >"$tmp/other.plain"
		aespipe_enc "$tmp/pass1" AES128 0 <"$tmp/other.plain" >"$tmp/ref"
		tail -c 300 "$tmp/crash.orig" >>"$tmp/ref"
		cp "$tmp/crash.reencrypt" "$tmp/ref.reencrypt"
		refuse foreign-volume-refused "not the volume this journal was made for" \
			"${crash_args[@]}" "$tmp/ref"
		cp "$tmp/crash.orig" "$tmp/ref"
		cp "$tmp/crash.reencrypt" "$tmp/ref.reencrypt"
		refuse clone-volume-refused "not the volume this journal was made for" \
			"${crash_args[@]}" "$tmp/ref"
		rm -f "$tmp/ref.reencrypt"
		resume_ok resume-own-volume-after-refusals
	else
		fail foreign-volume-refused "no journal after the kill"
	fi
	# The journal lost (removed, or in memory at a power cut) after a part
	# was rewritten: a new run must not take the volume for unconverted, not
	# even with --force.
	if crash_state fdatasync "$vs9"; then
		rm -f "$tmp/crash.reencrypt"
		cp "$tmp/crash" "$tmp/ref"
		refuse lost-journal-refused "the new keys already show ext4" "${crash_args[@]}" \
			--force "$tmp/ref"
	else
		fail lost-journal-refused "no journal after the kill"
	fi
	# A resume with a wrong key writes nothing.
	if crash_state fdatasync "$vs9"; then
		cp "$tmp/crash" "$tmp/ref"
		cp "$tmp/crash.reencrypt" "$tmp/ref.reencrypt"
		refuse resume-wrong-old-key "old keys are not those" -e AES128 -P "$tmp/wrong" \
			--new-cleartextkey "$tmp/keys65" --chunk-size 65536 -s "$plain_len" "$tmp/ref"
		refuse resume-wrong-new-key "new keys are not those" -e AES128 -P "$tmp/pass1" \
			--new-cleartextkey "$tmp/keys65b" --chunk-size 65536 -s "$plain_len" "$tmp/ref"
		refuse resume-other-size "another volume" -e AES128 -P "$tmp/pass1" \
			--new-cleartextkey "$tmp/keys65" -s $((plain_len - 512)) "$tmp/ref"
		refuse resume-swapped-keys "old keys are not those" -e AES128 -P "$tmp/keys65" \
			--new-cleartextkey "$tmp/pass1" -s "$plain_len" "$tmp/ref"
		rm -f "$tmp/ref.reencrypt"
		resume_ok resume-right-keys-after-refusals
	else
		fail resume-wrong-key "no journal after the kill"
	fi
	# Write errors: EIO on the 30th write, then a resume.
	cp "$tmp/crash.orig" "$tmp/crash"
	rm -f "$tmp/crash.reencrypt"
	if strace -f -qq -o /dev/null -e inject=pwrite64:error=EIO:when=30 \
		"$re" "${crash_args[@]}" "$tmp/crash" >"$tmp/crash.out" 2>&1; then
		fail write-error-fails "a run with a failed write succeeded"
	elif grep -q "Input/output error" "$tmp/crash.out" && grep -q "run the same command again" "$tmp/crash.out"; then
		pass write-error-fails
		resume_ok write-error-resumed
	else
		fail write-error-fails "the message does not say what failed: $(head -c 300 "$tmp/crash.out")"
	fi
	# SIGTERM between chunks: a clean stop, then a resume.
	cp "$tmp/crash.orig" "$tmp/crash"
	rm -f "$tmp/crash.reencrypt"
	if strace -f -qq -o /dev/null -e inject=fdatasync:signal=SIGTERM:when="$vs9" \
		"$re" "${crash_args[@]}" "$tmp/crash" >"$tmp/crash.out" 2>&1; then
		fail sigterm-stops "a run sent SIGTERM succeeded"
	elif grep -q "stopped" "$tmp/crash.out" && [ -e "$tmp/crash.reencrypt" ]; then
		pass sigterm-stops
		resume_ok sigterm-resumed
	else
		fail sigterm-stops "$(head -c 300 "$tmp/crash.out")"
	fi
fi

tap_end
