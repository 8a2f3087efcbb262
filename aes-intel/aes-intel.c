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
#include <linux/slab.h>
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#include <asm/simd.h>
#else
#include <assert.h>
#include <cpuid.h>
#include <stdlib.h>
#endif

#include "aes-intel.h"
#include "asm-offsets.h"

/* The assembly reads struct aes_key at these offsets (asm-offsets.h). */
static_assert(offsetof(struct aes_key, enc) == AES_KEY_ENC, "aes_key.enc");
static_assert(offsetof(struct aes_key, dec) == AES_KEY_DEC, "aes_key.dec");
static_assert(offsetof(struct aes_key, rounds) == AES_KEY_ROUNDS,
	      "aes_key.rounds");
static_assert(sizeof(((struct aes_key *)0)->enc) == 15 * AES_BLOCK_LEN,
	      "aes_key.enc holds 15 round keys");
static_assert(LOOP_AES_SECTOR_SIZE == SECTOR_SIZE, "sector size");

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

static void *selftest_alloc(size_t len)
{
	return kmalloc(len, GFP_KERNEL);
}

static void selftest_free(void *p)
{
	kfree(p);
}

#else /* userspace */

static bool simd_begin(void)
{
	return true;
}

static void simd_end(void)
{
}

static void *selftest_alloc(size_t len)
{
	return malloc(len);
}

