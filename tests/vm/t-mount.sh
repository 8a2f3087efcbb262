#!/bin/bash
# covers: mount, swapon, fstab, gpg key file, key file, random keys, swap, single-key, multi-key v2, multi-key v3, deferred detach, invalid input
# VM test: loop-AES mount and swap options of the patched util-linux mount,
# swapon and swapoff ($AESLOOP_UL_BIN: build/bin, or the build of run.sh -U;
# run from /aesloop; doc/format.md section 7):
#   mount-*     mount -o loop,encryption=,cleartextkey= / gpgkey= / -p FD
#               opens volumes losetup wrote (multi-key v2/v3, single-key,
#               offset=@N); umount leaves no loop device behind
#   fstab-*     an fstab line (mount -T) with loop=/dev/loopN, encryption=,
#               gpgkey=, gpghome=; after losetup -F on the same line, mount
#               uses that device without asking for the passphrase again
#   random-*    phash=random/1777: a new file system with fresh keys at
#               every mount, its root directory mode 1777
#   swap-*      an fstab swap line with loop=, encryption=, phash=random:
#               swapon -a sets the loop up (65 keys, multi-key-v3) and runs
#               mkswap, swapoff -a (or swapoff SOURCE) detaches it; fresh
#               keys at the next swapon; swapon -o on the command line;
#               swapoff of one still open elsewhere: exit 0, a notice, the
#               detach at the last close
#   refuse-*    bad key data or options: mount fails, nothing left attached
#   twice-*, setup-*  one file, one device: a second encrypted mount of a
#               mounted volume, and loop= naming a plain device on the file,
#               are refused (as the stock mount refuses an overlapping loop),
#               before any passphrase is asked; a failed encrypted mount of a
#               loop device leaves that device bound
#   at-*        the same for an @N volume with a size limit, and loop= of
#               one set up already mounts it without a passphrase
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

bin=${AESLOOP_UL_BIN:-/aesloop/build/bin}
vectors=/share/vectors
work=/tmp/t-mount
mkdir -p "$work" /mnt/m /mnt/r /mnt/t2
pass='correct horse battery staple 2026'
printf '%s\n' "$pass" >"$work/pass"

for p in mount swapon swapoff; do
	if [ ! -x "$bin/$p" ]; then
		t_skip "$p" "$bin/$p is not built (make losetup builds it)"
		exit 0
	fi
done
mount=$bin/mount
# The losetup on PATH (packed by mkinitramfs.sh) is of the same build.
t_log "util-linux under test: $("$mount" --version)"
t_expect_eq losetup-of-build "$("$bin/losetup" --version)" "$(losetup --version)"

# No loop device may be left attached to FILE.
nothing_attached() {
	if losetup.stock -j "$1" | grep -q .; then
		t_fail "$2" "still attached: $(losetup.stock -j "$1")"
	else
		t_pass "$2"
	fi
}

# make_fs NAME FILE LOSETUP-OPTIONS...: ext4 with a marker file, written
# through losetup with the options; prints nothing, fails on error.
make_fs() {
	local name=$1 file=$2 dev
	shift 2
	t_zerofile "$file" 16M
	dev=$(losetup "$@" -f --show "$file" <"$work/pass") || return 1
	mkfs.ext4 -q "$dev" && mount "$dev" /mnt/m && echo "$name" >/mnt/m/marker &&
		umount /mnt/m
	losetup -d "$dev"
}

# check_mounted NAME FILE WANT-CRYPT: the marker reads back, losetup shows
# the mode, umount frees the loop device.
check_mounted() {
	local name=$1 file=$2 want=$3 dev
	dev=$(findmnt -n -o SOURCE /mnt/m 2>/dev/null || awk '$2 == "/mnt/m" { print $1 }' /proc/mounts)
	t_expect_eq "$name-marker" "$name" "$(cat /mnt/m/marker 2>/dev/null)"
	case "$(losetup "$dev")" in
	*"$want") t_pass "$name-losetup-shows" ;;
	*) t_fail "$name-losetup-shows" "losetup $dev printed '$(losetup "$dev")', expected ...$want" ;;
	esac
	umount /mnt/m
	nothing_attached "$file" "$name-umount-detaches"
}

# An ordinary loop mount still works with the patched mount.
img=$work/plain.img
t_zerofile "$img" 16M
if mkfs.ext4 -q -F "$img" && t_check mount-plain-loop "$mount" -o loop "$img" /mnt/m; then
	umount /mnt/m
	nothing_attached "$img" mount-plain-umount-detaches
