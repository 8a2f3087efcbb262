#!/bin/bash
# dracut module of aesloop (installed by make install-boot as
# /usr/lib/dracut/modules.d/90aesloop): when the root line of /etc/fstab puts the root file
# system on an aesloop device (see aesloop-root-config), puts into the initramfs what sets it
# up at boot (aesloop's loop.ko, the patched losetup, blkid, gpg and the key file for gpgkey=,
# the root's configuration) and aesloop-root.service, which runs aesloop-root-setup before
# the root device is waited for; the passphrase is asked through systemd-ask-password.  Fails
# (and with it dracut) when the kernel has no aesloop loop.ko or the root line cannot be set up
# at boot: an initramfs that cannot open the root is never written.
# shellcheck disable=SC2154 # initdir, moddir, kernel, systemdsystemunitdir: dracut's

# Included when the root is on an aesloop device; never on its own otherwise.
check() {
	[ -n "$(@LIBDIR@/aesloop-root-config /etc/fstab 2>/dev/null)" ] || return 255
	return 0
}

depends() {
	echo systemd systemd-ask-password
}

installkernel() {
	hostonly='' instmods loop
}

install() {
	local conf AESLOOP_LOOP='' AESLOOP_FILE='' AESLOOP_GPGKEY=''
	conf=$(@LIBDIR@/aesloop-root-config /etc/fstab) || return 1
	[ -n "$conf" ] || return 0
	eval "$conf"
	if [ -n "$AESLOOP_FILE" ]; then
		derror "aesloop: the root in a file on another file system is set up by initramfs-tools' hook only; with dracut, put it on a partition"
		return 1
	fi
	if ! modinfo -k "${kernel:?}" -F parm loop 2>/dev/null | grep -q '^aes_impl:'; then
		derror "aesloop: the root file system is on an aesloop device, but kernel $kernel's loop module is not aesloop's: install aesloop's loop.ko for it (make install KVER=$kernel) and run dracut again"
		return 1
	fi
	inst_binary @SBINDIR@/losetup /sbin/aesloop-losetup || return 1
	inst_multiple blkid stty udevadm modprobe || return 1
	inst_script @LIBDIR@/aesloop-root-setup /usr/lib/aesloop/aesloop-root-setup || return 1
	inst_simple @LIBDIR@/aesloop-functions /usr/lib/aesloop/aesloop-functions || return 1
	if [ -n "$AESLOOP_GPGKEY" ]; then
		inst_multiple gpg gpg-agent || return 1
		inst_simple "$AESLOOP_GPGKEY" || return 1
	fi
	mkdir -p "$initdir/etc/aesloop" "$initdir/etc/cmdline.d"
	printf '%s\n' "$conf" >"$initdir/etc/aesloop/root.conf"
	# The root device when the kernel command line names none (root= there wins).
	printf 'root=%s\n' "$AESLOOP_LOOP" >"$initdir/etc/cmdline.d/90aesloop.conf"
	inst_simple "$moddir/aesloop-root.service" "${systemdsystemunitdir:?}/aesloop-root.service" || return 1
	$SYSTEMCTL -q --root "$initdir" add-wants initrd-root-device.target aesloop-root.service
	# The root's fsck waits for the setup: a wrong key's device comes and goes.
	mkdir -p "$initdir$systemdsystemunitdir/systemd-fsck@dev-${AESLOOP_LOOP#/dev/}.service.d"
	printf '[Unit]\nAfter=aesloop-root.service\n' \
		>"$initdir$systemdsystemunitdir/systemd-fsck@dev-${AESLOOP_LOOP#/dev/}.service.d/aesloop.conf"
}
