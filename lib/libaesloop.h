/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libaesloop.h - what the patched util-linux losetup, mount and swapon
 * call for loop-AES (doc/format.md §3-§5, §7), one
 * file of lib/ each: the loop-AES option set and its sources (options.c,
 * fstab.c), the key setup run from it (keydrive.c; keysetup*.c do the
 * work), the multi-key ioctl (multikey.c), the status line of loop-AES's
 * `losetup -a` (status.c), encrypted swap (swap.c), the new volume of
 * phash=random (newfs.c), and what `losetup -d` says about a detach that
 * waits for other openers (openers.c).
 *
 * Kept out of the util-linux patches so that they stay a thin layer of
 * hooks, and this code is built and tested with the project (ASan, UBSan).
 * Every header of lib/ has a name that util-linux's include/ and the C
 * library do not use: the patched tree is built with -I lib.
 *
 * Like keysetup.h, this header needs only <stddef.h> and <stdint.h>, so
 * that util-linux sources can include it next to their own loopdev.h.
 */
#ifndef LIBAESLOOP_H
#define LIBAESLOOP_H

#include <stddef.h>
#include <stdint.h>

#include "keysetup.h"

/* The largest gpg key file read from the start of its own volume. */
#define AESLOOP_GPG_PREFIX_MAX	(1024 * 1024)

/**
 * struct aesloop_opts - the loop-AES options of one loop set-up
 * @loop:         loop= (the loop device), or NULL
 * @offset:       offset= / -o as written: bytes, "@N" = not in the IV
 * @sizelimit:    sizelimit= / -s
 * @encryption:   encryption= / -e, e.g. "AES128"
 * @pseed:        pseed= / -S
 * @phash:        phash= / -H
 * @itercountk:   itercountk= / -C
 * @loinit:       loinit= / -I
 * @gpgkey:       gpgkey= / -K
 * @gpghome:      gpghome= / -G
 * @cleartextkey: cleartextkey= / -P
 * @passfd:       -p / pass-fd: the descriptor with the passphrase or key
 *                lines, or -1
 * @ask_twice:    -T
 * @storage:      copies made by aesloop_opts_merge(); freed by
 *                aesloop_opts_free()
 * @nstorage:     how many
 *
 * Fields are NULL when not set; strings are not owned unless they come
 * from aesloop_opts_merge().
 */
struct aesloop_opts {
	const char *loop;
	const char *offset;
	const char *sizelimit;
	const char *encryption;
	const char *pseed;
	const char *phash;
	const char *itercountk;
	const char *loinit;
	const char *gpgkey;
	const char *gpghome;
	const char *cleartextkey;
	int passfd;
	int ask_twice;
	char *storage[16];
	unsigned int nstorage;
};

void aesloop_opts_init(struct aesloop_opts *o);
void aesloop_opts_free(struct aesloop_opts *o);
int aesloop_opts_merge(struct aesloop_opts *o, const char *optstr);
int aesloop_opts_is_loop_aes(const char *name);

int aesloop_fstab_lookup(const char *fstab, const char *loopdev,
			 struct aesloop_opts *o, char **source,
			 char *err, size_t errlen);

const char *aesloop_offset_number(const char *s, int *iv_free);

int aesloop_driver_check(struct keysetup *ks);
int aesloop_get_keys(struct keysetup *ks, const struct aesloop_opts *o,
		     const char *prog, const char *backing,
		     uint64_t data_offset);
int aesloop_get_keys_offline(struct keysetup *ks, const struct aesloop_opts *o,
			     const char *prog, const char *backing,
			     uint64_t data_offset, const char *prompt);

int aesloop_multi_key_setup(int fd, const char *dev, const struct keysetup *ks);

int aesloop_status_line(char *buf, size_t len, const char *dev,
			const char *file_name, const void *info64);

/**
 * typedef aesloop_attach_fn - bind a loop device with a loop-AES key
 * @loopdev:   the loop device, e.g. "/dev/loop6"
 * @backing:   the backing file or device (read-write)
 * @lo_offset: as the kernel takes it (negative: "@N", doc/format.md §4), bytes
 * @sizelimit: bytes, 0 for all
 * @ks:        the derived keys; multi-key slots go in after the bind
 * @loinit:    lo_init[0]
 *
 * The caller's own way to set up a loop device (swapon's is util-linux's
 * loop context, as losetup's), for aesloop_swap_prepare().  On failure the
 * device must be left unbound, with a message on stderr.
 *
 * Return: 0 or a negative errno.
 */
typedef int (*aesloop_attach_fn)(const char *loopdev, const char *backing,
				 uint64_t lo_offset, uint64_t sizelimit,
				 const struct keysetup *ks, uint64_t loinit);

int aesloop_mkswap(const char *dev);
int aesloop_mkfs(const char *dev, const char *fstype);

int aesloop_swap_prepare(const char *source, const char *optstr,
			 const char *prog, int passfd, aesloop_attach_fn attach,
			 char *loopdev, size_t len);
int aesloop_detach_encrypted(const char *dev);
int aesloop_fstab_swap_loop(const char *fstab, const char *source,
			    char *loopdev, size_t len);

/* How many openers aesloop_find_openers() names in its list. */
#define AESLOOP_OPENERS_LISTED	4

/**
 * struct aesloop_openers - the processes that hold a block device open
 * @nproc:      how many were found with the device or one of its
 *              partitions open (each process counted once)
 * @unreadable: how many processes' descriptors could not be read (another
 *              user's, without privilege): @nproc may be short by these
 * @list:       "comm[pid]" of the first AESLOOP_OPENERS_LISTED found,
 *              ", "-separated, then ", ..." when there are more; bytes of
 *              a comm that are not printable ASCII are shown as '?'
 */
struct aesloop_openers {
	unsigned int nproc;
	unsigned int unreadable;
	char list[AESLOOP_OPENERS_LISTED * 32 + 8];
};

int aesloop_loop_keyed(int fd);
int aesloop_find_openers(const char *proc, const char *sysdir,
			 struct aesloop_openers *op);
int aesloop_detach_message(char *buf, size_t len, const char *dev,
			   const struct aesloop_openers *op, int keyed,
			   int pending);
int aesloop_detach_notice(const char *dev, int keyed, int pending);

int aesloop_argv_has(int argc, char *const argv[], const char *short_with_arg,
		     const char *find_short, const char *const find_long[]);

#endif /* LIBAESLOOP_H */
