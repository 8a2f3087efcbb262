#!/bin/bash
# Runs every test of aesloop, from a fresh Debian 12 machine (as root): installs
# what is missing, builds, then runs the static checks, the host tests and
# the VM suites.  The output is one TAP stream (tests/tap.sh: "ok N name",
# "not ok N name # why", "ok N name # SKIP why", comments "# ...") ending in its
# plan; the last line is "N passed, N failed, N skipped".
#
#   tests/check.sh                what CI runs: every suite on 6.1 and 7.3 (a few
#                                 of them on one of the two: ci_runs), a smoke set
#                                 on 6.12 and 7.3-rt (tests/README.md has the times)
#   FULL=1 tests/check.sh         every suite on every kernel (make check-full)
#   KSERIES=7.3 tests/check.sh    only these guest kernels (KSERIES= none)
#   SYSTEMS=trixie tests/check.sh only these system images (SYSTEMS= none)
# The debug kernel's tier has its own command: tests/check-debug.sh (make check-debug).
#
# The host phase runs first: the builds, then the host tests beside the static
# checks and the Gentoo overlay's checks, then (FULL=1) the benchmark alone (its
# ratios need an idle machine), with the guest kernels and the system images'
# Debian layers fetched in the background meanwhile; then every loop.ko is
# built, one at a time (they are built in loop/ itself) and each copied to a
# file of its own; then the VM suites of each kernel and the system images run
# in two lanes at once (see lanes in tests/check-lib.sh), each guest loading its
# own copy of loop.ko (run.sh -m).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
log=$top/build/check
# shellcheck source=tests/check-lib.sh
. "$top/tests/check-lib.sh"

stage "Dependencies"
step setup-deps tests/deps.sh || exit 1

# The guest kernels (tests/vm/kernel.sh: downloads and unpacking), the build roots their
# modules are built in (kmake.sh) and the system images' Debian layer (image.sh --base:
# mmdebstrap), fetched beside the builds and host tests, which leave the network idle: the
# kernel stage and the lanes then find them ready.  kernel.sh, kmake.sh and image.sh lock
# what they make, and the later calls report any failure.
kseries=${KSERIES-6.1 7.3 6.12 7.3-rt}
# The system images (system_suites, below, says what each is for).
full=${FULL:-0}
default_systems="bookworm trixie bookworm-deb"
[ "$full" = 0 ] || default_systems="$default_systems bookworm-dracut bookworm-deb-dracut trixie-deb"
systems=${SYSTEMS-$default_systems}
# What a run writes (tests/README.md): warned of at once, not found out in the lanes.
need_gib=10
[ "$full" = 0 ] || need_gib=30
[ "$(disk_free_mib)" -ge $((need_gib * 1024)) ] ||
	echo "# warning: $(disk_free) free where build/ is; this run writes about $need_gib GiB"
prefetch_kernels() {
	local kser kver
	for kser in $kseries; do
		kver=$(tests/vm/kernel.sh "$kser") && tests/vm/kmake.sh "$kver"
	done
}
prefetch_images() {
	local suite
	for suite in $systems; do
		tests/system/image.sh --base "$suite"
	done
}
prefetch_kernels >"$log/prefetch-kernels.log" 2>&1 &
kernels_pid=$!
prefetch_images >"$log/prefetch-images.log" 2>&1 &
images_pid=$!

stage "Build"
# INTELAES=y: the host tests then cover the AES-NI/VAES paths as well as
# the generic code, which every build keeps.
step build-userspace make userspace host-tests vm-tools INTELAES=y
step build-losetup make losetup
# Every other util-linux series of patches/series.sh (make losetup-SERIES, in
# build/ul-SERIES): cheap enough for CI (2.42: 4.8 minutes on a busy 2-core machine,
# 1.3 of CPU).
# shellcheck source=patches/series.sh
. "$top/patches/series.sh"
for s in $(ul_series_names); do
	[ "$s" = "$ul_default_series" ] || step "build-losetup-$s" make "losetup-$s"
done
step build-deb make deb

