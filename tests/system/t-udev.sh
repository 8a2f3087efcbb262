#!/bin/bash
# covers: udev events, partitions
# System suite: loop devices under a running udev (systemd-udevd with Debian's rules), on
# aesloop's loop.ko and, for reference, on the stock loop.ko of the same kernel (in the image,
# kernel/drivers/block/).
#  - A partitioned image attached with -P: its partitions appear with the device and go with
#    it; none is left after detach, none is removed while the device is configured.  With
#    udev's inotify watch off each partition gives exactly one add and one remove uevent, and
#    udev's record of a partition has its table's ID (the stock driver's counts are printed).  With
#    Debian's rules (watch on) both drivers' counts are printed.
#  - Where the partition uevents come from, traced (kprobes on bdev_disk_changed(), which every
#    drop and re-read of a disk's partitions goes through, with its caller's stack, and on
#    add_partition() and delete_partition(), each counted for the scan its task was in): on
#    aesloop, with the watch off and on, the driver's scans put the partitions in exactly once
#    per attach; every partition uevent is one of a traced scan; every other re-read is a
#    BLKRRPART from udev.  That is udev's watch: losetup opens the device for writing, and at
#    its close systemd-udevd (252 on bookworm) sees IN_CLOSE_WRITE and re-reads the table,
#    which removes each partition and adds it again (blktests' loop/012 counts those pairs,
#    and wants systemd 259 or later).  udev's re-reads are printed, as are the stock driver's
#    scans (a second one after udev's probe has scanned, as timing falls).
#  - losetup -d right after mkfs, while udev's blkid still probes the device, never fails.
# (The exact count failed while the driver scanned the table after its change event whatever
# happened meanwhile: udev's probe on that event had already scanned it, so each partition was
# dropped and added again, 6 extra pairs in 100 cycles, as the stock driver gives.)
# UDEV_CYCLES (default 100): the attach/detach cycles of the exact count; aesloop with the
# watch runs two fifths of that, the comparisons with the stock driver a quarter each.
# shellcheck source=tests/vm/lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"
# shellcheck source=tests/system/lib.sh
. /aesloop/tests/system/lib.sh

cycles=${UDEV_CYCLES:-100}
watch_cycles=$(((2 * cycles + 4) / 5))
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

# The partition scans, traced in a tracefs instance of the suite's own: kprobes on
# bdev_disk_changed() (the disk's name with it: gendisk's disk_name follows three ints) with
# the stack that called it, on add_partition() and on delete_partition().  trace_setup fails,
# saying why in $trace_why, when the kernel cannot.
tr=/sys/kernel/tracing
tri=$tr/instances/t-udev
trace=0 trace_why=
trace_setup() {
	local f
	[ -e $tr/kprobe_events ] || mount -t tracefs nodev $tr 2>/dev/null
	if [ ! -w $tr/kprobe_events ]; then
		trace_why="no kprobe events in tracefs"
		return 1
	fi
	for f in bdev_disk_changed add_partition delete_partition; do
		if ! grep -qE " $f\$" /proc/kallsyms; then
			trace_why="no $f in /proc/kallsyms (inlined into its caller?)"
			return 1
		fi
	done
	t_cleanup trace_teardown
	if ! { echo 'p:t_udev/scan bdev_disk_changed disk=+12(%di):string' >>$tr/kprobe_events &&
		echo 'p:t_udev/part_add add_partition' >>$tr/kprobe_events &&
		echo 'p:t_udev/part_del delete_partition' >>$tr/kprobe_events &&
		mkdir $tri && echo 0 >$tri/tracing_on &&
		echo stacktrace >$tri/events/t_udev/scan/trigger &&
		echo 1 >$tri/events/t_udev/enable; } 2>/dev/null; then
		trace_why="the kprobe events could not be set up"
		return 1
	fi
}
trace_teardown() {
	local e
	if [ -d $tri ]; then
		echo 0 >$tri/events/t_udev/enable
		rmdir $tri
	fi
	for e in scan part_add part_del; do
		echo "-:t_udev/$e" >>$tr/kprobe_events
	done
} 2>/dev/null

