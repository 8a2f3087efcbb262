#!/bin/bash
# covers: races, LOOP_GET_STATUS64, LOOP_SET_STATUS64, LOOP_SET_DIRECT_IO, LOOP_SET_BLOCK_SIZE, direct I/O, shared decryption, aespipe compat, single-key
# VM test: the request path while a device is reconfigured under it, as a hostile review
# ran it.  fio writes at random (libaio, 16 in flight, 4 KiB to 512 KiB, crc32c verify)
# while another process keeps changing the device:
#   live-*     an encrypted loop with direct I/O on a file in ext4, under udisks' autoclear
#              round trip (LOOP_GET_STATUS64 then LOOP_SET_STATUS64 with the key as got),
#              LOOP_SET_DIRECT_IO 0/1 and LOOP_SET_BLOCK_SIZE 4096/512 in turn
#   stacked-*  an encrypted loop on an encrypted loop (bios to the lower one) while the
#              lower one's direct I/O flips
# Then each is read 1 MiB at a time with O_DIRECT, one read in flight (the reads whose
# decryption is shared among idle workers), and compared with aespipe's decryption of the
# backing file (twice over for the stacked pair).
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

lo_ioctl=$t_tools/lo-ioctl
fio=$(command -v fio || echo /aesloop/build/vm/lazy/bin/fio)
work=/tmp/t-reconfig
mnt=/mnt/reconfig
pass='correct horse battery staple 2026'
mkdir -p "$work" "$mnt"
if [ ! -x "$fio" ]; then
	t_skip reconfig "fio is not in the guest"
	exit 0
fi
t_zerofile "$work/fs.img" 160M
if ! fsdev=$(losetup.stock -f --show "$work/fs.img") || ! t_run_quiet mkfs.ext4 -q "$fsdev" ||
   ! mount "$fsdev" "$mnt"; then
	t_fail reconfig "cannot make an ext4 on a loop"
	exit 1
fi
t_cleanup losetup.stock -d "$fsdev"
t_cleanup umount "$mnt"
attach() { losetup -e AES128 -p 3 "$@" 3<<<"$pass"; }
decrypt() { aespipe -d -e AES128 -p 3 3<<<"$pass"; }

# reconfigure DEV WHAT: until $work/stop appears, changes DEV in turn as WHAT says (all:
# the autoclear round trip, direct I/O, block size; dio: direct I/O alone); then writes
# "CHANGES FAILED" to $work/changes.
reconfigure() {
	local dev=$1 what=$2 i=0 failed=0 rc
	rm -f "$work/stop"
	while [ ! -e "$work/stop" ]; do
		rc=0
		case "$what:$((i % 3))" in
		all:0) "$lo_ioctl" set-autoclear "$dev" 0 >/dev/null || rc=1 ;;
		all:1 | dio:*) "$lo_ioctl" raw "$dev" 0x4C08 $(((i / 3) % 2)) >/dev/null || rc=1 ;;
		all:2) "$lo_ioctl" raw "$dev" 0x4C09 $(((i / 3) % 2 ? 512 : 4096)) >/dev/null || rc=1 ;;
		esac
		failed=$((failed + rc))
		i=$((i + 1))
	done
	echo "$i $failed" >"$work/changes"
}

# stress NAME DEV CHANGED WHAT: fio on DEV while CHANGED is reconfigured (WHAT as above).
stress() {
	local name=$1 dev=$2 changed=$3 what=$4 rpid rc changes failed
	reconfigure "$changed" "$what" &
	rpid=$!
	"$fio" --name="$name" --filename="$dev" --ioengine=libaio --direct=1 --iodepth=16 \
		--rw=randwrite --bsrange=4k-512k --size=24M --verify=crc32c --verify_fatal=1 \
		--do_verify=1 >"$work/$name.fio" 2>&1
	rc=$?
	touch "$work/stop"
	wait "$rpid"
	read -r changes failed <"$work/changes"
	t_log "$name: $changes changes, $failed refused"
	[ "$rc" -eq 0 ] || t_log "$(cat "$work/$name.fio")"
	t_expect_eq "$name-fio-verify" 0 "$rc"
	t_check "$name-changed" test "$changes" -gt "$failed"
}

# qd1_sum DEV: SHA-256 of DEV read 1 MiB at a time with O_DIRECT.
qd1_sum() { dd if="$1" bs=1M iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1; }

t_zerofile "$mnt/live.img" 32M
if dev=$(attach --direct-io=on -f --show "$mnt/live.img"); then
	stress live "$dev" "$dev" all
	t_check live-dio-on "$lo_ioctl" raw "$dev" 0x4C08 1
	got=$(qd1_sum "$dev")
	t_check live-detach losetup -d "$dev"
	t_expect_eq live-qd1-reads "$(decrypt <"$mnt/live.img" | sha256sum | cut -d' ' -f1)" "$got"
else
	t_fail live "losetup -e AES128 --direct-io=on on a file in ext4 failed"
fi

t_zerofile "$mnt/lower.img" 32M
if lower=$(attach --direct-io=on -f --show "$mnt/lower.img") &&
   upper=$(attach -f --show "$lower"); then
	stress stacked "$upper" "$lower" dio
	got=$(qd1_sum "$upper")
	t_check stacked-detach-upper losetup -d "$upper"
	t_check stacked-detach-lower losetup -d "$lower"
	t_expect_eq stacked-qd1-reads "$(decrypt <"$mnt/lower.img" | decrypt | sha256sum | cut -d' ' -f1)" "$got"
else
	t_fail stacked "could not stack an encrypted loop on an encrypted loop"
	[ -z "${lower:-}" ] || losetup -d "$lower"
fi
