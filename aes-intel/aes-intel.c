// SPDX-License-Identifier: GPL-2.0
/*
 * aes-intel.c - the x86 SIMD engines of aesloop (AES-NI, VAES, and SSSE3
 * for CPUs without AES-NI): CPU checks, FPU sections, self-tests and the
 * choice of a path.
 *
 * Each path is a struct loop_aes_engine (aes/loop_aes.h) whose operations
 * call the assembly of aesni.S, aes-ssse3.S and md5-mb.S.  In the kernel every call runs
 * inside kernel_fpu_begin()/kernel_fpu_end() sections of at most
 * AESLOOP_INTEL_FPU_BYTES (ssse3: AESLOOP_SSSE3_FPU_SECTORS), and falls back
 * to the generic C code when may_use_simd() says the FPU cannot be used in
 * this context (never in the driver's workers, which run in process
 * context; the C code's tables are not constant time).  The same
 * source builds into the userspace library, where the FPU is simply there.
 *
 *   path          CBC sectors side by side     multi-key IVs (MD5)
 *   ssse3         vector-permute AES, xmm: 4   scalar C (such CPUs have no
 *                 (no AES-NI; constant time)   AVX2)
 *   aesni         AES-NI, xmm: 8               AVX2, 16 sectors, if the CPU
 *                                              has AVX2, else scalar C
 *   vaes-avx2     VAES, ymm: 16                AVX2, 16 sectors
 *   vaes-avx512   VAES, zmm: 16 (32 with one   AVX-512, 32 sectors
 *                 key for all)
 */
#ifdef __KERNEL__
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt
#include <linux/kernel.h>
#include <linux/preempt.h>
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#include <asm/simd.h>
#else
#include <cpuid.h>
#endif

#include "aes-intel.h"

#ifdef __KERNEL__

/*
 * User-Mode Linux's kernel_fpu_begin() is empty: the kernel is a process of
 * the host, whose kernel saves the registers, and an interrupt is a host
 * signal whose frame holds them until the section goes on.  Preemption is
 * still kept off inside a section, as kernel_fpu_begin() does elsewhere, so
 * that nothing sleeps there on UML either.
 */
static bool simd_begin(void)
{
	if (!may_use_simd())
		return false;
	kernel_fpu_begin();
	if (IS_ENABLED(CONFIG_UML))
		preempt_disable();
	return true;
}

static void simd_end(void)
{
	if (IS_ENABLED(CONFIG_UML))
		preempt_enable();
	kernel_fpu_end();
}

#else /* userspace */

static bool simd_begin(void)
{
	return true;
}

static void simd_end(void)
{
}

#endif

/* ---------------------------------------------------------------------
 * CPU features.
 */

enum {
	HAS_AES		= 1 << 0,
	HAS_AVX		= 1 << 1,	/* AVX and the OS saves ymm state */
	HAS_AVX2	= 1 << 2,
	HAS_VAES	= 1 << 3,
	HAS_AVX512	= 1 << 4,	/* AVX512F and the OS saves zmm state */
	HAS_SSSE3	= 1 << 5,
};

/* XCR0 bits: SSE, AVX (upper ymm), and opmask, ZMM_Hi256, Hi16_ZMM. */
#define XCR0_YMM	0x06ULL
#define XCR0_ZMM	0xe6ULL

static inline unsigned long long read_xcr0(void)
{
	unsigned int lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (unsigned long long)hi << 32 | lo;
}

#ifdef __KERNEL__

#ifdef CONFIG_UML
/*
 * User-Mode Linux: this kernel is a process of the host, and the host saves
 * the registers its XCR0 names.  UML takes its CPU features from the names
 * in the host's /proc/cpuinfo, where OSXSAVE has none: CPUID says it.
 */
static bool os_saves(unsigned long long xcr0_bits)
{
	unsigned int a = 1, b, c = 0, d;

	asm volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	return (c & BIT(27)) && (read_xcr0() & xcr0_bits) == xcr0_bits;
}
#else
static bool os_saves(unsigned long long xcr0_bits)
{
	return cpu_has_xfeatures(xcr0_bits, NULL);
}
#endif

