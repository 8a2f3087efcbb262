#!/bin/bash
# The first process of a User-Mode Linux guest (tests/vm/run.sh boots a UML kernel with
# init=THIS): the guest's root is this host's, read-only over hostfs.  Builds the root that
# tests/vm/init.sh expects, on a tmpfs: the host's /usr read-only, a copy of its /etc, the
# project read-only as /aesloop, the writable share as /share, and /lib/modules holding the
# UML kernel's modules only; then becomes tests/vm/init.sh there, still process 1, which
# runs the job as in a QEMU guest.  Its messages go to the console; a failure here leaves
# the guest without results, which the runner reports.
set -uo pipefail
export PATH=/usr/sbin:/usr/bin

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
say() { echo "aesloop-uml-init: $*"; }
halt() {
	say "$*"
	busybox poweroff -f
	sleep 30
}

share=
mount -t proc proc /proc || halt "cannot mount /proc"
read -r -a cmdline </proc/cmdline
for opt in "${cmdline[@]}"; do
	case "$opt" in
	aesloop.share=*) share=${opt#aesloop.share=} ;;
	esac
done
[ -d "$share" ] || halt "no share folder (aesloop.share=$share)"

# /mnt of the read-only root is the mount point of the new root.
root=/mnt
mount -t tmpfs -o mode=755 tmpfs "$root" || halt "cannot mount a tmpfs on $root"
mkdir -p "$root"/{usr,etc,lib,proc,sys,dev,tmp,run,var/tmp,root,aesloop,share,mnt}
bind_ro() { mount --bind "$1" "$2" && mount -o remount,bind,ro "$2"; }
bind_ro /usr "$root/usr" || halt "cannot bind the host's /usr"
# As in the QEMU guest's initramfs: losetup is the patched one of build/bin (when it is built),
# losetup.stock the distribution's.
mount -t tmpfs -o mode=755 tmpfs "$root/usr/local/sbin" || halt "cannot mount /usr/local/sbin"
ln -s /usr/sbin/losetup "$root/usr/local/sbin/losetup.stock"
[ ! -x "$top/build/bin/losetup" ] || ln -s /aesloop/build/bin/losetup "$root/usr/local/sbin/losetup"
for d in bin sbin lib64; do
	ln -s "usr/$d" "$root/$d"
done
# /lib: the host's /usr/lib entry by entry, and modules/ with this kernel's alone (modprobe
# and the kernel's request_module() read /lib/modules/RELEASE).
for e in /usr/lib/*; do
	[ "$e" = /usr/lib/modules ] || ln -s "$e" "$root/lib/${e##*/}"
done
rel=$(uname -r)
if ! mkdir "$root/lib/modules" ||
	! ln -s "/aesloop/build/kernel/$rel/lib/modules/$rel" "$root/lib/modules/$rel"; then
	halt "cannot make /lib/modules/$rel"
fi
cp -a /etc/. "$root/etc/" 2>/dev/null || say "copying /etc was incomplete"
ln -sfn /proc/self/mounts "$root/etc/mtab"
bind_ro "$top" "$root/aesloop" || halt "cannot bind the project as /aesloop"
# A hostfs of its own: a bind mount would be read-only as the root is.
mount -t hostfs -o "$share" hostfs "$root/share" || halt "cannot mount $share as /share"
umount /proc 2>/dev/null

export AESLOOP_GUEST=uml
exec chroot "$root" /bin/bash /aesloop/tests/vm/init.sh
