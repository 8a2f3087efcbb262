# Copyright 2026 Gentoo Authors
# Distributed under the terms of the GNU General Public License v2

EAPI=8

inherit optfeature toolchain-funcs

# The util-linux release these programs are built from: an internal detail of
# this package (its version is aesloop's), changed with a revision bump.
# 2.41, the series ::gentoo ships; the Manifest's DIST line was computed from
# Debian trixie's util-linux_2.41.5.orig.tar.xz, which is upstream's tarball
# taken unchanged: it equals kernel.org's file only as long as Debian's orig is
# byte-identical to it (not verifiable offline; check it before publishing).
UL_PV=2.41.5
UL_P=util-linux-${UL_PV}
AESLOOP_P=aesloop-${PV}

DESCRIPTION="util-linux losetup, mount, swapon, swapoff with loop-AES, and aesloop tools"
HOMEPAGE="https://example.org/aesloop/"
SRC_URI="
	https://www.kernel.org/pub/linux/utils/util-linux/v${UL_PV%.*}/${UL_P}.tar.xz
	https://example.org/aesloop/${AESLOOP_P}.tar.gz
"
S="${WORKDIR}/${UL_P}"

# util-linux's own licences, and aesloop's (GPL-2) for the key setup.
LICENSE="GPL-2 GPL-3 LGPL-2.1 BSD-4 MIT public-domain"
SLOT="0"
KEYWORDS="~amd64"
# util-linux's test suite needs the programs this package does not build.
RESTRICT="test"

RDEPEND="dev-libs/openssl:="
DEPEND="
	${RDEPEND}
	virtual/os-headers
"
BDEPEND="virtual/pkgconfig"

# aesloop's patches for the util-linux series of UL_PV, from aesloop's
# tarball: its quilt series file (patches/util-linux/series-2.41), in order.
AESLOOP_UL_PATCHES="${WORKDIR}/${AESLOOP_P}/patches/util-linux"
PATCHES=(
	"${AESLOOP_UL_PATCHES}"/loopdev-set-encryption.patch
	"${AESLOOP_UL_PATCHES}"/libmount-loop-aes-options.patch
	"${AESLOOP_UL_PATCHES}"/2.41/libmount-loop-aes-context.patch
	"${AESLOOP_UL_PATCHES}"/losetup-loop-aes-options.patch
	"${AESLOOP_UL_PATCHES}"/2.41/losetup-loop-aes-context.patch
	"${AESLOOP_UL_PATCHES}"/mount-pass-fd.patch
	"${AESLOOP_UL_PATCHES}"/2.41/mount-pass-fd-context.patch
	"${AESLOOP_UL_PATCHES}"/swapon-swapoff-encrypted-swap.patch
	"${AESLOOP_UL_PATCHES}"/2.41/swapon-swapoff-encrypted-swap-context.patch
	"${AESLOOP_UL_PATCHES}"/version-help-name-aesloop.patch
)

# The programs built and installed, each as aesloop-NAME.
AESLOOP_PROGS=( losetup mount swapon swapoff )

src_configure() {
	# Only the four programs.  util-linux's libraries are built static and
	# linked in, so the programs use the patched lib/loopdev.c and libmount of
	# this tree rather than the system's, and nothing installed here can
	# collide with sys-apps/util-linux.  --enable-swapon gives swapoff too.
	local myeconfargs=(
		--disable-all-programs
		--enable-losetup
		--enable-mount
		--enable-swapon
		--enable-libblkid
		--enable-libmount
		--enable-libsmartcols
		--disable-shared
		--enable-static
		--disable-asciidoc
		--disable-bash-completion
		--disable-makeinstall-chown
		--disable-makeinstall-setuid
		--disable-nls
		--disable-poman
		--disable-pylibmount
		--without-audit
		--without-btrfs
		--without-cap-ng
		--without-econf
		--without-libmagic
		--without-libz
		--without-ncurses
		--without-ncursesw
		--without-python
		--without-readline
		--without-selinux
		--without-systemd
		--without-tinfo
		--without-udev
		--without-user
	)
	econf "${myeconfargs[@]}"
}

