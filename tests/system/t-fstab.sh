#!/bin/bash
# covers: fstab generator, fstab, mount, swap, gpg key file, passphrase prompt, deferred detach
# System suite: encrypted fstab lines and swap under systemd, on the stock Debian mount and
# swapon (boot/systemd/aesloop-fstab-generator, installed with make install-boot or the
# aesloop-utils package).  Two boots of one disk (run.sh -o, and -d for the second disk
# /dev/vdb):
#   t-fstab.sh first NAME  makes the volumes (on /dev/vdb's partitions and in a file on the
#                          root, AES128 passphrase and AES256 v3 gpg key), writes their
#                          lines into /etc/fstab, checks the units the generator makes,
#                          starts them on demand (a test agent answers systemd's password
#                          questions, a wrong passphrase first), writes files, reboots
#   t-fstab.sh again NAME  the next boot: the auto line was mounted at boot (its passphrase
#                          typed at the console: run.sh -a answers/fstab) and the swap is on
#                          with fresh keys; the files are there; the noauto line mounts on
#                          demand (through systemd, and by hand with aesloop's mount) and is
#                          detached when unmounted, with data still to write back or (refused)
#                          mounted elsewhere too; Debian's mount is Debian's; without
#                          aesloop's losetup the setup fails loudly instead of mounting
# shellcheck source=tests/vm/lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"
# shellcheck source=tests/system/lib.sh
. /aesloop/tests/system/lib.sh

phase=${1:?usage: t-fstab.sh first|again NAME}
name=${2:?usage: t-fstab.sh first|again NAME}
# Test passphrases, not secrets; answers/fstab types the first at the console.
pass_data='fstab data passphrase, twenty or more'
pass_gpg='gpg key file passphrase of the test'
state=/var/lib/aesloop-test
swap_part=/dev/disk/by-partlabel/aesloop-swap
# aesloop's losetup and mount: make install-tools installs them as aesloop-losetup and
# aesloop-mount, linked from losetup and mount in /usr/local/sbin (first in root's PATH); the
# aesloop-utils package only as aesloop-losetup and aesloop-mount, beside util-linux's own.
aes_losetup=$(command -v aesloop-losetup)
aes_mount=mount
! dpkg-query -W aesloop-utils >/dev/null 2>&1 || aes_mount=aesloop-mount

agent_pid=
start_agent() {
	printf '%s\n' "$@" >/run/aesloop-test/agent
	password_agent /run/aesloop-test/agent &
	agent_pid=$!
}
stop_agent() {
	[ -z "$agent_pid" ] || kill "$agent_pid" 2>/dev/null
	wait "$agent_pid" 2>/dev/null
	agent_pid=
}
mkdir -p /run/aesloop-test

# The device of a mount point, and whether its loop is an encrypted one.
source_of() { findmnt -n -o SOURCE "$1"; }
# What aesloop-fstab-setup told the kernel log (not the harness' own lines, which quote it).
# shellcheck disable=SC2317 # called through t_check
said() { dmesg | grep -v 'aesloop-test: ' | grep -qF -- "$1"; }
# shellcheck disable=SC2317
encrypted() { "$aes_losetup" "$1" 2>/dev/null | grep -q 'encryption='; }
# Waits (generously: a minute) for what systemd or the last close does on its own.
# shellcheck disable=SC2317 # called through t_check
wait_until() {
	local i
	for i in $(seq 120); do
		"$@" && return 0
		sleep 0.5
	done
	return 1
}
# shellcheck disable=SC2317
inactive() { [ "$(systemctl is-active "$1")" = inactive ]; }
# shellcheck disable=SC2317
failed() { [ "$(systemctl is-active "$1")" = failed ]; }
# shellcheck disable=SC2317
detached() { ! losetup "$1" >/dev/null 2>&1; }
# What holds /dev/loop4 after a failed check: its units, the journal, its openers and holders.
diag_loop4() {
	{
		systemctl status --no-pager aesloop-loop4.service mnt-gpg.mount systemd-fsck@dev-loop4.service
		journalctl -b --no-pager | grep -E 'loop4|mnt-gpg|aesloop-fstab'
		losetup -l
		ls /sys/block/loop4/holders
		grep -l -e ' /mnt/gpg ' -e 'loop4' /proc/[0-9]*/mountinfo
		dmesg | tail -n 30
	} 2>&1 | sed 's/^/  diag: /'
}

