// SPDX-License-Identifier: GPL-2.0
/*
 * aesloop-util.c - the loop-AES parts that the patched util-linux losetup,
 * mount and swapon share (../shared/spec/loop-aes-format.md §3-§5, §7):
 * one option set whatever its source, the key setup it drives (keysetup*.c
 * does the work), the multi-key ioctl, fstab lookups for losetup -F, the
 * status line of loop-AES's `losetup -a`, and the notice of `losetup -d`
 * when a detach waits for other openers.
 *
 * Kept out of the util-linux patch so that the patch stays a thin layer of
 * hooks and this code is built and tested with the project (ASan, UBSan).
 */
#define _GNU_SOURCE		/* strdup, secure_getenv */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#include <linux/loop.h>
#include <libmount.h>

#include "aes_types.h"	/* memzero_explicit() */
#include "aesloop-util.h"
#include "aesloop-spawn.h"

/* The key buffer is what goes into lo_encrypt_key, byte for byte (§5). */
_Static_assert(KEYSETUP_KEY_BUFFER_LEN == LO_KEY_SIZE,
	       "struct keysetup's key_buffer is not lo_encrypt_key's size");

/* The loop-AES mount options (spec §7), and where each one goes. */
static const struct {
	const char *name;
	size_t field;
} opt_names[] = {
	{ "loop", offsetof(struct aesloop_opts, loop) },
	{ "offset", offsetof(struct aesloop_opts, offset) },
	{ "sizelimit", offsetof(struct aesloop_opts, sizelimit) },
	{ "encryption", offsetof(struct aesloop_opts, encryption) },
	{ "pseed", offsetof(struct aesloop_opts, pseed) },
	{ "phash", offsetof(struct aesloop_opts, phash) },
	{ "itercountk", offsetof(struct aesloop_opts, itercountk) },
	{ "loinit", offsetof(struct aesloop_opts, loinit) },
	{ "gpgkey", offsetof(struct aesloop_opts, gpgkey) },
	{ "gpghome", offsetof(struct aesloop_opts, gpghome) },
	{ "cleartextkey", offsetof(struct aesloop_opts, cleartextkey) },
};

#define NOPTS	(sizeof(opt_names) / sizeof(opt_names[0]))

static const char **opt_field(struct aesloop_opts *o, size_t i)
{
	return (const char **)((char *)o + opt_names[i].field);
}

/**
 * aesloop_opts_init() - an empty option set (nothing set, no -p)
 * @o: the set
 */
void aesloop_opts_init(struct aesloop_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->passfd = -1;
}

/**
 * aesloop_opts_free() - free the copies aesloop_opts_merge() made
 * @o: the set; it is empty afterwards
 */
void aesloop_opts_free(struct aesloop_opts *o)
{
	unsigned int i;

	for (i = 0; i < o->nstorage; i++)
		free(o->storage[i]);
	aesloop_opts_init(o);
}

/**
 * aesloop_opts_is_loop_aes() - is @name one of the loop-AES options?
 * @name: an option name, "name" or "name=value"
 *
 * Return: 1 for the options of spec §7 (loop, offset, sizelimit,
 * encryption, pseed, phash, itercountk, loinit, gpgkey, gpghome,
 * cleartextkey), else 0.
 */
int aesloop_opts_is_loop_aes(const char *name)
{
	size_t i, n = strcspn(name, "=");

	for (i = 0; i < NOPTS; i++)
		if (strlen(opt_names[i].name) == n &&
		    !strncmp(name, opt_names[i].name, n))
			return 1;
	return 0;
}

/**
 * aesloop_opts_merge() - take loop-AES options from a mount option string
 * @o:      the set; options already set in it are kept (the command line
 *          wins over fstab, as with loop-AES)
 * @optstr: comma-separated options as in fstab ("defaults,loop=/dev/loop3,
 *          encryption=AES128,gpgkey=/etc/k.gpg"), parsed by libmount
 *          (mnt_optstr_get_option(): the first of a name counts, and a value
 *          in double quotes may hold commas); others are ignored
 *
 * Values are copied, without their quotes; free them with
 * aesloop_opts_free().  An option without a value ("loop") is not counted.
 *
 * Return: the number of loop-AES options found (set or already set),
 * -ENOMEM, or libmount's negative errno for an option string it cannot
 * parse.
 */
