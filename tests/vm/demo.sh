#!/bin/bash
# The main job, in the guest: an encrypted ext4 file system on an aesloop
# device, step by step, with each command shown as it runs.
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"
set -u

step() { printf '\n--- %s\n' "$*"; }
show() { printf '# %s\n' "$*"; "$@"; }

work=/tmp/demo
mkdir -p "$work" /mnt/secret
img=$work/disk.img
pass='a demo passphrase, at least 20 characters long'
# The passphrase goes to losetup on a file descriptor; normally losetup asks
# for it on the terminal, without echo.  It is never on a command line.
printf '%s\n' "$pass" >"$work/pass"

step "The aesloop loop.ko is loaded in place of the kernel's own loop driver"
show sh -c 'dmesg | grep "aesloop driver"'
show ls -l /dev/loop-control /dev/loop0

step "A 64 MiB file to hold the encrypted volume"
show truncate -s 64M "$img"

step "Attach it with AES-128 (passphrase on fd 3, hashed with SHA-256 into the key)"
printf '# losetup -e AES128 -p 3 /dev/loop0 %s 3<passphrase-file\n' "$img"
t_check demo-attach losetup -e AES128 -p 3 /dev/loop0 "$img" 3<"$work/pass"
show losetup -a

step "Make an ext4 file system on it and mount it"
t_check demo-mkfs mkfs.ext4 -q -L secret /dev/loop0
show mount /dev/loop0 /mnt/secret
show sh -c 'echo "This sentence is only ever stored encrypted." >/mnt/secret/note.txt'
show ls -l /mnt/secret
show df -h /mnt/secret

step "Unmount and detach: the key is wiped from the kernel"
show umount /mnt/secret
show losetup -d /dev/loop0

step "The backing file holds only ciphertext"
show sh -c "od -A d -t x1 '$img' | head -n 4"
if grep -q -F "only ever stored" "$img"; then
	t_fail demo-no-plaintext "the plaintext is in the backing file"
else
	echo "The note's text does not occur in $img."
	t_pass demo-no-plaintext
fi

step "A wrong passphrase gives garbage: ext4 will not mount it"
printf 'not the passphrase we used, sorry\n' >"$work/wrong"
printf '# losetup -e AES128 -p 3 /dev/loop0 %s 3<wrong-passphrase-file\n' "$img"
losetup -e AES128 -p 3 /dev/loop0 "$img" 3<"$work/wrong"
echo "(loop-AES formats carry no key check: the attach succeeds, the data is noise)"
printf '# mount /dev/loop0 /mnt/secret\n'
if mount /dev/loop0 /mnt/secret 2>"$work/mount.err"; then
	t_fail demo-wrong-passphrase "ext4 mounted with the wrong key"
	umount /mnt/secret
else
	cat "$work/mount.err"
	echo "mount refused, as it should."
	t_pass demo-wrong-passphrase
fi
show losetup -d /dev/loop0

step "The right passphrase brings the file back"
printf '# losetup -e AES128 -p 3 /dev/loop0 %s 3<passphrase-file\n' "$img"
losetup -e AES128 -p 3 /dev/loop0 "$img" 3<"$work/pass"
show mount /dev/loop0 /mnt/secret
show cat /mnt/secret/note.txt
t_check demo-read-back grep -q "only ever stored encrypted" /mnt/secret/note.txt
umount /mnt/secret
losetup -d /dev/loop0

step "dm-crypt reads the same volume: cryptsetup open --type loopaes"
show cryptsetup open --type loopaes --key-file "$work/pass" -s 128 "$img" demo
show mount -o ro /dev/mapper/demo /mnt/secret
show cat /mnt/secret/note.txt
t_check demo-cryptsetup grep -q "only ever stored encrypted" /mnt/secret/note.txt
umount /mnt/secret
cryptsetup close demo
step "Done"