static unsigned int cpu_features(void)
{
	unsigned int f = 0;

	if (boot_cpu_has(X86_FEATURE_AES) && boot_cpu_has(X86_FEATURE_XMM2))
		f |= HAS_AES;
	if (boot_cpu_has(X86_FEATURE_SSSE3))
		f |= HAS_SSSE3;
	if (boot_cpu_has(X86_FEATURE_AVX) && os_saves(XCR0_YMM))
		f |= HAS_AVX;
	if ((f & HAS_AVX) && boot_cpu_has(X86_FEATURE_AVX2))
		f |= HAS_AVX2;
	if ((f & HAS_AVX) && boot_cpu_has(X86_FEATURE_VAES))
		f |= HAS_VAES;
	if ((f & HAS_AVX) && boot_cpu_has(X86_FEATURE_AVX512F) &&
	    os_saves(XCR0_ZMM))
		f |= HAS_AVX512;
	return f;
}

#else

static unsigned int cpu_features(void)
{
	static int cached = -1;	/* the same answer for every thread */
	unsigned int a, b, c, d, f = 0;
	unsigned long long xcr0 = 0;

	if (cached >= 0)
		return (unsigned int)cached;
	if (__get_cpuid(1, &a, &b, &c, &d)) {
		if ((c & bit_AES) && (d & bit_SSE2))
			f |= HAS_AES;
		if (c & bit_SSSE3)
			f |= HAS_SSSE3;
		if (c & bit_OSXSAVE)
			xcr0 = read_xcr0();
		if ((c & bit_AVX) && (xcr0 & XCR0_YMM) == XCR0_YMM)
			f |= HAS_AVX;
	}
	if ((f & HAS_AVX) && __get_cpuid_count(7, 0, &a, &b, &c, &d)) {
		if (b & bit_AVX2)
			f |= HAS_AVX2;
		if (c & bit_VAES)
			f |= HAS_VAES;
		if ((b & bit_AVX512F) && (xcr0 & XCR0_ZMM) == XCR0_ZMM)
			f |= HAS_AVX512;
	}
	cached = (int)f;
	return f;
}

#endif

/* engines.h: a path's features, and whether the OS saves their registers. */
bool aesloop_arch_cpu_has(unsigned int path, const char **why)
{
	unsigned int f = cpu_features(), need;
	const char *what;

	switch (path) {
	case AESLOOP_INTEL_SSSE3:
		need = HAS_SSSE3;
		what = "SSSE3";
		break;
	case AESLOOP_INTEL_AESNI:
		need = HAS_AES;
		what = "AES-NI";
		break;
	case AESLOOP_INTEL_VAES_AVX2:
		need = HAS_AES | HAS_AVX | HAS_AVX2 | HAS_VAES;
		what = "VAES and AVX2";
		break;
	case AESLOOP_INTEL_VAES_AVX512:
		need = HAS_AES | HAS_AVX | HAS_AVX2 | HAS_VAES | HAS_AVX512;
		what = "VAES and AVX-512 (with OS support for zmm state)";
		break;
	default:
		need = ~0U;
		what = "a known path";
		break;
	}
	if ((f & need) == need)
		return true;
	if (why)
		*why = what;
	return false;
}

/* ---------------------------------------------------------------------
 * The engine operations.  The helpers are always inlined with constant
 * function arguments, so every call into the assembly is a direct call.
 */

/* Sectors for the next FPU section, at most @max. */
static unsigned int fpu_chunk(unsigned int nsect, unsigned int max)
{
	return nsect < max ? nsect : max;
}

static void generic_cbc(bool enc, const struct aes_key *const *keys,
			const u8 *ivs, u8 *dst, const u8 *src,
			unsigned int nsect)
{
	unsigned int i;

	for (i = 0; i < nsect; i++) {
		if (enc)
			aes_cbc_encrypt(keys[i], dst, src, LOOP_AES_SECTOR_SIZE, ivs);
		else
			aes_cbc_decrypt(keys[i], dst, src, LOOP_AES_SECTOR_SIZE, ivs);
		src += LOOP_AES_SECTOR_SIZE;
		dst += LOOP_AES_SECTOR_SIZE;
		ivs += AES_BLOCK_LEN;
	}
}

static __always_inline void
intel_encrypt(loop_aes_cbc_fn *enc, loop_aes_cbc1_fn *enc1,
	      const struct aes_key *const *keys, const u8 *ivs, u8 *dst,
	      const u8 *src, unsigned int nsect)
{
	while (nsect) {
		unsigned int n = fpu_chunk(nsect, AESLOOP_INTEL_FPU_SECTORS);
		bool one = loop_aes_one_key(keys, n);

		if (!simd_begin()) {
			generic_cbc(true, keys, ivs, dst, src, nsect);
			return;
		}
		if (one)
			enc1(keys[0], ivs, dst, src, n);
		else
			enc(keys, ivs, dst, src, n);
		simd_end();
		keys += n;
		ivs += n * AES_BLOCK_LEN;
		dst += n * LOOP_AES_SECTOR_SIZE;
		src += n * LOOP_AES_SECTOR_SIZE;
		nsect -= n;
	}
}

