// SPDX-License-Identifier: GPL-2.0
/*
 * losetup.c - losetup's loop-AES command line (doc/format.md §7): its options, the
 * checks of what goes with what, its help, and -R.  The util-linux series'
 * patches put AESLOOP_LOSETUP_LONGOPTS in losetup's option table, hand
 * each option to aesloop_losetup_option() first, and call the rest.
 */
#define _GNU_SOURCE		/* program_invocation_short_name */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mount.h>		/* BLKGETSIZE64 */
#include <unistd.h>

#include "aesloop-losetup.h"

/**
 * aesloop_losetup_init() - before getopt: nothing set, and what -P means
 * @lo:          filled in
 * @argc:        as main() got it
 * @argv:        as main() got it
 * @ul_with_arg: util-linux's own short options that take an argument (its
 *               losetup's, e.g. "bcdjoO"): the look-ahead skips their
 *               arguments
 *
 * loop-AES's -P is the key file, util-linux's -P is --partscan: -P takes a
 * file when the command sets up encryption (-e, -F, --encryption,
 * --fstab), which is looked for before getopt_long() reorders anything.
 */
void aesloop_losetup_init(struct aesloop_losetup *lo, int argc,
			  char *const argv[], const char *ul_with_arg)
{
	static const char *const setup_long[] = { "encryption", "fstab", NULL };
	char with_arg[64];

	memset(lo, 0, sizeof(*lo));
	aesloop_opts_init(&lo->o);
	snprintf(with_arg, sizeof(with_arg), "%seHSCIKGps", ul_with_arg);
	lo->keyfile_P = aesloop_argv_has(argc, argv, with_arg, "eF", setup_long);
}

/* -p NUM: a descriptor number, decimal. */
static int parse_fd(const char *s, int *fd)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v > INT_MAX)
		return -EINVAL;
	*fd = (int)v;
	return 0;
}

/**
 * aesloop_losetup_option() - take one option getopt_long() gave, if ours
 * @lo:  the options so far
 * @c:   getopt_long()'s value
 * @arg: its optarg
 *
 * The loop-AES options of AESLOOP_LOSETUP_LONGOPTS, and -P FILE when
 * @lo->keyfile_P.  The strings are kept as pointers into argv.
 * AESLOOP_OPT_PARTSCAN is util-linux's --partscan: not taken here.
 *
 * Return: 1 if taken, 0 if @c is not a loop-AES option, -EINVAL for a -p
 * that is not a descriptor number.
 */
int aesloop_losetup_option(struct aesloop_losetup *lo, int c, const char *arg)
{
	struct aesloop_opts *o = &lo->o;

	switch (c) {
	case 'e':
		o->encryption = arg;
		break;
	case 'C':
		o->itercountk = arg;
		break;
	case 'H':
		o->phash = arg;
		break;
	case 'p':
		return parse_fd(arg, &o->passfd) ? -EINVAL : 1;
	case 'S':
		o->pseed = arg;
		break;
	case 'P':
		if (!lo->keyfile_P)
			return 0;
		/* fall through */
	case AESLOOP_OPT_CLEARTEXTKEY:
		o->cleartextkey = arg;
		break;
	case 'K':
		o->gpgkey = arg;
		break;
	case 'G':
		o->gpghome = arg;
		break;
	case 'I':
		o->loinit = arg;
		break;
	case 'T':
		o->ask_twice = 1;
		break;
	case 'F':
		lo->fstab = 1;
		break;
	case 'R':
		lo->recompute = 1;
		break;
	default:
		return 0;
	}
	return 1;
}

/**
 * aesloop_losetup_check() - do the loop-AES options go together?
 * @lo:        the options, after getopt (and -F's fstab line)
 * @setup:     1 if the command sets a loop device up
 * @read_only: 1 with -r
 *
 * Return: NULL, or what is wrong, for the caller to print and exit with:
 * --encryption or --loinit outside a set-up, a key option without
 * --encryption, phash=random (a new volume) read-only.
 */
const char *aesloop_losetup_check(const struct aesloop_losetup *lo, int setup,
				  int read_only)
{
	const struct aesloop_opts *o = &lo->o;

	if (!setup && (o->encryption || o->loinit))
		return "the options --{encryption,loinit} are allowed during loop device setup only";
	if (!o->encryption &&
	    (o->passfd >= 0 || o->phash || o->pseed || o->itercountk ||
	     o->gpgkey || o->gpghome || o->cleartextkey || o->ask_twice))
		return "the options --{pass-fd,phash,pseed,itercountk,gpgkey,gpghome,cleartextkey,ask-twice} require --encryption";
	if (o->encryption && read_only && o->phash &&
	    !strncasecmp(o->phash, "random", 6))
		return "phash=random makes a new volume: not with --read-only";
	return NULL;
}

