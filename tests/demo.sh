#!/bin/bash
# The main job, from a fresh Debian 12 machine (as root): installs what is
# missing, builds loop.ko and the patched losetup, boots the test VM and
# shows an encrypted ext4 file system on an aesloop device, step by step.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
echo "== Installing Debian packages (tests/deps.sh)"
tests/deps.sh
echo "== Fetching the Debian 6.1 kernel into build/kernel (nothing is installed on this machine)"
kver=$(tests/vm/kernel.sh 6.1)
echo "== Building loop.ko for $kver, the userspace tools and the patched losetup"
make -s module KDIR="$top/build/kernel/$kver/lib/modules/$kver/build"
make -s userspace vm-tools losetup
echo "== Booting $kver in QEMU with our loop.ko"
tests/vm/run.sh -k "$kver" /aesloop/tests/vm/demo.sh