fi

img=$work/v3.img
if make_fs mount-v3 "$img" -e AES256 -P "$vectors/keys65.txt"; then
	if t_check mount-v3 "$mount" -t ext4 -o loop,encryption=AES256,cleartextkey="$vectors/keys65.txt" "$img" /mnt/m; then
		check_mounted mount-v3 "$img" "encryption=AES256 multi-key-v3"
	fi
else
	t_fail mount-v3 "could not make the volume with losetup"
fi

img=$work/v2.img
if make_fs mount-v2-at "$img" -e AES128 -P "$vectors/keys64.txt" -o @8192; then
	if t_check mount-v2-at "$mount" -o loop,encryption=AES128,offset=@8192,cleartextkey="$vectors/keys64.txt" "$img" /mnt/m; then
		check_mounted mount-v2-at "$img" "offset=@8192 encryption=AES128 multi-key-v2"
	fi
else
	t_fail mount-v2-at "could not make the volume with losetup"
fi

# @N with a size limit: the second encrypted mount is refused here too (the overlap is found
# where the data starts, not at the IV's offset); set up already (losetup, as losetup -F
# does), loop= mounts that device without a passphrase.
img=$work/at.img
if make_fs at "$img" -e AES128 -P "$vectors/keys64.txt" -o @8192 --sizelimit 8388608; then
	at=offset=@8192,sizelimit=8388608
	if t_check at-first "$mount" -o "loop,encryption=AES128,$at,cleartextkey=$vectors/keys64.txt" "$img" /mnt/m; then
		t_expect_fail refuse-at-twice 'overlapping loop device' \
			"$mount" -o "loop,encryption=AES128,$at" "$img" /mnt/t2 </dev/null
		umount /mnt/t2 2>/dev/null
		umount /mnt/m
	fi
	if dev=$(losetup -e AES128 -P "$vectors/keys64.txt" -o @8192 --sizelimit 8388608 -f --show "$img"); then
		if t_check at-set-up-mount "$mount" -o "loop=$dev,encryption=AES128,$at" "$img" /mnt/m </dev/null; then
			t_expect_eq at-set-up-marker at "$(cat /mnt/m/marker 2>/dev/null)"
			umount /mnt/m
		fi
		losetup -d "$dev" 2>/dev/null
	fi
	nothing_attached "$img" at-nothing-left
else
	t_fail at "could not make the volume with losetup"
fi

img=$work/single.img
if make_fs mount-pass-fd "$img" -e AES192 -p 0; then
	if t_check mount-pass-fd bash -c "'$mount' -p 3 -o loop,encryption=AES192 '$img' /mnt/m 3<'$work/pass'"; then
		check_mounted mount-pass-fd "$img" "encryption=AES192"
	fi
	t_expect_fail refuse-wrong-passphrase '' bash -c "echo 'not the passphrase, but long enough' | '$mount' -p 0 -o loop,encryption=AES192 -t ext4 '$img' /mnt/m"
	nothing_attached "$img" refuse-wrong-passphrase-nothing-attached
else
	t_fail mount-pass-fd "could not make the volume with losetup"
fi

# gpg key file in an fstab line, with losetup -F first (one passphrase).
gh=$work/gnupg
mkdir -m 700 "$gh"
printf '%s\n' 'gpg secret passphrase 4711' >"$work/gpg.pass"
if gpg --homedir "$gh" --batch --quiet --pinentry-mode loopback --passphrase-fd 3 \
	--symmetric -o "$work/keys65.gpg" "$vectors/keys65.txt" 3<"$work/gpg.pass" 2>/dev/null; then
	img=$work/gpg.img
	if make_fs fstab-gpg "$img" -e AES128 -K "$work/keys65.gpg" -G "$gh" -P "$work/gpg.pass"; then
		loop=$(losetup.stock -f)
		printf '%s\n' "$img /mnt/m ext4 noauto,loop=$loop,encryption=AES128,gpgkey=$work/keys65.gpg,gpghome=$gh 0 0" >"$work/fstab"
		if t_check fstab-gpg bash -c "'$mount' -T '$work/fstab' -p 3 /mnt/m 3<'$work/gpg.pass'"; then
			t_expect_eq fstab-gpg-loop "$loop" "$(awk '$2 == "/mnt/m" { print $1 }' /proc/mounts)"
			check_mounted fstab-gpg "$img" "encryption=AES128 multi-key-v3"
		fi
		# losetup -F, then mount: the device set up already is used as
		# it is (no passphrase: stdin is empty and there is no terminal).
		if LIBMOUNT_FSTAB=$work/fstab losetup -F -P "$work/gpg.pass" "$loop"; then
			t_check fstab-after-losetup-F "$mount" -T "$work/fstab" /mnt/m </dev/null &&
				t_expect_eq fstab-after-losetup-F-marker fstab-gpg "$(cat /mnt/m/marker 2>/dev/null)"
			umount /mnt/m 2>/dev/null
			losetup -d "$loop" 2>/dev/null
		else
			t_fail fstab-after-losetup-F "losetup -F $loop failed"
		fi
		nothing_attached "$img" fstab-gpg-nothing-left
	fi
