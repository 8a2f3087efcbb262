/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libaesloop-internal.h - what the files of libaesloop share that the
 * util-linux hooks do not call.
 */
#ifndef LIBAESLOOP_INTERNAL_H
#define LIBAESLOOP_INTERNAL_H

int aesloop_same_file(const char *a, const char *b);

#endif /* LIBAESLOOP_INTERNAL_H */
