#!/bin/bash
# covers: cross-architecture, single-key, multi-key v2, multi-key v3
# VM test in two guests of different architectures (x86_64 and arm64): what aesloop wrote
# on one reads back on the other, byte for byte, for single-key AES-256 at an offset that
# moves the IV sector, and multi-key v2 and v3 (doc/format.md 2.1-2.3).  Keys go in by raw ioctls
# (lo-ioctl), so only the two kernels' drivers are compared.
#   t-xarch.sh write   random plaintext written through the driver into /share/xarch/*.img,
#                      its SHA-256 and this machine's architecture beside them
#   t-xarch.sh read    (a guest of the other architecture) each volume read through the
#                      driver gives that plaintext; the volumes are removed
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

dir=/share/xarch
vectors=/share/vectors
key256=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
work=/tmp/t-xarch
mkdir -p "$work"
arch=$(uname -m)

# Each volume: NAME, then how it is attached (the device and the file follow).
volumes=(single256-o4096 mk-v2-128 mk-v3-128)
attach() { # NAME DEV FILE
	case "$1" in
	single256-o4096)
		"$t_tools/lo-ioctl" configure "$2" "$3" -t 16 -s 32 -k "$key256" -o 4096
		;;
	mk-v2-128)
		t_mk_slots "$vectors/keys64.txt" 0x55 sha256sum >"$work/v2.slots" &&
			t_mk_attach "$2" "$3" 128 "$work/v2.slots"
		;;
	mk-v3-128)
		t_mk_slots "$vectors/keys65.txt" 0xf4 sha256sum >"$work/v3.slots" &&
			t_mk_attach "$2" "$3" 128 "$work/v3.slots"
		;;
	esac
}

dev=$(losetup.stock -f)
case "${1:-}" in
write)
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "$arch" >"$dir/arch"
	for v in "${volumes[@]}"; do
		t_zerofile "$dir/$v.img" 4M
		t_randfile "$work/plain" 3M
		if attach "$v" "$dev" "$dir/$v.img" &&
		   dd if="$work/plain" of="$dev" bs=64k conv=fsync 2>/dev/null; then
			t_sha256 "$work/plain" >"$dir/$v.sum"
			"$t_tools/lo-ioctl" clr "$dev"
			# What reached the file is not the plaintext (a driver that did not encrypt
			# would read back right on both sides).
			skip=0
			[ "$v" != single256-o4096 ] || skip=4096
			got=$(tail -c +$((skip + 1)) "$dir/$v.img" | head -c $((3 << 20)) | sha256sum)
			t_check "write-$v-on-$arch" test "${got%% *}" != "$(cat "$dir/$v.sum")"
		else
			t_fail "write-$v-on-$arch" "could not attach or write"
			losetup.stock -d "$dev" 2>/dev/null
		fi
	done
	sync
	;;
read)
	writer=$(cat "$dir/arch" 2>/dev/null)
	if [ -z "$writer" ]; then
		t_fail xarch-read "nothing written: run t-xarch.sh write in the other guest first"
		exit 1
	fi
	# Same architecture both times: the run checked nothing across architectures.
	t_check "writer-$writer-is-not-$arch" test "$writer" != "$arch"
	for v in "${volumes[@]}"; do
		name=read-$v-from-$writer-on-$arch
		if [ ! -s "$dir/$v.sum" ]; then
			t_fail "$name" "its write failed"
			continue
		fi
		if attach "$v" "$dev" "$dir/$v.img"; then
			got=$(head -c $((3 << 20)) "$dev" | sha256sum)
			t_expect_eq "$name" "$(cat "$dir/$v.sum")" "${got%% *}"
			"$t_tools/lo-ioctl" clr "$dev"
		else
			t_fail "$name" "could not attach"
		fi
	done
	rm -rf "$dir"
	;;
*)
	echo "usage: t-xarch.sh write|read" >&2
	exit 2
	;;
esac