# trace_summary FILE: the scans in the trace FILE, into ${scans[KEY]}.  A scan is a re-read
# asked for with BLKRRPART when disk_scan_partitions() called it from the ioctl (rescans, by
# issuer in "by": COMM:N ...); otherwise the driver's: called by a loop function (at
# LOOP_CONFIGURE, LOOP_CLR_FD, the last close), or by the first open of a disk whose binding
# left GD_NEED_PART_SCAN set (opener in "attach_by_open").  A driver's scan that added
# partitions is an attach's ("attach", their partitions "attach_adds"); one that removed
# them, a detach's ("detach"); one that did neither, of an unbound device ("empty").  "adds"
# and "dels": every add_partition() and delete_partition(); "stray": those outside a scan;
# "lost": events the buffer dropped.  (The stacks are read before the module that may be in
# them is unloaded: a stack through a module that has gone prints addresses.)
declare -A scans
trace_summary() {
	local kv
	scans=()
	while read -r kv; do
		scans[${kv%%=*}]=${kv#*=}
	done < <(awk '
	function task(l) { sub(/ +\[[0-9]+\] .*/, "", l); sub(/^ +/, "", l); return l }
	function pid_of(t) { sub(/.*-/, "", t); return t }
	function comm_of(t) { sub(/-[0-9]+$/, "", t); return t }
	/entries-in-buffer\/entries-written:/ {
		x = $0; sub(/.*written: /, "", x); sub(/ .*/, "", x); split(x, e, "/")
		lost += e[2] - e[1]; next
	}
	/^#/ { next }
	/LOST [0-9]+ EVENTS/ { x = $0; sub(/.*LOST /, "", x); lost += x + 0; next }
	/ scan: \(bdev_disk_changed/ {
		n++; t = task($0); pid[n] = pid_of(t); comm[n] = comm_of(t); last[pid[n]] = n
		cur = 0; next
	}
	/<stack trace>/ { p = pid_of(task($0)); cur = (p in last) ? last[p] : 0; next }
	/^ => / {
		if (cur && $2 ~ /^disk_scan_partitions/) rr[cur] = 1
		else if (cur && $2 ~ /^_*(loop|lo)_/) drv[cur] = 1
		next
	}
	/ part_(add|del): \(/ {
		cur = 0; p = pid_of(task($0)); add = $0 ~ / part_add: /
		if (add) adds++; else dels++
		if (!(p in last)) { stray++; next }
		if (add) a[last[p]]++; else d[last[p]]++
		next
	}
	{ cur = 0 }
	END {
		for (i = 1; i <= n; i++) {
			if (rr[i]) {
				rescans++; rescan_adds += a[i]; rescan_dels += d[i]; by[comm[i]]++
			} else if (a[i]) {
				attach++; attach_adds += a[i]
				if (!drv[i]) open_by[comm[i]]++
			} else if (d[i]) {
				detach++
			} else {
				empty++
			}
		}
		for (c in by) bys = bys " " c ":" by[c]
		for (c in open_by) opens = opens " " c ":" open_by[c]
		printf "scans=%d\nattach=%d\nattach_adds=%d\nattach_by_open=%s\ndetach=%d\nempty=%d\n", n, attach, attach_adds, substr(opens, 2), detach, empty
		printf "rescans=%d\nrescan_adds=%d\nrescan_dels=%d\nby=%s\n", rescans, rescan_adds, rescan_dels, substr(bys, 2)
		printf "adds=%d\ndels=%d\nstray=%d\nlost=%d\n", adds, dels, stray, lost
	}' "$1")
}

# trace_line: what ${scans[@]} says, in words.
trace_line() {
	echo "partition scans: ${scans[attach]} put the partitions in at attach" \
		"(${scans[attach_adds]} added; by the first opener: ${scans[attach_by_open]:-none})," \
		"${scans[detach]} removed them at detach, ${scans[empty]} of an unbound device;" \
		"BLKRRPART re-reads: ${scans[rescans]} (${scans[by]:-none}), which removed" \
		"${scans[rescan_dels]} and added ${scans[rescan_adds]}"
}

# trace_checks NAME N ADDS REMOVES WATCH: aesloop's scans over N cycles, whose partition
# uevents were ADDS and REMOVES, with udev's watch WATCH (on or off): every partition uevent
# was one of a traced scan; the driver's scans put the partitions in exactly once per attach;
# every re-read was udev's, and none without its watch.
trace_checks() {
	local name=$1 n=$2 adds=$3 removes=$4 watch=$5 c other=
	t_expect_eq "$name-uevents-traced" "lost 0 stray 0 adds $adds removes $removes" \
		"lost ${scans[lost]} stray ${scans[stray]} adds ${scans[adds]} removes ${scans[dels]}"
	t_expect_eq "$name-driver-scans-per-attach" "$n attach scans, $((2 * n)) partitions" \
		"${scans[attach]} attach scans, ${scans[attach_adds]} partitions"
	if [ "$watch" = off ]; then
		t_expect_eq "$name-no-rescans" 0 "${scans[rescans]}"
		return
	fi
	for c in ${scans[by]}; do
		case "${c%:*}" in
		systemd-udevd | '(udev-worker)') ;;
		*) other="$other $c" ;;
		esac
	done
	t_expect_eq "$name-rescans-by-udev" "" "${other# }"
}

# cycles NAME N: N attach (-P) / detach cycles, each checked after udev has settled; then the
# partition uevents the kernel sent, as "ADDS REMOVES" in $counts, and the scans traced
# meanwhile in ${scans[@]} (trace_summary; the trace kept in /run/t-udev-trace.NAME).
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
	if [ "$trace" = 1 ]; then
		: >$tri/trace
		echo 1 >$tri/tracing_on
	fi
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
	scans=()
	if [ "$trace" = 1 ]; then
		echo 0 >$tri/tracing_on
		cat $tri/trace >"/run/t-udev-trace.$name"
		trace_summary "/run/t-udev-trace.$name"
	fi
	kill "$mpid" 2>/dev/null
	wait "$mpid" 2>/dev/null
	counts="$(grep -Ec '^KERNEL\[.*\] add +/.*/loop[0-9]+p[0-9]+ ' "$mon") $(grep -Ec '^KERNEL\[.*\] remove +/.*/loop[0-9]+p[0-9]+ ' "$mon")"
	if [ -n "$bad" ]; then
		t_fail "$name-cycles" "$bad"
		return 1
	fi
	t_pass "$name-cycles"
}

# The scans traced, where the kernel lets them be.
if trace_setup; then
	trace=1
else
	t_skip scan-trace "$trace_why"
fi

# The exact count, on aesloop with the watch off.
t_check use-aesloop use_driver aesloop
watch off
if cycles_of aesloop-nowatch "$cycles"; then
	t_expect_eq aesloop-nowatch-uevents "$((2 * cycles)) $((2 * cycles))" "$counts"
	[ "$trace" = 0 ] || trace_checks aesloop-nowatch "$cycles" "${counts% *}" "${counts#* }" off
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

# With Debian's rules the watch makes udev re-read the table when a writer closes the device
# (losetup, which opens it for writing, or anyone else), as timing falls: the uevents are
# counted, not compared; the trace says whose scans they were.
watch on
aesloop_counts=
if cycles_of aesloop-watch "$watch_cycles"; then
	aesloop_counts=$counts
	t_log "aesloop with udev's watch, $watch_cycles cycles: partition uevents $counts (add remove)," \
		"$((${counts% *} - 2 * watch_cycles)) adds more than 2 per cycle"
	if [ "$trace" = 1 ]; then
		t_log "aesloop with udev's watch: $(trace_line)"
		trace_checks aesloop-watch "$watch_cycles" "${counts% *}" "${counts#* }" on
	fi
fi

# Against the stock driver, printed: with the watch off each cycle gives at least one add and
# one remove per partition, so aesloop's exact count is never more than the stock driver's
# (which gave extra pairs: its second scan races udev's probe, as its trace shows); with the
# watch, udev's re-reads come on top.
if [ -z "$stock_ko" ]; then
	t_skip stock-comparison "no stock loop.ko under /lib/modules/$(uname -r)/kernel/drivers/block"
elif t_check use-stock use_driver stock; then
	watch off
	if cycles_of stock-nowatch "$ref_cycles"; then
		t_log "partition uevents without udev's watch: stock $counts (add remove) in $ref_cycles cycles; aesloop's exact count is 2 and 2 per cycle"
		[ "$trace" = 0 ] || t_log "stock without udev's watch: $(trace_line)"
	fi
	watch on
	if cycles_of stock-watch "$ref_cycles"; then
		t_log "partition uevents with udev's watch: stock $counts in $ref_cycles cycles, aesloop ${aesloop_counts:-none} in $watch_cycles (add remove)"
		[ "$trace" = 0 ] || t_log "stock with udev's watch: $(trace_line)"
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
