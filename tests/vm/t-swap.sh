#!/bin/bash
# covers: swap, memory pressure, block device backing, single-key
# VM test: swap on an encrypted device-backed loop under memory pressure.
# Needs a small guest with a scratch disk:
#     tests/vm/run.sh -M 256 -d 512 -t 900 tests/vm/t-swap.sh
# The swap-out that frees memory goes through the loop, so the loop's way to
# the backing device must not wait for memory: bounce pages and bios are
# each worker's own from bind on.  memhog dirties more anonymous memory than
# the guest has, three passes, and checks every page back; a deadlock shows
# as a task blocked for 30 s (guest-dmesg) or memhog out of time.
#   swap-bios        the loop on /dev/vda sends bios (no page-cache notice)
#   swap-on          mkswap and swapon on the loop
#   swap-memhog      every page of memhog read back as written, in time
#   swap-no-oom      no task was killed for memory
#   swap-out, swap-in  pages really went to the loop and came back
#   swap-off         swapoff takes everything back in
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

pass='correct horse battery staple 2026'
memhog=$t_tools/memhog
mem_mib=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) / 1024))
if [ "$mem_mib" -gt 512 ]; then
	t_skip swap "the guest has $mem_mib MiB; run it with run.sh -M 256 -d 512"
	exit 0
fi
t_scratch_disk swap "-M 256 -d 512" || exit 0
vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }

if ! dev=$(losetup -e AES128 -p 3 -f --show /dev/vda 3<<<"$pass"); then
	t_fail swap-bios "losetup -e AES128 on /dev/vda failed"
	exit 1
fi
t_cleanup losetup -d "$dev"
if dmesg | grep -q "${dev#/dev/}: .*goes through its page cache"; then
	t_fail swap-bios "$dev goes through the page cache of /dev/vda"
else
	t_pass swap-bios
fi
t_check swap-on sh -c "mkswap $dev >/dev/null && swapon $dev" || exit 1
t_cleanup sh -c "swapoff $dev 2>/dev/null || true"

# More than the guest has, so that most of it is swapped out and in again.
hog_mib=$((mem_mib + 128))
out0=$(vmstat pswpout)
in0=$(vmstat pswpin)
t_log "memhog: $hog_mib MiB in a $mem_mib MiB guest, swap on $dev"
t_check swap-memhog timeout 600 "$memhog" "$hog_mib" 3
if dmesg | grep -Eq 'invoked oom-killer|Out of memory'; then
	t_fail swap-no-oom "$(dmesg | grep -Em1 'Out of memory.*|invoked oom-killer')"
else
	t_pass swap-no-oom
fi
t_check swap-out test "$(vmstat pswpout)" -gt "$out0"
t_check swap-in test "$(vmstat pswpin)" -gt "$in0"
t_check swap-off swapoff "$dev"
