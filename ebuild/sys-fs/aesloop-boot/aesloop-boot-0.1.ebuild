# Copyright 2026 Gentoo Authors
# Distributed under the terms of the GNU General Public License v2

EAPI=8

inherit optfeature systemd

DESCRIPTION="Boot integration of aesloop: encrypted fstab lines, swap and root (systemd, dracut)"
HOMEPAGE="https://example.org/aesloop/"
SRC_URI="https://example.org/aesloop/aesloop-${PV}.tar.gz"
S="${WORKDIR}/aesloop-${PV}"

LICENSE="GPL-2"
SLOT="0"
KEYWORDS="~amd64"
IUSE="+dracut"
# The project's boot tests boot Debian systems in QEMU: not for here.
RESTRICT="test"

# The generator's units and the dracut module's service run under systemd
# (the module needs dracut's systemd module): nothing here works under
# OpenRC, where app-crypt/aesloop-losetup's programs are run by hand instead.
# findmnt and blkid come from util-linux.
RDEPEND="
	app-crypt/aesloop-losetup
	sys-apps/systemd
	sys-apps/util-linux
	sys-fs/aesloop
	dracut? ( sys-kernel/dracut )
"

# The boot scripts' helpers, and the patched losetup they run (where
# app-crypt/aesloop-losetup installs it).
AESLOOP_LIBDIR=/usr/lib/aesloop
AESLOOP_LOSETUP=/usr/sbin/aesloop-losetup

src_compile() {
	# The placeholders make install-boot fills in.
	local f
	for f in boot/aesloop-fstab-setup boot/systemd/aesloop-fstab-generator \
		boot/dracut/90aesloop/module-setup.sh; do
		sed -e "s|@LIBDIR@|${EPREFIX}${AESLOOP_LIBDIR}|g" \
			-e "s|@LOSETUP@|${EPREFIX}${AESLOOP_LOSETUP}|g" \
			"${f}" >"${f}.gentoo" || die
	done
}

src_install() {
	# aesloop-root-config reads the root line of /etc/fstab for dracut's
	# module; aesloop-root-setup runs in the initramfs; aesloop-fstab-setup
	# is what the generator's units run.
	exeinto "${AESLOOP_LIBDIR}"
	doexe boot/aesloop-root-config boot/aesloop-root-setup
	newexe boot/aesloop-fstab-setup.gentoo aesloop-fstab-setup
	insinto "${AESLOOP_LIBDIR}"
	doins boot/aesloop-functions

	exeinto "$(systemd_get_systemgeneratordir)"
	newexe boot/systemd/aesloop-fstab-generator.gentoo aesloop-fstab-generator

	# Debian's initramfs-tools hook (boot/initramfs-tools) has no use here:
	# Gentoo makes its initramfs with dracut.
	if use dracut; then
		exeinto /usr/lib/dracut/modules.d/90aesloop
		newexe boot/dracut/90aesloop/module-setup.sh.gentoo module-setup.sh
		insinto /usr/lib/dracut/modules.d/90aesloop
		doins boot/dracut/90aesloop/aesloop-root.service
	fi
}

pkg_postinst() {
	elog "Lines of /etc/fstab with loop-AES options (loop=/dev/loopN and encryption=,"
	elog "see aesloop-losetup(8)) are now set up at boot by aesloop-fstab-generator,"
	elog "which asks for passphrases through systemd's password agents, e.g."
	elog "    PARTLABEL=data  /mnt/data  ext4  loop=/dev/loop5,encryption=AES128  0 2"
	elog "    PARTUUID=...    none       swap  sw,loop=/dev/loop6,encryption=AES128,phash=random  0 0"
	elog "Give each line a loop=/dev/loopN of its own (not loop0 if the root uses it),"
	elog "and the file system type, which tells a wrong passphrase.  Then"
	elog "    systemctl daemon-reload && systemctl start mnt-data.mount"
	elog "or reboot.  The swap line gets 65 fresh random keys and a new swap area at"
	elog "every boot: name its partition by PARTUUID=, as whatever it names is"
	elog "overwritten."
	if use dracut; then
		elog
		elog "A root file system on an aesloop device: give the root line of"
		elog "/etc/fstab the loop-AES options (loop=/dev/loop0,encryption=...), keep"
		elog "/boot on a clear partition, then rebuild the initramfs:"
		elog "    dracut --force"
		elog "(a distribution kernel: emerge --config of its package).  At a kernel"
		elog "upgrade, sys-fs/aesloop must be built for the new kernel before its"
		elog "initramfs is made (USE=dist-kernel does that)."
		elog "The module 90aesloop is included only when the root line is aesloop's;"
		elog "dracut then fails, saying why, if that kernel has no aesloop loop.ko"
		elog "(sys-fs/aesloop built for it) or the line cannot be set up at boot."
		elog "Run dracut again whenever the root line or its gpg key file changes."
		elog "The root must be on a partition (not in a file) with dracut, and the"
		elog "initramfs must use systemd (dracut's systemd module)."
	fi
	optfeature "gpg-encrypted key files (gpgkey=)" app-crypt/gnupg
}
