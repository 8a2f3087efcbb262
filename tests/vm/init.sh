#!/bin/bash
# /init of the aesloop test VM (packed by mkinitramfs.sh; run.sh boots it).
# Sets up the guest, loads the loop.ko under test, runs one script, reports its exit status and
# the kernel log over the result channel, and powers off. Every step reports instead of
# stopping: the guest must reach poweroff whatever fails, or the host waits for its timeout.
#
# Two serial ports: ttyS0 is the console (kernel messages and the script's output, which the
# host shows and logs); ttyS1 carries only marker lines and the dmesg dump, so the host reads
# results that kernel messages cannot split.  The arm64 guest's are ttyAMA0 and a virtio
# console, hvc0 (run.sh's aesloop.channel=hvc0: the virt machine has one UART).
set -uo pipefail

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin
export HOME=/root TERM=linux
# No udev here: libdevmapper (cryptsetup, dmsetup) makes the /dev/mapper nodes itself.
export DM_DISABLE_UDEV=1

channel=/dev/ttyS1

say() { echo "aesloop-init: $*"; }
# A marker line goes to the channel (for the host) and to the console (for a person).
mark() {
	echo "@@AESLOOP-$*"
	echo "@@AESLOOP-$*" >"$channel"
}
result() { mark "RESULT $*"; }