# The static checks (tests/lint.sh: one process at a time, reading the tree) and the Gentoo
# overlay's checks (mostly builds: make dist, loop.ko for several USE sets, util-linux) run
# beside the host tests (one program at a time), on the other core; their results follow.
# Each works in files of its own (build/gentoo, build/tests), and only the benchmark needs
# the machine idle.
stage "Host tests, and beside them the static checks and the Gentoo overlay (ebuild phases run with stand-ins for Portage)"
tests/lint.sh >"$log/lint.out" 2>&1 &
lint_pid=$!
# The ebuilds' mutants (broken copies the harness must catch, about 3.5 minutes) are
# FULL=1's: they prove the harness, which changes with the ebuilds and not with the code.
AESLOOP_GENTOO_MUTANTS=${FULL:-0} tests/gentoo/run.sh >"$log/gentoo.out" 2>&1 &
gentoo_pid=$!
record host tests/host/run.sh
# replay NAME PID: the results of a run put in the background, as record would have given.
replay() {
	local rc
	wait "$2"
	rc=$?
	# shellcheck disable=SC2016 # sh expands $1 and $2
	record "$1" sh -c 'cat "$1"; exit "$2"' sh "$log/$1.out" "$rc"
}
replay lint "$lint_pid"
replay gentoo "$gentoo_pid"

# The benchmark (about 2 minutes, the machine otherwise idle) is FULL=1's: on a shared CI
# machine its ratios mean little.  make bench runs it alone: after the fetches too.
if [ "${FULL:-0}" = 1 ]; then
	wait "$kernels_pid" "$images_pid"
	stage "Benchmark (printed, not asserted: ratios in one run)"
	step bench make bench && sed "s/^/# /" "$log/bench.log"
fi

# The source package as a buildd builds it: offline, in clean bookworm and trixie build roots
# (tests/README.md has its time; the build roots are made once).
if [ "${FULL:-0}" = 1 ]; then
	stage "Source package, built offline in bookworm and trixie build roots"
	record source-build tests/packaging/source-build.sh --next trixie
fi

share_vectors

# Which suites run on which kernel. Every suite on bookworm's own kernel (6.1,
# util-linux 2.38) and on the newest (7.3, trixie-backports); on 6.12 and on
# 7.3's PREEMPT_RT flavour a smoke set: the module loads and does plain, single-
# and multi-key I/O, real callers' sequences, the AES path it picks (RT: FPU
# sections behave differently) and, on 6.12 (trixie's kernel), util-linux
# 2.41's mount and swapon.  FULL=1: every suite everywhere.
tier_of() {
	if [ "${FULL:-0}" = 1 ]; then
		echo full
		return
	fi
	case "$1" in
	6.1 | 7.3) echo full ;;
	*) echo smoke ;;
	esac
}

# The module variants and the parallel workers run on one full-tier kernel
# each in CI (KEYSCRUB=y and INTELAES=n on 7.3, lo_threads=4 on 6.1), on all
# four with FULL=1: they change the driver's own code, which is the same on
# every kernel, and CI's time is limited.
variant_on() { # VARIANT SERIES
	[ "${FULL:-0}" = 1 ] && return 0
	case "$1:$2" in
	keyscrub:7.3 | no-intelaes:7.3 | threads4:6.1) return 0 ;;
	esac
	return 1
}

