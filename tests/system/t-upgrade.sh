#!/bin/bash
# covers: Debian packages, DKMS, package upgrade, encrypted root, initramfs, fstab generator, swap
# System suite: a package upgrade on a system whose root is on aesloop (tests/system/image-root.sh
# of a -deb image, whose packaged initramfs hook set up the root).  Two boots of one disk
# (run.sh -o, and -d for the second disk /dev/vdb, the swap's store):
#   t-upgrade.sh first NAME DEBS  under release N: makes an encrypted volume in a file on the
#                                 root and an encrypted swap on /dev/vdb, writes their lines
#                                 into /etc/fstab and data onto the root and the volume, then
#                                 "apt-get install" of release N+1's packages in DEBS (a guest
#                                 folder: tests/packaging/source-build.sh --next SUITE's
#                                 output), as a user upgrades: DKMS builds N+1 for both
#                                 kernels, apt's triggers make a new initramfs with it; leaves
#                                 that initramfs and the new module's ELF build id in the share
#                                 (run.sh -I and -B boot them), reboots
#   t-upgrade.sh again NAME       the next boot, under N+1 from its first block: the initramfs
#                                 opened the root, the volume (its passphrase typed at the
#                                 console: run.sh -a answers/upgrade) and the swap came up at
#                                 boot; the data is there
# shellcheck source=tests/vm/lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"
# shellcheck source=tests/system/lib.sh
. /aesloop/tests/system/lib.sh

phase=${1:?usage: t-upgrade.sh first|again NAME [DEBS]}
name=${2:?usage: t-upgrade.sh first|again NAME [DEBS]}
# A test passphrase, not a secret; answers/upgrade types it at the console.
pass_data='upgrade data passphrase, twenty or more'
state=/var/lib/aesloop-test
kver=$(uname -r)
# build_id KO: the ELF build id of a module file, compressed or not (DKMS may compress it).
build_id() {
	case "$1" in
	*.xz) xz -dc "$1" ;;
	*.zst) zstd -qdc "$1" ;;
	*.gz) gzip -dc "$1" ;;
	*) cat "$1" ;;
	esac >/run/aesloop-test/loop.ko
	readelf -n /run/aesloop-test/loop.ko | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p'
}
mkdir -p /run/aesloop-test "$state"

# Both phases: the root is aesloop's, set up by the initramfs, under the release installed.
version=$(installed_release)
t_expect_eq loaded-is-installed "$version" "$(cat /sys/module/loop/version 2>/dev/null)"
t_check root-on-loop0 sh -c 'findmnt -n -o SOURCE / | grep -qx /dev/loop0'
t_check root-encrypted sh -c 'aesloop-losetup /dev/loop0 | grep -q "encryption="'

case "$phase" in
first)
	debs=${3:?usage: t-upgrade.sh first NAME DEBS}
	# The volumes a user has in /etc/fstab, made with release N's programs.
	truncate -s 64M "$state/up.aes"
	t_check make-volume sh -c "printf '%s\n' '$pass_data' |
		aesloop-losetup -e AES128 -p 0 /dev/loop7 $state/up.aes &&
		mkfs.ext4 -q /dev/loop7 && mkdir -p /mnt/up && mount /dev/loop7 /mnt/up &&
		head -c 65536 /dev/urandom | base64 >/mnt/up/before-upgrade &&
		cp /mnt/up/before-upgrade /share/$name-volume-expect &&
		umount /mnt/up && losetup -d /dev/loop7"
	cat >>/etc/fstab <<EOF