static __always_inline void
intel_encrypt_gather(loop_aes_cbc_gather_fn *enc1g, unsigned int max,
		     const struct aes_key *key, const u8 *ivs, u8 *dst,
		     const u8 *const *srcs, unsigned int nsect)
{
	while (nsect) {
		unsigned int n = fpu_chunk(nsect, max);

		if (!simd_begin()) {
			loop_aes_generic_engine.cbc_encrypt_gather(key, ivs, dst,
								   srcs, nsect);
			return;
		}
		enc1g(key, ivs, dst, srcs, n);
		simd_end();
		ivs += n * AES_BLOCK_LEN;
		dst += n * LOOP_AES_SECTOR_SIZE;
		srcs += n;
		nsect -= n;
	}
}

static __always_inline void
intel_decrypt(loop_aes_cbc_fn *dec, unsigned int max,
	      const struct aes_key *const *keys, const u8 *ivs, u8 *dst,
	      const u8 *src, unsigned int nsect)
{
	while (nsect) {
		unsigned int n = fpu_chunk(nsect, max);

		if (!simd_begin()) {
			generic_cbc(false, keys, ivs, dst, src, nsect);
			return;
		}
		dec(keys, ivs, dst, src, n);
		simd_end();
		keys += n;
		ivs += n * AES_BLOCK_LEN;
		dst += n * LOOP_AES_SECTOR_SIZE;
		src += n * LOOP_AES_SECTOR_SIZE;
		nsect -= n;
	}
}

static __always_inline void
intel_ivs(loop_aes_ivs_fn *md5, const u32 seed[4], const u8 *data,
	  u64 sector, u8 *ivs, unsigned int nsect)
{
	while (nsect) {
		unsigned int n = fpu_chunk(nsect, AESLOOP_INTEL_FPU_SECTORS);

		if (!simd_begin()) {
			loop_aes_multi_ivs(seed, data, sector, ivs, nsect);
			return;
		}
		md5(seed, data, sector, ivs, n);
		simd_end();
		data += n * LOOP_AES_SECTOR_SIZE;
		ivs += n * AES_BLOCK_LEN;
		sector += n;
		nsect -= n;
	}
}

/*
 * SSSE3.  The assembly takes a source pointer per sector (so that one
 * entry point serves both encryptions) and a key pointer per sector: the
 * arrays are made here per FPU section, AESLOOP_SSSE3_FPU_SECTORS each.
 */

static void ssse3_encrypt(const struct aes_key *const *keys, const u8 *ivs,
			  u8 *dst, const u8 *src, unsigned int nsect)
{
	const u8 *srcs[AESLOOP_SSSE3_FPU_SECTORS];

	while (nsect) {
		unsigned int n = fpu_chunk(nsect, AESLOOP_SSSE3_FPU_SECTORS);
		unsigned int i;

		for (i = 0; i < n; i++)
			srcs[i] = src + i * LOOP_AES_SECTOR_SIZE;
		if (!simd_begin()) {
			generic_cbc(true, keys, ivs, dst, src, nsect);
			return;
		}
		aesloop_cbc_enc_ssse3(keys, ivs, dst, srcs, n);
		simd_end();
		keys += n;
		ivs += n * AES_BLOCK_LEN;
		dst += n * LOOP_AES_SECTOR_SIZE;
		src += n * LOOP_AES_SECTOR_SIZE;
		nsect -= n;
	}
}

/* One key for every sector, as aesloop_cbc_enc1g_<isa>() takes it. */
static void ssse3_enc1g(const struct aes_key *key, const u8 *ivs, u8 *dst,
			const u8 *const *srcs, unsigned int nsect)
{
	const struct aes_key *keys[AESLOOP_SSSE3_FPU_SECTORS];
	unsigned int i;

	for (i = 0; i < nsect; i++)
		keys[i] = key;
	aesloop_cbc_enc_ssse3(keys, ivs, dst, srcs, nsect);
}

static void ssse3_encrypt_gather(const struct aes_key *key, const u8 *ivs,
				 u8 *dst, const u8 *const *srcs,
				 unsigned int nsect)
{
	intel_encrypt_gather(ssse3_enc1g, AESLOOP_SSSE3_FPU_SECTORS, key, ivs,
			     dst, srcs, nsect);
}