static void selftest_free(void *p)
{
	free(p);
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

/**
 * aesloop_intel_cpu_has() - whether this CPU and OS can run a path
 * @path: the path
 * @why:  if not NULL and the answer is no, set to the missing feature
 *
 * Return: true if every instruction set the path uses is there and the OS
 * saves the registers it uses.
 */
bool aesloop_intel_cpu_has(enum aesloop_intel_path path, const char **why)
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

typedef void cbc_fn(const struct aes_key *const *keys, const u8 *ivs,
		    u8 *dst, const u8 *src, unsigned int nsect);
typedef void cbc1_fn(const struct aes_key *key, const u8 *ivs, u8 *dst,
		     const u8 *src, unsigned int nsect);
typedef void cbc1g_fn(const struct aes_key *key, const u8 *ivs, u8 *dst,
		      const u8 *const *srcs, unsigned int nsect);
typedef void md5_fn(const u32 seed[4], const u8 *data, u64 sector, u8 *ivs,
		    unsigned int nsect);

/* Sectors for the next FPU section, at most @max. */
static unsigned int fpu_chunk(unsigned int nsect, unsigned int max)
{
	return nsect < max ? nsect : max;
}

static bool one_key(const struct aes_key *const *keys, unsigned int n)
{
	unsigned int i;

	for (i = 1; i < n; i++)
		if (keys[i] != keys[0])
			return false;
	return true;
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

static void scalar_ivs(const u32 seed[4], const u8 *data, u64 sector,
		       u8 *ivs, unsigned int nsect)
{
	for (; nsect; nsect--, sector++) {
		loop_aes_multi_iv(seed, data, sector, ivs);
		data += LOOP_AES_SECTOR_SIZE;
		ivs += AES_BLOCK_LEN;
	}
}

static __always_inline void
intel_encrypt(cbc_fn *enc, cbc1_fn *enc1, const struct aes_key *const *keys,
	      const u8 *ivs, u8 *dst, const u8 *src, unsigned int nsect)
{
	while (nsect) {
		unsigned int n = fpu_chunk(nsect, AESLOOP_INTEL_FPU_SECTORS);
		bool one = one_key(keys, n);

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
intel_encrypt_gather(cbc1g_fn *enc1g, unsigned int max,
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
intel_decrypt(cbc_fn *dec, unsigned int max, const struct aes_key *const *keys,
	      const u8 *ivs, u8 *dst, const u8 *src, unsigned int nsect)
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
intel_ivs(md5_fn *md5, const u32 seed[4], const u8 *data, u64 sector,
	  u8 *ivs, unsigned int nsect)
{
	while (nsect) {
		unsigned int n = fpu_chunk(nsect, AESLOOP_INTEL_FPU_SECTORS);

		if (!simd_begin()) {
			scalar_ivs(seed, data, sector, ivs, nsect);
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

/* AES-NI */

static void aesni_encrypt(const struct aes_key *const *keys, const u8 *ivs,
			  u8 *dst, const u8 *src, unsigned int nsect)
{
	intel_encrypt(aesloop_cbc_enc_aesni, aesloop_cbc_enc1_aesni,
		      keys, ivs, dst, src, nsect);
}

static void aesni_encrypt_gather(const struct aes_key *key, const u8 *ivs,
				 u8 *dst, const u8 *const *srcs,
				 unsigned int nsect)
{
	intel_encrypt_gather(aesloop_cbc_enc1g_aesni, AESLOOP_INTEL_FPU_SECTORS,
			     key, ivs, dst, srcs, nsect);
}

static void aesni_decrypt(const struct aes_key *const *keys, const u8 *ivs,
			  u8 *dst, const u8 *src, unsigned int nsect)
{
	intel_decrypt(aesloop_cbc_dec_aesni, AESLOOP_INTEL_FPU_SECTORS,
		      keys, ivs, dst, src, nsect);
}

/* Multi-buffer MD5 needs AVX2, which some AES-NI CPUs lack. */
static void aesni_ivs(const u32 seed[4], const u8 *data, u64 sector,
		      u8 *ivs, unsigned int nsect)
{
	if (cpu_features() & HAS_AVX2)
		intel_ivs(aesloop_md5_iv_avx2, seed, data, sector, ivs, nsect);
	else
		scalar_ivs(seed, data, sector, ivs, nsect);
}

/* VAES, AVX2 */

static void vaes2_encrypt(const struct aes_key *const *keys, const u8 *ivs,
			  u8 *dst, const u8 *src, unsigned int nsect)
{
	intel_encrypt(aesloop_cbc_enc_vaes_avx2, aesloop_cbc_enc1_vaes_avx2,
		      keys, ivs, dst, src, nsect);
}

static void vaes2_encrypt_gather(const struct aes_key *key, const u8 *ivs,
				 u8 *dst, const u8 *const *srcs,
				 unsigned int nsect)
{
	intel_encrypt_gather(aesloop_cbc_enc1g_vaes_avx2, AESLOOP_INTEL_FPU_SECTORS,
			     key, ivs, dst, srcs,
			     nsect);
}

static void vaes2_decrypt(const struct aes_key *const *keys, const u8 *ivs,
			  u8 *dst, const u8 *src, unsigned int nsect)
{
	intel_decrypt(aesloop_cbc_dec_vaes_avx2, AESLOOP_INTEL_FPU_SECTORS,
		      keys, ivs, dst, src, nsect);
}

static void vaes2_ivs(const u32 seed[4], const u8 *data, u64 sector,
		      u8 *ivs, unsigned int nsect)
{
	intel_ivs(aesloop_md5_iv_avx2, seed, data, sector, ivs, nsect);
}

/* VAES, AVX-512 */

static void vaes512_encrypt(const struct aes_key *const *keys, const u8 *ivs,
			    u8 *dst, const u8 *src, unsigned int nsect)
{
	intel_encrypt(aesloop_cbc_enc_vaes_avx512, aesloop_cbc_enc1_vaes_avx512,
		      keys, ivs, dst, src, nsect);
}

static void vaes512_encrypt_gather(const struct aes_key *key, const u8 *ivs,
				   u8 *dst, const u8 *const *srcs,
				   unsigned int nsect)
{
	intel_encrypt_gather(aesloop_cbc_enc1g_vaes_avx512, AESLOOP_INTEL_FPU_SECTORS,
			     key, ivs, dst, srcs,
			     nsect);
}

static void vaes512_decrypt(const struct aes_key *const *keys, const u8 *ivs,
			    u8 *dst, const u8 *src, unsigned int nsect)
{
	intel_decrypt(aesloop_cbc_dec_vaes_avx512, AESLOOP_INTEL_FPU_SECTORS,
		      keys, ivs, dst, src, nsect);
}

static void vaes512_ivs(const u32 seed[4], const u8 *data, u64 sector,
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
		.multi_ivs	= scalar_ivs,
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
		.cbc_encrypt	= vaes2_encrypt,
		.cbc_decrypt	= vaes2_decrypt,
		.cbc_encrypt_gather = vaes2_encrypt_gather,
		.multi_ivs	= vaes2_ivs,
	},
	[AESLOOP_INTEL_VAES_AVX512] = {
		.name		= "vaes-avx512",
		.cbc_encrypt	= vaes512_encrypt,
		.cbc_decrypt	= vaes512_decrypt,
		.cbc_encrypt_gather = vaes512_encrypt_gather,
		.multi_ivs	= vaes512_ivs,
	},
};

/**
 * aesloop_intel_engine() - the engine of one path
 * @path: the path
 *
 * The engine must only be used when aesloop_intel_cpu_has(@path) is true
 * (and, before it handles real data, aesloop_intel_selftest() passed).
 *
 * Return: the engine, or NULL for an unknown path.
 */
const struct loop_aes_engine *aesloop_intel_engine(enum aesloop_intel_path path)
{
	if ((unsigned int)path >= AESLOOP_INTEL_NR_PATHS)
		return NULL;
	return &intel_engines[path];
}

/* ---------------------------------------------------------------------
 * Self-test.
 */

/*
 * Known answers (from OpenSSL): the sector of bytes (29 i + 7) mod 256,
 * AES-CBC with the key of bytes 0, 1, 2, ... and the single-key IV of
 * sector KAT_SECTOR: the last ciphertext block, which depends on every
 * block before it.  And that sector's v2 IV: MD5 of its bytes 16..511 and
 * KAT_SECTOR as 7 little-endian bytes.
 */
#define KAT_SECTOR	0x0123456789ULL

static const u8 kat_last_block[3][AES_BLOCK_LEN] = {
	{ 0x13, 0xd7, 0xf4, 0xe0, 0x93, 0x5b, 0x0a, 0x70,	/* AES-128 */
	  0xe0, 0x88, 0xbf, 0xce, 0xea, 0xaa, 0x34, 0x2c },
	{ 0x21, 0x6f, 0x1b, 0xea, 0x59, 0x42, 0x50, 0x5d,	/* AES-192 */
	  0x03, 0x79, 0xc8, 0xb6, 0x4f, 0xb2, 0x45, 0x7f },
	{ 0x20, 0x83, 0x6c, 0x17, 0x47, 0x69, 0x1c, 0xe7,	/* AES-256 */
	  0x90, 0xad, 0x0b, 0xe1, 0xfc, 0x83, 0x51, 0xda },
};

static const u8 kat_v2_iv[AES_BLOCK_LEN] = {
	0x23, 0x68, 0x6f, 0xeb, 0x9e, 0x98, 0xd2, 0x4d,
	0xa2, 0xd7, 0x13, 0xcd, 0xa0, 0x34, 0x5a, 0xa3,
};

/*
 * Sectors compared with the generic code: more than one group of the
 * widest per-sector-key interleave (16), and odd, so that the group split
 * and the spare lanes are exercised.
 */
#define ST_SECTORS	19
#define ST_KEYS		5

struct selftest_buf {
	struct aes_key keys[ST_KEYS];
	const struct aes_key *kp[ST_SECTORS];
	const u8 *srcs[ST_SECTORS];
	u8 ivs[ST_SECTORS * AES_BLOCK_LEN];
	u8 ivs2[ST_SECTORS * AES_BLOCK_LEN];
	u8 src[ST_SECTORS * LOOP_AES_SECTOR_SIZE];
	u8 ref[ST_SECTORS * LOOP_AES_SECTOR_SIZE];
	u8 out[ST_SECTORS * LOOP_AES_SECTOR_SIZE];
};

static void plain64_iv(u8 *iv, u64 sector)
{
	aes_put_le32(iv, (u32)sector);
	aes_put_le32(iv + 4, (u32)(sector >> 32));
	memset(iv + 8, 0, 8);
}

static int selftest_kat(const struct loop_aes_engine *e,
			struct selftest_buf *b)
{
	static const u32 md5_init[4] = {
		0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476
	};
	u8 raw[32];
	unsigned int i, k;

	for (i = 0; i < LOOP_AES_SECTOR_SIZE; i++)
		b->src[i] = (u8)(29 * i + 7);
	for (i = 0; i < sizeof(raw); i++)
		raw[i] = (u8)i;
	plain64_iv(b->ivs, KAT_SECTOR);
	for (k = 0; k < 3; k++) {
		if (aes_key_setup(&b->keys[0], raw, 16 + 8 * k))
			return -EINVAL;
		b->kp[0] = &b->keys[0];
		e->cbc_encrypt(b->kp, b->ivs, b->out, b->src, 1);
		if (memcmp(b->out + LOOP_AES_SECTOR_SIZE - AES_BLOCK_LEN,
			   kat_last_block[k], AES_BLOCK_LEN))
			return -EIO;
		e->cbc_decrypt(b->kp, b->ivs, b->out, b->out, 1);
		if (memcmp(b->out, b->src, LOOP_AES_SECTOR_SIZE))
			return -EIO;
	}
	e->multi_ivs(md5_init, b->src, KAT_SECTOR, b->ivs, 1);
	if (memcmp(b->ivs, kat_v2_iv, AES_BLOCK_LEN))
		return -EIO;
	return 0;
}

/* Against the generic code, every key length, one key and several. */
static int selftest_cross(const struct loop_aes_engine *e,
			  struct selftest_buf *b)
{
	const struct loop_aes_engine *g = &loop_aes_generic_engine;
	const size_t len = ST_SECTORS * LOOP_AES_SECTOR_SIZE;
	u32 x = 0x2545f491, seed[4];
	u8 raw[32];
	unsigned int i, k, multi;

	for (i = 0; i < len; i++) {
		x = x * 1103515245 + 12345;
		b->src[i] = (u8)(x >> 23);
	}
	for (i = 0; i < 4; i++)
		seed[i] = aes_get_le32(b->src + 4 * i);
	for (i = 0; i < ST_SECTORS; i++)
		plain64_iv(b->ivs + i * AES_BLOCK_LEN, 0xfffffff0ULL + i);

	for (k = 0; k < 3; k++) {
		for (i = 0; i < ST_KEYS; i++) {
			memcpy(raw, b->src + 32 * i, sizeof(raw));
			if (aes_key_setup(&b->keys[i], raw, 16 + 8 * k))
				return -EINVAL;
		}
		for (multi = 0; multi < 2; multi++) {
			for (i = 0; i < ST_SECTORS; i++)
				b->kp[i] = &b->keys[multi ? (i * 3) % ST_KEYS : 0];
			g->cbc_encrypt(b->kp, b->ivs, b->ref, b->src, ST_SECTORS);
			e->cbc_encrypt(b->kp, b->ivs, b->out, b->src, ST_SECTORS);
			if (memcmp(b->out, b->ref, len))
				return -EIO;
			/* decryption in place */
			e->cbc_decrypt(b->kp, b->ivs, b->out, b->out, ST_SECTORS);
			if (memcmp(b->out, b->src, len))
				return -EIO;
		}
		/* one key, the sectors read in reverse order */
		for (i = 0; i < ST_SECTORS; i++)
			b->srcs[i] = b->src +
				     (ST_SECTORS - 1 - i) * LOOP_AES_SECTOR_SIZE;
		g->cbc_encrypt_gather(&b->keys[0], b->ivs, b->ref, b->srcs,
				      ST_SECTORS);
		e->cbc_encrypt_gather(&b->keys[0], b->ivs, b->out, b->srcs,
				      ST_SECTORS);
		if (memcmp(b->out, b->ref, len))
			return -EIO;
	}
	g->multi_ivs(seed, b->src, 0xfffffff8ULL, b->ivs2, ST_SECTORS);
	e->multi_ivs(seed, b->src, 0xfffffff8ULL, b->ivs, ST_SECTORS);
	if (memcmp(b->ivs, b->ivs2, sizeof(b->ivs)))
		return -EIO;
	return 0;
}

/**
 * aesloop_intel_selftest() - check an engine before it handles data
 * @engine: one of the engines of aesloop_intel_engine(); the CPU must have
 *          its features (aesloop_intel_cpu_has())
 *
 * Known answers for each key length and the multi-key IV, then a
 * comparison with the generic engine over 19 sectors: one key and
 * several, in place, one key from scattered sectors, all three key
 * lengths.  May sleep (allocates).
 *
 * Return: 0 if the engine gave the right answers, -EIO if not, -ENOMEM.
 */
int aesloop_intel_selftest(const struct loop_aes_engine *engine)
{
	struct selftest_buf *b = selftest_alloc(sizeof(*b));
	int err;

	if (!b)
		return -ENOMEM;
	err = selftest_kat(engine, b);
	if (!err)
		err = selftest_cross(engine, b);
	memzero_explicit(b, sizeof(*b));
	selftest_free(b);
	return err;
}

/**
 * aesloop_intel_probe() - pick the fastest path this CPU can run
 * @rejected: if not NULL, set to the name of the fastest path whose CPU
 *            features are present but whose self-test failed (an emulator,
 *            a broken CPU, or a bug of ours), or to NULL when there was none
 *
 * Tries vaes-avx512, vaes-avx2, aesni, ssse3 in that order; the first whose
 * features are present and whose self-test passes wins.  So ssse3 runs on
 * CPUs with SSSE3 and without AES-NI, and where every AES-NI path failed
 * its self-test (constant time beats the generic code's tables there too).
 * In the kernel each path passed over is logged, with the reason.  Call
 * once at start-up (it may sleep), then hand the result to
 * loop_aes_set_engine().
 *
 * Return: the engine, or NULL: keep the generic one.
 */
const struct loop_aes_engine *aesloop_intel_probe(const char **rejected)
{
	int path;

	if (rejected)
		*rejected = NULL;
	for (path = AESLOOP_INTEL_NR_PATHS - 1; path >= 0; path--) {
		const struct loop_aes_engine *e = &intel_engines[path];

		int err;

		if (!aesloop_intel_cpu_has(path, NULL))
			continue;
		err = aesloop_intel_selftest(e);
		if (err == 0)
			return e;
#ifdef __KERNEL__
		if (err == -ENOMEM)
			pr_warn("AES path %s could not be self-tested (no memory); not used\n",
				e->name);
		else
			pr_warn("AES path %s failed its self-test on this CPU; not used\n",
				e->name);
#endif
		if (rejected && !*rejected)
			*rejected = e->name;
	}
	return NULL;
}
