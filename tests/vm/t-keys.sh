#!/bin/bash
# covers: losetup, passphrase, key file, gpg key file, single-key, multi-key v2, multi-key v3, random keys, test vectors, cryptsetup compat, fstab, deferred detach, invalid input
# VM test: the loop-AES key sources and options of the patched losetup
# (doc/format.md sections 3, 4, 5), on real loops of our loop.ko; the
# losetup on PATH is that of $AESLOOP_UL_BIN (build/bin, or run.sh -U):
#   vector-*    plain64.img written through a loop set up from each key
#               source gives the ciphertext of ../shared/vectors: a
#               passphrase on -p (with -S/-C too), a 1-line key file (-P),
#               64/65-line key files (-P and -p, every key size, -H sha512),
#               gpg-encrypted key files (-K, -G; made here with gpg
#               --symmetric), IV start sectors 8 and 2^32+7 (-o); and it
#               reads back
#   cs-read-*   cryptsetup (loopaes, aes:64-cbc-lmk) reads multi-key volumes
#               losetup -P wrote, every key size, v2 and v3, with -o 8192
#               (cryptsetup -o 16) and -o @8192 (--skip 0)
#   cs-write-*  losetup -P reads what cryptsetup wrote, the same cases
#   list-*      losetup -a and losetup DEV print loop-AES's line: offset=@N,
#               encryption=AES128, multi-key-v2/v3, read-only
#   random-*    -H random: 65 fresh keys (v3), data written reads back,
#               other keys the next time
#   recompute   -R after the backing file grew
#   fstab-F     -F takes the options from an fstab line with loop=
#   refuse-*    a 63-line key file, a truncated one, a wrong gpg passphrase:
#               an error and no device left attached
#   held-*      losetup -d (and -D) of a device still open elsewhere: exit
#               0, a notice naming the holders (the test
#               shell, a child) and that the key stays loaded, no new opener,
#               the old one reads on, unbound at the last close; asked again:
#               "already asked for", exit 0; -D passes it by; a plain device
#               held through a partition, detached by -D: the notice without
#               the key
#   idle-*      losetup -d of a device nobody holds: nothing more said
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

vectors=/share/vectors
work=/tmp/t-keys
bin=${AESLOOP_UL_BIN:-/aesloop/build/bin}
if [ -x "$bin/losetup" ]; then
	t_log "util-linux under test: $(losetup --version)"
	t_expect_eq losetup-of-build "$("$bin/losetup" --version)" "$(losetup --version)"
fi
mkdir -p "$work"
pass='correct horse battery staple 2026'
plain_sum=$(t_sha256 "$vectors/plain64.img")

# want_of CASE: the SHA-256 of the case's ciphertext in vectors.tsv.
want_of() {
	local name rest
	while IFS=$'\t' read -r name _ _ _ _ _ _ rest; do
		if [ "$name" = "$1" ]; then
			echo "${rest%%$'\t'*}"
			return
		fi
	done <"$vectors/vectors.tsv"
}

# No device may be left attached to FILE after a refusal.
attached_to() { losetup.stock -j "$1" | grep -q .; }

# vector CASE SECTOR INPUT LOSETUP-OPTIONS...: plain64.img through a loop
# set up with the options (stdin from INPUT), compared with the case's
# ciphertext; then read back through a second set-up.
vector() {
	local name=$1 sector=$2 input=$3 img=$work/vector.img dev got want
	shift 3
	want=$(want_of "$name")
	if [ -z "$want" ]; then
		t_fail "vector-$name" "case $name not in $vectors/vectors.tsv"
		return
	fi
	t_zerofile "$img" $((sector * 512 + 32768))
	if ! dev=$(losetup "$@" -o $((sector * 512)) -f --show "$img" <"$input" 2>"$work/err"); then
		t_fail "vector-$name" "losetup $* failed: $(tail -n 1 "$work/err")"
		return
	fi
	dd if="$vectors/plain64.img" of="$dev" bs=32768 conv=fsync 2>/dev/null
	losetup -d "$dev"
	got=$(tail -c 32768 "$img" | sha256sum)
	t_expect_eq "vector-$name" "$want" "${got%% *}"
	if dev=$(losetup "$@" -o $((sector * 512)) -f --show "$img" <"$input" 2>"$work/err"); then
		t_expect_eq "read-$name" "$plain_sum" "$(head -c 32768 "$dev" | sha256sum | cut -d' ' -f1)"
		losetup -d "$dev"
	else
		t_fail "read-$name" "second losetup $* failed: $(tail -n 1 "$work/err")"
	fi
	rm -f "$img"
}

