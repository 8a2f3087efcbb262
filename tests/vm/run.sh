#!/bin/bash
# Runs one script inside a QEMU (TCG) guest with a Debian kernel and the loop.ko under test,
# or inside a User-Mode Linux guest (tests/uml/kernel.sh), which runs on this machine's cores.
# An arm64 kernel (kernel.sh 6.1-arm64) boots in qemu-system-aarch64's virt machine, with an
# arm64 userland (userland.sh); the tests' programs are build/arm64/vm-tools there (lib.sh).
set -euo pipefail

usage() {
	cat <<'EOF'
Usage: tests/vm/run.sh [OPTIONS] SCRIPT [ARGS...]

Boots build/kernel/KVER/boot/vmlinuz-KVER under QEMU (TCG), loads the module under test with
insmod, runs SCRIPT ARGS... in the guest, checks the guest's kernel log and powers off.
The project root is the guest's read-only /aesloop; build/vm/share is its writable /share.
A UML kernel (-k uml-7.3, uml-6.1 or its release, built by tests/uml/kernel.sh) runs as a
process instead, natively; its root is this host's, read-only (tests/uml/init.sh).

SCRIPT is a guest path (/aesloop/tests/vm/t-plain.sh), a path on this host (a file inside the
project is mapped to /aesloop/...; any other file, e.g. a bug report's reproducer, is copied
into the run's folder first; system paths such as /bin/sh stay guest paths), or a command
name on the guest's PATH. Guest scripts source /aesloop/tests/vm/lib.sh to report results.

Options:
  -k KVER     guest kernel: a release unpacked by kernel.sh, or a series (6.1, 6.12) that is
              fetched on demand; default: the current 6.1 release; uml-6.1 or uml-7.3 (or
              the release, e.g. 7.3.4-aesloop-uml): a User-Mode Linux kernel, built on demand;
              an arm64 kernel (6.1-arm64, 7.3-arm64, 6.1.0-57-arm64): an arm64 guest (TCG)
  -c CPU      QEMU CPU model (default max: AES-NI, PCLMULQDQ, AVX2 and VAES, but
              QEMU 7.2 computes VAES on ymm wrongly and has no AVX-512, so an
              INTELAES=y module picks aesni there; qemu64 has no AES-NI; arm64: every
              model of QEMU 7.2 (max, cortex-a53, ...) has the ARMv8 Crypto Extensions)
  -m KO       module to insmod as the loop driver (default loop/loop.ko); 'none' loads none
  -p PARAMS   module parameters, one string, e.g. -p 'max_loop=4'
  -U DIR      the patched util-linux to test: a BUILD_DIR of patches/build-losetup.sh,
              relative to the project root (default build; build/ul-SERIES for another
              series, made by make losetup-SERIES; also AESLOOP_UL_BUILD=DIR): the guest's losetup is
              DIR/bin/losetup, and guest scripts find DIR/bin as $AESLOOP_UL_BIN (mount,
              swapon, swapoff); each DIR has an initramfs of its own
  -M MIB      guest memory in MiB (default 1024), e.g. -M 256 for a test under memory pressure
  -C N        guest CPUs (default 2; a UML kernel without SMP has 1 whatever N is)
  -d MIB      a scratch disk of MIB MiB (a sparse file in the run's folder, removed after the
              run) as the guest's /dev/vda (virtio-blk; modprobe virtio_blk); -d FILE: that
              host file instead, kept (a disk that outlives a guest reset, for the next run)
  -u          rmmod the module after the script and report module-unload
  -n PREFIX   prefix of result names (default: the script's name without .sh)
  -s DIR      host folder shared as the guest's /share (default build/vm/share)
  -i          interactive: the script gets the console as its terminal (e.g. SCRIPT = bash)
EOF
	runner_usage_options 300
	cat <<'EOF'

Results: the guest's own results (@@AESLOOP-RESULT lines), then module-load, script-exit
(the script's exit status) and guest-dmesg (fails on an oops, BUG:, WARNING:, Call Trace,
general protection fault or panic in the kernel log, or when the guest did not finish).
Exit status: 0 when nothing failed, 1 when something failed, 2 on a usage or setup error.
Each run's files (console.log, channel.log, dmesg.txt, results.txt) are kept in
build/vm/runs/ID/; build/vm/last points at the latest.
EOF
}

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tests/vm/runner-lib.sh
. "$top/tests/vm/runner-lib.sh"
runner_defaults run.sh 300
kver=
module="$top/loop/loop.ko"
modparams=
unload=0
ncpus=2
disk_mib=
share="$top/build/vm/share"
interactive=0
ul_build=${AESLOOP_UL_BUILD:-build}
while getopts "k:m:p:U:C:d:us:i$runner_optstring" opt; do
	case "$opt" in
	k) kver=$OPTARG ;;
	m) module=$OPTARG ;;
	p) modparams=$OPTARG ;;
	U) ul_build=$OPTARG ;;
	C) ncpus=$OPTARG ;;
	d) disk_mib=$OPTARG ;;
	u) unload=1 ;;
	s) share=$OPTARG ;;
	i) interactive=1 ;;
	*) runner_option "$opt" "${OPTARG:-}" ;;
	esac