int aesloop_opts_merge(struct aesloop_opts *o, const char *optstr)
{
	int found = 0;
	size_t i;

	if (!optstr || !*optstr)
		return 0;
	for (i = 0; i < NOPTS; i++) {
		const char **f = opt_field(o, i);
		char *value, *copy;
		size_t len;
		int rc;

		rc = mnt_optstr_get_option(optstr, opt_names[i].name, &value, &len);
		if (rc < 0)
			return rc;
		if (rc > 0 || !value)
			continue;
		found++;
		if (*f)
			continue;
		if (len >= 2 && value[0] == '"' && value[len - 1] == '"') {
			value++;
			len -= 2;
		}
		if (o->nstorage >= sizeof(o->storage) / sizeof(o->storage[0]))
			return -ENOMEM;
		copy = strndup(value, len);
		if (!copy)
			return -ENOMEM;
		o->storage[o->nstorage++] = copy;
		*f = copy;
	}
	return found;
}

/* Same device node or file: equal paths, or equal device/inode numbers. */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!a || !b)
		return 0;
	if (!strcmp(a, b))
		return 1;
	if (stat(a, &sa) || stat(b, &sb))
		return 0;
	if (S_ISBLK(sa.st_mode) && S_ISBLK(sb.st_mode))
		return sa.st_rdev == sb.st_rdev;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * The lines of @fstab, as libmount parses them (escapes, comments, tags);
 * NULL with a message in @err.
 */
static struct libmnt_table *read_fstab(const char *fstab, char *err, size_t errlen)
{
	struct libmnt_table *tb = mnt_new_table();
	int rc = tb ? mnt_table_parse_file(tb, fstab) : -ENOMEM;

	if (rc) {
		snprintf(err, errlen, "cannot read %s: %s", fstab, strerror(-rc));
		mnt_unref_table(tb);
		errno = -rc;
		return NULL;
	}
	return tb;
}

/**
 * aesloop_fstab_lookup() - losetup -F: the fstab line of a loop device
 * @fstab:   the file, e.g. "/etc/fstab"
 * @loopdev: the loop device named on the command line
 * @o:       filled with the loop-AES options of the line whose loop= names
 *           @loopdev (the same path, or the same device); options already
 *           set are kept
 * @source:  if not NULL and *@source is NULL, set to a copy of the line's
 *           device or file (its first field, a tag as written)
 * @err:     a message on failure
 * @errlen:  its size
 *
 * Return: 0; -ENOENT if no line has loop=@loopdev; -EINVAL if more than
 * one has; -errno if @fstab cannot be read; -ENOMEM.
 */
int aesloop_fstab_lookup(const char *fstab, const char *loopdev,
			 struct aesloop_opts *o, char **source,
			 char *err, size_t errlen)
{
	struct libmnt_fs *fs, *match = NULL;
	struct libmnt_table *tb;
	struct libmnt_iter *it;
	const char *src;
	int found = 0, rc = 0;

	tb = read_fstab(fstab, err, errlen);
	if (!tb)
		return -errno;
	it = mnt_new_iter(MNT_ITER_FORWARD);
	if (!it) {
		snprintf(err, errlen, "out of memory reading %s", fstab);
		rc = -ENOMEM;
		goto out;
	}
	while (mnt_table_next_fs(tb, it, &fs) == 0) {
		struct aesloop_opts line;

		aesloop_opts_init(&line);
		rc = aesloop_opts_merge(&line, mnt_fs_get_options(fs));
		if (rc >= 0 && line.loop && same_file(line.loop, loopdev)) {
			found++;
			match = fs;
		}
		aesloop_opts_free(&line);
		if (rc == -ENOMEM)
			break;
		rc = 0;
	}
	if (rc) {
		snprintf(err, errlen, "out of memory reading %s", fstab);
	} else if (!found) {
		snprintf(err, errlen, "no line of %s has the option loop=%s",
			 fstab, loopdev);
		rc = -ENOENT;
	} else if (found > 1) {
		snprintf(err, errlen, "%d lines of %s have the option loop=%s: which one is meant?",
			 found, fstab, loopdev);
		rc = -EINVAL;
	} else if (aesloop_opts_merge(o, mnt_fs_get_options(match)) < 0) {
		snprintf(err, errlen, "out of memory reading %s", fstab);
		rc = -ENOMEM;
	} else if (source && !*source) {
		src = mnt_fs_get_source(match);
		*source = strdup(src ? src : "");
		if (!*source) {
			snprintf(err, errlen, "out of memory reading %s", fstab);
			rc = -ENOMEM;
		}
	}
out:
	mnt_free_iter(it);
	mnt_unref_table(tb);
	return rc;
}

/**
 * aesloop_offset_number() - split an offset into '@' and the number
 * @s:       "N" or "@N" (spec §4), leading blanks allowed
 * @iv_free: set to 1 for "@N" (the offset does not count in the IV: the
 *           kernel gets -N in lo_offset), else 0
 *
 * Return: the number part, for the caller's own number parser.
 */
