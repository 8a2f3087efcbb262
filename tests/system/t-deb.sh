#!/bin/bash
# covers: Debian packages, DKMS, module loading, losetup
# System suite on the bookworm-deb image (tests/system/image.sh): aesloop installed from its
# Debian packages with apt, DKMS having built loop.ko for the image's kernel and again when a
# second kernel's headers came (guest.sh has already checked that the loop module systemd's
# boot loaded is the one DKMS installed).  The packaged programs set up, use and detach an
# encrypted loop beside util-linux's own; then "apt-get remove aesloop-dkms" gives the
# kernel's own loop driver back, on which aesloop-losetup -e says what it found.
# shellcheck source=tests/vm/lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"
# shellcheck source=tests/system/lib.sh
. /aesloop/tests/system/lib.sh

kver=$(uname -r)
# The kernel's own loop.ko, from its package's file list (linux-image's, or linux-modules'
# from 7.x on): trixie's DKMS archives it while aesloop's is installed ("Found pre-existing
# ..., archiving for uninstallation") and puts it back on removal; bookworm's leaves it.
stock_pkg_ko=$(dpkg -S "*/modules/$kver/kernel/drivers/block/loop.ko*" 2>/dev/null |
	sed -n '1s/^[^:]*: //p')
version=$(installed_release)
for p in aesloop-dkms aesloop-utils; do
	t_check "installed-$p" sh -c "dpkg-query -W -f '\${Status}' $p | grep -qx 'install ok installed'"
done