case "$phase" in
first)
	t_check partition-disk sh -c 'printf "label: gpt\nsize=32MiB, name=aesloop-swap\nname=aesloop-data\n" | sfdisk -q /dev/vdb && udevadm settle && test -b /dev/disk/by-partlabel/aesloop-data'
	t_check make-data sh -c "printf '%s\n' '$pass_data' | $aes_losetup -e AES128 -p 0 /dev/loop7 /dev/disk/by-partlabel/aesloop-data && mkfs.ext4 -q /dev/loop7 && losetup -d /dev/loop7"
	mkdir -p "$state" /etc/aesloop-test /mnt/auto /mnt/gpg /run/aesloop-test/gnupg
	chmod 0700 /run/aesloop-test/gnupg
	t_check make-gpg-key bash -c "head -c 3000 /dev/urandom | base64 -w 45 | head -n 65 | gpg --homedir /run/aesloop-test/gnupg --batch --quiet --pinentry-mode loopback --passphrase-fd 3 --symmetric --cipher-algo AES256 -o /etc/aesloop-test/data.gpg 3<<<'$pass_gpg'"
	t_check make-gpg-volume sh -c "truncate -s 64M $state/data.aes && printf '%s\n' '$pass_gpg' | $aes_losetup -e AES256 -K /etc/aesloop-test/data.gpg -G /run/aesloop-test/gnupg -p 0 /dev/loop7 $state/data.aes && mkfs.ext4 -q /dev/loop7 && losetup -d /dev/loop7"
	cat >>/etc/fstab <<EOF
# t-fstab: encrypted swap, a volume mounted at boot, one on demand (loop-AES's options)
PARTLABEL=aesloop-swap	none	swap	sw,loop=/dev/loop6,encryption=AES128,phash=random	0 0
PARTLABEL=aesloop-data	/mnt/auto	ext4	loop=/dev/loop5,encryption=AES128	0 2
$state/data.aes	/mnt/gpg	ext4	noauto,loop=/dev/loop4,encryption=AES256,gpgkey=/etc/aesloop-test/data.gpg	0 0
EOF
	t_check daemon-reload systemctl daemon-reload

	t_expect_eq mount-unit-what /dev/loop5 "$(systemctl show -P What mnt-auto.mount)"
	t_check mount-unit-generated sh -c 'systemctl show -P FragmentPath mnt-auto.mount | grep -q generator.early'
	t_expect_eq mount-unit-options defaults "$(systemctl show -P Options mnt-auto.mount)"
	t_check mount-unit-fsck sh -c 'systemctl show -P Requires mnt-auto.mount | grep -q "systemd-fsck@dev-loop5.service"'
	t_check boot-wants-auto sh -c 'systemctl show -P RequiredBy mnt-auto.mount | grep -q local-fs.target'
	t_expect_eq noauto-not-wanted '' "$(systemctl show -P RequiredBy mnt-gpg.mount)"
	t_expect_eq swap-unit-what /dev/loop6 "$(systemctl show -P What dev-loop6.swap)"
	t_check boot-wants-swap sh -c 'systemctl show -P RequiredBy dev-loop6.swap | grep -q swap.target'
	t_check backing-swap-neutral sh -c "systemctl show -P DropInPaths '$(systemd-escape --path --suffix=swap "$swap_part")' | grep -q aesloop.conf"

	# On demand through systemd, a wrong passphrase first: for the single key, refused by the
	# signature check; for the gpg key file, by gpg.
	start_agent "Passphrase for /mnt/auto	wrong passphrase, twenty or more" \
		"Passphrase again for the file system of /mnt/auto	$pass_data" \
		"Passphrase for /mnt/gpg	wrong passphrase for the gpg key" \
		"Passphrase again for the file system of /mnt/gpg	$pass_gpg"
	t_check start-auto systemctl start mnt-auto.mount
	t_expect_eq auto-on-loop5 /dev/loop5 "$(source_of /mnt/auto)"
	t_check auto-encrypted encrypted /dev/loop5
	t_check start-gpg systemctl start mnt-gpg.mount
	t_expect_eq gpg-on-loop4 /dev/loop4 "$(source_of /mnt/gpg)"
	t_check auto-wrong-refused said 'aesloop-fstab: no ext4 file system on /dev/loop5: wrong passphrase or key (attempt 1 of 3)'
	t_check gpg-wrong-refused said 'aesloop-fstab: losetup /dev/loop4 failed (exit 1; attempt 1 of 3)'
	t_check gpg-multi-key sh -c "$aes_losetup /dev/loop4 | grep -q multi-key-v3"
	stop_agent
	t_check start-swap systemctl start dev-loop6.swap
	t_check swap-on-loop6 sh -c 'swapon --show=NAME --noheadings | grep -qx /dev/loop6'
	t_expect_eq swap-store-no-signature '' "$(blkid -p -o value -s TYPE "$swap_part")"
	blkid -p -o value -s UUID /dev/loop6 >"$state/swap-uuid"

	head -c 65536 /dev/urandom | base64 >/mnt/auto/before-reboot
	cp /mnt/auto/before-reboot /mnt/gpg/before-reboot
	cp /mnt/auto/before-reboot "/share/$name-expect"
	touch /run/aesloop-test/reboot
	;;
