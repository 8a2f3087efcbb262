// SPDX-License-Identifier: GPL-2.0
/*
 * keydrive.c - a loop-AES option set's key setup, run for losetup, mount
 * and swapon (doc/format.md §3): keysetup*.c does the work, in the order and with
 * the sources of the passphrase that the options say; and the check that
 * the loop driver in the kernel is aesloop's before anything is asked.
 */
#define _GNU_SOURCE		/* secure_getenv */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <linux/loop.h>

#include "libaesloop.h"
#include "libaesloop-internal.h"

/* The key buffer is what goes into lo_encrypt_key, byte for byte (§5). */
_Static_assert(KEYSETUP_KEY_BUFFER_LEN == LO_KEY_SIZE,
	       "struct keysetup's key_buffer is not lo_encrypt_key's size");

/*
 * The terminal; without one (a unit, a script) systemd's password agents,
 * if systemd runs.
 */
static int aesloop_read_passphrase(struct keysetup *ks, const char *backing)
{
	char msg[PATH_MAX + 64], id[PATH_MAX + 16];
	const char *what = backing ? backing : "the loop device";
	int rc;

	rc = keysetup_read_tty(ks, "Password: ");
	if (rc != -ENXIO || ks->ask_twice)
		return rc;
	snprintf(msg, sizeof(msg), "Passphrase for %s:", what);
	snprintf(id, sizeof(id), "aesloop:%s", what);
	return keysetup_read_agent(ks, msg, id);
}

/**
 * aesloop_driver_check() - is the loop driver in the kernel aesloop's?
 * @ks: where a refusal's message goes (@ks->errmsg)
 *
 * aesloop's loop.ko has the read-only parameter aes_impl; the kernel's own
 * loop driver has none, and would refuse the key with a bare EINVAL after
 * the passphrase was asked.  A loop module that is not loaded yet is loaded
 * first, by opening /dev/loop-control as losetup would a moment later, so
 * that the one modprobe prefers is judged.  A driver built into the kernel
 * has no initstate in sysfs.  AESLOOP_SYSFS (ignored in set-user-ID
 * programs; for tests) stands for /sys.
 *
 * Return: 0, or -ENODEV with what to do in @ks->errmsg.
 */
int aesloop_driver_check(struct keysetup *ks)
{
	const char *sys = secure_getenv("AESLOOP_SYSFS");
	char path[PATH_MAX];

	if (!sys)
		sys = "/sys";
	snprintf(path, sizeof(path), "%s/module/loop", sys);
	if (access(path, F_OK)) {
		int fd = open("/dev/loop-control", O_RDWR | O_CLOEXEC);

		if (fd >= 0)
			close(fd);
		if (access(path, F_OK))
			return 0;	/* no loop driver at all: losetup says so */
	}
	snprintf(path, sizeof(path), "%s/module/loop/parameters/aes_impl", sys);
	if (!access(path, F_OK))
		return 0;
	snprintf(path, sizeof(path), "%s/module/loop/initstate", sys);
	if (access(path, F_OK)) {
		snprintf(ks->errmsg, sizeof(ks->errmsg),
			 "the loop driver is built into this kernel (CONFIG_BLK_DEV_LOOP=y), so aesloop's loop.ko cannot take its place: use a kernel that has it as a module");
		return -ENODEV;
	}
	snprintf(ks->errmsg, sizeof(ks->errmsg),
		 "the loop driver in the kernel is not aesloop's (it has no aes_impl parameter): install aesloop's loop.ko, detach every loop device, then rmmod loop and modprobe loop");
	return -ENODEV;
}

/*
 * The choices of @o, checked as they are set: a bad cipher name or
 * iteration count fails before anything is read or asked.
 */