fi
gpgconf --homedir "$gh" --kill gpg-agent >/dev/null 2>&1 || true

# phash=random/1777: a new file system at every mount.
img=$work/random.img
t_zerofile "$img" 16M
loop=$(losetup.stock -f)
if t_check random-mount "$mount" -t ext4 -o loop="$loop",encryption=AES128,phash=random/1777 "$img" /mnt/r; then
	t_expect_eq random-mode 1777 "$(stat -c %a /mnt/r)"
	case "$(losetup "$loop")" in
	*"encryption=AES128 multi-key-v3") t_pass random-v3 ;;
	*) t_fail random-v3 "losetup $loop printed '$(losetup "$loop")'" ;;
	esac
	echo old >/mnt/r/file
	umount /mnt/r
	if t_check random-mount-again "$mount" -t ext4 -o loop="$loop",encryption=AES128,phash=random/1777 "$img" /mnt/r; then
		if [ -e /mnt/r/file ]; then
			t_fail random-fresh "the file of the previous mount is still there"
		else
			t_pass random-fresh
		fi
		umount /mnt/r
	fi
fi
nothing_attached "$img" random-nothing-left

# Encrypted swap from fstab, phash=random: swapon -a / swapoff -a.
img=$work/swap.img
t_zerofile "$img" 8M
loop=$(losetup.stock -f)
printf '%s\n' "$img none swap sw,loop=$loop,encryption=AES128,phash=random 0 0" >"$work/fstab.swap"
if t_check swap-on env LIBMOUNT_FSTAB="$work/fstab.swap" "$bin/swapon" -a; then
	t_check swap-active grep -q "^$loop " /proc/swaps
	case "$(losetup "$loop")" in
	*"($img) encryption=AES128 multi-key-v3") t_pass swap-v3 ;;
	*) t_fail swap-v3 "losetup $loop printed '$(losetup "$loop")'" ;;
	esac
	first=$(head -c 4096 "$img" | sha256sum)
	t_check swap-off env LIBMOUNT_FSTAB="$work/fstab.swap" "$bin/swapoff" -a
	nothing_attached "$img" swap-off-detaches
	if t_check swap-on-again env LIBMOUNT_FSTAB="$work/fstab.swap" "$bin/swapon" -a; then
		if [ "$(head -c 4096 "$img" | sha256sum)" != "$first" ]; then
			t_pass swap-fresh-keys
		else
			t_fail swap-fresh-keys "the swap header has the same ciphertext after a new swapon"
		fi
		# swapoff by the name of the backing file: its loop= is found.
		t_check swap-off-by-source env LIBMOUNT_FSTAB="$work/fstab.swap" "$bin/swapoff" "$img"
		nothing_attached "$img" swap-off-by-source-detaches
	fi
fi
loop=$(losetup.stock -f)
if t_check swap-on-cmdline "$bin/swapon" -o "loop=$loop,encryption=AES256,phash=random" "$img"; then
	t_check swap-cmdline-active grep -q "^$loop " /proc/swaps
	t_check swap-cmdline-off "$bin/swapoff" "$loop"
	nothing_attached "$img" swap-cmdline-detaches