done
shift $((OPTIND - 1))
runner_check_options 128 "$@"
shift
disk_file=
if [[ "$disk_mib" == */* ]]; then
	[ -f "$disk_mib" ] || die "-d $disk_mib: no such file (a disk image the caller made)"
	disk_file=$(cd "$(dirname "$disk_mib")" && pwd)/$(basename "$disk_mib")
	disk_mib=
fi
[[ "$disk_mib" =~ ^[0-9]*$ ]] || die "-d needs a number of MiB or a file's path"
[[ "$ncpus" =~ ^[1-9][0-9]*$ ]] || die "-C needs a number of CPUs"

# The kernel: unpacked (and fetched if needed) by kernel.sh, which prints the release.
if [ -z "$kver" ]; then
	kver=$("$top/tests/vm/kernel.sh" 6.1) || die "kernel.sh 6.1 failed"
elif [[ "$kver" == uml-* ]]; then
	kver=$("$top/tests/uml/kernel.sh" "${kver#uml-}") || die "uml/kernel.sh ${kver#uml-} failed"
elif [ ! -f "$top/build/kernel/$kver/.aesloop-tree-ok" ]; then
	kver=$("$top/tests/vm/kernel.sh" "$kver") || die "kernel.sh $kver failed"
fi
vmlinuz="$top/build/kernel/$kver/boot/vmlinuz-$kver"
arch=$(cat "$top/build/kernel/$kver/.aesloop-arch" 2>/dev/null || echo amd64)
# The arm64 guest's patched util-linux is a cross build of its own (patches/build-losetup.sh
# into build/ul-arm64); without it the guest has util-linux's stock losetup.
arm64_stock_ul=0
if [ "$arch" = arm64 ] && [ "$ul_build" = build ]; then
	ul_build=build/ul-arm64
	[ -x "$top/$ul_build/bin/losetup" ] || arm64_stock_ul=1
fi
uml="$top/build/kernel/$kver/boot/linux-$kver"
if [ -x "$uml" ]; then
	[ "$cpu" = max ] || die "-c $cpu: a UML guest runs on this machine's own CPU"
	[ -z "$disk_mib$disk_file" ] || die "-d: no scratch disk in a UML guest (not needed by its suites yet)"
	[ "$ul_build" = build ] || die "-U: a UML guest runs the patched losetup of build/bin only"
	cpu="host ($(sed -n 's/^model name[[:space:]]*: //p;T;q' /proc/cpuinfo))"
else
	uml=
	[ -f "$vmlinuz" ] || die "$vmlinuz missing"
fi

# The patched util-linux: its losetup is packed into the initramfs (one per build), its bin/
# is the guest scripts' $AESLOOP_UL_BIN.
[[ "$ul_build" == /* ]] || ul_build=$top/$ul_build
ul_abs=$(realpath -m -s "$ul_build")
[[ "$ul_abs" == "$top"/* ]] || die "-U $ul_build: not a folder inside the project"
ul_build=${ul_abs#"$top"/}
initrd="$top/build/vm/initramfs-$kver.cpio.gz"
if [ "$ul_build" = build ] || [ "$arm64_stock_ul" = 1 ]; then
	unset AESLOOP_UL_BUILD
else
	[ -x "$ul_abs/bin/losetup" ] ||
		die "-U $ul_build: $ul_build/bin/losetup is not built (patches/build-losetup.sh)"
	initrd="$top/build/vm/initramfs-$kver-${ul_build//\//-}.cpio.gz"
	export AESLOOP_UL_BUILD=$ul_build
fi
guest_env+=("AESLOOP_UL_BIN=/aesloop/$ul_build/bin")
if [ -z "$uml" ]; then
	"$top/tests/vm/mkinitramfs.sh" "$kver" "$initrd" || die "mkinitramfs.sh failed"
fi

runner_rundir "$top/build/vm/runs" "$top/build/vm/last" 20
mkdir -p "$share"
share=$(realpath "$share")

# A host file as the guest sees it: inside the project through /aesloop, anything else copied
# into this run's folder (which is inside the project).
guest_path() {
	local p
	p=$(realpath "$1")
	if [[ "$p" == "$top"/* ]]; then
		echo "/aesloop/${p#"$top"/}"
	else
		cp "$p" "$rundir/"
		echo "/aesloop/${rundir#"$top"/}/$(basename "$p")"
	fi
}

# The module: checked on the host, where tools and messages are better.
g_module=
mod_name=
mod_buildid=
if [ "$module" != none ]; then
	[ -f "$module" ] || die "module $module not found (build loop/ first, or pass -m PATH, or -m none)"
	vermagic=$(modinfo -F vermagic "$module" 2>/dev/null) || die "$module: not a kernel module"
	[ "${vermagic%% *}" = "$kver" ] ||
		die "$module was built for ${vermagic%% *}, but the guest kernel is $kver (use -k or rebuild)"
	mod_name=$(modinfo -F name "$module")
	# The guest proves that the module it loaded is this file by comparing ELF build ids.
	elf=$module
	case "$module" in
	*.xz) elf="$rundir/module.ko"; xz -dc "$module" >"$elf" ;;
	esac
	mod_buildid=$(readelf -n "$elf" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p')
	[ -n "$mod_buildid" ] || die "$module has no ELF build id to check the loaded module against"
	g_module=$(guest_path "$module")
fi

# The script: see the usage text for how its path is read.
case "$script" in
/aesloop/* | /share/*) g_script=$script ;;
/bin/* | /sbin/* | /usr/* | /lib/* | /etc/* | /proc/* | /sys/* | /dev/*) g_script=$script ;;
*/*)
	[ -f "$script" ] || die "$script: no such file on this host (guest paths start with /aesloop/)"
	g_script=$(guest_path "$script")
	;;
*)
	if [ -f "$script" ]; then
		g_script=$(guest_path "$script")
	else
		g_script=$script
	fi
	;;
