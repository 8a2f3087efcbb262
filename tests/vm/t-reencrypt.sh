#!/bin/bash
# covers: aesloop-reencrypt, crash consistency, cryptsetup compat, aespipe compat, single-key, multi-key v3
# VM test, over several boots on one disk (run.sh -d FILE, a disk that outlives each
# guest): aesloop-reencrypt converts a device-backed volume, /dev/vda1, and the guest
# is reset (sysrq 'b': no sync) at a random moment while it runs; the next boot
# resumes it.  The journal is in an ext4 on /dev/vda2, so that the reset loses
# whatever of it was not synced, as a power cut would.
#   t-reencrypt.sh start    a single-key ext4 volume on /dev/vda1, its plaintext's
#                           SHA-256 noted; the conversion to v3 started, then a reset
#   t-reencrypt.sh resume   the conversion resumed, then a reset at a random moment
#   t-reencrypt.sh check    resumed to the end; the plaintext through losetup, through
#                           cryptsetup open --type loopaes and through aespipe must be
#                           the original; then converted back to single-key with a new
#                           passphrase, checked the same ways
# Uses /aesloop/build/bin/aesloop-reencrypt and the patched losetup.  T_RESET_MS=N (run.sh
# -e) resets N ms after the start instead of at random, to repeat a run.
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

state=/share/reencrypt
vol=/dev/vda1
journal=/mnt/j/journal
# (not "re": lib.sh's t_expect_fail has a local of that name, which a function it
# runs would see instead)
reencrypt_bin=/aesloop/build/bin/aesloop-reencrypt
old_pass='correct horse battery staple 2026'
new_pass='a new passphrase for the way back'
# 1 MiB chunks: about 48 journal steps over the volume's 48 MiB.
re_args=(--chunk-size 1048576 --journal "$journal" -e AES128 -p 3
	--new-encryption AES128 --new-cleartextkey "$state/keys65")

t_scratch_disk reencrypt "-d FILE (a disk image of 80 MiB or more)" || exit 0
mkdir -p /mnt/t /mnt/j
# The journal's file system (made in the start phase); its journal replays a reset.
[ "${1:-}" = start ] || mount /dev/vda2 /mnt/j || {
	t_fail journal-fs "cannot mount /dev/vda2"
	exit 1
}

# reencrypt ARGS...: the conversion to v3, the old passphrase on descriptor 3.
reencrypt() { "$reencrypt_bin" "${re_args[@]}" "$@" "$vol" 3<<<"$old_pass"; }

# run_then_reset NAME: the conversion in the background, then a reset after a random
# 0 to 2.5 s (under TCG the whole conversion takes a few seconds); whether it was
# still running then is noted, not a result.
run_then_reset() {
	reencrypt -v -q >"$state/$1.log" 2>&1 &
	local pid=$! ms=${T_RESET_MS:-$((RANDOM % 2500))}
	sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
	if kill -0 "$pid" 2>/dev/null; then
		t_log "$1: reset after $ms ms, with the conversion running"
	else
		t_log "$1: reset after $ms ms; the conversion had ended: $(tail -n 1 "$state/$1.log")"
	fi
	sync "$state" 2>/dev/null
	t_pass "$1-reset"
	t_hard_reset
}

# plain_sum DEV: SHA-256 of what DEV holds (a loop device or a dm mapping).
plain_sum() { t_sha256 "$1"; }

# What the last boot's run said, and whether its journal is there: on the console.
if [ "${1:-}" != start ]; then
	t_log "journal: $(ls -l "$journal" 2>&1); the last run: $(tail -n 2 "$state"/*.log 2>/dev/null | tr '\n' ' ')"
fi

case "${1:-}" in
start)
	rm -rf "$state"
	mkdir -p "$state"
	# 65 key lines of 40 characters (multi-key-v3).
	head -c 3000 /dev/urandom | base64 -w 40 | head -n 65 >"$state/keys65"
	# 48 MiB for the volume, the rest for the journal's ext4.
	if ! printf 'size=48MiB\n,\n' | t_run_quiet sfdisk -q /dev/vda ||
		! t_run_quiet mkfs.ext4 -q /dev/vda2 || ! mount /dev/vda2 /mnt/j; then
		t_fail reencrypt-setup "could not partition the disk"
		exit 1
	fi
	if ! dev=$(losetup -e AES128 -p 3 -f --show "$vol" 3<<<"$old_pass") ||
		! t_run_quiet mkfs.ext4 -q "$dev" || ! mount "$dev" /mnt/t; then
		t_fail reencrypt-setup "could not make the single-key volume"
		exit 1
	fi
	t_randfile /mnt/t/data 20M
	t_sha256 /mnt/t/data >"$state/data.sum"
	umount /mnt/t
	plain_sum "$dev" >"$state/plain.sum"
	losetup -d "$dev"
	# The loop device wrote through /dev/vda1's page cache: on the disk before the
	# reset, or the reset takes part of the volume with it, whatever the conversion does.
	sync
	t_pass reencrypt-setup
	run_then_reset start
	;;