fi
# swapoff of an encrypted swap loop that is still open elsewhere: exit 0, the notice of losetup -d, detached at the last close.
loop=$(losetup.stock -f)
if t_check swap-held-on "$bin/swapon" -o "loop=$loop,encryption=AES128,phash=random" "$img"; then
	exec 7<"$loop"
	rc=0
	"$bin/swapoff" "$loop" 7<&- 2>"$work/err" || rc=$?
	t_expect_eq swap-held-off-exit-0 0 "$rc"
	t_expect_eq swap-held-notice "swapoff: $loop: still open by 1 process ($(cat "/proc/$$/comm")[$$]); it is detached at the last close, and its key stays loaded until then" "$(cat "$work/err")"
	t_check swap-held-still-bound test "$(cat "/sys/block/${loop#/dev/}/size")" != 0
	exec 7<&-
	nothing_attached "$img" swap-held-detached-at-last-close
fi

# Refusals: nothing attached afterwards.
img=$work/refuse.img
t_zerofile "$img" 4M
head -n 63 "$vectors/keys64.txt" >"$work/keys63.txt"
t_expect_fail refuse-63-lines 'unknown key data format: 63 lines' \
	"$mount" -t ext4 -o loop,encryption=AES128,cleartextkey="$work/keys63.txt" "$img" /mnt/m
t_expect_fail refuse-pseed-without-encryption 'need encryption=' \
	"$mount" -t ext4 -o loop,pseed=abc "$img" /mnt/m
t_expect_fail refuse-random-without-type 'needs a read-write mount and a file system type' \
	"$mount" -o loop,encryption=AES128,phash=random "$img" /mnt/m
nothing_attached "$img" refuse-nothing-attached

# One file, one loop device: two devices bound to one file, each with its own cache, would
# corrupt it.  A second encrypted mount of a mounted volume is refused, as the stock mount
# refuses an overlapping loop, and before the passphrase is asked (none is given here).
img=$work/twice.img
if make_fs twice "$img" -e AES128 -p 0; then
	if t_check twice-first bash -c "'$mount' -p 3 -o loop,encryption=AES128 '$img' /mnt/m 3<'$work/pass'"; then
		t_expect_fail refuse-twice 'overlapping loop device' \
			"$mount" -o loop,encryption=AES128 "$img" /mnt/t2 </dev/null
		t_expect_eq twice-one-device 1 "$(losetup.stock -j "$img" | wc -l)"
		umount /mnt/t2 2>/dev/null
		t_expect_eq twice-first-intact twice "$(cat /mnt/m/marker 2>/dev/null)"
		umount /mnt/m
	fi
	nothing_attached "$img" twice-nothing-left
	# loop= naming a plain device bound to the volume: not the encrypted one "set up
	# already" (its ciphertext would be mounted as it is), and the device stays as it was.
	plain=$(losetup.stock -f --show "$img")
	t_expect_fail refuse-setup-plain 'overlapping loop device' \
		"$mount" -o loop="$plain",encryption=AES128 "$img" /mnt/m </dev/null
	t_expect_eq setup-plain-still-bound "$img" "$(cat "/sys/block/${plain#/dev/}/loop/backing_file" 2>/dev/null)"
	umount /mnt/m 2>/dev/null
	losetup.stock -d "$plain"
else
	t_fail twice "could not make the volume with losetup"
fi

# encryption with no value: refused, not a plain mount of the file.
t_expect_fail refuse-encryption-no-value 'encryption= needs a value' \
	"$mount" -t ext4 -o loop,encryption "$work/plain.img" /mnt/m
umount /mnt/m 2>/dev/null
nothing_attached "$work/plain.img" refuse-encryption-no-value-nothing-attached

# A loop device as the source of an encrypted mount that fails (its key file is missing):
# that device, the user's, stays bound.  X-mount.noloop (util-linux 2.40 and later) with
# encryption=: refused, not the device mounted as it is.
plain=$(losetup.stock -f --show "$work/plain.img")
t_expect_fail refuse-missing-key-of-loop-source 'missing' \
	"$mount" -t ext4 -o encryption=AES128,cleartextkey="$work/missing" "$plain" /mnt/m
t_expect_eq loop-source-still-bound "$work/plain.img" "$(cat "/sys/block/${plain#/dev/}/loop/backing_file" 2>/dev/null)"
umount /mnt/m 2>/dev/null
if ! "$mount" --version | grep -q ' 2\.38'; then
	t_expect_fail refuse-noloop-encryption 'X-mount.noloop' \
		"$mount" -t ext4 -o X-mount.noloop,encryption=AES256,cleartextkey="$vectors/keys65.txt" "$plain" /mnt/m
	umount /mnt/m 2>/dev/null
else
	t_skip refuse-noloop-encryption "util-linux 2.38 has no X-mount.noloop"
fi
losetup.stock -d "$plain"
nothing_attached "$work/plain.img" loop-source-nothing-left