esac
if [ -z "$prefix" ]; then
	prefix=$(basename "$g_script")
	prefix=${prefix%.sh}
fi

if [ "$arch" = arm64 ] && [ ! -x "$top/build/arm64/vm-tools/lo-ioctl" ]; then
	say "warning: build/arm64/vm-tools is not built (make vm-tools CC=aarch64-linux-gnu-gcc BUILD=build/arm64)"
fi

# The job the guest's /init sources: bash assignments, quoted by printf %q.
read -r -a params <<<"$modparams"
{
	printf 'AESLOOP_MODULE=%q\n' "$g_module"
	printf 'AESLOOP_MODULE_NAME=%q\n' "$mod_name"
	printf 'AESLOOP_MODULE_BUILDID=%q\n' "$mod_buildid"
	printf 'AESLOOP_MODPARAMS=(%s)\n' "$(q_list "${params[@]}")"
	runner_job_lines "$@"
	printf 'AESLOOP_INTERACTIVE=%s\n' "$interactive"
	printf 'AESLOOP_UNLOAD=%s\n' "$unload"
} >"$rundir/job"

# QEMU 7.2's multi-threaded TCG runs the two vCPUs on two host threads, and
# then misses some of the kernel's own code patching (static keys, patched
# through int3 while the other CPU runs): Debian's 7.3 kernel hit an "Oops:
# int3" in a just-patched function early in boot, or hung silently, in 3 of
# about 30 boots on a busy host, and in none of 20 with thread=single; 6.12's
# did once in CI (an int3 oops in enqueue_timer 1.4 s into boot, before any
# module was loaded), after hundreds of clean boots.  So the vCPUs take turns
# on one host thread, where code patching is exact, on every kernel.  The
# suites lose little by it (the 6.1 and 7.3 full tiers took the same 16
# minutes when only 7.3 ran this way), and the guests still have two CPUs.
# VM_TCG_THREAD=multi is for measurements that need the two CPUs to run at
# once (make bench-io -m), never for tests.
tcg=tcg,thread=${VM_TCG_THREAD:-single}