const char *aesloop_offset_number(const char *s, int *iv_free)
{
	while (*s == ' ' || *s == '\t')
		s++;
	*iv_free = *s == '@';
	return *iv_free ? s + 1 : s;
}

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
		if (data_offset && same_file(o->gpgkey, backing))
			ks->gpg_key_limit = data_offset < AESLOOP_GPG_PREFIX_MAX ?
					    data_offset : AESLOOP_GPG_PREFIX_MAX;
	}
	if (!rc)
		rc = aesloop_driver_check(ks);
	if (rc)
		return rc;
	if (ks->hash != KEYSETUP_HASH_RANDOM) {
		if (o->passfd >= 0)
			rc = keysetup_read_fd(ks, o->passfd);
		else if (o->cleartextkey)
			rc = keysetup_read_file(ks, o->cleartextkey);
		else
			rc = aesloop_read_passphrase(ks, backing);
		if (rc)
			return rc;
	}
	return keysetup_derive(ks);
}

/*
 * The driver refuses a key change with EAGAIN while the device's page cache
 * keeps being refilled: typically udev's probe of the device just bound.
 * util-linux retries LOOP_SET_STATUS64 every 250 ms for that; the slots get
 * the same, for up to ten seconds (a probe under emulation is slow).
 */
#define AESLOOP_BUSY_TRIES	40

static int multi_key_ioctl_retry(int fd, unsigned long req, const void *slots)
{
	static const struct timespec delay = { .tv_nsec = 250000000 };
	int tries = 0;

	while (ioctl(fd, req, slots) != 0) {
		if (errno != EAGAIN || ++tries == AESLOOP_BUSY_TRIES)
			return -errno;
		nanosleep(&delay, NULL);
	}
	return 0;
}

/**
 * aesloop_multi_key_ioctl() - hand the multi-key slots to the driver (§5)
 * @fd: the loop device, after LOOP_SET_STATUS64 (or LOOP_CONFIGURE) set
 *      the AES type and key size
 * @ks: the derived keys; nothing is done for single-key
 *
 * LOOP_MULTI_KEY_SETUP_V3 with 65 slots, LOOP_MULTI_KEY_SETUP with 64.  For
 * -H random keys, a driver without v3 gets v2 (as loop-AES falls back); a
 * v3 driver that stays busy does not.  EAGAIN (a busy page cache, nothing
 * changed) is retried every 250 ms, 40 tries, as util-linux retries
 * LOOP_SET_STATUS64.
 *
 * Return: 0, or -errno of the ioctl.
 */
int aesloop_multi_key_ioctl(int fd, const struct keysetup *ks)
{
	int rc;

	if (!ks->nslots)
		return 0;
	if (ks->nslots == KEYSETUP_MULTI_V3) {
		rc = multi_key_ioctl_retry(fd, LOOP_MULTI_KEY_SETUP_V3,
					   ks->slots);
		if (!rc || rc == -EAGAIN || ks->hash != KEYSETUP_HASH_RANDOM)
			return rc;
	}
	return multi_key_ioctl_retry(fd, LOOP_MULTI_KEY_SETUP, ks->slots);
}

/* loop-AES's names of lo_encrypt_type (flags: 1 key bits, 2 a dash). */
static const struct {
	unsigned int type;
	unsigned int flags;
	const char *name;
} crypt_names[] = {
	{ 1, 0, "xor" }, { 3, 1, "twofish" }, { 4, 1, "blowfish" },
	{ 7, 1, "serpent" }, { 8, 1, "mars" }, { 11, 3, "rc6" },
	{ 12, 0, "tripleDES" }, { LO_CRYPT_AES, 1, "AES" },
};

/**
 * aesloop_status_line() - a device as loop-AES's `losetup -a` shows it
 * @buf:    the line, without a newline
 * @len:    its size
 * @dev:    the device name
 * @file:   the backing file's full name (from sysfs), or NULL for the
 *          64-byte lo_file_name of @info64
 * @info64: its struct loop_info64 from LOOP_GET_STATUS64
 *
 * "DEV: [DEVNO]:INODE (FILE)", then as they apply " offset=N" (or
 * " offset=@N" for an offset left out of the IV), " sizelimit=N",
 * " encryption=AES128", " multi-key-v2" or " multi-key-v3", " loinit=N",
 * " read-only"; DEVNO in hexadecimal, at least 4 digits.
 *
 * Return: the length snprintf() gives.
 */
