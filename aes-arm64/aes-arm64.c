// SPDX-License-Identifier: GPL-2.0
/*
 * aes-arm64.c - the arm64 engine of aesloop: the ARMv8 Crypto Extensions
 * (aes-ce.S) under struct loop_aes_engine (aes/loop_aes.h), the CPU check
 * and the NEON sections.
 *
 * In the kernel every call into the assembly runs inside a
 * kernel_neon_begin()/kernel_neon_end() section of at most
 * AESLOOP_ARM64_NEON_BYTES, and falls back to the generic C code when
 * may_use_simd() says NEON cannot be used in this context.  The same
 * source builds into the userspace library, where NEON is simply there.
 *
 * The multi-key IVs are the generic C MD5: a NEON MD5 of 4 sectors per
 * register has no rotate instruction (two or three per rotate) and would
 * gain perhaps a factor of 1.5 to 2 on multi-key volumes only; not yet.
 */
#ifdef __KERNEL__
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt
#include <linux/kernel.h>
#include <linux/string.h>
#include <asm/cpufeature.h>
#include <asm/neon.h>
#include <asm/simd.h>
#else
#include <assert.h>
#include <sys/auxv.h>
#endif

#include "aes-arm64.h"

#ifdef __KERNEL__

/*
 * struct neon_section - what a kernel-mode NEON section needs.  From 6.19
 * (AESLOOP_NEON_STATE_ARG, probed in loop/Kbuild) kernel_neon_begin() takes
 * a buffer, on the caller's stack, where the task's kernel-mode NEON
 * registers (the round keys) are kept while it is scheduled out inside the
 * section, or while a softirq's section runs; it is wiped after
 * kernel_neon_end().  Before 6.8 a section ran with preemption off; from
 * 6.8 to 6.18 it is preemptible and the kernel keeps the registers in the
 * task_struct (thread.kernel_fpsimd_state), a copy of the round keys that
 * this code cannot wipe (the kernel's own arm64 crypto leaves the same).
 */
struct neon_section {
#ifdef AESLOOP_NEON_STATE_ARG
	struct user_fpsimd_state st;
#else
	int unused;
#endif
};

static bool simd_begin(struct neon_section *s)
{
	if (!may_use_simd())
		return false;
#ifdef AESLOOP_NEON_STATE_ARG
	kernel_neon_begin(&s->st);
#else
	kernel_neon_begin();
#endif
	return true;
}

static void simd_end(struct neon_section *s)
{
#ifdef AESLOOP_NEON_STATE_ARG
	kernel_neon_end(&s->st);
#else
	kernel_neon_end();
#endif
	memzero_explicit(s, sizeof(*s));
}

static bool cpu_has_ce(void)
{
	return cpu_has_neon() && cpu_have_named_feature(AES);
}

#else /* userspace */

#define __uninitialized

struct neon_section {
	int unused;
};

static bool simd_begin(struct neon_section *s)
{
	(void)s;
	return true;
}

static void simd_end(struct neon_section *s)
{
	(void)s;
}

static bool cpu_has_ce(void)
{
	return (getauxval(AT_HWCAP) & HWCAP_AES) != 0;
}

#endif

/* engines.h: the AES instructions, with the OS's NEON state handling. */
bool aesloop_arch_cpu_has(unsigned int path, const char **why)
{
	const char *what;

	switch (path) {
	case AESLOOP_ARM64_CE:
		if (cpu_has_ce())
			return true;
		what = "the ARMv8 Crypto Extensions' AES instructions";
		break;
	default:
		what = "a known path";
		break;
	}
	if (why)
		*why = what;
	return false;
}

/* ---------------------------------------------------------------------
 * The engine operations.
 */

/*
 * The engine is handed at most LOOP_AES_BATCH sectors a call (loop_aes.h),
 * which is one NEON section's budget: one section a call.
 */
static_assert(LOOP_AES_BATCH <= AESLOOP_ARM64_NEON_SECTORS,
	      "a batch fits in one NEON section");

static void ce_encrypt(const struct aes_key *const *keys, const u8 *ivs,
		       u8 *dst, const u8 *src, unsigned int nsect)
{
	struct neon_section s __uninitialized;

	if (!simd_begin(&s)) {
		loop_aes_generic_engine.cbc_encrypt(keys, ivs, dst, src, nsect);
		return;
	}
	if (loop_aes_one_key(keys, nsect))
		aesloop_cbc_enc1_ce(keys[0], ivs, dst, src, nsect);
	else
		aesloop_cbc_enc_ce(keys, ivs, dst, src, nsect);
	simd_end(&s);
}

static void ce_encrypt_gather(const struct aes_key *key, const u8 *ivs,
			      u8 *dst, const u8 *const *srcs,
			      unsigned int nsect)
{
	struct neon_section s __uninitialized;

	if (!simd_begin(&s)) {
		loop_aes_generic_engine.cbc_encrypt_gather(key, ivs, dst, srcs,
							   nsect);
		return;
	}
	aesloop_cbc_enc1g_ce(key, ivs, dst, srcs, nsect);
	simd_end(&s);
}

static void ce_decrypt(const struct aes_key *const *keys, const u8 *ivs,
		       u8 *dst, const u8 *src, unsigned int nsect)
{
	struct neon_section s __uninitialized;

	if (!simd_begin(&s)) {
		loop_aes_generic_engine.cbc_decrypt(keys, ivs, dst, src, nsect);
		return;
	}
	aesloop_cbc_dec_ce(keys, ivs, dst, src, nsect);
	simd_end(&s);
}

static const struct loop_aes_engine arm64_engines[AESLOOP_ARM64_NR_PATHS] = {
	[AESLOOP_ARM64_CE] = {
		.name		= "arm64-ce",
		.cbc_encrypt	= ce_encrypt,
		.cbc_decrypt	= ce_decrypt,
		.cbc_encrypt_gather = ce_encrypt_gather,
		.multi_ivs	= loop_aes_multi_ivs,
	},
};

/* engines.h: the paths of enum aesloop_arm64_path, slowest first. */
const struct loop_aes_engine *aesloop_arch_engine(unsigned int path)
{
	if (path >= AESLOOP_ARM64_NR_PATHS)
		return NULL;
	return &arm64_engines[path];
}
