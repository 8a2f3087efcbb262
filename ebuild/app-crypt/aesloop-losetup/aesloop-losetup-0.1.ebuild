# Copyright 2026 Gentoo Authors
# Distributed under the terms of the GNU General Public License v2

EAPI=8

inherit toolchain-funcs

# The util-linux release that aesloop's patches are made for.
UL_PV=2.38.1
UL_P=util-linux-${UL_PV}
AESLOOP_P=aesloop-${PV}

DESCRIPTION="util-linux losetup and mount with aesloop's loop-AES key setup"
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

# aesloop's util-linux 2.38 series, in the order of its quilt series file
# (patches/util-linux/series-2.38 in aesloop's tarball).
AESLOOP_UL_PATCHES="${WORKDIR}/${AESLOOP_P}/patches/util-linux"
PATCHES=(
	"${AESLOOP_UL_PATCHES}"/2.38/losetup-list-bare-majmin.patch
	"${AESLOOP_UL_PATCHES}"/loopdev-set-encryption.patch
	"${AESLOOP_UL_PATCHES}"/2.38/libmount-loop-aes-options.patch
	"${AESLOOP_UL_PATCHES}"/2.38/losetup-loop-aes-options.patch
	"${AESLOOP_UL_PATCHES}"/2.38/mount-pass-fd.patch
	"${AESLOOP_UL_PATCHES}"/swapon-swapoff-encrypted-swap.patch
)

src_configure() {
	# Only losetup and mount.  util-linux's libraries are built static and
	# linked in, so both programs use the patched lib/loopdev.c of this tree
	# rather than the system's libmount, and nothing installed here can
	# collide with sys-apps/util-linux.
	local myeconfargs=(
		--disable-all-programs
		--enable-losetup
		--enable-mount
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
	# aesloop's key setup and AES, which the patched losetup calls: the
	# project's own userspace library (its Makefile's LIB_SRCS and TOOL_SRCS),
	# with the user's CFLAGS and without the project's -Werror.
	local lib="${T}/aesloop/libaesloop.a"
	emake -C "${WORKDIR}/${AESLOOP_P}" BUILD="${T}/aesloop" WARN="-std=c11" \
		CC="$(tc-getCC)" AR="$(tc-getAR)" "${lib}"

	local crypto
	crypto=$($(tc-getPKG_CONFIG) --libs libcrypto) || die

	# The patches' hooks reach aesloop's code from losetup, libmount (so mount)
	# and lib/: its headers for every object, its library for every link.
	emake losetup mount \
		"CFLAGS=${CFLAGS} -I${WORKDIR}/${AESLOOP_P}/tools" \
		"LIBS=${lib} ${crypto}"
}

src_install() {
	# Names of their own, as app-crypt/loop-aes-losetup does: sys-apps/util-linux
	# keeps /sbin/losetup and /bin/mount.
	newsbin losetup aesloop-losetup
	newbin mount aesloop-mount
	# aesloop's page, which documents the loop-AES options.
	doman "${WORKDIR}/${AESLOOP_P}/patches/aesloop-losetup.8"
	# Its NAME lists aesloop-mount too: the same page under that name.
	echo '.so man8/aesloop-losetup.8' >"${T}/aesloop-mount.8" || die
	doman "${T}/aesloop-mount.8"
}

pkg_postinst() {
	elog "aesloop-losetup is util-linux ${UL_PV}'s losetup with loop-AES encryption:"
	elog "    aesloop-losetup -e AES128 /dev/loop0 FILE        (asks for the passphrase)"
	elog "    aesloop-losetup -e AES256 -p 3 /dev/loop0 FILE 3<keyfile"
	elog "It needs aesloop's loop.ko (sys-fs/aesloop) loaded in place of the kernel's"
	elog "own loop module.  Its page, aesloop-losetup(8), and aesloop-losetup --help"
	elog "list the loop-AES options (-e, -p, -K, -H, -S, -C, ...)."
	elog "aesloop-mount is util-linux's mount with the same patches: it takes loop-AES's"
	elog "mount options (loop=, encryption=, gpgkey=, phash=, ...) on its command line"
	elog "and in /etc/fstab."
}