int aesloop_status_line(char *buf, size_t len, const char *dev,
			const char *file_name, const void *info64)
{
	const struct loop_info64 *li = info64;
	char file[LO_NAME_SIZE], cname[LO_NAME_SIZE], enc[LO_NAME_SIZE + 16];
	char part[6][48];
	size_t i;

	memcpy(file, li->lo_file_name, LO_NAME_SIZE);
	file[LO_NAME_SIZE - 1] = '\0';
	memcpy(cname, li->lo_crypt_name, LO_NAME_SIZE);
	cname[LO_NAME_SIZE - 1] = '\0';
	for (i = 0; i < 6; i++)
		part[i][0] = '\0';

	if ((int64_t)li->lo_offset < 0)
		snprintf(part[0], sizeof(part[0]), " offset=@%llu",
			 (unsigned long long)-li->lo_offset);
	else if (li->lo_offset)
		snprintf(part[0], sizeof(part[0]), " offset=%llu",
			 (unsigned long long)li->lo_offset);
	if (li->lo_sizelimit)
		snprintf(part[1], sizeof(part[1]), " sizelimit=%llu",
			 (unsigned long long)li->lo_sizelimit);
	enc[0] = '\0';
	if (li->lo_encrypt_type == LO_CRYPT_CRYPTOAPI) {
		snprintf(enc, sizeof(enc), " encryption=CryptoAPI/%s", cname);
	} else if (li->lo_encrypt_type) {
		const char *name = "undefined";
		unsigned int flags = 0;

		for (i = 0; i < sizeof(crypt_names) / sizeof(crypt_names[0]); i++) {
			if (crypt_names[i].type == li->lo_encrypt_type) {
				name = crypt_names[i].name;
				flags = crypt_names[i].flags;
			}
		}
		if (flags & 1)
			snprintf(enc, sizeof(enc), " encryption=%s%s%u", name,
				 flags & 2 ? "-" : "",
				 li->lo_encrypt_key_size * 8);
		else
			snprintf(enc, sizeof(enc), " encryption=%s", name);
	}
	switch (li->lo_flags & (LO_FLAGS_MULTI_KEY_EXPORTED |
				LO_FLAGS_MULTI_KEY_V3_EXPORTED)) {
	case LO_FLAGS_MULTI_KEY_EXPORTED | LO_FLAGS_MULTI_KEY_V3_EXPORTED:
		snprintf(part[2], sizeof(part[2]), " multi-key-v3");
		break;
	case LO_FLAGS_MULTI_KEY_EXPORTED:
		snprintf(part[2], sizeof(part[2]), " multi-key-v2");
		break;
	}
	if (li->lo_init[0] && li->lo_encrypt_type != LO_CRYPT_DES)
		snprintf(part[3], sizeof(part[3]), " loinit=%llu",
			 (unsigned long long)li->lo_init[0]);
	if (li->lo_flags & (LO_FLAGS_READ_ONLY_EXPORTED | LO_FLAGS_READ_ONLY))
		snprintf(part[4], sizeof(part[4]), " read-only");
	return snprintf(buf, len, "%s: [%04llx]:%llu (%s)%s%s%s%s%s%s", dev,
			(unsigned long long)li->lo_device,
			(unsigned long long)li->lo_inode,
			file_name ? file_name : file, part[0], part[1],
			enc, part[2], part[3], part[4]);
}

/**
 * aesloop_argv_has() - is one of some options on a command line?
 * @argc:           as main() got it
 * @argv:           as main() got it (not reordered yet)
 * @short_with_arg: the short options that take an argument, e.g. "bcdo"
 * @find_short:     the short options looked for, e.g. "eF"
 * @find_long:      the long options looked for, without "--", NULL-ended
 *
 * For losetup's -P, which is loop-AES's key file (with an argument) when
 * the command sets up encryption, and util-linux's --partscan otherwise:
 * this looks before getopt_long() does.  Scanning stops at "--".
 *
 * Return: 1 if found, else 0.
 */
int aesloop_argv_has(int argc, char *const argv[], const char *short_with_arg,
		     const char *find_short, const char *const find_long[])
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			break;
		if (a[0] == '-' && a[1] == '-') {
			size_t n = strcspn(a + 2, "="), j;

			for (j = 0; find_long && find_long[j]; j++)
				if (strlen(find_long[j]) == n &&
				    !strncmp(a + 2, find_long[j], n))
					return 1;
			continue;
		}
		if (a[0] != '-' || !a[1])
			continue;
		for (a++; *a; a++) {
			if (strchr(find_short, *a))
				return 1;
			if (strchr(short_with_arg, *a)) {
				if (!a[1])
					i++;	/* the next word is its argument */
				break;
			}
		}
	}
	return 0;
}

