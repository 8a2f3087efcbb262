// SPDX-License-Identifier: GPL-2.0
/*
 * options.c - the loop-AES option set of one loop set-up
 * (doc/format.md §4, §7), whatever it comes from: the
 * command line, a mount option string, an fstab line.  The key setup's own
 * choices (cipher, hash, seed) are parsed by keysetup-options.c.
 */
#define _GNU_SOURCE		/* strndup */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libmount.h>

#include "libaesloop.h"

/* The loop-AES mount options (doc/format.md §7), and where each one goes. */
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
 * Return: 1 for the options of doc/format.md §7 (loop, offset, sizelimit,
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


/**
 * aesloop_offset_number() - split an offset into '@' and the number
 * @s:       "N" or "@N" (doc/format.md §4), leading blanks allowed
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