src_compile() {
	# aesloop's key setup and AES, which the patched programs call: the
	# project's own userspace library (lib/ and aes/: its Makefile's
	# LIBAESLOOP_SRCS and AES_SRCS), with the user's CFLAGS and without the
	# project's -Werror.  It parses mount options and fstab with libmount:
	# this tree's, which it links.
	local lib="${T}/aesloop/libaesloop.a"
	emake -C "${WORKDIR}/${AESLOOP_P}" BUILD="${T}/aesloop" WARN="-std=c11" \
		CC="$(tc-getCC)" AR="$(tc-getAR)" MOUNT_CFLAGS="-I${S}/libmount/src" "${lib}"

	local crypto
	crypto=$($(tc-getPKG_CONFIG) --libs libcrypto) || die

	# The patches' hooks reach aesloop's code from the programs, libmount and
	# lib/: its headers for every object, its library and libmount (which
	# losetup does not link of its own) for every link.
	# AESLOOP_VERSION: --version names aesloop's.
	local aesloop_cflags="-I${WORKDIR}/${AESLOOP_P}/lib -DAESLOOP_VERSION=\\\"${PV}\\\""
	emake libmount.la "CFLAGS=${CFLAGS} ${aesloop_cflags}"
	emake "${AESLOOP_PROGS[@]}" "CFLAGS=${CFLAGS} ${aesloop_cflags}" \
		"LIBS=${lib} ${S}/libmount.la ${crypto}"

	# aesloop's own programs, aesloop-pipe and aesloop-reencrypt, linked with
	# this tree's static libmount and libblkid as the four are (libmount
	# first: it calls into libblkid).
	emake -C "${WORKDIR}/${AESLOOP_P}" BUILD="${T}/aesloop" WARN="-std=c11" \
		CC="$(tc-getCC)" AR="$(tc-getAR)" MOUNT_CFLAGS="-I${S}/libmount/src" \
		BLKID_CFLAGS="-I${S}/libblkid/src" BLKID_LIBS= \
		MOUNT_LIBS="${S}/.libs/libmount.a ${S}/.libs/libblkid.a" \
		"${T}"/aesloop/bin/aesloop-{pipe,reencrypt}
}

src_install() {
	# Names of their own, as app-crypt/loop-aes-losetup does: sys-apps/util-linux
	# keeps /sbin/losetup, /bin/mount, /sbin/swapon and /sbin/swapoff.  mount
	# in bin as util-linux's; sys-fs/aesloop-boot runs /usr/sbin/aesloop-losetup.
	newsbin losetup aesloop-losetup
	newbin mount aesloop-mount
	newsbin swapon aesloop-swapon
	newsbin swapoff aesloop-swapoff

	# aesloop's page documents the loop-AES options of all four programs and
	# its NAME lists them: the others are the same page (as Debian's package).
	doman "${WORKDIR}/${AESLOOP_P}/tools/aesloop-losetup.8"
	local p
	for p in mount swapon swapoff; do
		echo '.so man8/aesloop-losetup.8' >"${T}/aesloop-${p}.8" || die
		doman "${T}/aesloop-${p}.8"
	done

	# aesloop's tools, where make install-tools puts them: the pipe and the
	# key file maker for users, the in-place conversion for root.
	local tools=${WORKDIR}/${AESLOOP_P}/tools
	dobin "${T}"/aesloop/bin/aesloop-pipe
	dosbin "${T}"/aesloop/bin/aesloop-reencrypt
	sed -e "s|^version=@VERSION@\$|version=${PV}|" "${tools}"/aesloop-keygen \
		>"${T}"/aesloop-keygen || die
	dobin "${T}"/aesloop-keygen
	doman "${tools}"/aesloop-{pipe,keygen}.1 "${tools}"/aesloop-reencrypt.8
}

pkg_postinst() {
	elog "Installed: aesloop-losetup, aesloop-mount, aesloop-swapon and aesloop-swapoff,"
	elog "util-linux ${UL_PV}'s programs with loop-AES encryption, beside util-linux's"
	elog "own (which stay as they are); all four are described in aesloop-losetup(8)."
	elog "They need aesloop's loop.ko (sys-fs/aesloop) loaded in place of the kernel's"
	elog "own loop module."
	elog
	elog "A volume:"
	elog "    aesloop-losetup -e AES128 /dev/loop0 FILE      (asks for the passphrase)"
	elog "    aesloop-losetup -e AES256 -p 3 /dev/loop0 FILE 3<keyfile"
	elog "    aesloop-losetup -d /dev/loop0                  (wipes the key in the kernel)"
	elog "/etc/fstab lines with loop-AES options (loop=, encryption=, gpgkey=, phash=,"
	elog "...) are mounted with aesloop-mount, e.g."
	elog "    /dev/sdb1  /secret  ext4  noauto,loop=/dev/loop3,encryption=AES128  0 0"
	elog "    aesloop-mount /secret"
	elog "and encrypted swap lines are set up with aesloop-swapon -a, e.g."
	elog "    PARTUUID=...  none  swap  sw,loop=/dev/loop6,encryption=AES128,phash=random  0 0"
	elog "(65 fresh random keys and a new swap area at every swapon; name the partition"
	elog "by PARTUUID=, as whatever it names is overwritten).  aesloop-swapoff swaps off"
	elog "and detaches, wiping the keys."
	elog
	elog "At boot, util-linux's own mount -a and swapon -a run, which do not know"
	elog "these options.  With systemd, sys-fs/aesloop-boot sets such lines up (and a"
	elog "root file system on an aesloop device, with dracut).  With OpenRC, give such"
	elog "lines noauto and set them up from /etc/local.d: aesloop-mount DIR, and"
	elog "aesloop-swapon -o sw,loop=/dev/loopN,encryption=... DEVICE."
	elog
	elog "aesloop-keygen makes gpg-encrypted v3 key files, aesloop-pipe encrypts and"
	elog "decrypts a stream as aespipe does, and aesloop-reencrypt converts a volume"
	elog "in place (single-key to v3, or new keys), resumably: see their man pages."
	optfeature "gpg-encrypted key files (-K, gpgkey=, aesloop-keygen)" app-crypt/gnupg
}
