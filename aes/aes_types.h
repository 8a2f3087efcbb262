/* SPDX-License-Identifier: GPL-2.0 */
/*
 * aes_types.h - the few definitions aes/ needs from its host environment.
 *
 * The code in aes/ is built twice from the same source: into loop.ko and into
 * the userspace library used by tests, tools and benchmarks.  This header is
 * the only place that knows the difference.
 */
#ifndef AESLOOP_AES_TYPES_H
#define AESLOOP_AES_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/errno.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <errno.h>

typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;	/* int is 32 bits on every Linux ABI */

/*
 * As the kernel's: a memset the compiler may not drop as a dead store.  The
 * one wipe of userland: lib/ and tools/ wipe their secrets with it too.
 */
static inline void memzero_explicit(void *s, size_t count)
{
	memset(s, 0, count);
	__asm__ __volatile__("" : : "r"(s) : "memory");
}
#endif

/* Byte order helpers: the on-disk format is little-endian on every host. */
static inline u32 aes_get_le32(const u8 *p)
{
	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

static inline void aes_put_le32(u8 *p, u32 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
	p[2] = (u8)(v >> 16);
	p[3] = (u8)(v >> 24);
}

#endif /* AESLOOP_AES_TYPES_H */
