#!/bin/bash
# covers: keygen, gpg key file, aesloop-pipe, aespipe compat, multi-key v2, multi-key v3, passphrase prompt
# t-keygen.sh - tools/aesloop-keygen: the key files it makes (65 or 64 random lines, each
# key file different, mode 0600, gpg-armored: no clear key line on disk), that aesloop-pipe
# and Debian's aespipe read them as multi-key-v3/v2 and agree, the terminal prompt (twice for a
# new passphrase, a mismatch refused), the passphrase change (same keys, the old passphrase no
# longer opens it, a wrong old one or a gpg file without key lines changes nothing and is named),
# its refusals; and the admin guide's offline
# re-encryption of a single-key volume to v3 with aesloop-pipe, into a new file and in place.
#
# Environment (set by tests/host/run.sh): AESLOOP_TOP, AESLOOP_BUILD.
# Prints TAP (tests/tap.sh); exits 1 if any check failed.
set -uo pipefail

top=${AESLOOP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${AESLOOP_BUILD:-$top/build}
keygen=$top/tools/aesloop-keygen
pipe=$build/bin/aesloop-pipe
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"

if ! command -v gpg >/dev/null || [ ! -x "$pipe" ]; then
	skip keygen "gpg or $pipe is missing"
	tap_end
	exit
fi
g=$tmp/gnupg
mkdir -m 0700 "$g"
printf '%s\n' 'the key file passphrase, 29 ch' >"$tmp/pass"
printf '%s\n' 'another passphrase for the file' >"$tmp/pass2"
# key_lines_of FILE PASSFILE: the key lines FILE holds, decrypted by gpg itself.
key_lines_of() {
	gpg --homedir "$g" --batch --quiet --pinentry-mode loopback --passphrase-file "$2" -d "$1" 2>/dev/null
}

# A v3 file and a v2 file.
for n in 65 64; do
	flag=() f=$tmp/k$n.gpg
	[ "$n" = 65 ] || flag=(-2)
	if "$keygen" "${flag[@]}" -G "$g" -p 3 "$f" 3<"$tmp/pass" 2>"$tmp/err"; then
		pass "make-$n"
	else
		fail "make-$n" "$(cat "$tmp/err")"
		continue
	fi
	key_lines_of "$f" "$tmp/pass" >"$tmp/lines"
	why=()
	[ "$(stat -c %a "$f")" = 600 ] || why+=("mode $(stat -c %a "$f")")
	head -n 1 "$f" | grep -qx -- '-----BEGIN PGP MESSAGE-----' || why+=("not gpg-armored")
	[ "$(wc -l <"$tmp/lines")" = "$n" ] || why+=("$(wc -l <"$tmp/lines") lines")
	grep -qvx '[A-Za-z0-9+/]\{45\}' "$tmp/lines" && why+=("a line is not 45 base64 characters")
	[ "$(sort -u "$tmp/lines" | wc -l)" = "$n" ] || why+=("repeated lines")
	# No key line of the clear text in the file on disk.
	grep -qFf "$tmp/lines" "$f" && why+=("a clear key line is in the file")
	if [ ${#why[@]} -eq 0 ]; then
		pass "key-lines-$n"
	else
		fail "key-lines-$n" "${why[*]}"
	fi
done
"$keygen" -G "$g" -p 3 "$tmp/other.gpg" 3<"$tmp/pass" 2>/dev/null
if ! cmp -s <(key_lines_of "$tmp/k65.gpg" "$tmp/pass") <(key_lines_of "$tmp/other.gpg" "$tmp/pass"); then
	pass random-each-time
else
	fail random-each-time "two key files hold the same lines"
fi

# Both readers take them as the multi-key mode of their line count, with the same result.
head -c 1M /dev/urandom >"$tmp/plain"
for n in 65 64; do
	mode=multi-key-v3
	[ "$n" = 65 ] || mode=multi-key-v2
	"$pipe" -v -e aes256 -K "$tmp/k$n.gpg" -G "$g" -p 3 <"$tmp/plain" >"$tmp/enc$n" \
		3<"$tmp/pass" 2>"$tmp/err"
	if ! grep -q "$mode mode" "$tmp/err"; then
		fail "aesloop-pipe-reads-$n" "$(cat "$tmp/err")"
	elif command -v aespipe >/dev/null; then
		aespipe -d -e aes256 -K "$tmp/k$n.gpg" -G "$g" -p 3 <"$tmp/enc$n" >"$tmp/dec$n" \
			3<"$tmp/pass" 2>/dev/null
		if cmp -s "$tmp/plain" "$tmp/dec$n"; then
			pass "aespipe-agrees-$n"
		else
			fail "aespipe-agrees-$n" "aespipe -d gave other bytes than aesloop-pipe encrypted"
		fi
	else
		pass "aesloop-pipe-reads-$n"
	fi
done

# The terminal: asked twice for a new passphrase; two that differ write nothing.
if command -v script >/dev/null; then
	answer() { # SECONDS-APART LINE... : typed at the prompts
		local l
		sleep 1
		for l in "$@"; do
			printf '%s\n' "$l"
			sleep 1
		done
		sleep 2
	}
	answer 'typed passphrase 1234567890' 'typed passphrase 1234567890' |
		script -qfec "$keygen -G $g $tmp/tty.gpg" /dev/null >"$tmp/tty.out" 2>&1
	printf '%s\n' 'typed passphrase 1234567890' >"$tmp/typed"
	if grep -q 'New passphrase for' "$tmp/tty.out" && grep -q 'Repeat the passphrase' "$tmp/tty.out" &&
	   [ "$(key_lines_of "$tmp/tty.gpg" "$tmp/typed" | wc -l)" = 65 ]; then
		pass tty-asks-twice
	else
		fail tty-asks-twice "$(tr -d '\r' <"$tmp/tty.out" | paste -sd' ')"
	fi
	answer 'typed passphrase 1234567890' 'not the same passphrase 12' |
		script -qfec "$keygen -G $g $tmp/tty2.gpg" /dev/null >"$tmp/tty.out" 2>&1
	if grep -q 'differ' "$tmp/tty.out" && [ ! -e "$tmp/tty2.gpg" ] &&
	   [ -z "$(find "$tmp" -maxdepth 1 -name '.tty2.gpg.*')" ]; then
		pass tty-mismatch-refused
	else
		fail tty-mismatch-refused "$(tr -d '\r' <"$tmp/tty.out" | paste -sd' '); $(find "$tmp" -maxdepth 1 -name '*tty2*' | paste -sd' ')"
	fi
else
	skip tty "script(1) is missing"
fi

# A new passphrase for the same keys.
key_lines_of "$tmp/k65.gpg" "$tmp/pass" | sha256sum >"$tmp/keys.sum"
if "$keygen" -c -G "$g" -o 3 -p 4 "$tmp/k65.gpg" 3<"$tmp/pass" 4<"$tmp/pass2" 2>"$tmp/err" &&
   key_lines_of "$tmp/k65.gpg" "$tmp/pass2" | sha256sum | cmp -s - "$tmp/keys.sum"; then
	pass change-keeps-keys
else
	fail change-keeps-keys "$(cat "$tmp/err")"
fi
if [ -z "$(key_lines_of "$tmp/k65.gpg" "$tmp/pass")" ]; then
	pass change-old-passphrase-gone
else
	fail change-old-passphrase-gone "the old passphrase still decrypts the file"
fi
cp "$tmp/k65.gpg" "$tmp/before"
if "$keygen" -c -G "$g" -o 3 -p 4 "$tmp/k65.gpg" 3<"$tmp/pass" 4<"$tmp/pass" 2>"$tmp/err"; then
	fail change-wrong-old-refused "it succeeded with the wrong old passphrase"
elif cmp -s "$tmp/before" "$tmp/k65.gpg" && grep -q 'wrong passphrase.*as it was' "$tmp/err" &&
     ! grep -q 'key lines' "$tmp/err"; then
	pass change-wrong-old-refused
else
	fail change-wrong-old-refused "the file changed, or: $(cat "$tmp/err")"
fi
# A gpg file that decrypts but holds no key lines is named as such, and left as it was.
printf 'not a key file\n' | gpg --no-options --quiet --homedir "$g" --batch --pinentry-mode loopback \
	--passphrase-fd 3 --symmetric -o "$tmp/notkeys.gpg" 3<"$tmp/pass"
cp "$tmp/notkeys.gpg" "$tmp/before"
if "$keygen" -c -G "$g" -o 3 -p 4 "$tmp/notkeys.gpg" 3<"$tmp/pass" 4<"$tmp/pass2" 2>"$tmp/err"; then
	fail change-not-key-file-refused "it succeeded on a file without key lines"
elif cmp -s "$tmp/before" "$tmp/notkeys.gpg" && grep -q '64 or 65 key lines' "$tmp/err"; then
	pass change-not-key-file-refused
else
	fail change-not-key-file-refused "the file changed, or: $(cat "$tmp/err")"
fi

# Refusals: an existing file without -f, a file descriptor that is not open, a missing gpg home.
refuse() { # NAME PATTERN ARGS...
	local name=$1 pattern=$2
	shift 2
	if "$keygen" "$@" 3<"$tmp/pass" >/dev/null 2>"$tmp/err"; then
		fail "$name" "aesloop-keygen $* succeeded"
	elif grep -q -- "$pattern" "$tmp/err"; then
		pass "$name"
	else
		fail "$name" "said '$(cat "$tmp/err")', not '$pattern'"
	fi
}
cp "$tmp/k64.gpg" "$tmp/before"
refuse refuse-existing 'exists (-f replaces it)' -G "$g" -p 3 "$tmp/k64.gpg"
cmp -s "$tmp/before" "$tmp/k64.gpg" || fail refuse-existing-unchanged "the file changed"
refuse refuse-closed-fd 'file descriptor 7 is not open' -G "$g" -p 7 "$tmp/new.gpg"
refuse refuse-no-home 'no such gpg home' -G "$tmp/nohome" -p 3 "$tmp/new.gpg"
if "$keygen" -f -G "$g" -p 3 "$tmp/k64.gpg" 3<"$tmp/pass" 2>/dev/null && ! cmp -s "$tmp/before" "$tmp/k64.gpg"; then
	pass force-replaces
else
	fail force-replaces "-f did not replace the file"
fi

# The admin guide's re-encryption of a single-key volume to v3 (offline), into a new file and in
# place: the same clear data read back through the v3 key file.
# The volume holds a file system, so that the recipe's check can see it.
old='the old single-key volume passphrase' new=$(cat "$tmp/pass")
truncate -s 8M "$tmp/plain"
mkfs.ext4 -q -F "$tmp/plain" 2>/dev/null
"$pipe" -e aes256 -p 3 <"$tmp/plain" >"$tmp/vol" 3< <(printf '%s\n' "$old")
# The check before writing: the old passphrase shows the file system, a wrong one does not.
check_old() {
	"$pipe" -d -e aes256 -p 3 3< <(printf '%s\n' "$1") <"$tmp/vol" | head -c 1M | file -b -
}
if ! command -v file >/dev/null; then
	skip reencrypt-check "file(1) is missing"
elif [[ $(check_old "$old") == *ext4* ]] && [[ $(check_old 'a wrong passphrase, twenty chars') != *ext4* ]]; then
	pass reencrypt-check
else
	fail reencrypt-check "file(1) said '$(check_old "$old")' for the right passphrase"
fi
cp "$tmp/vol" "$tmp/vol-inplace"
"$keygen" -G "$g" -p 3 "$tmp/vol.gpg" 3<"$tmp/pass" 2>/dev/null
"$pipe" -d -e aes256 -p 3 3< <(printf '%s\n' "$old") <"$tmp/vol" |
	"$pipe" -e aes256 -K "$tmp/vol.gpg" -G "$g" -p 4 4< <(printf '%s\n' "$new") >"$tmp/vol-v3"
"$pipe" -d -e aes256 -p 3 3< <(printf '%s\n' "$old") <"$tmp/vol-inplace" |
	"$pipe" -e aes256 -K "$tmp/vol.gpg" -G "$g" -p 4 4< <(printf '%s\n' "$new") |
	dd of="$tmp/vol-inplace" bs=64k conv=notrunc,fsync status=none
for v in vol-v3 vol-inplace; do
	if "$pipe" -d -e aes256 -K "$tmp/vol.gpg" -G "$g" -p 3 <"$tmp/$v" 3<"$tmp/pass" 2>/dev/null |
	   cmp -s - "$tmp/plain" && ! cmp -s "$tmp/$v" "$tmp/vol"; then
		pass "reencrypt-$v"
	else
		fail "reencrypt-$v" "the v3 volume does not decrypt to the data"
	fi
done

tap_end