printf '%s\n' "$pass" >"$work/pass"
vector aes128-pass 0 "$work/pass" -e AES128 -p 0
vector aes256-pass-seed-C5 0 "$work/pass" -e AES256 -S pepper -C 5 -p 0
vector aes192-keys1 0 /dev/null -e AES192 -P "$vectors/keys1.txt"
for bits in 128 192 256; do
	vector "aes$bits-v2-keys64" 0 /dev/null -e "AES$bits" -P "$vectors/keys64.txt"
	vector "aes$bits-v3-keys65" 0 /dev/null -e "AES$bits" -P "$vectors/keys65.txt"
done
vector aes128-v3-keys65 0 "$vectors/keys65.txt" -e AES128 -p 0
vector aes128-v2-keys64-sha512 0 /dev/null -e AES128 -H sha512 --cleartextkey "$vectors/keys64.txt"
vector aes128-v2-keys64-iv8 8 /dev/null -e AES128 -P "$vectors/keys64.txt"
vector aes128-v3-keys65-iv8 8 /dev/null -e AES128 -P "$vectors/keys65.txt"
vector aes128-v3-keys65-iv4294967303 4294967303 /dev/null -e AES128 -P "$vectors/keys65.txt"
vector aes128-v2-keys64-iv4294967303 4294967303 "$vectors/keys64.txt" -e AES128 -p 0

# gpg-encrypted key files, made here in a temporary gpg home.
gh=$work/gnupg
mkdir -m 700 "$gh"
printf '%s\n' 'gpg secret passphrase 4711' >"$work/gpg.pass"
printf '%s\n' 'wrong gpg secret passphrase' >"$work/gpg.wrong"
gpg_ok=1
for f in keys1 keys64 keys65; do
	if ! gpg --homedir "$gh" --batch --quiet --pinentry-mode loopback --passphrase-fd 3 \
		--symmetric -o "$work/$f.gpg" "$vectors/$f.txt" 3<"$work/gpg.pass" 2>"$work/err"; then
		t_fail "gpg-make-$f" "gpg --symmetric failed: $(tail -n 1 "$work/err")"
		gpg_ok=0
	fi
done
if [ "$gpg_ok" = 1 ]; then
	vector aes128-keys1 0 "$work/gpg.pass" -e AES128 -K "$work/keys1.gpg" -G "$gh" -p 0
	vector aes192-v2-keys64 0 "$work/gpg.pass" -e AES192 -K "$work/keys64.gpg" -G "$gh" -p 0
	vector aes256-v3-keys65 0 /dev/null -e AES256 -K "$work/keys65.gpg" -G "$gh" -P "$work/gpg.pass"
	img=$work/refuse.img
	t_zerofile "$img" 1M
	t_expect_fail refuse-gpg-wrong-passphrase 'decryption failed \(wrong passphrase\?\)' \
		bash -c "losetup -e AES128 -K '$work/keys65.gpg' -G '$gh' -p 0 -f --show '$img' <'$work/gpg.wrong'"
	if attached_to "$img"; then
		t_fail refuse-gpg-wrong-passphrase-nothing-attached "$(losetup.stock -j "$img")"
	else
		t_pass refuse-gpg-wrong-passphrase-nothing-attached
	fi