/**
 * aesloop_losetup_keys() - losetup -e: the keys, before any loop device is touched
 * @ks:          as aesloop_get_keys() takes it: to be wiped by the caller
 *               with keysetup_wipe() on every path (an atexit handler)
 * @o:           the options
 * @file:        the backing file, or NULL
 * @data_offset: where its data starts, bytes
 * @verbose:     -v: the mode and key size on standard output
 *
 * Memory is locked first (mlockall(), present and future), so that no key
 * goes to swap: as root a failure ends the setup, other users (who may
 * lack the limit) are warned.  A bad cipher name, passphrase or key file
 * then leaves nothing attached.  Messages go to stderr, "PROG: ...".
 *
 * Return: 0, or -1 with what went wrong said.
 */
int aesloop_losetup_keys(struct keysetup *ks, const struct aesloop_opts *o,
			 const char *file, uint64_t data_offset, int verbose)
{
	const char *prog = program_invocation_short_name;

	if (keysetup_lock_memory(prog))
		return -1;
	if (aesloop_get_keys(ks, o, prog, file, data_offset)) {
		fprintf(stderr, "%s: %s\n", prog, ks->errmsg);
		return -1;
	}
	if (verbose)
		printf("%s: %s, %u-bit keys\n", prog, keysetup_mode_name(ks),
		       ks->key_len * 8);
	return 0;
}

/**
 * aesloop_losetup_usage() - the loop-AES part of losetup --help
 * @out: where util-linux's usage() writes
 *
 * A blank line, a heading and the options, in the columns of util-linux's
 * own help.
 */
void aesloop_losetup_usage(FILE *out)
{
	fputs("\nloop-AES encryption (set-up):\n"
	      " -e, --encryption <name>       AES128, AES192 or AES256 (AES is AES128)\n"
	      " -p, --pass-fd <num>           read the passphrase or key lines from fd <num>\n"
	      " -P <file>, --cleartextkey <file>\n"
	      "                               read them from <file> (1 line: a passphrase,\n"
	      "                               64 lines: multi-key-v2, 65: multi-key-v3);\n"
	      "                               -P takes <file> only with -e or -F, else it\n"
	      "                               is --partscan\n"
	      " -K, --gpgkey <file>           the key lines are in gpg-encrypted <file>;\n"
	      "                               the passphrase read unlocks it\n"
	      " -G, --gpghome <dir>           home directory for gpg\n"
	      " -H, --phash <name>            passphrase hash: sha256, sha384, sha512, rmd160,\n"
	      "                               unhashed1, unhashed2 (default by key size), or\n"
	      "                               random: 65 new random keys (destroys the data)\n"
	      " -S, --pseed <string>          seed appended to the passphrase\n"
	      " -C, --itercountk <num>        iterate the key <num> thousand times\n"
	      " -T, --ask-twice               ask for the passphrase twice\n"
	      " -I, --loinit <num>            lo_init[0] value for the cipher\n"
	      " -s, --sizelimit <num>         as --sizelimit\n"
	      " -o, --offset @<num>           start at <num>, not counted in the IV sector\n"
	      " -F, --fstab                   take the options (and file) from the /etc/fstab\n"
	      "                               line with loop=<loopdev>\n"
	      " -R, --recompute-size <loopdev> recompute the size of the device\n", out);
}

/**
 * aesloop_recompute_size() - losetup -R: the size from the backing file again
 * @fd:      the loop device, open
 * @dev:     its name, for -v's lines
 * @verbose: print the sizes before and after (bytes), as loop-AES does
 *
 * LOOP_RECOMPUTE_DEV_SIZE, for a backing file or device that grew or
 * shrank.
 *
 * Return: 0, or -errno of the ioctl.
 */
int aesloop_recompute_size(int fd, const char *dev, int verbose)
{
	unsigned long long before = 0, after = 0;

	if (verbose)
		ioctl(fd, BLKGETSIZE64, &before);
	if (ioctl(fd, KEYSETUP_LOOP_RECOMPUTE_DEV_SIZE, 0) < 0)
		return -errno;
	if (verbose && ioctl(fd, BLKGETSIZE64, &after) == 0)
		printf("%s: old size %llu bytes\n%s: new size %llu bytes\n",
		       dev, before, dev, after);
	return 0;
}
