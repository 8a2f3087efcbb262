#!/bin/bash
# covers: ioctl fuzzing, loop-control, races, key secrecy, non-root callers, module unload
# VM test: the driver under hostile or careless use.
#   fuzz-*       a bounded randomized run of loop ioctls (random commands,
#                sizes, flags, key sizes, bad user pointers, and as often
#                valid ones) on bound and unbound devices, first from one
#                process, then from four at once on the same devices with a
#                fifth racing ADD, REMOVE and GET_FREE on /dev/loop-control
#                and a sixth opening and doing I/O: no oops, no WARNING
#                (guest-dmesg), and no device left bound; run.sh -u then
#                checks the module unloads, so no reference leaked either.
#                FUZZ_COUNT (20000) ioctls single, FUZZ_MT_COUNT (5000) per
#                process; the debug kernel's tier runs more
#   nonroot-*    nobody reads key bytes back, root included (none are
#                kept); a user without CAP_SYS_ADMIN, given the device node,
#                cannot change a key root set (doc/format.md section 5)
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

lo_ioctl=$t_tools/lo-ioctl
work=/tmp/t-abuse
mkdir -p "$work"
key=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff

t_zerofile "$work/fuzz.img" 4M
devs=()
for n in 20 21 22; do
	"$lo_ioctl" raw /dev/loop-control 0x4C80 "$n" >/dev/null
	devs+=("/dev/loop$n")
done
# One bound, so the fuzzer starts with bound and unbound devices.
"$lo_ioctl" configure /dev/loop21 "$work/fuzz.img" -t 16 -s 32 -k "$key"
seed=${FUZZ_SEED:-$RANDOM}
t_check "fuzz-seed-$seed" "$lo_ioctl" fuzz "$seed" "${FUZZ_COUNT:-20000}" "$work/fuzz.img" "${devs[@]}"
"$lo_ioctl" configure /dev/loop20 "$work/fuzz.img" -t 16 -s 16 -k "$key"
t_check "fuzz-mt-seed-$seed" "$lo_ioctl" fuzz-mt "$seed" "${FUZZ_MT_COUNT:-5000}" 4 \
	"$work/fuzz.img" "${devs[@]}"
for d in "${devs[@]}"; do
	"$lo_ioctl" clr "$d" 2>/dev/null
done
t_expect_eq fuzz-nothing-bound "" "$(losetup.stock -a)"
for n in 20 21 22; do
	t_check "fuzz-remove-loop$n" "$lo_ioctl" raw /dev/loop-control 0x4C81 "$n"
done

# Key rules for a user without CAP_SYS_ADMIN.
if dev=$(losetup -e AES256 -p 3 -f --show "$work/fuzz.img" 3<<<'correct horse battery staple 2026'); then
	chmod 666 "$dev"
	as_user() { "$lo_ioctl" as 1000 "${@:2}"; }
	t_check nonroot-root-sees-zeros sh -c "'$lo_ioctl' status $dev | grep -qx 'encrypt_key=0*'"
	t_check nonroot-sees-zeros sh -c "'$lo_ioctl' as 1000 status $dev | grep -qx 'encrypt_key=0*'"
	t_expect_fail nonroot-set-key EPERM as_user "$lo_ioctl" set-status "$dev" -t 16 -s 16 -k "$key"
	t_expect_fail nonroot-multi-key EPERM as_user "$lo_ioctl" multi "$dev" /dev/null
	t_expect_fail nonroot-clear-key EPERM as_user "$lo_ioctl" set-status "$dev" -t 0
	losetup -d "$dev"
else
	t_fail nonroot "could not set up an encrypted loop"
fi