resume)
	if [ ! -s "$state/plain.sum" ]; then
		t_fail resume "no volume from the start boot"
		exit 1
	fi
	run_then_reset resume
	;;
check)
	if [ ! -s "$state/plain.sum" ]; then
		t_fail check "no volume from the start boot"
		exit 1
	fi
	# It goes on from the journal; without one it had not begun (a reset before its
	# journal was made) and begins, or it had ended (before its reset came) and
	# refuses the volume, which the new keys open already.  The checks below tell.
	if reencrypt -v >/tmp/resume.out 2>&1; then
		t_pass resume-finishes
	elif grep -q "the new keys already show ext4" /tmp/resume.out; then
		t_log "the conversion ended in an earlier boot"
		t_pass resume-finishes
	else
		t_fail resume-finishes "$(tail -n 2 /tmp/resume.out)"
	fi
	t_expect_eq journal-removed absent "$([ -e "$journal" ] && echo present || echo absent)"
	want=$(cat "$state/plain.sum")
	if dev=$(losetup -e AES128 -P "$state/keys65" -f --show "$vol"); then
		t_expect_eq v3-losetup-plaintext "$want" "$(plain_sum "$dev")"
		t_check v3-fsck e2fsck -fn "$dev"
		if mount -o ro "$dev" /mnt/t; then
			t_expect_eq v3-file "$(cat "$state/data.sum")" "$(t_sha256 /mnt/t/data)"
			umount /mnt/t
		else
			t_fail v3-file "the converted volume does not mount"
		fi
		losetup -d "$dev"
	else
		t_fail v3-losetup-plaintext "losetup with the new key file failed"
	fi
	if cryptsetup open --type loopaes --key-file "$state/keys65" -s 128 "$vol" re3; then
		t_expect_eq v3-cryptsetup-plaintext "$want" "$(plain_sum /dev/mapper/re3)"
		cryptsetup close re3
	else
		t_fail v3-cryptsetup-plaintext "cryptsetup open --type loopaes failed"
	fi
	if command -v aespipe >/dev/null; then
		t_expect_eq v3-aespipe-plaintext "$want" \
			"$(aespipe -d -e AES128 -P "$state/keys65" <"$vol" | sha256sum | cut -d' ' -f1)"
	else
		t_skip v3-aespipe-plaintext "no aespipe in the guest"
	fi
	# The way back: v3 to single-key, a new passphrase (no crash this time).
	t_check back-to-single "$reencrypt_bin" --journal "$journal" -e AES128 -P "$state/keys65" \
		--new-encryption AES256 --new-pass-fd 4 "$vol" 4<<<"$new_pass"
	if dev=$(losetup -e AES256 -p 4 -f --show "$vol" 4<<<"$new_pass"); then
		t_expect_eq single-losetup-plaintext "$want" "$(plain_sum "$dev")"
		losetup -d "$dev"
	else
		t_fail single-losetup-plaintext "losetup with the new passphrase failed"
	fi
	# cryptsetup's loop-AES single-key: one key line, hashed with SHA-512 for AES-256.
	if cryptsetup open --type loopaes --key-file <(echo "$new_pass") -s 256 --hash sha512 \
		"$vol" re1; then
		t_expect_eq single-cryptsetup-plaintext "$want" "$(plain_sum /dev/mapper/re1)"
		cryptsetup close re1
	else
		t_fail single-cryptsetup-plaintext "cryptsetup open --type loopaes failed"
	fi
	if command -v aespipe >/dev/null; then
		t_expect_eq single-aespipe-plaintext "$want" \
			"$(aespipe -d -e AES256 -p 4 <"$vol" 4<<<"$new_pass" | sha256sum | cut -d' ' -f1)"
	fi
	# A volume in use is refused: mounted through a loop device.
	if dev=$(losetup -e AES256 -p 4 -f --show "$vol" 4<<<"$new_pass"); then
		t_expect_fail refuse-bound "bound to /dev/loop" "$reencrypt_bin" --journal "$journal.busy" \
			-e AES256 -p 4 --new-cleartextkey "$state/keys65" "$vol" 4<<<"$new_pass"
		mount -o ro "$dev" /mnt/t
		t_expect_fail refuse-mounted "in use|bound to" "$reencrypt_bin" --journal "$journal.busy" \
			-e AES256 -p 4 --new-cleartextkey "$state/keys65" "$vol" 4<<<"$new_pass"
		umount /mnt/t
		losetup -d "$dev"
	fi
	umount /mnt/j
	rm -rf "$state"
	;;
*)
	echo "usage: t-reencrypt.sh start|resume|check" >&2
	exit 2
	;;
esac
