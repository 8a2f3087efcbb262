#!/bin/bash
# Boots the system test image of a Debian release under QEMU (TCG) and runs one script in it
# as a systemd unit after the boot.
set -euo pipefail

usage() {
	cat <<'EOF_USAGE'
Usage: tests/system/run.sh [OPTIONS] SCRIPT [ARGS...]

Boots build/system/SUITE/root.img (made by tests/system/image.sh: Debian with systemd, udev,
udisks and aesloop installed as the README says) under QEMU (TCG) with systemd as PID 1.  Once
the boot has finished, the unit aesloop-test.service runs tests/system/guest.sh, which reports
the boot, checks that the loop driver loaded is the installed aesloop loop.ko, runs SCRIPT
ARGS... and powers off through systemd.  Each run boots a copy-on-write overlay of the image,
so runs never change it.  As in tests/vm/run.sh, the project is the guest's read-only /aesloop
and build/vm/share its writable /share; SCRIPT is a guest path (/aesloop/...) or a file inside
the project; guest scripts source /aesloop/tests/vm/lib.sh to report results.

Options:
  -s SUITE    bookworm (default; kernel 6.1, util-linux 2.38.1) or trixie (kernel 7.3 from
              trixie-backports, util-linux 2.41)
  -i VARIANT  boot the disk whose root is on an aesloop device set up by the initramfs
              (tests/system/image-root.sh: part or file) instead of the plain image
  -o FILE     keep the run's disk (a copy-on-write overlay of the image) in FILE: made if
              missing, booted again if there, so a second run sees what the first wrote
  -d FILE     a second disk, the guest's /dev/vdb: FILE (qcow2), made empty (256 MiB) if
              missing, kept as the guest left it
  -I FILE     boot this initramfs (e.g. one the guest made and left in the share) instead
              of the image's
  -B FILE     the loop.ko the boot must load has the ELF build id in FILE (hex; e.g. one
              a package upgrade in the guest installed and left in the share), not the image's
  -a FILE     answer the console: lines "TEXT<TAB>REPLY" (# comments); when TEXT has appeared on the
              console as many times as it has in the file so far, REPLY and Enter are
              typed (REPLY @passphrase: the image's passphrase)
  -k NAME=RE  a result NAME: the kernel log of the whole run, the shutdown included, has a
              line matching the extended regular expression RE (repeatable)
  -R          no panic= on the kernel command line, so that the initramfs stops in its
              rescue shell when it cannot set up the root (a kernel panic then waits for
              the time limit)
  -c CPU      QEMU CPU model (default max: AES-NI; qemu64 has none)
  -M MIB      guest memory in MiB (default 1024)
  -n PREFIX   prefix of result names (default: SUITE/ and the script's name without .sh)
EOF_USAGE
	runner_usage_options 600
	cat <<'EOF_USAGE'

Results: boot (the system reached "running", with the seconds since the kernel started),
module-load, the script's own results, script-exit, units-after (no failed unit after the
script) and guest-dmesg (a kernel oops, BUG, WARNING, hung task or any report that
tests/vm/run.sh fails on, from the boot to the end of the shutdown; or a boot, job or
shutdown that did not finish).  Each run's files are kept in build/system/runs/ID/.
EOF_USAGE
}

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tests/vm/runner-lib.sh
. "$top/tests/vm/runner-lib.sh"
runner_defaults system/run.sh 600
suite=bookworm
variant=
overlay=
initrd_file=
buildid_file=
extra_disk=
dmesg_expect=()
answers=
rescue=0
while getopts "s:i:o:d:I:B:a:k:R$runner_optstring" opt; do
	case "$opt" in
	s) suite=$OPTARG ;;
	i) variant=$OPTARG ;;
	o) overlay=$OPTARG ;;
	d) extra_disk=$OPTARG ;;
	I) initrd_file=$OPTARG ;;
	B) buildid_file=$OPTARG ;;
	a) answers=$OPTARG ;;
	k)
		[[ "$OPTARG" =~ ^[A-Za-z0-9_.-]+=. ]] || die "-k needs NAME=REGEX"
		dmesg_expect+=("$OPTARG")
		;;
	R) rescue=1 ;;
	*) runner_option "$opt" "${OPTARG:-}" ;;
	esac
done
shift $((OPTIND - 1))
runner_check_options 256 "$@"
shift

for f in "$initrd_file" "$buildid_file" "$answers"; do
	[ -z "$f" ] || [ -f "$f" ] || die "$f: no such file"
done
[ -z "$overlay" ] || overlay=$(realpath -m "$overlay")
[ -z "$extra_disk" ] || extra_disk=$(realpath -m "$extra_disk")
[ -z "$initrd_file" ] || initrd_file=$(realpath "$initrd_file")
[ -z "$answers" ] || answers=$(realpath "$answers")
if [ -n "$variant" ]; then
	image=$("$top/tests/system/image-root.sh" "$suite" "$variant") ||
		die "image-root.sh $suite $variant failed"
	disk=$image/disk.img
	[ -n "$prefix" ] || prefix=$suite-root-$variant/$(basename "${script%.sh}")
else
	image=$("$top/tests/system/image.sh" "$suite") || die "image.sh $suite failed"
	disk=$image/root.img