fi
gpgconf --homedir "$gh" --kill gpg-agent >/dev/null 2>&1 || true

# Bad key files: refused, nothing attached.
img=$work/refuse.img
t_zerofile "$img" 1M
head -n 63 "$vectors/keys64.txt" >"$work/keys63.txt"
head -c -5 "$vectors/keys65.txt" >"$work/keys65-cut.txt"
t_expect_fail refuse-63-lines 'unknown key data format: 63 lines' \
	losetup -e AES128 -P "$work/keys63.txt" -f --show "$img"
t_expect_fail refuse-truncated 'the key file may be truncated' \
	losetup -e AES128 -P "$work/keys65-cut.txt" -f --show "$img"
if attached_to "$img"; then
	t_fail refuse-nothing-attached "$(losetup.stock -j "$img")"
else
	t_pass refuse-nothing-attached
fi

# cryptsetup both ways, every key size, v2 and v3, offsets in and out of the IV.
for bits in 128 192 256; do
	for keys in keys64 keys65; do
		for off in 8192 @8192; do
			bytes=${off#@}
			skip=$((bytes / 512))
			[ "$off" = "$bytes" ] || skip=0
			img=$work/cs.img
			tag=aes$bits-$keys-o$off
			t_zerofile "$img" $((bytes + 32768))
			if dev=$(losetup -e "AES$bits" -P "$vectors/$keys.txt" -o "$off" -f --show "$img") &&
			   dd if="$vectors/plain64.img" of="$dev" bs=32768 conv=fsync 2>/dev/null &&
			   losetup -d "$dev" &&
			   cryptsetup open --type loopaes --key-file "$vectors/$keys.txt" -s "$bits" \
				-o $((bytes / 512)) --skip "$skip" "$img" tk; then
				t_expect_eq "cs-read-$tag" "$plain_sum" "$(head -c 32768 /dev/mapper/tk | sha256sum | cut -d' ' -f1)"
				cryptsetup close tk
			else
				t_fail "cs-read-$tag" "losetup -P write or cryptsetup open failed"
			fi
			t_zerofile "$img" $((bytes + 32768))
			if cryptsetup open --type loopaes --key-file "$vectors/$keys.txt" -s "$bits" \
				-o $((bytes / 512)) --skip "$skip" "$img" tk &&
			   dd if="$vectors/plain64.img" of=/dev/mapper/tk bs=32768 conv=fsync 2>/dev/null &&
			   cryptsetup close tk &&
			   dev=$(losetup -e "AES$bits" -P "$vectors/$keys.txt" -o "$off" -f --show "$img"); then
				t_expect_eq "cs-write-$tag" "$plain_sum" "$(head -c 32768 "$dev" | sha256sum | cut -d' ' -f1)"
				losetup -d "$dev"
			else
				t_fail "cs-write-$tag" "cryptsetup write or losetup -P attach failed"
			fi
			rm -f "$img"
		done
	done
done

# losetup -a and losetup DEV: loop-AES's line.
img=$work/list.img
t_zerofile "$img" 1M
if dev=$(losetup -e AES128 -P "$vectors/keys65.txt" -o @8192 -f --show "$img"); then
	ino=$(stat -c %i "$img")
	line=$(losetup -a | grep -F "$dev: ")
	case "$line" in
	"$dev: ["*"]:$ino ($img) offset=@8192 encryption=AES128 multi-key-v3")
		t_pass list-a-v3-at-offset ;;
	*) t_fail list-a-v3-at-offset "losetup -a printed '$line'" ;;
	esac
	t_expect_eq list-dev "$line" "$(losetup "$dev")"
	losetup -d "$dev"
else
	t_fail list-a-v3-at-offset "losetup -e AES128 -P keys65.txt -o @8192 failed"