# ci_runs RUN SERIES: whether RUN of SERIES's tier runs; with FULL=1 every one does.  CI leaves
# these to FULL=1 for its time, each covered in CI by others:
#   t-swap on 6.1 (3.5 minutes): 7.3's t-swap runs the driver's way to the backing device
#     under memory pressure (its own code, the same on every kernel), and bookworm's t-fstab
#     encrypted swap on 6.1 under systemd;
#   t-reencrypt on 6.1 (four boots): the program is userspace's, the same on every kernel;
#     7.3's t-reencrypt runs it;
#   t-crash on 6.1 (two boots): 7.3's t-crash runs the flush to the backing file across a
#     reset (the same code), and 6.1's t-bdev checks that the queue's write cache and FUA
#     follow the backing device, which 6.1's branch of loop_kcompat.c sets;
#   t-crypt and t-aes-path on qemu64 on the smoke tier, and t-crypt on qemu64 on 6.1 and 7.3
#     (about 2.5 minutes each): the C AES the fallback runs is the same on every kernel and
#     has no FPU section (nothing of PREEMPT_RT's); t-aes-path on qemu64 on 6.1 checks the
#     default module's choice there (the fallback, with the same answers as the other paths),
#     and the INTELAES=n module's t-multikey on 7.3 runs I/O through the C AES in a kernel;
#   t-crypt on Nehalem (SSSE3, no AES-NI: the ssse3 engine), and its t-aes-path on the smoke
#     tier: t-aes-path on Nehalem runs on 6.1 and 7.3, and the module's load-time self-test
#     checks the engine against the C AES there; the engine's own tests are the host's
#     test_aesni (every key length and shape).  So CI runs no I/O through ssse3 in a kernel:
#     make check-uml does (t-crypt and t-multikey with aes_impl=ssse3, at native speed);
#   t-aes-path on qemu64 on 7.3: 7.3 runs the C AES through the INTELAES=n module's t-crypt
#     and t-multikey, 6.1 the fallback's choice on qemu64;
#   lo_threads=4's t-driver on 6.1 (about 3 minutes): lo_threads=4's t-bdev and t-crypt run
#     the parallel workers and the small bounce sets on 6.1, and the default module's
#     t-driver runs two workers on the guests' two CPUs; make check-uml runs lo_threads=4's
#     t-driver on 6.1 and 7.3 natively;
#   KEYSCRUB=y's t-driver on 7.3 (about 4 minutes): the keys move under I/O in KEYSCRUB=y's
#     t-crypt and t-callers; what only t-driver adds (the scrub's delayed work, which takes
#     lo_mutex, against detach, LOOP_CHANGE_FD and autoclear) CI then runs nowhere: make
#     check-uml runs it on 7.3 natively, FULL=1 on every kernel;
#   util-linux 2.41's t-keys on 6.12: the host's ul-2.41/t-losetup gives every key source to
#     2.41's losetup (the ioctls checked against the vectors), t-keys on 6.1 and 7.3 attaches
#     with every key source through the same key setup code (libaesloop) in 2.38's, and
#     6.12's ul-2.41/t-mount attaches through 2.41's losetup, mount and swapon;
#   util-linux 2.42's t-keys and t-mount on 7.3: CI builds 2.42's programs and runs the
#     host's ul-2.42/t-losetup on them; its hooks are 2.41's but for the lines whose
#     context differs (patches/util-linux/2.42/), and 2.41's VM suites run in CI;
#   each suite on one of the two full-tier kernels when what it adds is the driver's own code
#     or userspace's, the same on both: t-keys, t-abuse and t-mount run on 6.1, not 7.3 (the
#     key setup is libaesloop's, the ioctls' checks loop_ioctl.c's; 6.12 runs util-linux
#     2.41's t-mount); t-params and t-callers run on 7.3, not 6.1 (6.12 runs t-callers too);
#   KEYSCRUB=y's t-crypt and INTELAES=n's t-crypt on 7.3: KEYSCRUB=y's t-callers moves the
#     keys under I/O, and INTELAES=n's t-multikey runs the C AES in the kernel;
#   lo_threads=4's t-crypt on 6.1: its t-bdev runs four workers and the small bounce sets,
#     and the default module's suites two workers on the guests' two CPUs;
#   t-crypt and t-multikey on 6.12 (and so its aespipe check): they run on 6.1 and 7.3, and
#     6.12's util-linux 2.41 t-mount does encrypted I/O there;
#   every VM suite on 7.3's PREEMPT_RT flavour (about 7 minutes): its loop.ko is built in CI
#     (W=1, objtool); FULL=1 runs its suites, make check-debug the debug checks (lockdep,
#     DEBUG_ATOMIC_SLEEP) that catch a sleep in atomic context on any kernel.
ci_runs() { # RUN SERIES
	[ "${FULL:-0}" = 1 ] && return 0
	case "$1:$2" in
	t-swap:6.1 | t-crash:6.1 | t-reencrypt:6.1 | qemu64/t-crypt:* | ul-2.41/t-keys:6.12) return 1 ;;
	t-keys:7.3 | t-abuse:7.3 | t-mount:7.3 | t-params:6.1 | t-callers:6.1) return 1 ;;
	keyscrub/t-crypt:7.3 | no-intelaes/t-crypt:7.3 | threads4/t-crypt:6.1) return 1 ;;
	t-crypt:6.12 | t-multikey:6.12 | suites:7.3-rt) return 1 ;;
	ul-2.42/*:*) return 1 ;;
	nehalem/t-crypt:* | qemu64/aes-path:7.3 | keyscrub/t-driver:7.3) return 1 ;;
	threads4/t-driver:6.1) return 1 ;;
	qemu64/* | nehalem/*) [ "$(tier_of "$2")" = full ] ;;
	*) return 0 ;;
	esac
}

# Every kernel, and each loop.ko for it, before any guest runs: the builds share loop/ (where
# kbuild puts loop.ko and its objects), so they go one at a time, here; each module is copied to
# $modules/KVER[-VARIANT].ko, which the lanes' guests load.  The kernels whose fetch or build
# failed get no VM suites.
wait "$kernels_pid"
stage "Kernels and their loop.ko (one at a time; the VM suites follow, in two lanes)"
modules=$log/modules
rm -rf "$modules"
mkdir -p "$modules"
declare -A kver_of=()
kernels=()
for kser in $kseries; do
	tier=$(tier_of "$kser")
	stage "Kernel $kser ($tier): fetch, build"
	if ! kver=$(tests/vm/kernel.sh "$kser" 2>"$log/kernel-$kser.log"); then
		sed "s/^/# /" "$log/kernel-$kser.log"
		result fail "kernel-$kser" "could not fetch the Debian $kser kernel"
		continue
	fi
	if [[ " $kvers " == *" $kver "* ]]; then
		echo "# $kser is $kver, whose suites run already"
		continue
	fi
	if ! module_for "$kver"; then
		result skip "vm-$kver" "loop.ko did not build"
		continue
	fi
	cp loop/loop.ko "$modules/$kver.ko"
	kvers+=" $kver"
	kver_of[$kser]=$kver
	kernels+=("$kser")
	# The build and install targets as users and packagers run them, and the Debian packages
	# (lintian, DKMS), on the kernel whose compiler is the host's.  make-targets.sh copies the
	# checkout, which no build may be changing then: so here, not in a lane.
	if [ "$kser" = 6.1 ]; then
		record "make-targets-$kver" tests/packaging/make-targets.sh \
			"$top/build/kernel/$kver/lib/modules/$kver/build"
		record "deb-packages-$kver" tests/packaging/deb-packages.sh \
			"$top/build/kernel/$kver/lib/modules/$kver/build"
	fi
	[ "$tier" = full ] || continue
	# KEYSCRUB=y: keys move and are inverted every second under I/O.
	if variant_on keyscrub "$kser" &&
	   build_module "$kver" "build-module-$kver-keyscrub" KEYSCRUB=y; then
		cp loop/loop.ko "$modules/$kver-keyscrub.ko"
	fi
	# INTELAES=n: no aes-intel code in loop.ko, the generic C AES in the
	# kernel even on a CPU with AES-NI.
	if variant_on no-intelaes "$kser" &&
	   build_module "$kver" "build-module-$kver-no-intelaes" INTELAES=n; then
		cp loop/loop.ko "$modules/$kver-no-intelaes.ko"
		# shellcheck disable=SC2016 # sh expands $1
		step "module-$kver-no-intelaes-has-no-aes-intel" \
			sh -c '! nm "$1" | grep aesloop_intel_' sh "$modules/$kver-no-intelaes.ko" ||
			rm -f "$modules/$kver-no-intelaes.ko"
	fi
done

# The kernel series whose guests run the VM suites of each util-linux series other than
# make losetup's, SERIES:KERNEL: trixie's 2.41 on trixie's 6.12, forky's 2.42 on 7.3
# (FULL=1 only: ci_runs).
ul_vm_kernel="2.41:6.12 2.42:7.3"

# kernel_suites SERIES: the VM suites of SERIES's tier, on the modules built above, with a
# /share of the kernel's own (share_for).
kernel_suites() {
	local kser=$1 kver=${kver_of[$1]} tier share t
	tier=$(tier_of "$kser")
	stage "Kernel $kser ($tier): VM suites on $kver"
	share=$(share_for "$kver")
	# The kernel and its share; vm with the default module, variant for a variant's.
	local variant=(-k "$kver" -s "$share")
	local vm=("${variant[@]}" -m "$modules/$kver.ko")
	if [ "$tier" = full ]; then
		suites="t-plain t-params t-crypt t-multikey t-driver t-bdev t-reconfig t-mount t-keys t-callers"
	else
		suites="t-plain t-crypt t-multikey t-callers"
	fi
	for t in $suites; do
		ci_runs "$t" "$kser" || continue
		vm_results "${vm[@]}" -n "$kver/$t" "/aesloop/tests/vm/$t.sh"
	done
	# The queue limits against the kernel's own loop.ko, on every kernel: on a scratch disk.
	vm_results "${vm[@]}" -d 128 -n "$kver/t-queue" /aesloop/tests/vm/t-queue.sh
	# What t-crypt and t-multikey left in the share, against aespipe.
	if ci_runs t-crypt "$kser" && ci_runs t-multikey "$kser"; then
		NAME_PREFIX=$kver/ record "aespipe-$kver" tests/vm/host-aespipe.sh "$share/crypt"
	fi
	# The default module has the AES-NI/VAES code (x86_64): the suites above
	# ran it on -cpu max; the path it picks there, the ssse3 engine on a CPU
	# with SSSE3 and without AES-NI (Nehalem), and the generic fallback on
	# one with neither (qemu64), with the same answers.
	vm_results "${vm[@]}" -c max -n "$kver/intelaes-max/aes-path" \
		/aesloop/tests/vm/t-aes-path.sh max
	if ci_runs nehalem/aes-path "$kser"; then
		vm_results "${vm[@]}" -c Nehalem -n "$kver/intelaes-nehalem/aes-path" \
			/aesloop/tests/vm/t-aes-path.sh Nehalem
	fi
	if ci_runs nehalem/t-crypt "$kser"; then
		vm_results "${vm[@]}" -c Nehalem -n "$kver/intelaes-nehalem/t-crypt" \
			/aesloop/tests/vm/t-crypt.sh
	fi
	if ci_runs qemu64/t-crypt "$kser"; then
		vm_results "${vm[@]}" -c qemu64 -n "$kver/intelaes-qemu64/t-crypt" \
			/aesloop/tests/vm/t-crypt.sh
	fi
	if ci_runs qemu64/aes-path "$kser"; then
		vm_results "${vm[@]}" -c qemu64 -n "$kver/intelaes-qemu64/aes-path" \
			/aesloop/tests/vm/t-aes-path.sh qemu64
	fi
	# The other util-linux series (make losetup-SERIES): their losetup, mount,
	# swapon and swapoff with the loop-AES suites, each on the kernel series
	# of its Debian suite (ul_vm_kernel).
	local uk s ul
	for uk in $ul_vm_kernel; do
		[ "${uk#*:}" = "$kser" ] || continue
		s=${uk%%:*} ul=build/ul-${uk%%:*}
		for t in t-keys t-mount; do
			ci_runs "ul-$s/$t" "$kser" || continue
			if [ ! -x "$ul/bin/losetup" ]; then
				result fail "$kver/ul-$s" "$ul/bin/losetup is not built"
				break
			fi
			vm_results "${vm[@]}" -U "$ul" -n "$kver/ul-$s/$t" "/aesloop/tests/vm/$t.sh"
		done
	done
	[ "$tier" = full ] || return 0

	# KEYSCRUB=y: keys move and are inverted every second under I/O.
	if [ -f "$modules/$kver-keyscrub.ko" ]; then
		for t in t-crypt t-driver t-callers; do
			ci_runs "keyscrub/$t" "$kser" || continue
			vm_results "${variant[@]}" -m "$modules/$kver-keyscrub.ko" \
				-n "$kver/keyscrub/$t" "/aesloop/tests/vm/$t.sh"
		done
	fi
	# INTELAES=n: the C AES in the kernel on a CPU with AES-NI.
	if [ -f "$modules/$kver-no-intelaes.ko" ]; then
		for t in t-crypt t-multikey; do
			ci_runs "no-intelaes/$t" "$kser" || continue
			vm_results "${variant[@]}" -m "$modules/$kver-no-intelaes.ko" \
				-n "$kver/no-intelaes/$t" "/aesloop/tests/vm/$t.sh"
		done
	fi
	# Random ioctls and a user without privileges; -u: the module must
	# unload afterwards, so nothing holds a reference.
	if ci_runs t-abuse "$kser"; then
		vm_results "${vm[@]}" -u -n "$kver/t-abuse" /aesloop/tests/vm/t-abuse.sh
	fi
	# Durability across a hard reset: two boots (the image in the kernel's share).
	if ci_runs t-crash "$kser"; then
		vm_results "${vm[@]}" -n "$kver/t-crash-write" /aesloop/tests/vm/t-crash.sh write
		vm_results "${vm[@]}" -n "$kver/t-crash-check" /aesloop/tests/vm/t-crash.sh check
	fi
	# aesloop-reencrypt on a device, the guest reset twice while it runs: four boots on
	# one disk image that outlives them.
	if ci_runs t-reencrypt "$kser"; then
		local disk="$share/reencrypt-disk.img" phase
		rm -f "$disk"
		truncate -s 80M "$disk"
		for phase in start resume resume check; do
			vm_results "${vm[@]}" -d "$disk" -n "$kver/t-reencrypt-$phase" \
				/aesloop/tests/vm/t-reencrypt.sh "$phase"
		done
		rm -f "$disk"
	fi
	# Swap on an encrypted device-backed loop in a 256 MiB guest that
	# dirties more than it has (about 3.5 minutes).
	if ci_runs t-swap "$kser"; then
		vm_results "${vm[@]}" -M 256 -d 512 -n "$kver/t-swap" /aesloop/tests/vm/t-swap.sh
	fi
	# The I/O suites again with parallel workers; small bounce sets make
	# device-backed writes span several bios, and t-crypt's large reads are
	# shared by four.
	for t in t-driver t-bdev t-crypt; do
		variant_on threads4 "$kser" || break
		ci_runs "threads4/$t" "$kser" || continue
		vm_results "${vm[@]}" -p "lo_threads=4 lo_prealloc=4" \
			-n "$kver/threads4/$t" "/aesloop/tests/vm/$t.sh"
	done
}

# Real Debian systems booted with systemd, udev and udisks, aesloop installed as the README
# says: bookworm (6.1, util-linux 2.38.1), trixie (7.3 from trixie-backports, 2.41), bookworm
# with aesloop's Debian packages (bookworm-deb) and, with FULL=1, bookworm with dracut instead
# of initramfs-tools (made install's dracut module, and the packaged one: bookworm-deb-dracut)
# and trixie with its packages (trixie-deb: the source package's trixie build).  CI's time decides what runs where: trixie's udev, udisks, fstab and encrypted-root
# suites, dracut's, trixie-deb's, the root in a file (t-fstab has file-backed lines) and the
# root on a CPU without AES-NI (the VM tiers test the generic path) are FULL=1's.

# system_suites SUITE: the image of SUITE and its suites.  What two of them share is kept apart
# by SUITE: image.sh's and image-root.sh's folders (build/system/SUITE...), the disks in $log and
# the files in build/vm/share are named by it, and kmake.sh builds one loop.ko at a time.
system_suites() {
	local suite=$1 suites with_fstab variants t d disks fstab detached variant name disk root
	local rescue again first
	stage "System: Debian $suite (tests/system)"
	step "system-image-$suite" tests/system/image.sh "$suite" || return 0
	# bookworm's t-boot is FULL=1's: t-deb checks the same on bookworm in CI (the boot's
	# loop.ko, its AES path, an encrypted volume under udev), and every other boot of this
	# image checks that the module loaded is the one make install put there.  So is its
	# t-udev, for CI's time: the VM tiers' t-callers checks partition uevents per attach
	# and detach, and t-udisks and t-deb run under the image's udev.
	suites="t-udisks" with_fstab=yes variants=part
	[ "$full" = 0 ] || suites="t-boot t-udev t-udisks" variants="part file"
	case "$suite" in
	trixie)
		if [ "$full" = 1 ]; then
			variants=part
		else
			suites=t-boot with_fstab='' variants=''
		fi
		;;
	*-dracut) suites='' with_fstab='' variants=part ;;
	# aesloop from make deb's packages, with DKMS: the packages' own suite.
	bookworm-deb) suites=t-deb with_fstab='' variants='' ;;
	# trixie's packages: theirs, and their boot integration (generator, initramfs hook).
	trixie-deb) suites=t-deb with_fstab=yes variants=part ;;
	esac
	for t in $suites; do
		system_results -s "$suite" "tests/system/$t.sh"
	done
	# util-linux's own tests of losetup and mount against each series' patched programs
	# (FULL=1's: 19 minutes for 2.42 alone, 19 for 2.38.1 and 2.41 together, beside other runs).
	if [ "$full" = 1 ] && [ "$suite" = bookworm ]; then
		system_results -s "$suite" -t 4800 tests/system/t-ul-upstream.sh
	fi
	# Encrypted fstab lines and swap under systemd: a boot that makes them and reboots, the
	# next one on the same two disks; its shutdown (which no guest script sees) detached
	# each device, wiping its key.
	if [ -n "$with_fstab" ]; then
		disks=("$log/$suite-fstab-root.qcow2" "$log/$suite-fstab-root.qcow2.key" "$log/$suite-fstab-vdb.qcow2")
		rm -f "${disks[@]}" "build/vm/share/$suite-fstab-expect"
		# The console answers only the second boot's question: in the first, the test's own
		# agent answers (with a wrong passphrase first).
		fstab=(-s "$suite" -o "${disks[0]}" -d "${disks[2]}")
		detached=()
		for d in loop4 loop5 loop6; do
			detached+=(-k "shutdown-detached-$d=aesloop-fstab: /dev/$d detached, its key wiped")
		done
		system_results "${fstab[@]}" "${detached[@]}" -n "$suite/t-fstab/first" \
			tests/system/t-fstab.sh first "$suite-fstab"
		system_results "${fstab[@]}" -a tests/system/answers/fstab -n "$suite/t-fstab/again" \
			tests/system/t-fstab.sh again "$suite-fstab"
		rm -f "${disks[@]}"
	fi
	# The root on aesloop, set up by the image's initramfs: on a whole partition with a
	# passphrase (part), and (FULL=1) in a file on a partition with a v3 gpg key on /boot
	# (file).  For each, a first boot that writes and reboots, the next one on the same disk
	# (dracut's: one boot); then, on part, three wrong passphrases, and with FULL=1 a CPU
	# without AES-NI.  With FULL=1 the first boot also runs the image's own update-initramfs
	# (over 10 minutes under TCG) and the next boots what it made.
	for variant in $variants; do
		step "system-image-$suite-root-$variant" tests/system/image-root.sh "$suite" "$variant" ||
			continue
		name=root-$variant disk=$log/$suite-root-$variant.qcow2
		root=(-s "$suite" -i "$variant" -a tests/system/answers/root-ok)
		rescue=answers/root-rescue
		case "$suite" in
		*-dracut)
			system_results "${root[@]}" -t 1200 -n "$suite-$name/boot" tests/system/t-root.sh boot
			rescue=answers/root-rescue-dracut
			;;
		*)
			rm -f "$disk" "$disk.key" "build/vm/share/$suite-$name-initrd.img"
			again=(-t 1200) first=()
			if [ "$full" = 1 ] && [ "$suite" != trixie-deb ]; then
				# Two runs of update-initramfs: 10 minutes each on an idle machine,
				# 20 seen on one loaded to 8.  (trixie-deb's t-upgrade runs it.)
				first=(-e T_ROOT_UPDATE=1 -t 4800)
				again+=(-I "build/vm/share/$suite-$name-initrd.img")
			fi
			system_results "${root[@]}" "${first[@]}" -o "$disk" -n "$suite-$name/first" \
				tests/system/t-root.sh first "$suite-$name"
			system_results "${root[@]}" "${again[@]}" -o "$disk" -n "$suite-$name/again" \
				tests/system/t-root.sh again "$suite-$name"
			rm -f "$disk" "$disk.key"
			;;
		esac
		if [ "$variant" != part ] || [ "${suite%-deb}" = trixie ]; then
			continue
		fi
		if [ "${suite%-dracut}" = "$suite" ] && [ "$full" = 1 ]; then
			system_results "${root[@]}" -t 1200 -c qemu64 -n "$suite-$name/qemu64" \
				tests/system/t-root.sh boot
		fi
		system_results -s "$suite" -i part -t 1200 -R -a "tests/system/$rescue" \
			-n "$suite-$name/rescue" tests/system/t-root.sh rescue
	done
	# An upgrade to the next release's packages (source-build.sh --next) under a root, a
	# volume and swap on aesloop, and the boot after it: DKMS's two builds and the initramfs
	# made in the guest took 37 minutes under TCG beside three other guests on two cores.
	if [ "$suite" = trixie-deb ]; then
		name=$suite-upgrade disk=$log/$suite-upgrade.qcow2
		disks=("$disk" "$disk.key" "$log/$suite-upgrade-vdb.qcow2")
		rm -f "${disks[@]}" "build/vm/share/$name-"*
		root=(-s "$suite" -i part -o "$disk" -d "${disks[2]}")
		system_results "${root[@]}" -a tests/system/answers/root-ok -t 4800 -n "$name/first" \
			tests/system/t-upgrade.sh first "$name" /aesloop/build/srcbuild/trixie-next
		system_results "${root[@]}" -a tests/system/answers/upgrade -t 1200 \
			-I "build/vm/share/$name-initrd.img" -B "build/vm/share/$name-buildid" \
			-n "$name/again" tests/system/t-upgrade.sh again "$name"
		rm -f "${disks[@]}"
	fi
}

run_item() { # kernel-SERIES or system-SUITE
	case "$1" in
	kernel-*) kernel_suites "${1#kernel-}" ;;
	system-*) system_suites "${1#system-}" ;;
	esac
}

# item_minutes ITEM: what ITEM takes on a two-core machine, in tenths of a minute, for lanes
# to balance them by: CI's items as check.sh printed them ("# lane X: ITEM done (N min S s, ...)")
# in the run of tests/README.md's table, each beside the other lane, less the runs CI has
# since left to FULL=1 (their VM times in that run) and the minute t-driver's sysfs race
# no longer takes.  FULL=1's: from make check-full's
# measured times scaled as CI's grew, its system tier split by guess.  When you measure
# again, update these and that table.
item_minutes() {
	if [ "$full" = 1 ]; then
		case "$1" in
		kernel-6.1) echo 362 ;;
		kernel-7.3) echo 412 ;;  # with util-linux 2.42's t-keys and t-mount (about 4)
		kernel-6.12) echo 340 ;;
		kernel-7.3-rt) echo 320 ;;
		kernel-*) echo 300 ;;
		system-bookworm) echo 850 ;;  # with t-ul-upstream's three series (about 30)
		system-trixie) echo 400 ;;
		system-bookworm-dracut) echo 300 ;;
		system-bookworm-deb-dracut) echo 250 ;;  # its image (DKMS), the root's boot and rescue
		system-bookworm-deb) echo 103 ;;
		system-trixie-deb) echo 800 ;;  # its image, t-deb, t-fstab's and t-root's two boots each, t-upgrade's 41 minutes
		*) echo 300 ;;
		esac
		return
	fi
	case "$1" in
	kernel-6.1) echo 169 ;;
	kernel-7.3) echo 196 ;;  # with t-reencrypt's four boots (about 1.2)
	kernel-6.12) echo 46 ;;
	kernel-*) if [ "$(tier_of "${1#kernel-}")" = full ]; then echo 200; else echo 60; fi ;;
	system-bookworm) echo 153 ;;
	system-trixie) echo 70 ;;
	system-bookworm-deb) echo 103 ;;
	*) echo 100 ;;
	esac
}

items=()
for kser in "${kernels[@]}"; do
	if ! ci_runs suites "$kser"; then
		result skip "vm-${kver_of[$kser]}" "its VM suites are FULL=1's (ci_runs)"
		continue
	fi
	items+=("kernel-$kser")
done
for suite in $systems; do
	items+=("system-$suite")
done
# The images' Debian layers: done before any guest runs, so that no lane's guest (whose
# checks allow for a busy host, not for mmdebstrap beside it) shares the host with them.
wait "$images_pid"
if [ "${#items[@]}" -gt 0 ]; then
	stage "VM suites and system images, two lanes at once (logs: $log/lane-a.log, $log/lane-b.log)"
	lanes "${items[@]}"
fi
# The systems whose image was made, for the per-kernel counts.
for suite in $systems; do
	! grep -q "^ok [0-9]* system-image-$suite\$" "$results" || kvers+=" $suite"
done

summary
