#!/bin/bash
# covers: encrypted root, initramfs, engine choice, passphrase prompt
# System suite: the root file system on an aesloop device, set up by the image's own
# initramfs (boot/, installed with make install-boot; disks from tests/system/image-root.sh,
# booted with run.sh -i).  Every phase checks the boot itself: the initramfs logged the AES
# path of loop.ko before it read the root's first block, the path is the fastest the CPU
# allows, the root is the encrypted loop device and cannot be detached while mounted.
#   t-root.sh first NAME   then writes a file and reboots; with T_ROOT_UPDATE=1 also:
#                          update-initramfs -u works (and fails loudly, changing nothing,
#                          when the kernel has no aesloop loop.ko), and the new initramfs
#                          is left as /share/NAME-initrd.img for the next boot
#   t-root.sh again NAME   the next boot (from that initramfs, run.sh -I): the file is there
#   t-root.sh boot         the checks of the boot only (e.g. on -cpu qemu64)
#   t-root.sh rescue       a boot that was given three wrong passphrases: each was refused
#                          by the signature check, the boot stopped in the rescue shell, and
#                          the setup run from there with the right one went on booting
# shellcheck source=tests/vm/lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"
# shellcheck source=tests/system/lib.sh
. /aesloop/tests/system/lib.sh

phase=${1:?usage: t-root.sh first|again NAME, boot or rescue}
name=${2:-}
kver=$(uname -r)

# What the initramfs said, in the kernel log's order.
mkdir -p /run/aesloop-test
dmesg >/run/aesloop-test/dmesg
line_of() { grep -n -m1 -E "$1" /run/aesloop-test/dmesg | cut -d: -f1; }
loaded=$(line_of 'aesloop driver loaded')
said=$(line_of 'aesloop-root: root on /dev/loop0 over .*loop\.ko AES path ')
mounted=$(line_of 'EXT4-fs \(loop0\): mounted')
# The first line of the kernel's own about loop0 (its capacity, once configured; not
# systemd's, which waits for dev-loop0.device in dracut's initramfs).
first_io=$(grep -n -E '\] (loop0: |[A-Za-z0-9_-]+ \(loop0\))' /run/aesloop-test/dmesg | head -n 1 | cut -d: -f1)
if [ -n "$loaded" ] && [ -n "$said" ] && [ -n "$mounted" ] &&
	[ "$loaded" -lt "$said" ] && [ "$said" -lt "$mounted" ] && [ "$said" -lt "$first_io" ]; then
	t_pass log-order
else
	t_fail log-order "want the module's load ($loaded) < the initramfs' AES path line ($said) < the first loop0 line ($first_io), the mount ($mounted)"
fi
impl=$(sed -n 's/.*aesloop-root: root on .* AES path \([a-z0-9-]*\).*/\1/p' /run/aesloop-test/dmesg | head -n 1)
want_re=$(aes_impl_want_re)
if [[ "$impl" =~ $want_re ]]; then
	t_pass "initramfs-aes-path-$impl"
else
	t_fail initramfs-aes-path "the initramfs logged AES path '$impl'; the CPU's flags want $want_re"
fi
t_expect_eq aes-path-now "$impl" "$(cat /sys/module/loop/parameters/aes_impl)"
t_expect_eq module-loaded-once 1 "$(grep -c 'aesloop driver loaded' /run/aesloop-test/dmesg)"
t_expect_eq root-source /dev/loop0 "$(findmnt -n -o SOURCE /)"
t_check root-encrypted sh -c 'aesloop-losetup -a | grep "^/dev/loop0: " | grep -q "encryption="'
t_expect_fail root-detach-refused 'busy' losetup -d /dev/loop0
t_check root-still-there sh -c 'findmnt -n -o SOURCE / | grep -qx /dev/loop0 && losetup /dev/loop0 >/dev/null'
t_check root-writable touch /var/lib/aesloop-test-writable

case "$phase" in
first)
	[ -n "$name" ] || { t_fail usage "first needs a NAME"; exit 1; }
	head -c 4096 /dev/urandom | base64 >/var/lib/aesloop-test-before-reboot
	cp /var/lib/aesloop-test-before-reboot "/share/$name-expect"
	sync
	touch /run/aesloop-test/reboot
	# The image's own update-initramfs takes over 10 minutes under TCG: only when asked
	# (T_ROOT_UPDATE=1, make check-full).
	[ "${T_ROOT_UPDATE:-0}" = 1 ] || exit 0
	initrd=/boot/initrd.img-$kver
	t_check update-initramfs update-initramfs -u -k "$kver"
	t_check initramfs-has-aesloop sh -c "lsinitramfs '$initrd' | grep -q 'usr/lib/aesloop/aesloop-root-setup'"
	# Without aesloop's loop.ko for the kernel: update-initramfs fails and says why, and the
	# initramfs that boots stays as it was.
	ko=$(modinfo -n loop)
	before=$(sha256sum <"$initrd")
	mv "$ko" /run/aesloop-test/loop.ko.saved && depmod "$kver"
	out=$(update-initramfs -u -k "$kver" 2>&1)
	st=$?
	mv /run/aesloop-test/loop.ko.saved "$ko" && depmod "$kver"
	if [ "$st" -ne 0 ] && grep -q "loop module is not aesloop's" <<<"$out"; then
		t_pass update-initramfs-refuses-stock-loop
	else
		t_fail update-initramfs-refuses-stock-loop "exit $st: $out"
	fi
	t_expect_eq initramfs-unchanged "$before" "$(sha256sum <"$initrd")"
	t_expect_eq module-back "$ko" "$(modinfo -n loop)"
	t_check initramfs-to-share cp "$initrd" "/share/$name-initrd.img"
	;;
again)
	[ -n "$name" ] || { t_fail usage "again needs a NAME"; exit 1; }
	t_check file-after-reboot cmp /var/lib/aesloop-test-before-reboot "/share/$name-expect"
	rm -f "/share/$name-expect" "/share/$name-initrd.img"
	;;
rescue)
	for n in 1 2 3; do
		t_check "wrong-passphrase-$n-refused" grep -q "aesloop-root: no ext4 file system on /dev/loop0: wrong passphrase or key (attempt $n of 3)" /run/aesloop-test/dmesg
	done
	t_check rescue-said-why grep -q 'aesloop-root: the root file system was not set up: 3 attempts failed' /run/aesloop-test/dmesg
	t_check set-up-from-rescue grep -q 'aesloop-root: /dev/loop0 holds the ext4 root file system' /run/aesloop-test/dmesg
	;;
boot) ;;
*) t_fail usage "unknown phase $phase" ;;
esac
