#!/bin/bash
# Guest-side test library of the aesloop VM harness. A guest test script sources it:
#     . "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"
# and reports each result with t_pass, t_fail, t_skip or one of the checking helpers. Every
# result is one marker line, on stdout (the console) and on the harness's result channel
# ($AESLOOP_RESULTS, set by the guest's /init), which run.sh parses:
#     @@AESLOOP-RESULT PASS NAME
#     @@AESLOOP-RESULT FAIL NAME MESSAGE
#     @@AESLOOP-RESULT SKIP NAME WHY
# NAME is one word: characters outside [A-Za-z0-9._:@+/=-] become '_'. MESSAGE is one line.
# Under TCG every process start costs about 0.1 s, so the helpers use bash builtins where they
# can; build test data with pipelines, not loops.
# Set T_VERBOSE=1 to see the output of passing checks too.

# The guest's helper programs (make vm-tools), built for its architecture: an arm64 guest's
# by make vm-tools CC=aarch64-linux-gnu-gcc BUILD=build/arm64.
case "$(uname -m)" in
aarch64) t_tools=/aesloop/build/arm64/vm-tools ;;
*) t_tools=/aesloop/build/vm-tools ;;
esac

# Cleanup commands registered by t_cleanup, run last-in first-out when the script exits.
_t_cleanups=()
_t_out=/tmp/.t_out.$$

_t_name() {
	local n=${1//[^A-Za-z0-9._:@+\/=-]/_}
	echo "${n:-unnamed}"
}

# Joins the arguments into one line of at most 300 characters.
_t_line() {
	local m="$*"
	m=${m//$'\r'/ }
	m=${m//$'\n'/ | }
	m=${m//$'\t'/ }
	[ "${#m}" -le 300 ] || m="${m:0:297}..."
	echo "$m"
}

_t_emit() {
	local line
	line="@@AESLOOP-RESULT $1 $(_t_name "$2")"
	[ -z "${3:-}" ] || line+=" $(_t_line "$3")"
	echo "$line"
	if [ -n "${AESLOOP_RESULTS:-}" ] && [ -w "$AESLOOP_RESULTS" ]; then
		echo "$line" >"$AESLOOP_RESULTS"
	fi
}

# t_pass NAME
t_pass() { _t_emit PASS "$1"; }

# t_fail NAME MESSAGE...: the message should carry what is needed to reproduce the failure.
t_fail() {
	local name=$1
	shift
	_t_emit FAIL "$name" "${*:-failed}"
}

# t_skip NAME WHY...: a skipped test always says why.
t_skip() {
	local name=$1
	shift
	_t_emit SKIP "$name" "${*:-no reason given}"
}

# t_log MESSAGE...: a progress line on the console, also written to the kernel log so that a
# kernel warning in dmesg can be placed between test steps.
t_log() {
	echo "== $*"
	if [ -w /dev/kmsg ]; then
		echo "aesloop-test: $*" >/dev/kmsg
	fi
}

# t_dmesg_mark NAME, then t_dmesg_since NAME: the kernel log from the mark on.  For checks
# of what one step logs; the log itself is never cleared (dmesg -c), since guest-dmesg
# checks all of it at the end.
t_dmesg_mark() {
	echo "aesloop-test: mark $1" >/dev/kmsg
}
t_dmesg_since() {
	dmesg | sed -n "/aesloop-test: mark $1\$/,\$p"
}

# Prints the tail of the last command's output, indented, on the console.
_t_show_output() {
	[ -s "$_t_out" ] || return 0
	tail -n "${1:-20}" "$_t_out" | sed 's/^/    | /'
}

# Runs CMD... with stdout and stderr in $_t_out; sets _t_rc to its exit status.
_t_run() {
	t_log "check $_t_current: $*"
	if "$@" >"$_t_out" 2>&1; then
		_t_rc=0
	else
		_t_rc=$?
	fi
}

# t_check NAME CMD...: PASS when CMD exits 0; otherwise FAIL with the exit status, the command
# and its last output line (the last 20 lines are shown on the console). Returns CMD's
# success, so a script under `set -e` stops at a failed step (append `|| true` to go on).
t_check() {
	_t_current=$(_t_name "$1")
	shift
	_t_run "$@"
	if [ "$_t_rc" -eq 0 ]; then
		[ "${T_VERBOSE:-0}" != 1 ] || _t_show_output 1000
		t_pass "$_t_current"
		return 0
	fi
	_t_show_output 20
	t_fail "$_t_current" "exit $_t_rc: $*: $(tail -n 1 "$_t_out" 2>/dev/null)"
	return 1
}

# t_expect_fail NAME REGEX CMD...: PASS when CMD fails and its output (stdout and stderr)
# matches the extended regular expression REGEX; use '' to accept any message.
t_expect_fail() {
	_t_current=$(_t_name "$1")
	local re=$2
	shift 2
	_t_run "$@"
	if [ "$_t_rc" -eq 0 ]; then
		_t_show_output 20
		t_fail "$_t_current" "succeeded but should have failed: $*"
		return 1
	fi
	if [ -n "$re" ] && ! grep -Eq -- "$re" "$_t_out"; then
		_t_show_output 20
		t_fail "$_t_current" "failed (exit $_t_rc) without a message matching /$re/: $*: $(tail -n 1 "$_t_out")"
		return 1
	fi
	[ "${T_VERBOSE:-0}" != 1 ] || _t_show_output 1000
	t_pass "$_t_current"
}

# t_expect_eq NAME EXPECTED ACTUAL
t_expect_eq() {
	if [ "$2" = "$3" ]; then
		t_pass "$1"
		return 0
	fi
	t_fail "$1" "expected '$2', got '$3'"
	return 1
}

# t_json_vs_sysfs NAME DEV: every field of util-linux's `losetup --list
# --json DEV` (losetup.stock) equals what sysfs says of DEV: one check per
# field, named NAME-json-FIELD.
t_json_vs_sysfs() {
	local name=$1 dev=$2 json key want got
	local b=/sys/block/${dev#/dev/}
	json=$(losetup.stock --list --json "$dev") || {
		t_fail "$name-json" "losetup --list --json $dev failed"
		return 1
	}
	for key in name sizelimit offset autoclear ro back-file dio log-sec; do
		case "$key" in
		name) want=$dev ;;
		sizelimit | offset | autoclear | dio) want=$(cat "$b/loop/$key") ;;
		ro) want=$(cat "$b/ro") ;;
		back-file) want=$(cat "$b/loop/backing_file") ;;
		log-sec) want=$(cat "$b/queue/logical_block_size") ;;
		esac
		# JSON booleans for the flags sysfs gives as 0/1; strings unquoted.
		got=$(sed -n "s/^ *\"$key\": *\(.*\)\$/\1/p" <<<"$json")
		got=${got%,}
		got=${got#\"}
		got=${got%\"}
		case "$got" in
		true) got=1 ;;
		false) got=0 ;;
		esac
		t_expect_eq "$name-json-$key" "$want" "$got"
	done
}

