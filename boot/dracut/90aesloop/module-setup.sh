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

# Included when the root is on an aesloop device, and when its line cannot be read (so that
# install() says why and stops dracut); never otherwise.
check() {
	local conf
	conf=$(@LIBDIR@/aesloop-root-config /etc/fstab 2>/dev/null) || return 0
	[ -n "$conf" ] || return 255
	return 0
}

# dracut goes on after an install() that fails (it checks only installkernel()): this stops it.
aesloop_fatal() {
	dfatal "aesloop: $*"
	exit 1
}

depends() {
	echo systemd systemd-ask-password
}

installkernel() {
	hostonly='' instmods loop
}

install() {
	local conf
	# Set by the eval of aesloop-root-config's assignments; local, not dracut's.
	# shellcheck disable=SC2034
	local AESLOOP_LOOP='' AESLOOP_FSTYPE='' AESLOOP_SOURCE='' AESLOOP_FILE='' AESLOOP_HOST_DIR='' \
		AESLOOP_HOST_FSTYPE='' AESLOOP_KEYED='' AESLOOP_GPGKEY='' AESLOOP_LOSETUP_ARGS=''
	conf=$(@LIBDIR@/aesloop-root-config /etc/fstab) ||
		aesloop_fatal "the root line of /etc/fstab cannot be set up at boot (above)"
	[ -n "$conf" ] || return 0
	eval "$conf"
	[ -z "$AESLOOP_FILE" ] ||
		aesloop_fatal "the root in a file on another file system is set up by initramfs-tools' hook only; with dracut, put it on a partition"
	modinfo -k "${kernel:?}" -F parm loop 2>/dev/null | grep -q '^aes_impl:' ||
		aesloop_fatal "the root file system is on an aesloop device, but kernel $kernel's loop module is not aesloop's: install aesloop's loop.ko for it (linux-headers-$kernel with the aesloop-dkms package, or make install KVER=$kernel) and run dracut again"
	if ! inst_binary @LOSETUP@ /sbin/aesloop-losetup ||
		! inst_multiple blkid stty udevadm modprobe ||
		! inst_script @LIBDIR@/aesloop-root-setup /usr/lib/aesloop/aesloop-root-setup ||
		! inst_simple @LIBDIR@/aesloop-functions /usr/lib/aesloop/aesloop-functions; then
		aesloop_fatal "cannot copy the root's setup into the initramfs"
	fi
	if [ -n "$AESLOOP_GPGKEY" ]; then
		if ! inst_multiple gpg gpg-agent || ! inst_simple "$AESLOOP_GPGKEY"; then
			aesloop_fatal "cannot copy gpg and $AESLOOP_GPGKEY into the initramfs"
		fi
	fi
	mkdir -p "$initdir/etc/aesloop" "$initdir/etc/cmdline.d"
	printf '%s\n' "$conf" >"$initdir/etc/aesloop/root.conf"
	# The root device when the kernel command line names none (root= there wins).
	printf 'root=%s\n' "$AESLOOP_LOOP" >"$initdir/etc/cmdline.d/90aesloop.conf"
	if ! inst_simple "$moddir/aesloop-root.service" "${systemdsystemunitdir:?}/aesloop-root.service" ||
		! $SYSTEMCTL -q --root "$initdir" add-wants initrd-root-device.target aesloop-root.service; then
		aesloop_fatal "cannot install aesloop-root.service"
	fi
	# The root's fsck waits for the setup: a wrong key's device comes and goes.
	mkdir -p "$initdir$systemdsystemunitdir/systemd-fsck@dev-${AESLOOP_LOOP#/dev/}.service.d"
	printf '[Unit]\nAfter=aesloop-root.service\n' \
		>"$initdir$systemdsystemunitdir/systemd-fsck@dev-${AESLOOP_LOOP#/dev/}.service.d/aesloop.conf"
}