static void ssse3_decrypt(const struct aes_key *const *keys, const u8 *ivs,
			  u8 *dst, const u8 *src, unsigned int nsect)
{
	intel_decrypt(aesloop_cbc_dec_ssse3, AESLOOP_SSSE3_FPU_SECTORS,
		      keys, ivs, dst, src, nsect);
}

/*
 * AES-NI and VAES: one set of CBC entry points each (aes-intel.h), called in
 * FPU sections of AESLOOP_INTEL_FPU_SECTORS sectors.
 */
#define INTEL_CBC_OPS(isa)						\
static void isa##_encrypt(const struct aes_key *const *keys,		\
			  const u8 *ivs, u8 *dst, const u8 *src,	\
			  unsigned int nsect)				\
{									\
	intel_encrypt(aesloop_cbc_enc_##isa, aesloop_cbc_enc1_##isa,	\
		      keys, ivs, dst, src, nsect);			\
}									\
									\
static void isa##_encrypt_gather(const struct aes_key *key,		\
				 const u8 *ivs, u8 *dst,		\
				 const u8 *const *srcs,			\
				 unsigned int nsect)			\
{									\
	intel_encrypt_gather(aesloop_cbc_enc1g_##isa,			\
			     AESLOOP_INTEL_FPU_SECTORS, key, ivs, dst,	\
			     srcs, nsect);				\
}									\
									\
static void isa##_decrypt(const struct aes_key *const *keys,		\
			  const u8 *ivs, u8 *dst, const u8 *src,	\
			  unsigned int nsect)				\
{									\
	intel_decrypt(aesloop_cbc_dec_##isa, AESLOOP_INTEL_FPU_SECTORS,	\
		      keys, ivs, dst, src, nsect);			\
}

INTEL_CBC_OPS(aesni)
INTEL_CBC_OPS(vaes_avx2)
INTEL_CBC_OPS(vaes_avx512)

/* Multi-buffer MD5 needs AVX2, which some AES-NI CPUs lack. */
static void aesni_ivs(const u32 seed[4], const u8 *data, u64 sector,
		      u8 *ivs, unsigned int nsect)
{
	if (cpu_features() & HAS_AVX2)
		intel_ivs(aesloop_md5_iv_avx2, seed, data, sector, ivs, nsect);
	else
		loop_aes_multi_ivs(seed, data, sector, ivs, nsect);
}

static void vaes_avx2_ivs(const u32 seed[4], const u8 *data, u64 sector,
			  u8 *ivs, unsigned int nsect)
{
	intel_ivs(aesloop_md5_iv_avx2, seed, data, sector, ivs, nsect);
}

static void vaes_avx512_ivs(const u32 seed[4], const u8 *data, u64 sector,
			    u8 *ivs, unsigned int nsect)
{
	intel_ivs(aesloop_md5_iv_avx512, seed, data, sector, ivs, nsect);
}

static const struct loop_aes_engine intel_engines[AESLOOP_INTEL_NR_PATHS] = {
	[AESLOOP_INTEL_SSSE3] = {
		.name		= "ssse3",
		.cbc_encrypt	= ssse3_encrypt,
		.cbc_decrypt	= ssse3_decrypt,
		.cbc_encrypt_gather = ssse3_encrypt_gather,
		.multi_ivs	= loop_aes_multi_ivs,
	},
	[AESLOOP_INTEL_AESNI] = {
		.name		= "aesni",
		.cbc_encrypt	= aesni_encrypt,
		.cbc_decrypt	= aesni_decrypt,
		.cbc_encrypt_gather = aesni_encrypt_gather,
		.multi_ivs	= aesni_ivs,
	},
	[AESLOOP_INTEL_VAES_AVX2] = {
		.name		= "vaes-avx2",
		.cbc_encrypt	= vaes_avx2_encrypt,
		.cbc_decrypt	= vaes_avx2_decrypt,
		.cbc_encrypt_gather = vaes_avx2_encrypt_gather,
		.multi_ivs	= vaes_avx2_ivs,
	},
	[AESLOOP_INTEL_VAES_AVX512] = {
		.name		= "vaes-avx512",
		.cbc_encrypt	= vaes_avx512_encrypt,
		.cbc_decrypt	= vaes_avx512_decrypt,
		.cbc_encrypt_gather = vaes_avx512_encrypt_gather,
		.multi_ivs	= vaes_avx512_ivs,
	},
};

/* engines.h: the paths of enum aesloop_intel_path, slowest first. */
const struct loop_aes_engine *aesloop_arch_engine(unsigned int path)
{
	if (path >= AESLOOP_INTEL_NR_PATHS)
		return NULL;
	return &intel_engines[path];
}
