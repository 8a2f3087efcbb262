/* SPDX-License-Identifier: GPL-2.0 */
/*
 * engines.h - the engines of the CPU's own AES instructions, and the choice
 * of one at start-up.
 *
 * Each architecture with such engines (aes-intel/ on x86_64, aes-arm64/ on
 * arm64) builds with AESLOOP_ARCH_AES and provides aesloop_arch_engine()
 * and aesloop_arch_cpu_has() for its paths, numbered slowest first.
 * engines.c, the same on every architecture, checks an engine against
 * known answers and the generic code, and picks the fastest that passes.
 * Without AESLOOP_ARCH_AES there is no path and the generic engine stays.
 */
#ifndef AESLOOP_ENGINES_H
#define AESLOOP_ENGINES_H

#include "loop_aes.h"

#ifndef __KERNEL__
#include <stdbool.h>
#endif

#ifdef AESLOOP_ARCH_AES
/**
 * aesloop_arch_engine() - the engine of one path of this architecture
 * @path: 0 for the slowest, up to the last path
 *
 * The engine may only run where aesloop_arch_cpu_has(@path) is true, and
 * should handle data only after loop_aes_selftest() passed.
 *
 * Return: the engine, or NULL past the last path (or without
 * AESLOOP_ARCH_AES).
 */
const struct loop_aes_engine *aesloop_arch_engine(unsigned int path);

/**
 * aesloop_arch_cpu_has() - whether this CPU and OS can run a path
 * @path: as for aesloop_arch_engine()
 * @why:  if not NULL and the answer is no, set to the missing feature
 *
 * Return: true if every instruction the path uses is there and the OS saves
 * the registers it uses.
 */
bool aesloop_arch_cpu_has(unsigned int path, const char **why);
#else
static inline const struct loop_aes_engine *
aesloop_arch_engine(unsigned int path)
{
	(void)path;
	return NULL;
}

static inline bool aesloop_arch_cpu_has(unsigned int path, const char **why)
{
	(void)path;
	if (why)
		*why = "AES code of its own (built without it)";
	return false;
}
#endif

int loop_aes_selftest(const struct loop_aes_engine *engine);
const struct loop_aes_engine *loop_aes_probe(const char **rejected);

#endif /* AESLOOP_ENGINES_H */
