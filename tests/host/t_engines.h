/* SPDX-License-Identifier: GPL-2.0 */
/*
 * t_engines.h - run a check on every engine of the CPU's own AES
 * instructions (aes/engines.h): a skip for each path the CPU lacks, a
 * failure for each whose self-test fails, the check for the others.
 */
#ifndef AESLOOP_T_ENGINES_H
#define AESLOOP_T_ENGINES_H

#include "engines.h"
#include "testutil.h"

static inline void t_each_arch_engine(const char *prefix,
				      void (*check)(const struct loop_aes_engine *e))
{
	const struct loop_aes_engine *e;
	unsigned int path;
	char name[96];

	for (path = 0; (e = aesloop_arch_engine(path)); path++) {
		const char *why = NULL;

		snprintf(name, sizeof(name), "%s-%s", prefix, e->name);
		if (!aesloop_arch_cpu_has(path, &why)) {
			t_skip(name, "this CPU or OS lacks %s", why);
			continue;
		}
		if (loop_aes_selftest(e)) {
			t_result(0, name, "self-test failed");
			continue;
		}
		check(e);
	}
}

#endif /* AESLOOP_T_ENGINES_H */