# The guest's clock is the host's: a QEMU that a busy host leaves unscheduled for half a minute
# looks like a CPU stuck in the kernel (a soft lockup, an RCU stall) to the guest.  The widest
# margins the kernel takes (120 s, 300 s); a CPU really stuck stays stuck and is still caught.
lockup_args="watchdog_thresh=60 rcupdate.rcu_cpu_stall_timeout=300"
read -r -a lockup <<<"$lockup_args"
# KASAN's bounds of the kernel's address space follow pgtable_l5_enabled(), which reads the
# CPU's LA57 feature bit; identify_cpu() clears the boot CPU's feature bits and reads them
# again at boot, and an interrupt in that window touching the 5-level direct map (-cpu max
# has LA57) was reported as a "wild-memory-access" in do_raw_spin_lock, 0.006 s into the
# debug kernel's boot, before any module.  A false report of the kernel's own: a KASAN
# kernel boots with 4-level paging, where those bounds do not change.
kargs=
if grep -qs '^CONFIG_KASAN=y' "$top/build/kernel/$kver/lib/modules/$kver/build/.config"; then
	kargs=" no5lvl"
fi

console="$rundir/console.log"
channel="$rundir/channel.log"
qemu=(
	qemu-system-x86_64 -accel "$tcg" -cpu "$cpu" -m "$mem_mib" -smp "$ncpus"
	-nographic -no-reboot -nodefaults -no-user-config
	-kernel "$vmlinuz" -initrd "$initrd"
	# panic=-1 with -no-reboot: a guest panic ends QEMU instead of hanging until the timeout.
	# log_buf_len: the whole run's kernel log stays for guest-dmesg (a debug kernel and
	# the suites' step lines overflow the default 128 KiB).  $lockup_args: see below.
	-append "console=ttyS0 panic=-1 loglevel=4 log_buf_len=8M $lockup_args${kargs} aesloop.job=${rundir#"$top"/}/job"
	# ttyS0: the console; ttyS1: the result channel (see init.sh).
	-serial mon:stdio -serial "file:$channel"
	-virtfs "local,path=$top,mount_tag=aesloop,security_model=none,readonly=on"
	-virtfs "local,path=$share,mount_tag=share,security_model=none"
)
# arm64: the virt machine, whose one UART (PL011, ttyAMA0) is the console; the result channel
# is a virtio console port (hvc0), written by QEMU into the same file.  Its devices are PCI.
if [ "$arch" = arm64 ]; then
	qemu=(
		qemu-system-aarch64 -M virt -accel "$tcg" -cpu "$cpu" -m "$mem_mib" -smp "$ncpus"
		-nographic -no-reboot -nodefaults -no-user-config
		-kernel "$vmlinuz" -initrd "$initrd"
		-append "console=ttyAMA0 panic=-1 loglevel=4 log_buf_len=8M $lockup_args${kargs} aesloop.channel=hvc0 aesloop.job=${rundir#"$top"/}/job"
		-serial mon:stdio
		-device virtio-serial-pci -chardev "file,id=channel,path=$channel"
		-device "virtconsole,chardev=channel"
		-virtfs "local,path=$top,mount_tag=aesloop,security_model=none,readonly=on"
		-virtfs "local,path=$share,mount_tag=share,security_model=none"
	)