/* Parse a loop-AES number: decimal, 0x hexadecimal or 0 octal. */
static int parse_number(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

/* Run /sbin/PROG or /usr/sbin/PROG with @arg, quietly; 0 if it exited 0. */
static int run_quiet(const char *prog, const char *arg)
{
	char path1[64], path2[64];
	const char *const paths[] = { path1, path2, NULL };
	char *argv[] = { (char *)prog, (char *)arg, NULL };
	char *envp[] = { (char *)"PATH=/sbin:/usr/sbin:/bin:/usr/bin", NULL };
	struct aesloop_spawn sp = {
		.paths = paths,
		.argv = argv,
		.envp = envp,
		.fds = { AESLOOP_SPAWN_NULL, AESLOOP_SPAWN_NULL, AESLOOP_SPAWN_NULL },
		.nfds = 3,
	};
	pid_t pid;
	int rc;

	snprintf(path1, sizeof(path1), "/sbin/%s", prog);
	snprintf(path2, sizeof(path2), "/usr/sbin/%s", prog);
	rc = aesloop_spawn(&sp, &pid);
	if (rc)
		return rc;
	return aesloop_spawn_wait(pid) == 0 ? 0 : -EIO;
}

/* Is @loopdev bound, and to @backing?  1 same, 0 free, -EBUSY another. */
static int loop_bound_to(const char *loopdev, const char *backing)
{
	struct loop_info64 li;
	struct stat st;
	int fd, rc;

	fd = open(loopdev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	rc = ioctl(fd, LOOP_GET_STATUS64, &li);
	close(fd);
	if (rc < 0)
		return 0;
	memzero_explicit(li.lo_encrypt_key, sizeof(li.lo_encrypt_key));
	/* lo_device and lo_inode name the backing file's inode */
	if (stat(backing, &st) == 0 && li.lo_device == st.st_dev &&
	    li.lo_inode == st.st_ino)
		return 1;
	return -EBUSY;
}

/**
 * aesloop_swap_prepare() - swapon: set up the loop of an encrypted swap
 * @source:  the swap partition or file of the fstab line (or command line)
 * @optstr:  its options; an encrypted swap has encryption= and loop=
 * @prog:    program name for messages
 * @passfd:  descriptor with the passphrase or key lines, or -1
 * @attach:  how the caller binds a loop device (swapon: util-linux's loop
 *           context)
 * @loopdev: set to the loop device to swap on
 * @len:     its size
 *
 * Sets the loop device up with the keys of the options: with phash=random
 * 65 fresh random keys, and then mkswap runs on it (a new swap area at
 * every swapon; spec §7).  A loop device already bound to @source is left
 * as it is.  Messages go to stderr.
 *
 * Return: 1 if @optstr has no encryption= (an ordinary swap), 0 with
 * @loopdev set, or a negative errno.
 */
int aesloop_swap_prepare(const char *source, const char *optstr,
			 const char *prog, int passfd, aesloop_attach_fn attach,
			 char *loopdev, size_t len)
{
	struct aesloop_opts o;
	struct keysetup ks;
	uint64_t data_offset = 0, lo_offset = 0, sizelimit = 0, loinit = 0;
	int rc, iv_free = 0;

	aesloop_opts_init(&o);
	rc = aesloop_opts_merge(&o, optstr ? optstr : "");
	if (rc < 0)
		goto out_opts;
	if (!o.encryption) {
		rc = 1;
		goto out_opts;
	}
	o.passfd = passfd;
	if (!o.loop) {
		fprintf(stderr, "%s: %s: an encrypted swap needs loop=/dev/loopN in its options\n",
			prog, source);
		rc = -EINVAL;
		goto out_opts;
	}
	snprintf(loopdev, len, "%s", o.loop);
	if ((o.offset && parse_number(aesloop_offset_number(o.offset, &iv_free), &data_offset)) ||
	    (o.sizelimit && parse_number(o.sizelimit, &sizelimit)) ||
	    (o.loinit && parse_number(o.loinit, &loinit)) ||
	    (iv_free && (!data_offset || data_offset > INT64_MAX))) {
		fprintf(stderr, "%s: %s: bad offset=, sizelimit= or loinit=\n", prog, source);
		rc = -EINVAL;
		goto out_opts;
	}
	lo_offset = iv_free ? (uint64_t)-(int64_t)data_offset : data_offset;

	rc = loop_bound_to(o.loop, source);
	if (rc == 1) {
		rc = 0;
		goto out_opts;
	}
	if (rc < 0) {
		fprintf(stderr, "%s: %s: %s is in use for another file\n", prog,
			source, o.loop);
		goto out_opts;
	}
	if (mlockall(MCL_CURRENT | MCL_FUTURE) && geteuid() == 0) {
		fprintf(stderr, "%s: cannot lock memory to keep the keys out of swap: %s\n",
			prog, strerror(errno));
		rc = -errno;
		goto out_opts;
	}
	rc = aesloop_get_keys(&ks, &o, prog, source, data_offset);
	if (rc) {
		fprintf(stderr, "%s: %s: %s\n", prog, source, ks.errmsg);
		goto out_keys;
	}
	rc = attach(o.loop, source, lo_offset, sizelimit, &ks, loinit);
	if (rc)
		goto out_keys;
	if (ks.hash == KEYSETUP_HASH_RANDOM && run_quiet("mkswap", o.loop)) {
		int fd = open(o.loop, O_RDONLY | O_CLOEXEC);

		fprintf(stderr, "%s: %s: mkswap failed on the new encrypted device %s\n",
			prog, source, o.loop);
		if (fd >= 0) {
			ioctl(fd, LOOP_CLR_FD, 0);
			close(fd);
		}
		rc = -EIO;
	}
out_keys:
	keysetup_wipe(&ks);
out_opts:
	aesloop_opts_free(&o);
	return rc;
}

/**
 * aesloop_detach_encrypted() - swapoff: detach an encrypted loop device
 * @dev: a device that was just swapped off
 *
 * Only a loop device with a loop-AES key is detached (which wipes the key
 * in the driver): the one aesloop_swap_prepare() set up.  If it is still
 * open elsewhere, aesloop_detach_notice() says so on stderr.
 *
 * Return: 1 if detached, 0 if @dev is not an encrypted loop, -errno.
 */
int aesloop_detach_encrypted(const char *dev)
{
	struct loop_info64 li;
	struct stat st;
	int fd, rc = 0;

	if (stat(dev, &st) || !S_ISBLK(st.st_mode) || major(st.st_rdev) != 7)
		return 0;
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, LOOP_GET_STATUS64, &li) == 0 && li.lo_encrypt_type) {
		rc = ioctl(fd, LOOP_CLR_FD, 0) == 0 ? 1 : -errno;
	}
	memzero_explicit(&li, sizeof(li));
	close(fd);
	if (rc == 1)
		aesloop_detach_notice(dev, 1, 0);
	return rc;
}

