#!/bin/bash
# System suite: loop devices under a running udev (systemd-udevd with Debian's rules), on
# aesloop's loop.ko and, for reference, on the stock loop.ko of the same kernel (in the image,
# kernel/drivers/block/).
#  - A partitioned image attached with -P: its partitions appear with the device and go with
#    it; none is left after detach, none is removed while the device is configured.  With
#    udev's inotify watch off each partition gives exactly one add and one remove uevent, and
#    udev's record of a partition has its table's ID (the stock driver's counts are printed).  With
#    Debian's rules (watch on) both drivers' counts are printed.
#  - losetup -d right after mkfs, while udev's blkid still probes the device, never fails.
# (The exact count failed while the driver scanned the table after its change event whatever
# happened meanwhile: udev's probe on that event had already scanned it, so each partition was
# dropped and added again, 6 extra pairs in 100 cycles, as the stock driver gives.)
# UDEV_CYCLES (default 100): the attach/detach cycles of the exact count; the comparisons with
# the stock driver run a quarter of that each.
# shellcheck source=tests/vm/lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"
# shellcheck source=tests/system/lib.sh
. /aesloop/tests/system/lib.sh

cycles=${UDEV_CYCLES:-100}
ref_cycles=$(((cycles + 3) / 4))
img=/var/tmp/t-udev-parts.img
truncate -s 8M "$img"
# Two partitions, as sfdisk writes them for a user.
printf '1MiB,2MiB,L\n,,L\n' | sfdisk -q "$img" >/dev/null || t_fail sfdisk "could not partition $img"
t_cleanup rm -f "$img"



# udev's inotify watch (Debian's 60-block.rules sets it on every disk): off for loop devices
# while /run/udev/rules.d/99-t-udev-nowatch.rules exists.
watch() {
	local rule=/run/udev/rules.d/99-t-udev-nowatch.rules
	mkdir -p /run/udev/rules.d
	if [ "$1" = off ]; then
		echo 'KERNEL=="loop*", OPTIONS+="nowatch"' >"$rule"
	else
		rm -f "$rule"
	fi
	udevadm control --reload
	# A device keeps the watch of its last event: one event each applies the rule now (else
	# the first cycle's close-after-write could still make udev rescan).
	udevadm trigger --action=change --subsystem-match=block --sysname-match='loop[0-9]*'
	udevadm settle
}

# cycles NAME N: N attach (-P) / detach cycles, each checked after udev has settled; then the
# partition uevents the kernel sent, as "ADDS REMOVES" in $counts.
counts=
cycles_of() {
	local name=$1 n=$2 i dev mon bad=
	mon=/run/t-udev-monitor.$name
	udevadm monitor --kernel --subsystem-match=block >"$mon" 2>&1 &
	local mpid=$!
	# The monitor prints its header once it listens.
	for i in $(seq 50); do
		grep -q 'KERNEL - the kernel uevent' "$mon" 2>/dev/null && break
		sleep 0.1
	done
	for ((i = 1; i <= n; i++)); do
		if ! dev=$(losetup -f --show -P "$img"); then
			bad="cycle $i: losetup -P failed"
			break
		fi
		udevadm settle
		if [ ! -b "${dev}p1" ] || [ ! -b "${dev}p2" ]; then
			bad="cycle $i: ${dev}p1/p2 missing while $dev is configured: $(compgen -G "${dev}*" | tr '\n' ' ')"
			losetup -d "$dev"
			break
		fi
		if ! losetup -d "$dev"; then
			bad="cycle $i: losetup -d $dev failed"
			break
		fi
		udevadm settle
		if compgen -G "${dev}p*" >/dev/null || compgen -G "/sys/block/${dev#/dev/}/${dev#/dev/}p*" >/dev/null; then
			bad="cycle $i: partitions of $dev left after detach: $(compgen -G "${dev}p*" | tr '\n' ' ')"
			break
		fi
	done
	sleep 1
	kill "$mpid" 2>/dev/null
	wait "$mpid" 2>/dev/null
	counts="$(grep -Ec '^KERNEL\[.*\] add +/.*/loop[0-9]+p[0-9]+ ' "$mon") $(grep -Ec '^KERNEL\[.*\] remove +/.*/loop[0-9]+p[0-9]+ ' "$mon")"
	if [ -n "$bad" ]; then
		t_fail "$name-cycles" "$bad"
		return 1
	fi
	t_pass "$name-cycles"
}

# The exact count, on aesloop with the watch off.
t_check use-aesloop use_driver aesloop
watch off
if cycles_of aesloop-nowatch "$cycles"; then
	t_expect_eq aesloop-nowatch-uevents "$((2 * cycles)) $((2 * cycles))" "$counts"
fi

# What udev's rules make of the partitions: a partition imports its table's ID from the
# whole disk's record, so the disk's change event must come before the partitions' add
# events, as a disk that is plugged in announces itself before its partitions.
disk_id=$(sfdisk --disk-id "$img")
disk_id=${disk_id#0x}
if dev=$(losetup -f --show -P "$img"); then
	udevadm settle
	t_expect_eq part-table-id-imported "ID_PART_TABLE_UUID=$disk_id" \
		"$(udevadm info -q property "${dev}p1" | grep '^ID_PART_TABLE_UUID=')"
	t_check by-partuuid-link test -b "/dev/disk/by-partuuid/$disk_id-01"
	losetup -d "$dev"
	udevadm settle
fi

# Against the stock driver, printed: with the watch off each cycle gives at least one add and
# one remove per partition, so aesloop's exact count is never more than the stock driver's
# (which gave extra pairs: its second scan races udev's probe).  With Debian's rules the watch makes udev rescan
# the table when a writer closes the device, in either driver as timing falls: those counts
# are printed, not compared.
if [ -z "$stock_ko" ]; then
	t_skip stock-comparison "no stock loop.ko under /lib/modules/$(uname -r)/kernel/drivers/block"
elif t_check use-stock use_driver stock && cycles_of stock-nowatch "$ref_cycles"; then
	t_log "partition uevents without udev's watch: stock $counts (add remove) in $ref_cycles cycles; aesloop's exact count is 2 and 2 per cycle"
	watch on
	if cycles_of stock-watch "$ref_cycles"; then
		stock_counts=$counts
		t_check use-aesloop-again use_driver aesloop
		if cycles_of aesloop-watch "$ref_cycles"; then
			t_log "partition uevents in $ref_cycles cycles with udev's watch: stock $stock_counts, aesloop $counts (add remove)"
		fi
	fi
fi
watch on
t_check use-aesloop-last use_driver aesloop

# losetup -d while udev probes what mkfs just wrote.
fs=/var/tmp/t-udev-fs.img
truncate -s 32M "$fs"
t_cleanup rm -f "$fs"
bad=
for ((i = 1; i <= ref_cycles; i++)); do
	dev=$(losetup -f --show "$fs") || { bad="cycle $i: attach failed"; break; }
	mkfs.ext4 -q -F "$dev" || { bad="cycle $i: mkfs failed"; losetup -d "$dev"; break; }
	if ! out=$(losetup -d "$dev" 2>&1); then
		bad="cycle $i: losetup -d $dev right after mkfs failed: $out"
		break
	fi
done
udevadm settle
if [ -n "$bad" ]; then
	t_fail detach-after-mkfs "$bad"
else
	t_pass detach-after-mkfs
fi
t_check detach-after-mkfs-none-left no_loop_left
