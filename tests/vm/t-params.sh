#!/bin/bash
# covers: module parameters, engine choice, partitions
# VM test: the module parameters at load time.  The module run.sh loaded
# (with its defaults) is unloaded and loaded again with other values:
#   defaults     max_loop=8 devices, hw_queue_depth 128 tags, aes_impl set
#   set          max_loop=2 max_part=15 hw_queue_depth=16 lo_threads=2,1,3
#                lo_prealloc=8 lo_nice=5: two devices, 16 tags, partitions
#                numbered in the device's own minors and scanned without -P,
#                workers per device
#   bad-*        out-of-range values: insmod fails with EINVAL, no module
#                and no device is left behind
#   probe-*      opening /dev/loop50 creates it, unless max_loop=4 was given
#   aes-impl-*   aes_impl=NAME at load: the chosen engine again, and generic, are
#                used; an unknown name, and a path this CPU lacks, refuse the load
# At the end the module is loaded again with its defaults.
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

ko=$AESLOOP_MODULE
param() { cat "/sys/module/loop/parameters/$1"; }
tags() { cat "/sys/block/$1/mq/0/nr_tags"; }
# Workers of a bound device N: the kthreads loopN-0, loopN-1...
workers() { cat /proc/[0-9]*/comm 2>/dev/null | grep -c "^loop$1-"; }

if [ -z "$ko" ]; then
	t_skip params "no module was loaded by run.sh"
	exit 0
fi

t_expect_eq defaults-max-loop 8 "$(param max_loop)"
t_expect_eq defaults-devices 8 "$(find /sys/block -maxdepth 1 -name 'loop*' | wc -l)"
t_expect_eq defaults-hw-queue-depth 128 "$(param hw_queue_depth)"
t_expect_eq defaults-nr-tags 128 "$(tags loop0)"
t_check defaults-aes-impl test -n "$(param aes_impl)"
default_impl=$(param aes_impl)
# Without lo_threads: a worker per CPU, up to 4.
t_zerofile /tmp/params.img 4M
want=$(nproc)
[ "$want" -le 4 ] || want=4
t_check defaults-bind losetup.stock /dev/loop0 /tmp/params.img
t_expect_eq defaults-lo-threads "$want" "$(workers 0)"
losetup.stock -d /dev/loop0

t_check unload rmmod loop
t_check set-load insmod "$ko" max_loop=2 max_part=15 hw_queue_depth=16 \
	lo_threads=2,1,3 lo_prealloc=8 lo_nice=5
t_expect_eq set-devices 2 "$(find /sys/block -maxdepth 1 -name 'loop*' | wc -l)"
t_expect_eq set-nr-tags 16 "$(tags loop0)"
t_expect_eq set-hw-queue-depth 16 "$(param hw_queue_depth)"
# max_part=15: 16 minors per device, so loop1 is minor 16.
t_expect_eq set-max-part-minor 7:16 "$(cat /sys/block/loop1/dev)"
printf 'label: dos\n2048,2048,83\n' | sfdisk -q /tmp/params.img >/dev/null
t_check set-bind losetup.stock /dev/loop1 /tmp/params.img
t_expect_eq set-lo-threads-loop1 3 "$(workers 1)"
# With minors reserved for partitions, every bound device is scanned.
t_expect_eq set-max-part-partscan 1 "$(cat /sys/block/loop1/loop/partscan)"
t_check set-max-part-p1 test -b /dev/loop1p1
t_expect_eq set-max-part-p1-minor 7:17 "$(cat /sys/block/loop1/loop1p1/dev)"
t_check set-bind-loop0 losetup.stock /dev/loop0 /tmp/params.img
t_expect_eq set-lo-threads-loop0 2 "$(workers 0)"
losetup.stock -d /dev/loop0
t_check set-io dd if=/dev/zero of=/dev/loop1 bs=64k count=16 conv=fsync status=none
losetup.stock -d /dev/loop1
t_check set-unload rmmod loop

# Each bad value: refused with EINVAL, nothing left loaded.
bad() {
	local name=$1
	shift
	t_expect_fail "bad-$name" 'Invalid (argument|parameters)' insmod "$ko" "$@"
	t_check "bad-$name-nothing-left" test ! -e /sys/module/loop
}
bad hw-queue-depth-0 hw_queue_depth=0
bad hw-queue-depth-huge hw_queue_depth=100000
bad max-part-negative max_part=-1
# add_disk() takes at most 256 minors a disk.
bad max-part-256 max_part=256
t_check max-part-255-load insmod "$ko" max_part=255 max_loop=1
t_check max-part-255-unload rmmod loop
bad max-loop-huge max_loop=2000000
bad lo-threads-0 lo_threads=0
bad lo-threads-17 lo_threads=17
bad lo-threads-dangling-index lo_threads=2,1
bad lo-threads-bad-pair lo_threads=2,1,0
bad lo-threads-negative-index lo_threads=2,-1,3
bad lo-prealloc-0 lo_prealloc=0
bad lo-prealloc-huge lo_prealloc=100000
bad lo-nice-50 lo_nice=50
bad lo-nice-minus-21 lo_nice=-21
bad aes-impl-unknown aes_impl=aes-fast
t_check aes-impl-unknown-logged sh -c "dmesg | grep -q 'aes_impl=aes-fast: no such AES code'"

# aes_impl=NAME asks for one engine: the one chosen by default, and generic.
impls=$default_impl
[ "$default_impl" = generic ] || impls="$impls generic"
for impl in $impls; do
	t_check "aes-impl-$impl-load" insmod "$ko" "aes_impl=$impl"
	t_expect_eq "aes-impl-$impl-used" "$impl" "$(param aes_impl)"
	t_check "aes-impl-$impl-logged" sh -c "dmesg | tail -n 5 | grep -q 'AES: $impl'"
	t_check "aes-impl-$impl-unload" rmmod loop
done
# A path the CPU cannot run: the load fails and says why.
missing=
case "$(uname -m)" in
aarch64) t_cpu_has aes || missing=arm64-ce ;;
*) t_cpu_has avx512f || missing=vaes-avx512 ;;
esac
if [ -n "$missing" ]; then
	bad aes-impl-missing "aes_impl=$missing"
	t_check aes-impl-missing-logged sh -c "dmesg | grep -q 'aes_impl=$missing: this CPU has no'"
fi

# Opening /dev/loopN creates the device: any N by default, only below
# max_loop when max_loop was given (as the stock driver).
t_check probe-load insmod "$ko"
mknod /tmp/loop50 b 7 50
t_check probe-creates-loop50 dd if=/tmp/loop50 of=/dev/null count=0 status=none
t_check probe-loop50-exists test -e /sys/block/loop50
t_check probe-unload rmmod loop
t_check probe-limit-load insmod "$ko" max_loop=4
t_expect_fail probe-limit-refused '' dd if=/tmp/loop50 of=/dev/null count=0 status=none
t_check probe-limit-no-loop50 test ! -e /sys/block/loop50
t_check probe-limit-unload rmmod loop

t_check reload insmod "$ko"