/**
 * aesloop_fstab_swap_loop() - swapoff SOURCE: the loop of its swap line
 * @fstab:   e.g. "/etc/fstab"
 * @source:  a swap partition or file; the line may name it by a tag
 *           (UUID=, PARTUUID=...), which libmount resolves
 * @loopdev: set to the loop= of the encrypted swap line of @source
 * @len:     its size
 *
 * Return: 1 if found, else 0.
 */
int aesloop_fstab_swap_loop(const char *fstab, const char *source,
			    char *loopdev, size_t len)
{
	char err[PATH_MAX + 64];
	struct libmnt_table *tb = read_fstab(fstab, err, sizeof(err));
	struct libmnt_cache *cache = mnt_new_cache();
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;
	int found = 0;

	while (tb && cache && it && !found && mnt_table_next_fs(tb, it, &fs) == 0) {
		struct aesloop_opts o;

		if (!mnt_fs_is_swaparea(fs))
			continue;
		aesloop_opts_init(&o);
		if (aesloop_opts_merge(&o, mnt_fs_get_options(fs)) > 0 && o.encryption &&
		    o.loop && mnt_fs_match_source(fs, source, cache)) {
			snprintf(loopdev, len, "%s", o.loop);
			found = 1;
		}
		aesloop_opts_free(&o);
	}
	mnt_free_iter(it);
	mnt_unref_cache(cache);
	mnt_unref_table(tb);
	return found;
}

/*
 * A detach that waits for other openers.  LOOP_CLR_FD on a device that is
 * open elsewhere (and not claimed by a mount, swap or device mapper, which
 * gives EBUSY) returns 0, as with the stock driver; aesloop then lets no
 * new opener in (open gives ENXIO), and the last close unbinds the device
 * and wipes its key.  The binding stays until then, seen in sysfs as a
 * size that is not 0 (aesloop takes the "loop" group away at once, so
 * that util-linux and systemd count the device as detached; the stock
 * driver keeps it).  losetup -d says so, and who holds the device.
 */

/* Whole disk and partitions: DISK_MAX_PARTS. */
#define MAX_DEVNOS	256

/**
 * aesloop_loop_keyed() - has a loop device a key?
 * @fd: the loop device, open; or negative
 *
 * Asked before a detach, for aesloop_detach_notice(): a detach deferred to
 * the last close keeps the key loaded until then.  The key bytes that
 * LOOP_GET_STATUS64 hands back (zeros from aesloop) are wiped.  errno is
 * left as it was.
 *
 * Return: 1 if lo_encrypt_type is not 0 (LO_CRYPT_NONE); 0 if it is, or if
 * the status cannot be read (an unbound device); -1 if @fd is negative
 * (not known).
 */
int aesloop_loop_keyed(int fd)
{
	struct loop_info64 li;
	int saved = errno, keyed;

	if (fd < 0)
		return -1;
	memset(&li, 0, sizeof(li));
	keyed = ioctl(fd, LOOP_GET_STATUS64, &li) == 0 && li.lo_encrypt_type;
	memzero_explicit(&li, sizeof(li));
	errno = saved;
	return keyed;
}