# DKMS: built and installed for both kernels, each module for its own kernel.
status=$(dkms status aesloop 2>&1)
echo "dkms status: $status"
other=$(find /lib/modules -mindepth 1 -maxdepth 1 ! -name "$kver" -printf '%f\n' | head -n 1)
for k in "$kver" "$other"; do
	ko=$(find "/lib/modules/$k/updates/dkms" -name 'loop.ko*' 2>/dev/null | head -n 1)
	if [ -z "$k" ]; then
		t_fail dkms-second-kernel "no second kernel's modules folder in /lib/modules"
	elif ! grep -q "^aesloop/$version, $k, [^:]*: installed" <<<"$status"; then
		t_fail "dkms-installed-$k" "dkms status says: $status"
	elif [ -z "$ko" ] || [ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" != "$k" ]; then
		t_fail "dkms-installed-$k" "no loop.ko for $k in updates/dkms (${ko:-none})"
	else
		t_pass "dkms-installed-$k"
	fi
done
t_expect_eq modprobe-finds-dkms "/lib/modules/$kver/updates/dkms" "$(dirname "$(modinfo -n loop)")"
t_expect_eq module-version "$version" "$(cat /sys/module/loop/version 2>/dev/null)"
check_aes_impl

# The programs: aesloop-losetup beside util-linux's losetup, which stays util-linux's.
# (dpkg's database has bookworm's losetup under /sbin, the merged-/usr alias of /usr/sbin.)
t_check utils-losetup-is-util-linux sh -c 'dpkg -S /sbin/losetup /usr/sbin/losetup 2>/dev/null |
	grep -Eq "^(util-linux|mount):" && ! losetup --help | grep -q -- --encryption'
t_check aesloop-losetup-has-e sh -c 'aesloop-losetup --help | grep -q -- --encryption'
f=/var/tmp/t-deb.img
truncate -s 32M "$f"
pass=/run/t-deb.pass
printf '%s\n' 'system-deb-test passphrase' >"$pass"
if dev=$(aesloop-losetup -f --show -e AES256 -p 3 "$f" 3<"$pass"); then
	t_pass setup-encrypted
	udevadm settle
	t_check mkfs mkfs.ext4 -q "$dev"
	t_check detach losetup -d "$dev"
	udevadm settle
	# The store shows no file system; the same key shows it again.
	t_check store-has-no-signature sh -c "! blkid -p '$f' >/dev/null"
	if dev=$(aesloop-losetup -f --show -e AES256 -p 3 "$f" 3<"$pass"); then
		t_check readback-ext4 sh -c "blkid -p -s TYPE -o value '$dev' | grep -qx ext4"
		losetup -d "$dev"
	else
		t_fail setup-again "aesloop-losetup failed the second time"
	fi
else
	t_fail setup-encrypted "aesloop-losetup -f --show -e AES256 -p 3 $f failed"
fi
rm -f "$f" "$pass"
t_check no-loop-left no_loop_left

# The packaged boot integration: the generator (where systemd looks) makes a setup unit for an
# encrypted fstab line that runs the packaged setup and losetup.
gen=/lib/systemd/system-generators/aesloop-fstab-generator
mkdir -p /run/t-deb-gen/normal /run/t-deb-gen/early /run/t-deb-gen/late
printf '%s\n' '/srv/vol.aes /mnt/vol ext4 noauto,loop=/dev/loop4,encryption=AES256 0 0' >/run/t-deb-fstab
if SYSTEMD_FSTAB=/run/t-deb-fstab sh "$gen" /run/t-deb-gen/normal /run/t-deb-gen/early /run/t-deb-gen/late &&
   grep -qx 'ExecStart=/usr/lib/aesloop/aesloop-fstab-setup start /dev/loop4' \
	/run/t-deb-gen/normal/aesloop-loop4.service &&
   grep -qx 'AESLOOP_LOSETUP=/usr/sbin/aesloop-losetup' /usr/lib/aesloop/aesloop-fstab-setup; then
	t_pass packaged-generator
else
	t_fail packaged-generator "no aesloop-loop4.service running the packaged setup: $(find /run/t-deb-gen -type f | paste -sd' ')"
fi
rm -rf /run/t-deb-gen /run/t-deb-fstab

# aesloop-dkms does not go while the root line of /etc/fstab is aesloop's: the next initramfs
# could not open the root without it.  (aesloop-utils has the same prerm, which
# tests/packaging/deb-packages.sh checks: a refused removal of it costs an update-initramfs here.)
cp /etc/fstab /run/t-deb-fstab.orig
sed -i 's|^/dev/vda\t/\t\text4\terrors=remount-ro|/dev/vdb\t/\text4\tloop=/dev/loop0,encryption=AES128|' /etc/fstab
if DEBIAN_FRONTEND=noninteractive apt-get remove -y -q aesloop-dkms >/tmp/t-deb-refused.log 2>&1; then
	t_fail remove-refused "apt-get remove aesloop-dkms went through with an aesloop root line"
elif grep -q 'the root file system is on an aesloop device' /tmp/t-deb-refused.log &&
     dpkg-query -W -f '${Status}' aesloop-dkms | grep -qx 'install ok installed'; then
	t_pass remove-refused
else
	t_fail remove-refused "$(tail -n 3 /tmp/t-deb-refused.log | paste -sd' ')"
fi
cp /run/t-deb-fstab.orig /etc/fstab
t_check fstab-restored grep -q '^/dev/vda' /etc/fstab

# apt-get remove: DKMS takes its modules away for both kernels, and modprobe loads the
# kernel's own loop driver again.
t_log "apt-get remove aesloop-dkms"
if DEBIAN_FRONTEND=noninteractive apt-get remove -y -q aesloop-dkms >/tmp/t-deb-remove.log 2>&1; then
	t_pass remove-dkms
else
	t_fail remove-dkms "apt-get remove failed: $(tail -n 3 /tmp/t-deb-remove.log | paste -sd' ')"
fi
sed 's/^/    | /' /tmp/t-deb-remove.log
t_expect_eq no-dkms-module-left "" "$(find /lib/modules -path '*/updates/dkms/loop.ko*')"
t_expect_eq modprobe-finds-stock "$(realpath -m "$stock_pkg_ko")" "$(realpath -m "$(modinfo -n loop)")"
t_check unload-aesloop unload_loop
t_check modprobe-loads-stock sh -c 'modprobe loop && [ -d /sys/module/loop ] &&
	[ ! -e /sys/module/loop/parameters/aes_impl ]'
# aesloop-losetup on the stock driver: says which driver it found and what to do.
truncate -s 8M "$f"
printf '%s\n' 'system-deb-test passphrase' >"$pass"
if out=$(aesloop-losetup -f --show -e AES128 -p 3 "$f" 3<"$pass" 2>&1); then
	t_fail stock-driver-named "aesloop-losetup set up $out on the stock driver"
	losetup -d "$out"
elif [[ $out == *"is not aesloop's"* ]]; then
	t_pass stock-driver-named
else
	t_fail stock-driver-named "aesloop-losetup said: $out"
fi
rm -f "$f" "$pass"