fi
if [ -n "$disk_mib" ]; then
	truncate -s "${disk_mib}M" "$rundir/disk.img"
	disk_file=$rundir/disk.img
fi
if [ -n "$disk_file" ]; then
	qemu+=(-drive "file=$disk_file,if=virtio,format=raw,cache=unsafe")
fi
# A UML guest: the kernel is this process, its root this host's (read-only, over hostfs;
# tests/uml/init.sh builds the guest's root from it), the console on its stdout (con0), the
# result channel (ttyS1: ssl1) on descriptor 3.  Without panic=: a UML panic dumps core and
# exits, where a reboot would start the kernel again.
if [ -n "$uml" ]; then
	con0=null,fd:1
	[ "$interactive" = 0 ] || con0=fd:0,fd:1
	# SMP (7.3's UML has it, 6.1's not) needs the seccomp way of running the guest's
	# processes, which is also the faster; a UML kernel without SMP has one CPU.
	smp=()
	if grep -qsx CONFIG_SMP=y "$top/build/kernel/$kver/lib/modules/$kver/build/.config"; then
		smp=("ncpus=$ncpus" seccomp=on)
	fi
	qemu=(
		"$uml" "mem=${mem_mib}M" "${smp[@]}" rootfstype=hostfs rootflags=/ ro
		"init=$top/tests/uml/init.sh" con=null "con0=$con0" ssl=null "ssl1=null,fd:3"
		loglevel=4 log_buf_len=8M "${lockup[@]}" "aesloop.job=${rundir#"$top"/}/job"
		"aesloop.share=$share"
	)
	channel_out=$channel
else
	# QEMU writes the channel itself (-serial file:).
	channel_out=/dev/null
fi
printf '%q ' timeout "$timeout_s" "${qemu[@]}" >"$rundir/qemu-command"
echo >>"$rundir/qemu-command"

# The guest's /init speaks on the console too (show() is in runner-lib.sh).
show_also='aesloop-init:*'

[ "$verbosity" = 0 ] ||
	say "guest $kver, cpu $cpu, module ${g_module:-none}, util-linux $ul_build/bin, run ${rundir#"$top"/}"
t0=$(date +%s%N)
# stdin is the terminal only in interactive mode (QEMU would otherwise put the terminal in
# raw mode); --foreground keeps QEMU in this process group, so Ctrl-C reaches it.
if [ "$interactive" = 1 ]; then
	set +e
	timeout --foreground -k 10 "$timeout_s" "${qemu[@]}" 2>&1 3>"$channel_out" | tee "$console"
	status=("${PIPESTATUS[@]}")
	set -e
	qemu_rc=${status[0]}
else
	runner_boot /dev/null "$channel_out"
fi
rm -f "$rundir/disk.img"
runner_elapsed "$t0"

# The results: the channel's markers, the script's exit, the kernel log's check; the report.
# shellcheck source=tests/vm/report.sh
. "$top/tests/vm/report.sh"
