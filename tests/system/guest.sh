#!/bin/bash
# The system test job inside a booted image (started by the image's aesloop-test.service, see
# tests/system/run.sh).  Waits for the boot to finish and reports it, checks that the loop driver
# is the aesloop loop.ko installed in the image, runs the job's script, reports what systemd
# says of its units afterwards, and powers off through systemd, whose shutdown hook
# (rootfs/usr/lib/systemd/system-shutdown/aesloop-test.shutdown) sends the kernel log and the
# end marker; or reboots, if the script asked for it.  Same result channel and markers as tests/vm/init.sh.
set -uo pipefail

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=linux
channel=/dev/ttyS1

mark() {
	echo "@@AESLOOP-$*"
	echo "@@AESLOOP-$*" >"$channel"
}
result() { mark "RESULT $*"; }
stty -F "$channel" raw -echo 2>/dev/null
# For the image's boot watchdog (rootfs/usr/lib/aesloop-test/boot-watchdog): the job began.
: >/run/aesloop-test-job
mark BOOT "$(uname -r)"

# A script that wants the next boot (on the same disk: run.sh -o) asks with
# /run/aesloop-test/reboot: then the run ends in systemctl reboot, through the whole shutdown,
# and QEMU (-no-reboot) exits at the reset.
finish() {
	sync
	if [ -e /run/aesloop-test/reboot ]; then
		systemctl reboot --no-block
	else
		systemctl poweroff --no-block
	fi
	exit 0
}

job=''
boot_limit=600
read -r -a cmdline </proc/cmdline
for opt in "${cmdline[@]}"; do
	case "$opt" in
	aesloop.job=*) job=${opt#aesloop.job=} ;;
	aesloop.boot_limit=*) boot_limit=${opt#aesloop.boot_limit=} ;;
	esac
done
if [ -z "$job" ] || [ ! -f "/aesloop/$job" ]; then
	result FAIL guest-setup "no job given (aesloop.job=$job)"
	finish
fi
AESLOOP_SCRIPT=
AESLOOP_ARGS=()
AESLOOP_ENV=()
AESLOOP_MODULE_BUILDID=
# shellcheck source=/dev/null
. "/aesloop/$job"

# The boot: finished, with no failed unit, within 600 s of the kernel's start (as the
# boot watchdog, and aesloop.boot_limit= as there; a boot takes 1 to 5 minutes under TCG on a
# busy machine); how long it took,
# as this guest's clock says.  A boot still starting is said with its jobs, and the script
# runs anyway.
read -r up _ </proc/uptime
wait_s=$((boot_limit - ${up%.*}))
[ "$wait_s" -gt 0 ] || wait_s=1
state=$(timeout "$wait_s" systemctl is-system-running --wait 2>/dev/null) ||
	state=$(systemctl is-system-running 2>/dev/null)
read -r up _ </proc/uptime
failed=$(systemctl list-units --failed --plain --no-legend | awk '{ print $1 }' | tr '\n' ' ')
if [ "$state" = running ]; then
	result PASS boot "system $state ${up}s after the kernel started"
else
	jobs=$(systemctl list-jobs --no-legend --plain | awk '$4 == "running" { r = r s $2; s = " " } $4 != "running" { w++ } END { printf "%s running, %d waiting", r, w }')
	result FAIL boot "system $state ${up}s after the kernel started; failed units: ${failed:-none}; jobs: ${jobs:-none}"
fi
echo "aesloop-guest: $(systemd-analyze time 2>/dev/null | head -n 1)"
systemd-analyze blame 2>/dev/null | head -n 5 | sed 's/^ */aesloop-guest: slowest unit: /'
mark BOOT-TIME "$up"

# The loop driver: the aesloop loop.ko in updates/, loaded as a user's system loads it (on
# demand, by modprobe), proved by its ELF build id.
modprobe loop 2>/dev/null
got=$(od -An -tx1 -j16 -v /sys/module/loop/notes/.note.gnu.build-id 2>/dev/null | tr -d ' \n')
if [ -z "$got" ]; then
	result FAIL module-load "no loop module is loaded after modprobe loop"
elif [ "$got" != "$AESLOOP_MODULE_BUILDID" ]; then
	result FAIL module-load "the loaded loop has build id '$got', not the installed loop.ko's $AESLOOP_MODULE_BUILDID"
else
	result PASS module-load
fi

export AESLOOP_ROOT=/aesloop AESLOOP_SHARE=/share AESLOOP_LIB=/aesloop/tests/vm/lib.sh
export AESLOOP_RESULTS=$channel AESLOOP_KVER
AESLOOP_KVER=$(uname -r)
for assignment in "${AESLOOP_ENV[@]}"; do
	export "${assignment?}"
done
mark BEGIN "$AESLOOP_SCRIPT" "${AESLOOP_ARGS[@]}"
cmd=("$AESLOOP_SCRIPT" "${AESLOOP_ARGS[@]}")
[ -x "$AESLOOP_SCRIPT" ] || cmd=(bash "${cmd[@]}")
cd /tmp || true
"${cmd[@]}" </dev/null
rc=$?
cd / || true
mark EXIT "$rc"

# What the script left: a failed unit is a failure of the run.
failed=$(systemctl list-units --failed --plain --no-legend | awk '{ print $1 }' | tr '\n' ' ')
if [ -z "$failed" ]; then
	result PASS units-after
else
	result FAIL units-after "failed units: $failed"
fi
finish