# t-upgrade: a volume mounted at boot and swap with fresh keys, both kept by the upgrade
$state/up.aes	/mnt/up	ext4	loop=/dev/loop5,encryption=AES128	0 2
/dev/vdb	none	swap	sw,loop=/dev/loop6,encryption=AES128,phash=random	0 0
EOF
	head -c 4096 /dev/urandom | base64 >/var/lib/aesloop-test-before-upgrade
	cp /var/lib/aesloop-test-before-upgrade "/share/$name-expect"

	# The upgrade, as a user runs it.  apt reads the files as _apt: copies it can read.
	mkdir -p /var/cache/aesloop-next
	cp "$debs"/aesloop-dkms_*_all.deb "$debs"/aesloop-utils_*_amd64.deb /var/cache/aesloop-next/
	t_log "apt-get install of $(cd /var/cache/aesloop-next && echo ./*.deb)"
	# Shown as it goes: DKMS's two builds and the initramfs take most of this boot.
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q /var/cache/aesloop-next/*.deb 2>&1 |
		tee /run/aesloop-test/upgrade.log | sed 's/^/    | /'
	if [ "${PIPESTATUS[0]}" = 0 ]; then
		t_pass upgrade
	else
		t_fail upgrade "apt-get install failed: $(tail -n 3 /run/aesloop-test/upgrade.log | paste -sd' ')"
	fi
	next=$(installed_release)
	t_check moved-on sh -c "[ '$next' != '$version' ] && dpkg --compare-versions '$next' gt '$version'"

	# DKMS: the new release built for both kernels, the old one gone.
	status=$(dkms status aesloop 2>&1)
	echo "dkms status: $status"
	for k in /lib/modules/*; do
		k=${k##*/}
		[ -d "/lib/modules/$k/build" ] || continue
		if grep -q "^aesloop/$next, $k, [^:]*: installed" <<<"$status"; then
			t_pass "dkms-next-$k"
		else
			t_fail "dkms-next-$k" "dkms status says: $status"
		fi
	done
	t_check dkms-old-gone sh -c "! dkms status aesloop | grep -q '^aesloop/$version,'"
	ko=$(modinfo -n loop)
	t_expect_eq module-file-next "$next" "$(modinfo -F version loop)"

	# The initramfs the next boot starts from holds release N+1's loop.ko (apt's triggers
	# made it): else the root would be set up by N, and stay on it.
	initrd=/boot/initrd.img-$kver
	rm -rf /run/aesloop-test/initrd
	if unmkinitramfs "$initrd" /run/aesloop-test/initrd 2>/dev/null; then
		iko=$(find /run/aesloop-test/initrd -path "*/lib/modules/$kver/*" -name 'loop.ko*' | head -n 1)
		t_expect_eq initramfs-module-next "$(build_id "$ko")" "$([ -z "$iko" ] || build_id "$iko")"
	else
		t_fail initramfs-module-next "unmkinitramfs $initrd failed"
	fi
	rm -rf /run/aesloop-test/initrd
	t_check initramfs-to-share cp "$initrd" "/share/$name-initrd.img"
	build_id "$ko" >"/share/$name-buildid"
	sync
	touch /run/aesloop-test/reboot
	;;
again)
	t_check root-file-kept cmp /var/lib/aesloop-test-before-upgrade "/share/$name-expect"
	t_check volume-mounted-at-boot systemctl is-active --quiet mnt-up.mount
	t_expect_eq volume-on-loop5 /dev/loop5 "$(findmnt -n -o SOURCE /mnt/up)"
	t_check volume-file-kept cmp /mnt/up/before-upgrade "/share/$name-volume-expect"
	t_check swap-on-at-boot sh -c 'swapon --show=NAME --noheadings | grep -qx /dev/loop6'
	t_check swap-encrypted sh -c 'aesloop-losetup /dev/loop6 | grep -q "encryption="'
	t_expect_eq one-release-in-dkms "aesloop/$version" \
		"$(dkms status aesloop | cut -d, -f1 | sort -u | paste -sd' ')"
	rm -f "/share/$name-expect" "/share/$name-volume-expect" "/share/$name-initrd.img" \
		"/share/$name-buildid"
	;;
*) t_fail usage "unknown phase $phase" ;;
esac
exit 0