fi
if dev=$(losetup -e AES256 -P "$vectors/keys64.txt" -o 4096 -r -f --show "$img"); then
	line=$(losetup "$dev")
	case "$line" in
	"$dev: ["*"]:"*" ($img) offset=4096 encryption=AES256 multi-key-v2"*"read-only")
		t_pass list-v2-read-only ;;
	*) t_fail list-v2-read-only "losetup $dev printed '$line'" ;;
	esac
	losetup -d "$dev"
else
	t_fail list-v2-read-only "losetup -e AES256 -P keys64.txt -r failed"
fi
if dev=$(losetup -e AES192 -p 0 -f --show "$img" <"$work/pass"); then
	case "$(losetup "$dev")" in
	*" ($img) encryption=AES192") t_pass list-single-key ;;
	*) t_fail list-single-key "losetup $dev printed '$(losetup "$dev")'" ;;
	esac
	losetup -d "$dev"
fi

# -H random: fresh keys each time; the data written reads back meanwhile.
img=$work/random.img
t_zerofile "$img" 4M
t_randfile "$work/data" 1M
if dev=$(losetup -e AES256 -H random -f --show "$img" </dev/null); then
	case "$(losetup "$dev")" in
	*"encryption=AES256 multi-key-v3") t_pass random-v3 ;;
	*) t_fail random-v3 "losetup $dev printed '$(losetup "$dev")'" ;;
	esac
	dd if="$work/data" of="$dev" bs=64k conv=fsync 2>/dev/null
	echo 3 >/proc/sys/vm/drop_caches
	t_expect_eq random-reads-back "$(t_sha256 "$work/data")" "$(head -c 1048576 "$dev" | sha256sum | cut -d' ' -f1)"
	losetup -d "$dev"
	if dev=$(losetup -e AES256 -H random -f --show "$img" </dev/null); then
		if [ "$(head -c 1048576 "$dev" | sha256sum | cut -d' ' -f1)" != "$(t_sha256 "$work/data")" ]; then
			t_pass random-new-keys
		else
			t_fail random-new-keys "a second -H random set-up read the old data"
		fi
		losetup -d "$dev"
	fi
else
	t_fail random-v3 "losetup -H random failed"
fi

# -R: the backing file grew; the device follows.
img=$work/grow.img
t_zerofile "$img" 1M
if dev=$(losetup -e AES128 -P "$vectors/keys64.txt" -f --show "$img"); then
	truncate -s 3M "$img"
	t_check recompute losetup -R "$dev"
	t_expect_eq recompute-size $((3 << 20)) "$(blockdev --getsize64 "$dev")"
	losetup -d "$dev"
else
	t_fail recompute "losetup -P keys64.txt failed"
fi

# -F: options and file from an fstab line with loop=DEV.
img=$work/fstab.img
t_zerofile "$img" $((8192 + 32768))
dev=$(losetup.stock -f)
printf '%s\n' "$img /secret ext4 noauto,loop=$dev,encryption=AES128,offset=@8192,cleartextkey=$vectors/keys65.txt 0 0" >"$work/fstab"
if LIBMOUNT_FSTAB=$work/fstab losetup -F "$dev"; then
	case "$(losetup "$dev")" in
	"$dev: ["*"($img) offset=@8192 encryption=AES128 multi-key-v3") t_pass fstab-F ;;
	*) t_fail fstab-F "losetup $dev printed '$(losetup "$dev")'" ;;
	esac
	dd if="$vectors/plain64.img" of="$dev" bs=32768 conv=fsync 2>/dev/null
	losetup -d "$dev"
	got=$(tail -c 32768 "$img" | sha256sum)
	t_expect_eq fstab-F-vector "$(want_of aes128-v3-keys65)" "${got%% *}"
else
	t_fail fstab-F "losetup -F $dev failed"
fi

