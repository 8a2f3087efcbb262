# shellcheck shell=bash
# Sourced by the system suites after tests/vm/lib.sh: what they share.

no_loop_left() { [ -z "$(losetup -a)" ]; }

# installed_release: the aesloop release the packages installed, without the Debian revision:
# DKMS's version and the module's (/sys/module/loop/version).
installed_release() {
	local v
	v=$(dpkg-query -W -f '${Version}' aesloop-dkms 2>/dev/null)
	echo "${v%-*}"
}

# The aes_impl names loop.ko may pick on this CPU: a hardware path with AES-NI, else generic.
aes_impl_want_re() {
	if t_cpu_has aes; then
		echo '^(aesni|vaes-avx2|vaes-avx512)$'
	else
		echo '^generic$'
	fi
}

# check_aes_impl: a result for the AES path the loaded loop.ko chose, named after it.
check_aes_impl() {
	local impl want_re
	impl=$(cat /sys/module/loop/parameters/aes_impl 2>/dev/null)
	want_re=$(aes_impl_want_re)
	if [[ "$impl" =~ $want_re ]]; then
		t_pass "aes-impl-$impl"
	else
		t_fail aes-impl "aes_impl is '$impl'; the CPU's flags want ${want_re}"
	fi
}

# The image's kernel keeps its stock loop.ko beside aesloop's (in updates/), for comparisons.
stock_ko=$(find "/lib/modules/$(uname -r)/kernel/drivers/block" -name 'loop.ko*' | head -n 1)

# unload_loop: no loop module in the kernel afterwards (every device detached first).
unload_loop() {
	losetup -D
	udevadm settle
	# udev's last probe may still hold a device for a moment.
	for _ in $(seq 20); do
		[ -d /sys/module/loop ] || break
		rmmod loop 2>/dev/null && break
		sleep 0.5
	done
	[ ! -d /sys/module/loop ]
}

# use_driver aesloop|stock: the loop module in the kernel is that one afterwards.
use_driver() {
	unload_loop
	if [ "$1" = stock ]; then
		insmod "$stock_ko"
	else
		modprobe loop
	fi
	[ -d /sys/module/loop ] || return 1
	# aesloop has aes_impl; the stock driver has no such parameter.
	if [ "$1" = stock ]; then
		[ ! -e /sys/module/loop/parameters/aes_impl ]
	else
		[ -e /sys/module/loop/parameters/aes_impl ]
	fi
}

# password_agent FILE: answers systemd's password questions (systemd-ask-password, as
# systemd-cryptsetup and aesloop-fstab-setup ask them) as an agent does: watches
# /run/systemd/ask-password for ask.* files and replies through their socket with
# systemd-reply-password.  FILE has "TEXT<TAB>REPLY" lines, used in order: a question gets the
# first unused line whose TEXT is in its Message=.  Runs until killed; log in FILE.log.
password_agent() {
	local file=$1 used=' ' ask msg sock n text reply seen=' '
	while :; do
		for ask in /run/systemd/ask-password/ask.*; do
			[ -e "$ask" ] || continue
			case "$seen" in *" $ask "*) continue ;; esac
			msg=$(sed -n 's/^Message=//p' "$ask")
			sock=$(sed -n 's/^Socket=//p' "$ask")
			[ -n "$sock" ] || continue
			n=0
			while IFS=$'\t' read -r text reply; do
				n=$((n + 1))
				case "$used" in *" $n "*) continue ;; esac
				[[ "$msg" == *"$text"* ]] || continue
				used="$used$n "
				seen="$seen$ask "
				echo "answered '$msg' with line $n" >>"$file.log"
				printf '%s' "$reply" | /lib/systemd/systemd-reply-password 1 "$sock"
				break
			done <"$file"
		done
		sleep 0.2
	done
}
