/* SPDX-License-Identifier: GPL-2.0 */
/*
 * keysetup-internal.h - what the files of the key setup (keysetup.c and
 * keysetup-*.c) share and nobody else: the error message and warnings, the
 * stored lines and their reader, the cipher name, gpg.  The ks_ prefix
 * marks these; keysetup.h is the interface for the programs.
 */
#ifndef AESLOOP_KEYSETUP_INTERNAL_H
#define AESLOOP_KEYSETUP_INTERNAL_H

#include "aes_types.h"		/* u8, memzero_explicit() */
#include "keysetup.h"

/* keysetup.c */
void ks_error(struct keysetup *ks, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ks_warn(const struct keysetup *ks, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ks_drop_lines(struct keysetup *ks);

/* keysetup-options.c */
void ks_set_cipher_name(struct keysetup *ks);

/* keysetup-read.c */
int ks_read_line(int fd, char **out, size_t *len, int *terminated);
int ks_read_lines(struct keysetup *ks, int fd, const char *what,
		  unsigned int max);

/* keysetup-gpg.c */
int ks_gpg_decrypt(struct keysetup *ks);

#endif /* AESLOOP_KEYSETUP_INTERNAL_H */