again)
	expect=/share/$name-expect
	t_check auto-mounted-at-boot systemctl is-active --quiet mnt-auto.mount
	t_expect_eq auto-on-loop5 /dev/loop5 "$(source_of /mnt/auto)"
	t_check auto-encrypted encrypted /dev/loop5
	t_check auto-file-kept cmp /mnt/auto/before-reboot "$expect"
	t_check auto-fsck-ran sh -c 'systemctl show -P ActiveState systemd-fsck@dev-loop5.service | grep -qx active'
	if ! t_check swap-on-at-boot sh -c 'swapon --show=NAME --noheadings | grep -qx /dev/loop6'; then
		systemctl status --no-pager dev-loop6.swap aesloop-loop6.service 2>&1 | sed 's/^/  diag: /'
		journalctl -b --no-pager | grep -iE 'swap|loop6|generator' | sed 's/^/  diag: /'
	fi
	t_check swap-encrypted encrypted /dev/loop6
	uuid=$(blkid -p -o value -s UUID /dev/loop6)
	if [ -n "$uuid" ] && [ "$uuid" != "$(cat "$state/swap-uuid")" ]; then
		t_pass swap-new-area
	else
		t_fail swap-new-area "swap UUID '$uuid', last boot's '$(cat "$state/swap-uuid")'"
	fi
	t_expect_eq swap-store-no-signature '' "$(blkid -p -o value -s TYPE "$swap_part")"
	bunit=$(systemd-escape --path --suffix=swap "$swap_part")
	t_expect_eq swap-store-not-swapped-on "inactive no" \
		"$(systemctl show -P ActiveState "$bunit") $(systemctl show -P ConditionResult "$bunit")"
	t_check noauto-not-mounted sh -c '! findmnt /mnt/gpg >/dev/null && ! losetup /dev/loop4 >/dev/null 2>&1'

	# Debian's own mount and swapon (systemd's compiled-in paths) did the mounting, and
	# nothing of util-linux was replaced: upgrading it changes nothing here.
	t_expect_eq debian-mount-untouched '' "$(dpkg --verify mount util-linux 2>&1)"

	# On demand again, and umount detaches it.
	start_agent "Passphrase for /mnt/gpg	$pass_gpg"
	t_check start-gpg systemctl start mnt-gpg.mount
	stop_agent
	t_check gpg-file-kept cmp /mnt/gpg/before-reboot "$expect"
	# Data left dirty: umount(2) takes the mount out of mountinfo first, and systemd stops
	# the setup on seeing that, while the file system still writes it back and holds the
	# device.  The detach waits for it instead of failing.
	t_check write-dirty sh -c "head -c 16M /dev/urandom | tee /mnt/gpg/dirty | md5sum >$state/dirty.md5"
	t_check umount-gpg umount /mnt/gpg
	t_check umount-stops-setup wait_until inactive aesloop-loop4.service || diag_loop4
	t_check umount-detached detached /dev/loop4

	# By hand, with aesloop's mount ($aes_mount) and no terminal: it asks systemd's agents;
	# systemd leaves the mount alone, and umount detaches it (autoclear).
	start_agent "Passphrase for $state/data.aes	$pass_gpg"
	t_check mount-by-hand "$aes_mount" /mnt/gpg
	stop_agent
	t_expect_eq by-hand-on-loop4 /dev/loop4 "$(source_of /mnt/gpg)"
	t_check by-hand-file-kept cmp /mnt/gpg/before-reboot "$expect"
	t_check dirty-data-written sh -c "md5sum </mnt/gpg/dirty | cmp - $state/dirty.md5"
	t_check by-hand-still-mounted sh -c 'sleep 2; findmnt /mnt/gpg >/dev/null'
	t_check umount-by-hand umount /mnt/gpg
	t_check by-hand-detached wait_until detached /dev/loop4

	# Set up by hand (losetup -F reads the line), then mounted through systemd: the setup
	# keeps that device, and umount detaches it.  Without the device the start would
	# ask for the passphrase with no agent to answer, for ever (TimeoutStartSec=infinity).
	start_agent "Passphrase for $state/data.aes	$pass_gpg"
	set_up=0
	t_check losetup-by-hand "$aes_losetup" -F /dev/loop4 && set_up=1
	stop_agent
	if [ "$set_up" = 1 ]; then
		t_check start-after-losetup systemctl start mnt-gpg.mount
		t_check setup-kept-it said "aesloop-fstab: /dev/loop4 is set up already for /mnt/gpg"
		t_check kept-file-there cmp /mnt/gpg/before-reboot "$expect"
		t_check umount-kept umount /mnt/gpg
		t_check kept-detached wait_until detached /dev/loop4
	fi

	# Mounted a second time (a bind mount) when its line is unmounted: the stop refuses at
	# once and says why instead of waiting; the device stays until the last mount is gone.
	start_agent "Passphrase for /mnt/gpg	$pass_gpg"
	t_check start-gpg-for-bind systemctl start mnt-gpg.mount
	stop_agent
	mkdir -p /mnt/gpg-bind
	t_check bind-mount mount --bind /mnt/gpg /mnt/gpg-bind
	t_check umount-bound-elsewhere umount /mnt/gpg
	t_check stop-refused-in-use wait_until failed aesloop-loop4.service
	t_check stop-said-in-use said "aesloop-fstab: cannot detach /dev/loop4, in use"
	t_check in-use-still-set-up encrypted /dev/loop4
	t_check umount-bind umount /mnt/gpg-bind
	t_check detach-after-bind losetup -d /dev/loop4
	t_check bind-detached wait_until detached /dev/loop4
	systemctl reset-failed aesloop-loop4.service

	# The same store on /dev/loop4 without a key (a plain loop): never mounted.
	t_check plain-loop-on-store losetup /dev/loop4 "$state/data.aes"
	t_expect_fail plain-loop-refused '' systemctl start mnt-gpg.mount
	t_check plain-loop-said-why said "aesloop-fstab: /dev/loop4 is in use (another backing store, no key"
	t_check plain-loop-not-mounted sh -c '! findmnt /mnt/gpg >/dev/null'
	t_check plain-loop-detach losetup -d /dev/loop4
	systemctl reset-failed

	# Without aesloop's losetup (a broken install): the unit fails and says why.
	mount --bind /bin/true "$aes_losetup"
	t_expect_fail broken-install-fails '' systemctl start mnt-gpg.mount
	umount "$aes_losetup"
	t_check broken-install-said-why said "aesloop-fstab: $aes_losetup is not aesloop's losetup"
	t_check gpg-not-mounted sh -c '! findmnt /mnt/gpg >/dev/null && ! losetup /dev/loop4 >/dev/null 2>&1'
	systemctl reset-failed
	rm -f "$expect"
	;;
*) t_fail usage "unknown phase $phase" ;;
esac
exit 0