# losetup -d of a device open elsewhere: LOOP_CLR_FD
# returns 0 and the detach waits for the last close; losetup says so, with
# who holds it, and exits 0 (the stock contract).  losetup runs with fd 7
# closed (7<&-), so that only the test shell holds the device.
comm=$(cat "/proc/$$/comm")
me="${comm}[$$]"
# detach NAME LOSETUP-ARGS...: losetup, its exit status checked to be 0;
# its stderr in $err.
detach() {
	local name=$1 rc=0
	shift
	losetup "$@" 7<&- 2>"$work/err" || rc=$?
	err=$(cat "$work/err")
	t_expect_eq "$name-exit-0" 0 "$rc"
}
# Bound: a size (aesloop drops the sysfs "loop" group at the detach).
bound() { [ "$(cat "/sys/block/${1#/dev/}/size")" != 0 ]; }
kept="; it is detached at the last close, and its key stays loaded until then"
img=$work/held.img
t_zerofile "$img" 1M
if dev=$(losetup -e AES128 -p 0 -f --show "$img" <"$work/pass"); then
	dd if="$vectors/plain64.img" of="$dev" bs=32768 conv=fsync 2>/dev/null
	exec 7<"$dev"
	detach held-detach -d "$dev"
	t_expect_eq held-notice "losetup: $dev: still open by 1 process ($me)$kept" "$err"
	t_check held-still-bound bound "$dev"
	t_expect_fail held-no-new-opener 'No such device or address' head -c 512 "$dev"
	t_expect_eq held-reads-through-fd "$plain_sum" "$(head -c 32768 <&7 | sha256sum | cut -d' ' -f1)"
	# Asked again: under way already, the same answer and exit 0, as a
	# second LOOP_CLR_FD gets from the stock driver.
	detach held-detach-again -d "$dev"
	t_expect_eq held-notice-again "losetup: $dev: detach already asked for: still open by 1 process ($me); it is detached at the last close, and its key (if it has one) stays loaded until then" "$err"
	# A second holder, a child that inherited fd 7 (at fork, so no race).
	sleep 600 &
	holder=$!
	detach held-two -d "$dev"
	case "$err" in
	"losetup: $dev: detach already asked for: still open by 2 processes ($me, "*"[$holder])"*)
		t_pass held-two-listed ;;
	*) t_fail held-two-listed "losetup -d said '$err'" ;;
	esac
	kill "$holder"
	wait "$holder" 2>/dev/null
	t_check held-bound-while-one-left bound "$dev"
	# -D: the device is no longer listed (detached, for util-linux).
	detach held-detach-all -D
	t_expect_eq held-detach-all-passes-by "" "$err"
	exec 7<&-
	if bound "$dev"; then
		t_fail held-unbound-at-last-close "$dev is still bound after the last close"
	else
		t_pass held-unbound-at-last-close
	fi
	t_check held-reopens head -c 512 "$dev"
else
	t_fail held-detach "losetup -e AES128 -p 0 failed"
fi
# A plain device held through a partition, detached by -D: the notice, with
# no key in it.
img=$work/parts.img
t_zerofile "$img" 4M
printf 'label: dos\n2048,4096,83\n' | sfdisk -q "$img" >/dev/null
if dev=$(losetup -P -f --show "$img") && [ -b "${dev}p1" ]; then
	exec 7<"${dev}p1"
	detach held-part-detach-all -D
	t_expect_eq held-part-notice "losetup: $dev: still open by 1 process ($me); it is detached at the last close" "$err"
	exec 7<&-
	if bound "$dev"; then
		t_fail held-part-unbound "$dev is still bound after the last close"
	else
		t_pass held-part-unbound
	fi
else
	t_fail held-part "losetup -P of a partitioned image gave no ${dev:-device}p1"
fi
# Open by nobody else: detached at once, nothing more said.
if dev=$(losetup -e AES128 -p 0 -f --show "$work/held.img" <"$work/pass"); then
	detach idle-detach -d "$dev"
	t_expect_eq idle-says-nothing "" "$err"
	if bound "$dev"; then
		t_fail idle-unbound "$dev is still bound after losetup -d"
	else
		t_pass idle-unbound
	fi
fi