# t_bytes SIZE: SIZE in bytes; SIZE is a number with an optional K, M or G (powers of 1024).
t_bytes() {
	local n=${1%[KkMmGg]}
	[[ "$n" =~ ^[0-9]+$ ]] || { echo "t_bytes: bad size '$1'" >&2; return 1; }
	case "$1" in
	*[Kk]) echo $((n << 10)) ;;
	*[Mm]) echo $((n << 20)) ;;
	*[Gg]) echo $((n << 30)) ;;
	*) echo "$n" ;;
	esac
}

# t_randfile PATH SIZE: a file of SIZE random bytes.
t_randfile() {
	local bytes
	bytes=$(t_bytes "$2") || return 1
	head -c "$bytes" /dev/urandom >"$1"
}

# t_zerofile PATH SIZE: a sparse file of SIZE bytes, reading as zeros (quick at any size).
t_zerofile() {
	local bytes
	bytes=$(t_bytes "$2") || return 1
	rm -f "$1"
	truncate -s "$bytes" "$1"
}

# t_sha256 FILE: prints the file's SHA-256 in hex.
t_sha256() {
	local sum
	sum=$(sha256sum "$1") || return 1
	echo "${sum%% *}"
}

# t_scratch_disk NAME RUN-OPTIONS: true when the scratch disk /dev/vda (run.sh -d) is there;
# else reports NAME skipped, saying to run the suite with run.sh RUN-OPTIONS, and is false.
t_scratch_disk() {
	modprobe virtio_blk 2>/dev/null
	[ -b /dev/vda ] && return 0
	t_skip "$1" "no scratch disk /dev/vda; run it with run.sh $2"
	return 1
}