/* The "MAJ:MIN" in @dirfd/@name/dev (sysfs); 0, or -1. */
static int sysfs_devno(int dirfd, const char *name, dev_t *devno)
{
	char path[NAME_MAX + 8], buf[32];
	unsigned int maj, min;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/dev", name);
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%u:%u", &maj, &min) != 2)
		return -1;
	*devno = makedev(maj, min);
	return 0;
}

/* The device numbers of @sysdir's disk and its partitions; how many. */
static size_t disk_devnos(const char *sysdir, dev_t *devs, size_t max)
{
	struct dirent *de;
	size_t n = 0;
	int dfd;
	DIR *d;

	dfd = open(sysdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	if (sysfs_devno(dfd, ".", &devs[n]) == 0)
		n++;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return n;
	}
	/* A partition is a subdirectory with a "partition" attribute. */
	while (n < max && (de = readdir(d)) != NULL) {
		char path[NAME_MAX + 16];

		if (de->d_name[0] == '.' ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		snprintf(path, sizeof(path), "%s/partition", de->d_name);
		if (faccessat(dfd, path, F_OK, 0) == 0 &&
		    sysfs_devno(dfd, de->d_name, &devs[n]) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/*
 * Has process @pid (an entry of the /proc at @procfd) one of @devs open?
 * 1 yes, 0 no (or it is gone), -1 its descriptors cannot be read.
 */
static int holds_open(int procfd, const char *pid, const dev_t *devs,
		      size_t ndevs)
{
	char path[NAME_MAX + 8], target[PATH_MAX];
	struct dirent *de;
	int fdfd, found = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/fd", pid);
	fdfd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fdfd < 0)
		return errno == EACCES || errno == EPERM ? -1 : 0;
	d = fdopendir(fdfd);
	if (!d) {
		close(fdfd);
		return 0;
	}
	while (!found && (de = readdir(d)) != NULL) {
		struct stat st;
		ssize_t n;
		size_t i;

		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(fdfd, de->d_name, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		/*
		 * Only nodes under a dev directory are stat()ed: following a
		 * link to a file on a network file system can hang on a dead
		 * server.
		 */
		if (!strstr(target, "/dev/") ||
		    fstatat(fdfd, de->d_name, &st, 0) || !S_ISBLK(st.st_mode))
			continue;
		for (i = 0; i < ndevs; i++)
			if (st.st_rdev == devs[i])
				found = 1;
	}
	closedir(d);
	return found;
}

/* Add "comm[pid]" of the process found (op->nproc counts it already). */
static void list_opener(struct aesloop_openers *op, int procfd, const char *pid)
{
	char path[NAME_MAX + 8], comm[32] = "?";
	size_t used = strlen(op->list), i;
	ssize_t n;
	int fd;

	if (op->nproc > AESLOOP_OPENERS_LISTED) {
		if (op->nproc == AESLOOP_OPENERS_LISTED + 1)
			snprintf(op->list + used, sizeof(op->list) - used, ", ...");
		return;
	}
	snprintf(path, sizeof(path), "%s/comm", pid);
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (n > 0) {
			comm[n] = '\0';
			comm[strcspn(comm, "\n")] = '\0';
		}
	}
	/* A process names itself: no terminal control bytes from it. */
	for (i = 0; comm[i]; i++)
		if (comm[i] < 0x20 || comm[i] > 0x7e)
			comm[i] = '?';
	snprintf(op->list + used, sizeof(op->list) - used, "%s%.16s[%.12s]",
		 used ? ", " : "", comm, pid);
}

/**
 * aesloop_find_openers() - which processes hold a block device open
 * @proc:   the proc file system, "/proc" (tests give a tree of their own)
 * @sysdir: the device's sysfs directory, e.g. "/sys/dev/block/7:0": its
 *          "dev" and those of its partitions (subdirectories with a
 *          "partition" attribute) are the device numbers looked for
 * @op:     filled in
 *
 * Every /proc/PID/fd/N whose link names a node under a dev directory and
 * is a block device of those numbers counts; what the kernel holds (no
 * descriptor) and processes of other PID namespaces are not seen.  Like
 * fuser, this is a snapshot: openers may come (not on an aesloop device in
 * detach) and go meanwhile.
 *
 * Return: the number of processes found (@op->nproc), -ENODEV if @sysdir
 * has no "dev", or -errno if @proc cannot be read.
 */
int aesloop_find_openers(const char *proc, const char *sysdir,
			 struct aesloop_openers *op)
{
	dev_t devs[MAX_DEVNOS];
	struct dirent *de;
	size_t ndevs;
	int procfd;
	DIR *d;

	memset(op, 0, sizeof(*op));
	ndevs = disk_devnos(sysdir, devs, MAX_DEVNOS);
	if (!ndevs)
		return -ENODEV;
	procfd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return -errno;
	d = fdopendir(procfd);
	if (!d) {
		close(procfd);
		return -ENOMEM;
	}
	while ((de = readdir(d)) != NULL) {
		int rc;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    de->d_name[strspn(de->d_name, "0123456789")])
			continue;
		rc = holds_open(procfd, de->d_name, devs, ndevs);
		if (rc < 0) {
			op->unreadable++;
		} else if (rc) {
			op->nproc++;
			list_opener(op, procfd, de->d_name);
		}
	}
	closedir(d);
	return (int)op->nproc;
}

/**
 * aesloop_detach_message() - the notice of a detach deferred to the last close
 * @buf:     the message, without the program name and newline
 * @len:     its size
 * @dev:     the loop device, e.g. "/dev/loop0"
 * @op:      its openers (aesloop_find_openers())
 * @keyed:   1: it has a key (aesloop_loop_keyed()), 0: none, -1: not known
 * @pending: 1 if the detach was asked for before (the device let this
 *           program not open it), 0 if this program's LOOP_CLR_FD did it
 *
 * "DEV: still open by 2 processes (udevd[312], cat[4021]); it is detached
 * at the last close, and its key stays loaded until then".  "at least N"
 * when some processes could not be inspected; "still open elsewhere (no
 * process visible here holds it)" when none was found; "detach already
 * asked for: " before it when @pending.
 *
 * Return: the length snprintf() gives.
 */
int aesloop_detach_message(char *buf, size_t len, const char *dev,
			   const struct aesloop_openers *op, int keyed,
			   int pending)
{
	char who[sizeof(op->list) + 64];

	if (op->nproc)
		snprintf(who, sizeof(who), "still open by %s%u process%s (%s)",
			 op->unreadable ? "at least " : "", op->nproc,
			 op->nproc == 1 ? "" : "es", op->list);
	else
		snprintf(who, sizeof(who),
			 "still open elsewhere (no process visible here holds it)");
	return snprintf(buf, len, "%s: %s%s; it is detached at the last close%s",
			dev, pending ? "detach already asked for: " : "", who,
			keyed > 0 ? ", and its key stays loaded until then" :
			keyed < 0 ? ", and its key (if it has one) stays loaded until then" :
			"");
}

/*
 * Is the device of @sysdir still bound?  It has a "loop" group (the stock
 * driver until the unbind), or a size (aesloop keeps the capacity until the
 * unbind, which sets it to 0).  A bound empty file is not seen.
 */
static int loop_bound(const char *sysdir)
{
	char path[64], buf[32];
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/loop", sysdir);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 1;
	snprintf(path, sizeof(path), "%s/size", sysdir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10) != 0;
}

/**
 * aesloop_detach_notice() - losetup -d: say so if the device stays bound
 * @dev:     the loop device, e.g. "/dev/loop0"
 * @keyed:   as aesloop_detach_message() takes it
 * @pending: 0 after this program's LOOP_CLR_FD succeeded and it closed its
 *           own descriptor of @dev; 1 when opening @dev failed with ENXIO,
 *           which a bound aesloop device gives once a detach was asked for
 *
 * If @dev is still bound (sysfs: its "loop" group, or a size that is not
 * 0), its openers are looked for and one line
 * goes to stderr, "PROG: " and aesloop_detach_message(); nothing is said
 * when the last opener closed it meanwhile.  The exit status of a detach
 * is not changed by it: LOOP_CLR_FD succeeded, and scripts and systemd
 * rely on that.  errno is left as it was.
 *
 * Return: 1 if @dev was bound when looked at (with @pending: the detach is
 * under way, or was completed meanwhile), else 0.
 */
int aesloop_detach_notice(const char *dev, int keyed, int pending)
{
	struct aesloop_openers op;
	char sysdir[48], msg[PATH_MAX + sizeof(op.list) + 256];
	int saved = errno;
	struct stat st;

	if (stat(dev, &st) || !S_ISBLK(st.st_mode))
		goto out_unbound;
	snprintf(sysdir, sizeof(sysdir), "/sys/dev/block/%u:%u",
		 major(st.st_rdev), minor(st.st_rdev));
	if (!loop_bound(sysdir))
		goto out_unbound;
	aesloop_find_openers("/proc", sysdir, &op);
	/* Its last opener may have closed it while we looked. */
	if (loop_bound(sysdir)) {
		aesloop_detach_message(msg, sizeof(msg), dev, &op, keyed, pending);
		fprintf(stderr, "%s: %s\n", program_invocation_short_name, msg);
	}
	errno = saved;
	return 1;
out_unbound:
	errno = saved;
	return 0;
}