fi
kver=$(cat "$image/kver")
cmdline=$(cat "$image/cmdline" 2>/dev/null || echo "root=/dev/vda ro")
[ "$rescue" = 1 ] || cmdline="$cmdline panic=-1"
# Lockup detectors with wide margins, as tests/vm/run.sh gives them (a busy host).
cmdline="$cmdline watchdog_thresh=60 rcupdate.rcu_cpu_stall_timeout=300"

case "$script" in
/aesloop/* | /share/*) g_script=$script ;;
*)
	[ -f "$script" ] || die "$script: no such file (guest paths start with /aesloop/)"
	p=$(realpath "$script")
	[[ "$p" == "$top"/* ]] || die "$script: not a file inside the project"
	g_script=/aesloop/${p#"$top"/}
	;;
esac
if [ -z "$prefix" ]; then
	prefix=$(basename "$g_script")
	prefix=$suite/${prefix%.sh}
fi

runner_rundir "$top/build/system/runs" "$top/build/system/last" 10
share="$top/build/vm/share"
mkdir -p "$share"

{
	printf 'AESLOOP_MODULE_BUILDID=%q\n' "$(cat "${buildid_file:-$image/module-buildid}")"
	runner_job_lines "$@"
} >"$rundir/job"

# The run's own disk: writes go to the overlay, the image stays as built.
if [ -z "$overlay" ]; then
	qemu-img create -q -f qcow2 -F raw -b "$disk" "$rundir/root.qcow2"
	drive=$rundir/root.qcow2
else
	# An overlay is only good on the image it was made on: a rebuilt image under it reads
	# as a corrupt file system.
	image_key=$(cat "$image/disk.key" "$image/root.key" 2>/dev/null || true)
	if [ ! -f "$overlay" ]; then
		qemu-img create -q -f qcow2 -F raw -b "$disk" "$overlay"
		echo "$image_key" >"$overlay.key"
	elif [ "$(cat "$overlay.key" 2>/dev/null)" != "$image_key" ]; then
		die "$overlay was made on another build of the image (it was rebuilt since): remove it and start again"
	fi
	drive=$overlay
fi

if [ -n "$extra_disk" ] && [ ! -f "$extra_disk" ]; then
	qemu-img create -q -f qcow2 "$extra_disk" 256M
fi

tcg=tcg,thread=single # exact code patching: see tests/vm/run.sh
console="$rundir/console.log"
channel="$rundir/channel.log"
qemu=(
	qemu-system-x86_64 -accel "$tcg" -cpu "$cpu" -m "$mem_mib" -smp 2
	-nographic -no-reboot -nodefaults -no-user-config
	-kernel "$image/vmlinuz" -initrd "${initrd_file:-$image/initrd.img}"
	-append "$cmdline console=ttyS0 loglevel=4 log_buf_len=8M aesloop.job=${rundir#"$top"/}/job"
	-serial mon:stdio -serial "file:$channel"
	-drive "file=$drive,if=virtio,format=qcow2,cache=unsafe"
	-virtfs "local,path=$top,mount_tag=aesloop,security_model=none,readonly=on"
	-virtfs "local,path=$share,mount_tag=share,security_model=none"
)
[ -z "$extra_disk" ] || qemu+=(-drive "file=$extra_disk,if=virtio,format=qcow2,cache=unsafe")
printf '%q ' timeout "$timeout_s" "${qemu[@]}" >"$rundir/qemu-command"
echo >>"$rundir/qemu-command"

# -a: types each REPLY once its TEXT has been shown that often (prompts end without a newline,
# so the console is searched, not read by lines).
answer() {
	local text reply n
	local -A seen=()
	while IFS=$'\t' read -r text reply; do
		case "$text" in '' | '#'*) continue ;; esac
		n=$((${seen[$text]:-0} + 1))
		seen[$text]=$n
		until [ "$(grep -aoF -- "$text" "$console" 2>/dev/null | wc -l)" -ge "$n" ]; do
			sleep 0.5
		done
		[ "$reply" != @passphrase ] || reply=$(cat "$image/passphrase")
		printf '%s\r' "$reply" >&9
	done <"$answers"
}

[ "$verbosity" = 0 ] || say "$suite${variant:+ root-$variant} image, kernel $kver, cpu $cpu, run ${rundir#"$top"/}"
t0=$(date +%s%N)
: >"$console"
stdin=/dev/null feeder=
if [ -n "$answers" ]; then
	stdin=$rundir/console-input
	mkfifo "$stdin"
	exec 9<>"$stdin"
	answer &
	feeder=$!
fi
runner_boot "$stdin" /dev/null
if [ -n "$feeder" ]; then
	kill "$feeder" 2>/dev/null || true
	wait "$feeder" 2>/dev/null || true
	exec 9>&-
fi
rm -f "$rundir/root.qcow2"
runner_elapsed "$t0"
boot_s=$(sed -n 's/^@@AESLOOP-BOOT-TIME \([0-9.]*\).*/\1/p' "$channel" 2>/dev/null | head -n 1)
[ -z "$boot_s" ] || echo "--- $suite: booted to the first result in ${boot_s}s of guest time"

# shellcheck source=tests/vm/report.sh
. "$top/tests/vm/report.sh"
