#!/bin/bash
# covers: queue limits, sysfs, direct I/O, block device backing
# VM test: every queue/ attribute of a loop, as the stock loop driver of the same kernel
# sets it.  The kernel's own loop.ko (from the unpacked kernel, over /aesloop) is loaded
# first and its loops' queue/ read, then ours with the same loops:
#   queue-unbound  a device not bound yet
#   queue-file     a loop on a file in an ext4 on a rotational disk (virtio-blk)
#   queue-dio      the same with --direct-io=on
#   queue-bdev     a loop on a partition of that disk
#   queue-detached the file loop's device once detached (it keeps the rotational flag)
# Each compares all of queue/ and names the attributes that differ, but one: a loop on a
# block device is rotational when the device is (rotational-bdev), where the stock driver
# asks the file system of the device node, which has none, and so says non-rotational
# on a disk too (6.1); and a detached loop offers no discard or write-zeroes and has no
# write cache, as before its first binding (detached-*), where the stock driver leaves the
# last file's discard limits (6.1) or write cache (7.3) in place.  wbt-* compares
# writeback throttling's latency target alone (6.1 takes it from the rotational flag
# once, when the disk is added: 75 ms on the stock driver's loops, whatever is below).
# Needs a scratch disk: run.sh -d 128.  At the end our module is loaded again.
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

ko=$AESLOOP_MODULE
kver=$AESLOOP_KVER
stock=$(compgen -G "/aesloop/build/kernel/$kver/lib/modules/$kver/kernel/drivers/block/loop.ko*" | head -n 1)
work=/tmp/t-queue
mkdir -p "$work" /mnt/q
if [ -z "$ko" ] || [ -z "$stock" ]; then
	t_skip queue "needs our module (run.sh -m) and the kernel's own loop.ko ($stock)"
	exit 0
fi
t_scratch_disk queue "-d 128" || exit 0
printf 'label: dos\n2048,65536,83\n,,83\n' | sfdisk -q /dev/vda >/dev/null
if ! t_run_quiet mkfs.ext4 -q /dev/vda1 || ! mount /dev/vda1 /mnt/q; then
	t_fail queue "cannot make an ext4 on /dev/vda1"
	exit 1
fi
t_cleanup umount /mnt/q
t_zerofile /mnt/q/f.img 16M

# queue_of KIND DEV: "KIND ATTRIBUTE VALUE" lines of DEV's queue/.
queue_of() {
	local a
	for a in "/sys/block/${2#/dev/}"/queue/*; do
		if [ -f "$a" ]; then
			printf '%s %s %s\n' "$1" "${a##*/}" "$(tr '\n' ' ' <"$a")"
		fi
	done
}

# snapshot DRIVER: the queue/ of each kind of loop, in $work/DRIVER.
snapshot() {
	local out=$work/$1 kind dev
	: >"$out"
	for kind in unbound file dio bdev; do
		case $kind in
		unbound) dev=/dev/loop0 ;;
		file) dev=$(losetup.stock -f --show /mnt/q/f.img) ;;
		dio) dev=$(losetup.stock --direct-io=on -f --show /mnt/q/f.img) ;;
		bdev) dev=$(losetup.stock -f --show /dev/vda2) ;;
		esac || { echo "$kind - setup-failed" >>"$out"; continue; }
		queue_of $kind "$dev" >>"$out"
		[ $kind = unbound ] || losetup.stock -d "$dev"
		[ $kind != file ] || queue_of detached "$dev" >>"$out"
	done
}

t_check unload rmmod loop
if t_check stock-load insmod "$stock"; then
	snapshot stock
	t_check stock-unload rmmod loop
fi
t_check reload insmod "$ko"
snapshot aesloop

# differing KIND [IGNORED]: the attributes whose values differ, with both values, but for
# those in the list IGNORED.
differing() {
	awk -v k="$1" -v ignored=" ${2:-} " '$1 != k || index(ignored, " " $2 " ") { next }
		{ a = $2; $1 = $2 = ""; v = substr($0, 3) }
		FNR == NR { s[a] = v; next }
		{ o[a] = v }
		END {
			for (a in s) if (!(a in o) || s[a] != o[a]) printf "%s (stock %s, aesloop %s); ", a, s[a], o[a]
			for (a in o) if (!(a in s)) printf "%s (stock none, aesloop %s); ", a, o[a]
		}' "$work/stock" "$work/aesloop"
}
value() { awk -v k="$2" -v a="$3" '$1 == k && $2 == a { $1 = $2 = ""; print substr($0, 3) }' "$work/$1"; }

for kind in unbound file dio bdev detached; do
	case $kind in
	bdev) ignored=rotational ;;
	detached) ignored="discard_granularity discard_max_bytes discard_max_hw_bytes write_zeroes_max_bytes write_cache" ;;
	*) ignored= ;;
	esac
	differ=$(differing $kind "$ignored")
	if ! grep -q "^$kind " "$work/stock" 2>/dev/null; then
		t_fail "queue-$kind" "no snapshot of the stock driver's"
	elif [ -n "$differ" ]; then
		t_fail "queue-$kind" "differs: $differ"
	else
		t_pass "queue-$kind"
	fi
	t_expect_eq "wbt-$kind" "$(value stock $kind wbt_lat_usec)" "$(value aesloop $kind wbt_lat_usec)"
done
t_expect_eq rotational-bdev "$(cat /sys/block/vda/queue/rotational)" "$(value aesloop bdev rotational)"
for a in discard_max_bytes write_zeroes_max_bytes write_cache; do
	t_expect_eq "detached-$a" "$(value aesloop unbound $a)" "$(value aesloop detached $a)"
done