# t_cpu_has FLAG: true when the guest CPU has FLAG in /proc/cpuinfo: x86's "flags" (aes,
# pclmulqdq, avx2, vaes, avx512f ...) or arm64's "Features" (aes, pmull, asimd ...); run.sh
# -c picks the CPU model.
t_cpu_has() {
	local line
	while IFS= read -r line; do
		case "$line" in
		flags* | Features*) [[ " ${line#*:} " == *" $1 "* ]] && return 0 || return 1 ;;
		esac
	done </proc/cpuinfo
	return 1
}

_t_run_cleanups() {
	local rc=$? i
	set +e
	for ((i = ${#_t_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_t_cleanups[i]}" >/dev/null 2>&1
	done
	_t_cleanups=()
	rm -f "$_t_out"
	return "$rc"
}
trap _t_run_cleanups EXIT

# t_cleanup CMD...: (use it instead of trap ... EXIT, which would replace this library's)
# runs CMD when the script exits (last registered, first run), whatever
# happened, ignoring its output and status.
t_cleanup() {
	local q
	printf -v q '%q ' "$@"
	_t_cleanups+=("$q")
}

# t_attach VAR FILE [LOSETUP-OPTIONS...]: attaches FILE to a free loop device with
# ${T_LOSETUP:-losetup} (set T_LOSETUP=losetup.stock for util-linux's own), stores the
# device in VAR and detaches it at exit.
t_attach() {
	# Locals carry the _t prefix: a plain name could shadow the caller's VAR.
	local -n _t_dev=$1
	local _t_file=$2 _t_new
	shift 2
	_t_new=$("${T_LOSETUP:-losetup}" "$@" -f --show "$_t_file") || return 1
	_t_dev=$_t_new
	t_cleanup losetup.stock -d "$_t_new"
}

# t_mk_slots KEYFILE TWEAK HASHCMD: prints the key slots of a multi-key volume (hex, one per
# line) as losetup derives them from a key file (doc/format.md 3.3): HASHCMD of each line (sha256sum
# for AES128, sha512sum for AES256) cut to 32 bytes, byte 0 XORed with TWEAK (0x55: v2, 0xf4:
# v3; 64 lines for v2, 65 for v3).  AES192 needs SHA-384, which busybox lacks.
t_mk_slots() {
	local line h
	while IFS= read -r line; do
		h=$(printf '%s' "$line" | "$3")
		printf '%02x%s\n' $((0x${h:0:2} ^ $2)) "${h:2:62}"
	done <"$1"
}

# t_mk_attach DEV FILE BITS SLOTS [LO-IOCTL-OPTIONS...]: FILE on DEV as a multi-key volume
# (v2 with 64 slots, v3 with 65) by raw ioctls, so that only the kernel is under test:
# LOOP_CONFIGURE with a single key, which LOOP_MULTI_KEY_SETUP(_V3) then replaces.
t_mk_attach() {
	local dev=$1 file=$2 bits=$3 slots=$4
	shift 4
	"$t_tools/lo-ioctl" configure "$dev" "$file" -t 16 -s $((bits / 8)) \
		-k 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff "$@" &&
		"$t_tools/lo-ioctl" multi "$dev" "$slots"
}

# t_run_quiet CMD...: runs CMD with its output hidden unless it fails (then shown, and its
# status returned), for setup steps that are not results themselves.
t_run_quiet() {
	if "$@" >"$_t_out" 2>&1; then
		return 0
	else
		local rc=$?
		echo "command failed (exit $rc): $*"
		_t_show_output 20
		return "$rc"
	fi
}

# t_hard_reset: the end of a script that tests what survives a crash.  Sends
# the kernel log so far (checked as usual), tells the host the reset is
# planned, then resets the guest at once with sysrq 'b': no sync, no
# unmount.  A later VM run checks what reached the disk.
t_hard_reset() {
	{
		echo "@@AESLOOP-DMESG-BEGIN"
		dmesg
		echo "@@AESLOOP-DMESG-END"
		echo "@@AESLOOP-RESET planned"
	} >"$AESLOOP_RESULTS"
	# Written is not sent: the serial line drains at its own pace, and a
	# reset now would lose the tail on a busy host.  stty sets modes with
	# TCSADRAIN, which waits until the UART has sent everything.
	stty -F "$AESLOOP_RESULTS" raw -echo 2>/dev/null
	echo 1 >/proc/sys/kernel/sysrq
	echo b >/proc/sysrq-trigger
	sleep 10
}
