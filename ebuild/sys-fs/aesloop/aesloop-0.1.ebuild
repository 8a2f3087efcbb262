# Copyright 2026 Gentoo Authors
# Distributed under the terms of the GNU General Public License v2

EAPI=8

inherit linux-mod-r1

if [[ ${PV} == 9999 ]]; then
	inherit git-r3
	EGIT_REPO_URI="https://example.org/aesloop.git"
else
	SRC_URI="https://example.org/aesloop/${P}.tar.gz"
	KEYWORDS="~amd64 ~arm64"
fi

DESCRIPTION="Loop block driver with loop-AES compatible AES encryption built in"
HOMEPAGE="https://example.org/aesloop/"

LICENSE="GPL-2"
SLOT="0"
IUSE="aes-ni cpu_flags_arm_aes cpu_flags_x86_aes keyscrub"
# The AES-NI code is x86 assembly, the ARMv8 Crypto Extensions code arm64's.
REQUIRED_USE="
	aes-ni? ( || ( amd64 x86 ) )
	cpu_flags_x86_aes? ( || ( amd64 x86 ) )
	cpu_flags_arm_aes? ( arm64 )
"
# The project's "make check" boots Debian kernels in QEMU as root: not for here.
RESTRICT="test"

# Global, so that linux-mod-r1_pkg_setup evaluates it (MODULES is its own).
CONFIG_CHECK="BLOCK"
ERROR_BLOCK="CONFIG_BLOCK: aesloop is a block device driver and needs the block layer"
# The kernels the driver is built and tested against: Debian's 6.1, 6.12 and 7.3
# (with its PREEMPT_RT flavour); 6.1 is the oldest it supports.
MODULES_KERNEL_MIN=6.1

DOCS=( README.md )

pkg_setup() {
	linux-mod-r1_pkg_setup

	# A loop driver built into the kernel holds the name "loop" and block
	# major 7: a module of the same name could never be loaded beside it.
	if linux_chkconfig_builtin BLK_DEV_LOOP; then
		eerror "The kernel in ${KV_OUT_DIR} has its loop driver built in"
		eerror "(CONFIG_BLK_DEV_LOOP=y), so aesloop's loop.ko can never be loaded."
		eerror "Set CONFIG_BLK_DEV_LOOP=m (or n) and rebuild the kernel first."
		die "CONFIG_BLK_DEV_LOOP=y: the kernel's own loop driver cannot be replaced"
	fi
}

src_compile() {
	# The top-level Makefile's "module" target runs kbuild on the top
	# Kbuild ($(MAKE) -C $(KDIR) M=$(CURDIR) modules), giving loop/loop.ko.
	# It goes to updates/, which depmod ranks above the kernel's own
	# kernel/drivers/block/loop.ko.
	local modlist=( loop=updates::loop:module )
	local modargs=( KDIR="${KV_OUT_DIR}" )
	if use aes-ni || use cpu_flags_x86_aes; then
		modargs+=( INTELAES=y )
	else
		# loop/Kbuild builds the AES-NI code by default on amd64.
		modargs+=( INTELAES=n )
	fi
	if use cpu_flags_arm_aes; then
		modargs+=( ARM64AES=y )
	else
		# loop/Kbuild builds the ARMv8 Crypto Extensions code by default on arm64.
		modargs+=( ARM64AES=n )
	fi
	if use keyscrub; then
		modargs+=( KEYSCRUB=y )
	fi

	linux-mod-r1_src_compile
}

src_install() {
	linux-mod-r1_src_install

	# updates/ already comes first in depmod's default search order
	# ("updates built-in"); this keeps it first under a site "search" line.
	insinto /lib/depmod.d
	newins - aesloop.conf <<-EOF
		# ${CATEGORY}/${PN}: aesloop's loop.ko replaces the kernel's own loop module
		override loop * updates
	EOF
}

pkg_postinst() {
	linux-mod-r1_pkg_postinst

	elog "aesloop's loop.ko is in /lib/modules/${KV_FULL}/updates, where modprobe"
	elog "prefers it to the kernel's own loop module.  To switch a running system"
	elog "from the stock module: unmount whatever is mounted from a loop device,"
	elog "detach them all (losetup -D), then"
	elog "    modprobe -r loop && modprobe loop"
	elog "If your initramfs carries loop.ko, rebuild it as well."
	elog
	elog "To see which AES code the loaded module uses:"
	elog "    cat /sys/module/loop/parameters/aes_impl"
	elog "or, with a module that does not have that parameter yet:"
	elog "    dmesg | grep 'aesloop driver loaded'   (the line ends in \"AES: <path>\")"
	if use aes-ni || use cpu_flags_x86_aes; then
		elog "With the AES-NI code built in, the module picks it at load time when the"
		elog "CPU has AES-NI, and the generic C code otherwise."
	fi
	if use cpu_flags_arm_aes; then
		elog "With the ARMv8 Crypto Extensions code built in, the module picks it at"
		elog "load time when the CPU has the AES instructions (aes_impl=arm64-ce), and"
		elog "the generic C code otherwise (Raspberry Pi 4 and older, for one)."
	fi
	elog
	elog "Encrypted loops are set up with app-crypt/aesloop-losetup's programs"
	elog "(aesloop-losetup -e AES128 /dev/loop0 FILE; aesloop-mount and aesloop-swapon"
	elog "for fstab lines with loop-AES options); sys-fs/aesloop-boot sets such lines,"
	elog "swap and a root file system up at boot (systemd, dracut)."
	elog "After unmerging ${PN}, run depmod -a so that the kernel's own loop module"
	elog "is found again."
}