static int aesloop_set_choices(struct keysetup *ks,
			       const struct aesloop_opts *o,
			       const char *backing, uint64_t data_offset)
{
	int rc;

	ks->ask_twice = o->ask_twice && o->passfd < 0 && !o->cleartextkey;
	rc = keysetup_set_cipher(ks, o->encryption);
	if (!rc && o->phash)
		rc = keysetup_set_hash(ks, o->phash);
	if (!rc && o->pseed)
		rc = keysetup_set_seed(ks, o->pseed);
	if (!rc && o->itercountk)
		rc = keysetup_set_itercountk(ks, o->itercountk);
	if (!rc && o->gpgkey) {
		rc = keysetup_set_gpg(ks, o->gpgkey, o->gpghome);
		if (data_offset && aesloop_same_file(o->gpgkey, backing))
			ks->gpg_key_limit = data_offset < AESLOOP_GPG_PREFIX_MAX ?
					    data_offset : AESLOOP_GPG_PREFIX_MAX;
	}
	return rc;
}

/* The passphrase or key lines from where @o says, then the keys. */
static int aesloop_read_derive(struct keysetup *ks,
			       const struct aesloop_opts *o,
			       const char *backing, const char *prompt)
{
	int rc = 0;

	if (ks->hash != KEYSETUP_HASH_RANDOM) {
		if (o->passfd >= 0)
			rc = keysetup_read_fd(ks, o->passfd);
		else if (o->cleartextkey)
			rc = keysetup_read_file(ks, o->cleartextkey);
		else if (prompt)
			rc = keysetup_read_tty(ks, prompt);
		else
			rc = aesloop_read_passphrase(ks, backing);
		if (rc)
			return rc;
	}
	return keysetup_derive(ks);
}

/**
 * aesloop_get_keys() - run the key setup of a loop-AES option set (§3)
 * @ks:          initialised here (keysetup_init()), to be wiped by the
 *               caller with keysetup_wipe() on every path
 * @o:           the options: encryption (required), phash, pseed,
 *               itercountk, gpgkey, gpghome, and where the passphrase or
 *               key lines are: passfd wins over cleartextkey, which wins
 *               over the terminal (asked twice with ask_twice), or without
 *               one systemd's password agents; nothing is read for
 *               phash=random
 * @prog:        program name for warnings
 * @backing:     the backing file or device, or NULL: a gpg key file that is
 *               the backing device itself is read only up to @data_offset
 *               (at most AESLOOP_GPG_PREFIX_MAX bytes), as loop-AES does
 * @data_offset: where the data starts in @backing, in bytes
 *
 * Key data of an unexpected line count is refused (keysetup's strict
 * mode): a wrong guess would set up the device with another key.  So is a
 * loop driver that is not aesloop's (aesloop_driver_check()), before any
 * passphrase is asked.
 *
 * Return: 0 with the keys in @ks, or a negative errno with the message in
 * @ks->errmsg.
 */
int aesloop_get_keys(struct keysetup *ks, const struct aesloop_opts *o,
		     const char *prog, const char *backing,
		     uint64_t data_offset)
{
	int rc;

	keysetup_init(ks, prog);
	rc = aesloop_set_choices(ks, o, backing, data_offset);
	if (!rc)
		rc = aesloop_driver_check(ks);
	if (!rc)
		rc = aesloop_read_derive(ks, o, backing, NULL);
	return rc;
}

/**
 * aesloop_get_keys_offline() - aesloop_get_keys() for a program that uses
 * the keys itself, not through the loop driver
 * @ks:          as for aesloop_get_keys()
 * @o:           as for aesloop_get_keys()
 * @prog:        program name for warnings
 * @backing:     as for aesloop_get_keys()
 * @data_offset: as for aesloop_get_keys(), bytes
 * @prompt:      what the terminal shows before the passphrase (e.g. "New
 *               passphrase: "); there is no fallback to systemd's agents
 *
 * No check of the loop driver: the keys never reach it (aesloop-reencrypt
 * rewrites a volume that is not in use).
 *
 * Return: 0 with the keys in @ks, or a negative errno with the message in
 * @ks->errmsg.
 */
int aesloop_get_keys_offline(struct keysetup *ks, const struct aesloop_opts *o,
			     const char *prog, const char *backing,
			     uint64_t data_offset, const char *prompt)
{
	int rc;

	keysetup_init(ks, prog);
	rc = aesloop_set_choices(ks, o, backing, data_offset);
	if (!rc)
		rc = aesloop_read_derive(ks, o, backing, prompt);
	return rc;
}
