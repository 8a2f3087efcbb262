/* SPDX-License-Identifier: GPL-2.0 */
/*
 * aesloop-losetup.h - losetup's loop-AES command line (losetup.c of
 * libaesloop): the options and their help, the same for every util-linux
 * series, so that a series' patch holds only the hooks into its own
 * losetup.c.
 */
#ifndef AESLOOP_LOSETUP_H
#define AESLOOP_LOSETUP_H

#include <stdint.h>
#include <stdio.h>

#include "libaesloop.h"

/*
 * getopt_long() values of the long-only options: above util-linux's own
 * (an enum from CHAR_MAX + 1, a few dozen at most).
 */
#define AESLOOP_OPT_CLEARTEXTKEY	0x10000
#define AESLOOP_OPT_PARTSCAN		0x10001

/*
 * The loop-AES entries of losetup's struct option table, put before
 * util-linux's own: "partscan" here is found first, so that --partscan
 * keeps its meaning when -P is loop-AES's key file.
 */
#define AESLOOP_LOSETUP_LONGOPTS \
	{ "encryption",     required_argument, NULL, 'e' }, \
	{ "itercountk",     required_argument, NULL, 'C' }, \
	{ "pass-fd",        required_argument, NULL, 'p' }, \
	{ "phash",          required_argument, NULL, 'H' }, \
	{ "pseed",          required_argument, NULL, 'S' }, \
	{ "cleartextkey",   required_argument, NULL, AESLOOP_OPT_CLEARTEXTKEY }, \
	{ "gpgkey",         required_argument, NULL, 'K' }, \
	{ "gpghome",        required_argument, NULL, 'G' }, \
	{ "loinit",         required_argument, NULL, 'I' }, \
	{ "ask-twice",      no_argument,       NULL, 'T' }, \
	{ "fstab",          no_argument,       NULL, 'F' }, \
	{ "recompute-size", no_argument,       NULL, 'R' }, \
	{ "partscan",       no_argument,       NULL, AESLOOP_OPT_PARTSCAN }

/* The short options of AESLOOP_LOSETUP_LONGOPTS, in getopt's spelling. */
#define AESLOOP_LOSETUP_SHORTOPTS	"C:e:FG:H:I:K:p:RS:T"

/**
 * struct aesloop_losetup - what losetup's loop-AES options said
 * @o:         the option set (-e, -p, -P FILE, -H, -S, -C, -K, -G, -I, -T;
 *             -o and -s are util-linux's own, which the hooks copy in)
 * @keyfile_P: -P is --cleartextkey FILE: the command line sets up
 *             encryption (-e or -F); else it is --partscan
 * @fstab:     -F: the rest from the fstab line with loop=DEV
 * @recompute: -R: LOOP_RECOMPUTE_DEV_SIZE
 */
struct aesloop_losetup {
	struct aesloop_opts o;
	int keyfile_P;
	int fstab;
	int recompute;
};

void aesloop_losetup_init(struct aesloop_losetup *lo, int argc,
			  char *const argv[], const char *ul_with_arg);
int aesloop_losetup_option(struct aesloop_losetup *lo, int c, const char *arg);
const char *aesloop_losetup_check(const struct aesloop_losetup *lo, int setup,
				  int read_only);
int aesloop_losetup_keys(struct keysetup *ks, const struct aesloop_opts *o,
			 const char *file, uint64_t data_offset, int verbose);
void aesloop_losetup_usage(FILE *out);
int aesloop_recompute_size(int fd, const char *dev, int verbose);

#endif /* AESLOOP_LOSETUP_H */