finish() {
	sync
	mark END
	# Until the serial line has sent it all (TCSADRAIN; see t_hard_reset).
	stty -F "$channel" raw -echo 2>/dev/null
	# -f: no init to signal; the kernel powers the machine off and QEMU (or UML) exits.
	# busybox's: a UML guest's PATH has the host's programs, where poweroff is systemd's.
	busybox poweroff -f
	sleep 30
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
# bash's process substitution uses /dev/fd.
ln -s /proc/self/fd /dev/fd
ln -s fd/0 /dev/stdin
ln -s fd/1 /dev/stdout
ln -s fd/2 /dev/stderr
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /run
# cryptsetup keeps its locks here and warns when it is missing.
mkdir -p /run/cryptsetup /run/lock
hostname aesloop-vm

# Boot options from run.sh: aesloop.job=PATH (relative to the project share), aesloop.channel=.
job=
read -r -a cmdline </proc/cmdline
for opt in "${cmdline[@]}"; do
	case "$opt" in
	aesloop.job=*) job=${opt#aesloop.job=} ;;
	aesloop.channel=*) channel=/dev/${opt#aesloop.channel=} ;;
	esac
done
# A virtio console's driver is a module, and its port appears once QEMU has answered.
if [ ! -e "$channel" ]; then
	modprobe -a virtio_pci virtio_console || say "could not load the virtio console modules"
	for _ in $(seq 100); do
		[ ! -e "$channel" ] || break
		sleep 0.1
	done
fi

# Keep the channel port open for the whole run, so each marker's open is cheap; scripts do not
# inherit this descriptor.
stty -F "$channel" raw -echo 2>/dev/null
exec 9>"$channel"
mark BOOT "$(uname -r)"

# A debug kernel's kmemleak (tests/vm/debug-kernel.sh; Debian's kernels have
# none): scanned after the script, while the module is still loaded so that
# its functions have names in the backtraces.  Leaks allocated by loop.ko go
# into the kernel log as "kmemleak: leak in loop.ko", which fails guest-dmesg;
# the others are counted there, as a note.
kmemleak_scan() {
	local f=/sys/kernel/debug/kmemleak
	[ -e "$f" ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || return 0
	[ -e "$f" ] || return 0
	# Two scans: an object is reported only once it was unreferenced in both.
	echo scan >"$f" && sleep 6 && echo scan >"$f" || return 0
	awk '
		/^unreferenced object/ { if (rec != "") emit(); rec = $0; next }
		{ rec = rec "\n" $0 }
		END { if (rec != "") emit(); printf "kmemleak: %d report(s) outside loop.ko\n", other > "/dev/kmsg" }
		function emit() {
			if (rec ~ /\[loop\]/) {
				n = split(rec, line, "\n")
				for (i = 1; i <= n; i++) {
					printf "kmemleak: leak in loop.ko: %s\n", line[i] > "/dev/kmsg"
					fflush("/dev/kmsg")	# one record per line
				}
			} else {
				other++
			}
			rec = ""
		}' "$f"
}

# A task stuck in D state (a deadlock) is reported after 120 s, within the
# run of every suite but the shortest, which their time limit fails anyway.
# Not less: on a busy two-core host a TCG guest's task has waited over 30 s
# for an RCU grace period with nothing wrong in it.
echo 120 >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null || true

# A User-Mode Linux guest (tests/uml/init.sh, which set AESLOOP_GUEST) has its shares bound
# already, from the host's root over hostfs; a QEMU guest reads them over 9p.
if [ "${AESLOOP_GUEST:-qemu}" = qemu ]; then
	modprobe -a virtio_pci 9pnet_virtio 9p || say "could not load the 9p modules"
	# msize: larger 9p messages make reading modules and programs from the share faster.
	# The project is read-only and does not change during a run, so its pages may be cached.
	if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=loose,ro aesloop /aesloop; then
		result FAIL guest-setup "cannot mount the project share"
		finish
	fi
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 share /share ||
		say "cannot mount the writable share /share"
fi

# Modules the tests use; aesni_intel fails on a CPU without AES-NI, which is expected.
modprobe -a ext4 dm_crypt || say "could not load ext4/dm_crypt"
# UML: dm-crypt's ciphers now, not on the tests' first use.  UML 6.1 once spun for good in
# flush_tlb_kernel_range() while freeing a module's init memory in the middle of t-crypt
# (a fault on its own IRQ stack, again and again): module loads are kept out of the tests.
if [ "${AESLOOP_GUEST:-qemu}" = uml ]; then
	modprobe -a aes cbc ecb xts md5 sha256 sha512 algif_skcipher algif_hash ||
		say "could not load dm-crypt's ciphers"
fi
modprobe -q aesni_intel 2>/dev/null || true

if [ -z "$job" ] || [ ! -f "/aesloop/$job" ]; then
	result FAIL guest-setup "no job given (aesloop.job=$job)"
	finish
fi
AESLOOP_MODULE=
AESLOOP_MODULE_NAME=
AESLOOP_MODULE_BUILDID=
AESLOOP_MODPARAMS=()
AESLOOP_SCRIPT=
AESLOOP_ARGS=()
AESLOOP_ENV=()
AESLOOP_INTERACTIVE=0
AESLOOP_UNLOAD=0
# shellcheck source=/dev/null
. "/aesloop/$job"

# The module under test: refuse to run if a loop driver is already present (it could only be
# the stock one), then prove that the module now loaded is this file, by its ELF build id.
load_module() {
	local name=$AESLOOP_MODULE_NAME sys=/sys/module/$AESLOOP_MODULE_NAME got
	if [ -e "$sys" ]; then
		result FAIL module-load "a $name module was already loaded before insmod"
		return 1
	fi
	if ! insmod "$AESLOOP_MODULE" "${AESLOOP_MODPARAMS[@]}"; then
		result FAIL module-load "insmod $AESLOOP_MODULE ${AESLOOP_MODPARAMS[*]} failed"
		return 1
	fi
	# The note is 12 bytes of header, "GNU\0", then the id.
	got=$(od -An -tx1 -j16 -v "$sys/notes/.note.gnu.build-id" 2>/dev/null | tr -d ' \n')
	if [ "$got" != "$AESLOOP_MODULE_BUILDID" ]; then
		result FAIL module-load "$sys has build id '$got', not the file's $AESLOOP_MODULE_BUILDID"
		return 1
	fi
	result PASS module-load
}

if [ -n "$AESLOOP_MODULE" ] && ! load_module; then
	mark EXIT 255
else
	AESLOOP_KVER=$(uname -r)
	export AESLOOP_ROOT=/aesloop AESLOOP_SHARE=/share AESLOOP_LIB=/aesloop/tests/vm/lib.sh
	export AESLOOP_RESULTS=$channel AESLOOP_MODULE AESLOOP_KVER
	for assignment in "${AESLOOP_ENV[@]}"; do
		export "${assignment?}"
	done
	mark BEGIN "$AESLOOP_SCRIPT" "${AESLOOP_ARGS[@]}"
	cmd=("$AESLOOP_SCRIPT" "${AESLOOP_ARGS[@]}")
	# A script without its exec bit is still runnable: it is a bash test.
	if [ -f "$AESLOOP_SCRIPT" ] && [ ! -x "$AESLOOP_SCRIPT" ]; then
		cmd=(bash "${cmd[@]}")
	fi
	cd /tmp || true
	if [ "$AESLOOP_INTERACTIVE" = 1 ]; then
		# A controlling terminal, so that Ctrl-C and job control work.
		setsid -c "${cmd[@]}" </dev/console >/dev/console 2>&1 9>&-
	else
		"${cmd[@]}" </dev/null 9>&-
	fi
	rc=$?
	cd / || true
	mark EXIT "$rc"
	kmemleak_scan
	if [ -n "$AESLOOP_MODULE" ] && [ "$AESLOOP_UNLOAD" = 1 ]; then
		if rmmod "$AESLOOP_MODULE_NAME"; then
			result PASS module-unload
		else
			result FAIL module-unload "rmmod $AESLOOP_MODULE_NAME failed"
		fi
	fi
fi

# The whole kernel log, for the host's check; only on the channel (it is long).
echo "aesloop-init: saving the kernel log"
{
	echo "@@AESLOOP-DMESG-BEGIN"
	dmesg
	echo "@@AESLOOP-DMESG-END"
} >"$channel"
finish
