#!/bin/bash
# covers: fstab generator
# t-generator.sh - boot/systemd/aesloop-fstab-generator on sample fstabs, without systemd:
# the units it writes for encrypted lines (mount, swap, setup, fsck and device drop-ins, the
# remount fstab), the ordering systemd-fstab-generator would give the same line, and the lines
# it refuses (each named, exit 1, nothing written for them).  What systemd does with the units
# is tests/system/t-fstab.sh's.
set -u

top=${AESLOOP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
command -v systemd-escape >/dev/null || {
	skip generator "systemd-escape is not installed"
	tap_end
	exit
}

# gen FSTAB: runs the generator into $tmp/out/{normal,early,late}; its stderr in $tmp/err.
gen() {
	rm -rf "$tmp/out"
	mkdir -p "$tmp/out/normal" "$tmp/out/early" "$tmp/out/late"
	# Not this host's kernel log: a read-only /dev/kmsg sends the messages to stderr.
	: >"$tmp/kmsg"
	# shellcheck disable=SC2016 # the inner shell's arguments
	SYSTEMD_FSTAB=$1 AESLOOP_FUNCTIONS=$top/boot/aesloop-functions unshare --mount sh -c '
		mount --bind "$0" /dev/kmsg && mount -o remount,bind,ro /dev/kmsg || exit 9
		exec sh "$@"' "$tmp/kmsg" "$top/boot/systemd/aesloop-fstab-generator" \
		"$tmp/out/normal" "$tmp/out/early" "$tmp/out/late" 2>"$tmp/err"
}
# has NAME FILE LINE: FILE has LINE as a whole line.
has() {
	if grep -qxF -- "$3" "$2" 2>/dev/null; then
		pass "$1"
	else
		fail "$1" "no line '$3' in ${2#"$tmp"/}"
	fi
}
hasnt() {
	if ! grep -qxF -- "$3" "$2" 2>/dev/null; then
		pass "$1"
	else
		fail "$1" "line '$3' in ${2#"$tmp"/}"
	fi
}

n=$tmp/out/normal e=$tmp/out/early
cat >"$tmp/good" <<'EOT'
# a comment / with a slash
PARTUUID=6a1f-02	/	ext4	loop=/dev/loop0,encryption=AES256,gpgkey=/boot/root.gpg,errors=remount-ro	0 1
proc	/proc	proc	hidepid=2	0 0
PARTLABEL=aesloop-swap	none	swap	sw,pri=5,loop=/dev/loop6,encryption=AES128,phash=random	0 0
PARTLABEL=aesloop-data	/mnt/auto	ext4	loop=/dev/loop5,encryption=AES128	0 2
/srv/vol.aes	/mnt/gpg	ext4	noauto,loop=/dev/loop4,encryption=AES256,gpgkey=/etc/vol.gpg	0 0
/srv/net.aes	/mnt/net	ext4	_netdev,loop=/dev/loop3,encryption=AES128	0 0
/srv/opt.aes	/mnt/opt	ext4	nofail,loop=/dev/loop2,encryption=AES128	0 0
/srv/plain.img	/mnt/plain	ext4	loop=/dev/loop1	0 0
EOT
if gen "$tmp/good"; then pass good-exit-0; else fail good-exit-0 "exit $?: $(cat "$tmp/err")"; fi

m=$e/mnt-auto.mount
has auto-what "$m" 'What=/dev/loop5'
has auto-options "$m" 'Options=defaults'
has auto-requires-setup "$m" 'Requires=aesloop-loop5.service'
has auto-before-local-fs "$m" 'Before=local-fs.target'
has auto-fsck "$m" 'Requires=systemd-fsck@dev-loop5.service'
has auto-fsck-after-setup "$n/systemd-fsck@dev-loop5.service.d/aesloop.conf" 'After=aesloop-loop5.service'
has auto-device-waits "$n/dev-loop5.device.d/aesloop.conf" 'JobTimeoutSec=infinity'
s=$n/aesloop-loop5.service
has setup-start "$s" "ExecStart=@LIBDIR@/aesloop-fstab-setup start /dev/loop5"
has setup-stop "$s" "ExecStop=@LIBDIR@/aesloop-fstab-setup stop /dev/loop5"
has setup-detach-unneeded "$s" 'StopWhenUnneeded=yes'
has setup-bound-to-store "$s" 'BindsTo=dev-disk-by\x2dpartlabel-aesloop\x2ddata.device'
has setup-after-remount "$s" 'After=modprobe@loop.service systemd-udevd-kernel.socket systemd-remount-fs.service'
has gpg-key-mounted-first "$n/aesloop-loop4.service" 'RequiresMountsFor=/etc/vol.gpg'
has file-mounted-first "$n/aesloop-loop4.service" 'RequiresMountsFor=/srv/vol.aes'
hasnt noauto-not-before-local-fs "$e/mnt-gpg.mount" 'Before=local-fs.target'
has noauto-option-kept "$e/mnt-gpg.mount" 'Options=noauto'
has netdev-before-remote-fs "$e/mnt-net.mount" 'Before=remote-fs.target'
hasnt nofail-not-before-local-fs "$e/mnt-opt.mount" 'Before=local-fs.target'
has swap-what "$n/dev-loop6.swap" 'What=/dev/loop6'
has swap-options "$n/dev-loop6.swap" 'Options=sw,pri=5'
if [ "$(readlink "$n/swap.target.requires/dev-loop6.swap")" = ../dev-loop6.swap ]; then
	pass swap-required-at-boot
else
	fail swap-required-at-boot "no swap.target.requires/dev-loop6.swap"
fi
has swap-store-never-on "$n/dev-disk-by\\x2dpartlabel-aesloop\\x2dswap.swap.d/aesloop.conf" \
	'ConditionPathExists=/run/aesloop/never-swap-on-an-encrypted-store'
absent() { # NAME FILE
	if [ ! -e "$2" ]; then pass "$1"; else fail "$1" "${2#"$tmp"/} was written"; fi
}
absent plain-loop-left-alone "$e/mnt-plain.mount"
# The root: set up by the initramfs; systemd-remount-fs gets all of fstab, the root's
# loop-AES options taken out.
has remount-root-line "$n/aesloop/fstab" 'PARTUUID=6a1f-02 / ext4 errors=remount-ro 0 1'
has remount-keeps-proc "$n/aesloop/fstab" 'proc	/proc	proc	hidepid=2	0 0'
has remount-drop-in "$n/systemd-remount-fs.service.d/aesloop.conf" \
	"Environment=SYSTEMD_FSTAB=$n/aesloop/fstab LIBMOUNT_FSTAB=$n/aesloop/fstab"
absent root-no-unit "$e/-.mount"

# Refused lines: named on stderr, exit 1, no unit; the good line beside them still made.
refuse() { # NAME LINE MESSAGE-FRAGMENT UNIT
	printf '%s\n' "$2" "/srv/ok.aes /mnt/ok ext4 loop=/dev/loop7,encryption=AES128 0 0" >"$tmp/bad"
	gen "$tmp/bad"
	local st=$?
	if [ "$st" = 1 ] && grep -qF -- "$3" "$tmp/err" && [ ! -e "$4" ] && [ -e "$e/mnt-ok.mount" ]; then
		pass "refuse-$1"
	else
		fail "refuse-$1" "exit $st, stderr '$(cat "$tmp/err")'"
	fi
}
refuse no-loop '/srv/a.aes /mnt/a ext4 encryption=AES128 0 0' 'needs loop=/dev/loopN' "$e/mnt-a.mount"
refuse bad-loop '/srv/a.aes /mnt/a ext4 loop=/dev/loop1x,encryption=AES128 0 0' 'needs loop=/dev/loopN' "$e/mnt-a.mount"
refuse escapes 'LABEL=my\040disk /mnt/a ext4 loop=/dev/loop3,encryption=AES128 0 0' 'need escaping' "$e/mnt-a.mount"
refuse makefs '/dev/sdz1 /mnt/a ext4 loop=/dev/loop3,encryption=AES128,x-systemd.makefs 0 0' 'x-systemd.makefs' "$e/mnt-a.mount"
refuse random-fs '/dev/sdz1 /mnt/a ext4 loop=/dev/loop3,encryption=AES128,phash=random 0 0' 'phash=random' "$e/mnt-a.mount"
# Two lines with the same loop=: the first is set up, the second named and left out.
printf '%s\n' '/srv/a.aes /mnt/a ext4 loop=/dev/loop7,encryption=AES128 0 0' \
	'/srv/b.aes /mnt/b ext4 loop=/dev/loop7,encryption=AES128 0 0' >"$tmp/bad"
gen "$tmp/bad"
st=$?
if [ "$st" = 1 ] && grep -qF 'more than one line' "$tmp/err" && [ -e "$e/mnt-a.mount" ] &&
	[ ! -e "$e/mnt-b.mount" ]; then
	pass refuse-same-loop
else
	fail refuse-same-loop "exit $st, stderr '$(cat "$tmp/err")'"
fi

tap_end
