// SPDX-License-Identifier: GPL-2.0
// covers: arm64-ce
/*
 * test_arm64ce_abi.c - the calling contract of the arm64-ce assembly
 * (aes-arm64.h), what test_arm64ce's comparisons cannot see: registers,
 * the 32-bit count, nsect == 0 and reads past the inputs.  arm64 only
 * (ARM64AES=y); run natively or under qemu-aarch64 (tests/host/arm64.sh).
 *
 * Every call goes through abi_call(), a trampoline that loads patterns
 * into x18-x28, d8-d15 and v16-v31, puts junk into the upper 32 bits of
 * x4 (nsect is an unsigned int: the callee must ignore them), calls, and
 * records the registers after the return.  A fault during a call is caught
 * (SIGSEGV, SIGBUS) and reported with its address.  FN is enc, enc1, enc1g
 * or dec (aesloop_cbc_FN_ce).
 *
 *  cpu-arm64-ce        the path runs here (HWCAP_AES), or every check is
 *                      skipped
 *  zero-FN             nsect == 0 with every pointer NULL, under each junk
 *                      pattern: no fault, and every register of the
 *                      patterns, v16-v31 too, as it was
 *  cbc-FN-aesN-KEYS    equals aes_cbc_encrypt/decrypt per sector for
 *                      1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33 sectors, each
 *                      with its key structs aligned and at odd addresses;
 *                      apart and in place (enc1g: apart), dec also with
 *                      ivs == NULL (zero IVs); never writes outside the
 *                      sectors.  KEYS (enc, dec): one key, three (random
 *                      of 3), runs (AABBAABB..), eight (i % 8: every lane
 *                      its own); enc1: one; enc1g: gather, sources out of
 *                      order and repeated, some adjacent
 *  regs-FN-aesN        over all those calls: x19-x28, d8-d15, x29, sp
 *                      and x18 (the kernel's shadow call stack pointer) as
 *                      they were, and v16-v31 (the round keys) zero
 *  overread-FN-aesN    every input (the sources, the IVs, each key struct,
 *                      the key and source pointer arrays) and the output
 *                      ends right before a PROT_NONE page, then starts
 *                      right after one: no access faults, and the result
 *                      is still right (dec: with IVs and with NULL)
 *
 * Random data comes from a seeded generator; a failure prints the seed and
 * the parameters (set AESLOOP_SEED to repeat a run).
 */
#if !defined(__aarch64__) || defined(__AARCH64EB__)
#error "test_arm64ce_abi.c is for little-endian arm64 only (ARM64AES=y)"
#endif

#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aes-arm64.h"
#include "engines.h"
#include "testutil.h"

/* What abi_call() saw after the return (offsets fixed by the trampoline). */
struct regs {
	uint64_t x[10];		/* x19-x28 */
	uint64_t fp, sp;	/* x29 and sp after the call */
	uint64_t d[8];		/* d8-d15 */
	uint64_t v[16][2];	/* v16-v31 */
	uint64_t x18;
	uint64_t sp_before;	/* sp at the call */
};
_Static_assert(offsetof(struct regs, fp) == 80, "trampoline layout");
_Static_assert(offsetof(struct regs, d) == 96, "trampoline layout");
_Static_assert(offsetof(struct regs, v) == 160, "trampoline layout");
_Static_assert(offsetof(struct regs, x18) == 416, "trampoline layout");
_Static_assert(offsetof(struct regs, sp_before) == 424, "trampoline layout");

/*
 * void abi_call(uintptr_t fn, u64 a0, u64 a1, u64 a2, u64 a3, u64 a4,
 *		 struct regs *out): fn(a0, .., a4) with the patterns loaded.
 * Here rather than in a .S: the Makefile builds tests from .c files only.
 * The patterns: x19-x28 0x19.., 0x20.. .. 0x28.. (each byte), x18 0x18..,
 * d8-d15 0xd8.. .. 0xdf.., v16-v31 0xa0.. .. 0xaf...  x18 and the
 * callee-saved registers are the trampoline's own to restore.
 */
__asm__(
"	.pushsection .text\n"
"	.globl	abi_call\n"
"	.hidden	abi_call\n"
"	.type	abi_call, %function\n"
"	.p2align 4\n"
"abi_call:\n"
"	hint	#34\n"				/* bti c */
"	stp	x29, x30, [sp, #-176]!\n"
"	mov	x29, sp\n"
"	stp	x19, x20, [sp, #16]\n"
"	stp	x21, x22, [sp, #32]\n"
"	stp	x23, x24, [sp, #48]\n"
"	stp	x25, x26, [sp, #64]\n"
"	stp	x27, x28, [sp, #80]\n"
"	stp	d8, d9, [sp, #96]\n"
"	stp	d10, d11, [sp, #112]\n"
"	stp	d12, d13, [sp, #128]\n"
"	stp	d14, d15, [sp, #144]\n"
"	stp	x6, x18, [sp, #160]\n"
"	mov	x17, sp\n"
"	str	x17, [x6, #424]\n"
"	mov	x16, x0\n"
"	mov	x0, x1\n"
"	mov	x1, x2\n"
"	mov	x2, x3\n"
"	mov	x3, x4\n"
"	mov	x4, x5\n"
"	ldr	x17, =0xd8d8d8d8d8d8d8d8\n"
"	fmov	d8, x17\n"
"	ldr	x17, =0xd9d9d9d9d9d9d9d9\n"
"	fmov	d9, x17\n"
"	ldr	x17, =0xdadadadadadadada\n"
"	fmov	d10, x17\n"
"	ldr	x17, =0xdbdbdbdbdbdbdbdb\n"
"	fmov	d11, x17\n"
"	ldr	x17, =0xdcdcdcdcdcdcdcdc\n"
"	fmov	d12, x17\n"
"	ldr	x17, =0xdddddddddddddddd\n"
"	fmov	d13, x17\n"
"	ldr	x17, =0xdededededededede\n"
"	fmov	d14, x17\n"
"	ldr	x17, =0xdfdfdfdfdfdfdfdf\n"
"	fmov	d15, x17\n"
"	movi	v16.16b, #0xa0\n"
"	movi	v17.16b, #0xa1\n"
"	movi	v18.16b, #0xa2\n"
"	movi	v19.16b, #0xa3\n"
"	movi	v20.16b, #0xa4\n"
"	movi	v21.16b, #0xa5\n"
"	movi	v22.16b, #0xa6\n"
"	movi	v23.16b, #0xa7\n"
"	movi	v24.16b, #0xa8\n"
"	movi	v25.16b, #0xa9\n"
"	movi	v26.16b, #0xaa\n"
"	movi	v27.16b, #0xab\n"
"	movi	v28.16b, #0xac\n"
"	movi	v29.16b, #0xad\n"
"	movi	v30.16b, #0xae\n"
"	movi	v31.16b, #0xaf\n"
"	ldr	x18, =0x1818181818181818\n"
"	ldr	x19, =0x1919191919191919\n"
"	ldr	x20, =0x2020202020202020\n"
"	ldr	x21, =0x2121212121212121\n"
"	ldr	x22, =0x2222222222222222\n"
"	ldr	x23, =0x2323232323232323\n"
"	ldr	x24, =0x2424242424242424\n"
"	ldr	x25, =0x2525252525252525\n"
"	ldr	x26, =0x2626262626262626\n"
"	ldr	x27, =0x2727272727272727\n"
"	ldr	x28, =0x2828282828282828\n"
"	blr	x16\n"
	/* x29 and sp as returned, then the frame found again through sp */
"	mov	x16, x29\n"
"	mov	x17, sp\n"
"	mov	x29, sp\n"
"	ldr	x6, [sp, #160]\n"
"	stp	x19, x20, [x6, #0]\n"
"	stp	x21, x22, [x6, #16]\n"
"	stp	x23, x24, [x6, #32]\n"
"	stp	x25, x26, [x6, #48]\n"
"	stp	x27, x28, [x6, #64]\n"
"	stp	x16, x17, [x6, #80]\n"
"	stp	d8, d9, [x6, #96]\n"
"	stp	d10, d11, [x6, #112]\n"
"	stp	d12, d13, [x6, #128]\n"
"	stp	d14, d15, [x6, #144]\n"
"	stp	q16, q17, [x6, #160]\n"
"	stp	q18, q19, [x6, #192]\n"
"	stp	q20, q21, [x6, #224]\n"
"	stp	q22, q23, [x6, #256]\n"
"	stp	q24, q25, [x6, #288]\n"
"	stp	q26, q27, [x6, #320]\n"
"	stp	q28, q29, [x6, #352]\n"
"	stp	q30, q31, [x6, #384]\n"
"	str	x18, [x6, #416]\n"
"	ldr	x18, [sp, #168]\n"
"	ldp	x19, x20, [sp, #16]\n"
"	ldp	x21, x22, [sp, #32]\n"
"	ldp	x23, x24, [sp, #48]\n"
"	ldp	x25, x26, [sp, #64]\n"
"	ldp	x27, x28, [sp, #80]\n"
"	ldp	d8, d9, [sp, #96]\n"
"	ldp	d10, d11, [sp, #112]\n"
"	ldp	d12, d13, [sp, #128]\n"
"	ldp	d14, d15, [sp, #144]\n"
"	ldp	x29, x30, [sp], #176\n"
"	ret\n"
"	.ltorg\n"
"	.size	abi_call, . - abi_call\n"
"	.popsection\n");

void abi_call(uintptr_t fn, uint64_t a0, uint64_t a1, uint64_t a2,
	      uint64_t a3, uint64_t a4, struct regs *out);

#define B8(b)		(0x0101010101010101ULL * (b))
#define MAX_SECT	33
#define NKEYS		8
#define GUARD		64	/* bytes checked on each side of an output */

enum { ENC, ENC1, ENC1G, DEC, NFN };

static const char *const fn_names[NFN] = { "enc", "enc1", "enc1g", "dec" };

static uintptr_t fn_addr(int fn)
{
	switch (fn) {
	case ENC:
		return (uintptr_t)aesloop_cbc_enc_ce;
	case ENC1:
		return (uintptr_t)aesloop_cbc_enc1_ce;
	case ENC1G:
		return (uintptr_t)aesloop_cbc_enc1g_ce;
	default:
		return (uintptr_t)aesloop_cbc_dec_ce;
	}
}

static const unsigned int counts[] = {
	1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33
};

/* Upper halves of x4: all ones, the sign bit, the lowest bit, noise. */
static const uint64_t junks[] = {
	0xffffffff00000000ULL, 0x8000000000000000ULL, 0x0000000100000000ULL,
	0xdeadbeef00000000ULL
};

static uint64_t seed;
static unsigned int ncalls;

/* ---- faults ---- */

static sigjmp_buf fault_jmp;
static volatile sig_atomic_t in_call;
static void *volatile fault_addr;
static volatile sig_atomic_t fault_sig;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!in_call) {
		/* not ours: die of it as without the handler */
		signal(sig, SIG_DFL);
		return;
	}
	fault_sig = sig;
	fault_addr = si->si_addr;
	in_call = 0;
	siglongjmp(fault_jmp, 1);
}

static int catch_faults(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGSEGV, &sa, NULL) || sigaction(SIGBUS, &sa, NULL);
}

/* ---- guard pages ---- */

static size_t page;

/* Room for one input between two PROT_NONE pages. */
struct edge {
	const char *name;
	unsigned char *base;	/* the first accessible byte */
	size_t span;		/* accessible bytes, whole pages */
};

static int edge_init(struct edge *e, const char *name, size_t max)
{
	size_t span = (max + page - 1) / page * page;
	unsigned char *m = mmap(NULL, span + 2 * page, PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED || mprotect(m + page, span, PROT_READ | PROT_WRITE))
		return -1;
	e->name = name;
	e->base = m + page;
	e->span = span;
	return 0;
}

/* @len bytes ending right before the upper guard, or starting right after the lower. */
static unsigned char *edge_at(const struct edge *e, size_t len, int at_end)
{
	return at_end ? e->base + e->span - len : e->base;
}

/* ---- calls ---- */

static char regs_why[400];	/* the first register failure of a group */

static int check_regs(const struct regs *r, int wiped, char *why, size_t len)
{
	static const unsigned int xpat[10] = {
		0x19, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28
	};
	unsigned int i;

	for (i = 0; i < 10; i++)
		if (r->x[i] != B8(xpat[i])) {
			snprintf(why, len, "x%u clobbered (%#llx)", 19 + i,
				 (unsigned long long)r->x[i]);
			return 0;
		}
	if (r->x18 != B8(0x18)) {
		snprintf(why, len, "x18 clobbered (%#llx)",
			 (unsigned long long)r->x18);
		return 0;
	}
	if (r->fp != r->sp_before || r->sp != r->sp_before) {
		snprintf(why, len, "x29 %#llx, sp %#llx after, sp %#llx before",
			 (unsigned long long)r->fp, (unsigned long long)r->sp,
			 (unsigned long long)r->sp_before);
		return 0;
	}
	for (i = 0; i < 8; i++)
		if (r->d[i] != B8(0xd8 + i)) {
			snprintf(why, len, "d%u clobbered (%#llx)", 8 + i,
				 (unsigned long long)r->d[i]);
			return 0;
		}
	for (i = 0; i < 16; i++) {
		uint64_t want = wiped ? 0 : B8(0xa0 + i);

		if (r->v[i][0] != want || r->v[i][1] != want) {
			snprintf(why, len, "v%u %s (%016llx%016llx)", 16 + i,
				 wiped ? "not wiped" : "touched",
				 (unsigned long long)r->v[i][1],
				 (unsigned long long)r->v[i][0]);
			return 0;
		}
	}
	return 1;
}

/*
 * fn(a0, a1, a2, a3, nsect) through the trampoline, the next junk pattern
 * in the upper half of x4.  Returns 0 and says why in @why if it faulted;
 * a register problem goes to regs_why (the first one only), @what naming
 * the call there.
 */
static int call(int fn, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
		unsigned int nsect, const char *what, char *why, size_t len)
{
	uint64_t junk = junks[ncalls++ % (sizeof(junks) / sizeof(junks[0]))];
	struct regs r;
	char rw[160];

	memset(&r, 0, sizeof(r));
	if (sigsetjmp(fault_jmp, 1)) {
		snprintf(why, len, "%s: signal %d at %p", what, (int)fault_sig,
			 fault_addr);
		return 0;
	}
	in_call = 1;
	abi_call(fn_addr(fn), a0, a1, a2, a3, junk | nsect, &r);
	in_call = 0;
	if (!regs_why[0] && !check_regs(&r, nsect > 0, rw, sizeof(rw)))
		snprintf(regs_why, sizeof(regs_why), "%s, x4 %#llx: %s: seed %llu",
			 what, (unsigned long long)(junk | nsect), rw,
			 (unsigned long long)seed);
	return 1;
}

/* nsect == 0, every pointer NULL: nothing may be read, written or changed. */
static void check_zero(int fn)
{
	char name[48], why[320] = "";
	unsigned int j;
	int ok = 1;

	snprintf(name, sizeof(name), "zero-%s", fn_names[fn]);
	regs_why[0] = 0;
	for (j = 0; j < sizeof(junks) / sizeof(junks[0]) && ok; j++)
		ok = call(fn, 0, 0, 0, 0, 0, "nsect 0", why, sizeof(why));
	if (ok && regs_why[0]) {
		snprintf(why, sizeof(why), "%s", regs_why);
		ok = 0;
	}
	t_result(ok, name, "%s", why);
}

/* ---- the data ---- */

enum { KEYS_ONE, KEYS_THREE, KEYS_RUNS, KEYS_EIGHT, KEYS_GATHER };
static const char *const key_modes[] = { "one", "three", "runs", "eight", "gather" };

struct bufs {
	struct aes_key keys[NKEYS];
	/* the same keys at odd addresses: nothing may assume alignment */
	u8 odd[NKEYS][sizeof(struct aes_key) + 8];
	unsigned int kidx[MAX_SECT];	/* sector i's key */
	uint64_t kaddr[MAX_SECT];	/* the keys argument of enc, dec */
	const u8 *srcs[MAX_SECT];	/* enc1g's */
	u8 ivs[MAX_SECT * AES_BLOCK_LEN];
	u8 srcbuf[MAX_SECT * LOOP_AES_SECTOR_SIZE + 16];
	u8 apart[MAX_SECT * LOOP_AES_SECTOR_SIZE + 16];
	u8 ref[MAX_SECT * LOOP_AES_SECTOR_SIZE];	/* the C code's */
	u8 ref0[MAX_SECT * LOOP_AES_SECTOR_SIZE];	/* dec, zero IVs */
	u8 area[MAX_SECT * LOOP_AES_SECTOR_SIZE + 2 * GUARD + 16];
};

static void setup_keys(struct bufs *b, unsigned int key_len)
{
	u8 raw[32];
	unsigned int k;

	for (k = 0; k < NKEYS; k++) {
		rng_fill(raw, key_len);
		aes_key_setup(&b->keys[k], raw, key_len);
		memcpy(b->odd[k] + 1 + 2 * (k % 4), &b->keys[k],
		       sizeof(struct aes_key));
	}
	memset(raw, 0, sizeof(raw));
}

static uint64_t key_addr(struct bufs *b, unsigned int k, int odd)
{
	return odd ? (uintptr_t)(b->odd[k] + 1 + 2 * (k % 4)) :
		     (uintptr_t)&b->keys[k];
}

static unsigned int pick_key(int mode, unsigned int i)
{
	switch (mode) {
	case KEYS_THREE:
		return (unsigned int)(rng_next() % 3);
	case KEYS_RUNS:
		return (i / 2) % 2;
	case KEYS_EIGHT:
		return i % NKEYS;
	default:
		return 0;
	}
}

/* enc1g's sources: out of order, about half of them repeated, some adjacently. */
static unsigned int gather_from(unsigned int n, unsigned int i)
{
	unsigned int m = (n + 1) / 2;

	if (i % 4 == 3)
		i--;
	return (i * 5 + 3) % m;
}

/*
 * Sector i's key and IV for @n sectors of @mode, its source in @src (data
 * already there), and what the C code makes of them in ref (and ref0:
 * zero IVs).
 */
static void prepare(struct bufs *b, int fn, int mode, unsigned int n,
		    const u8 *src)
{
	static const u8 zero[AES_BLOCK_LEN];
	unsigned int i;

	rng_fill(b->ivs, n * AES_BLOCK_LEN);
	for (i = 0; i < n; i++) {
		const u8 *s = src + (size_t)i * 512;

		b->kidx[i] = pick_key(mode, i);
		if (fn == ENC1G) {
			s = src + (size_t)gather_from(n, i) * 512;
			b->srcs[i] = s;
		}
		if (fn == DEC) {
			aes_cbc_decrypt(&b->keys[b->kidx[i]], b->ref + i * 512,
					s, 512, b->ivs + i * 16);
			aes_cbc_decrypt(&b->keys[b->kidx[i]], b->ref0 + i * 512,
					s, 512, zero);
		} else {
			aes_cbc_encrypt(&b->keys[b->kidx[i]], b->ref + i * 512,
					s, 512, b->ivs + i * 16);
		}
	}
}

/* The key argument: enc1 and enc1g take sector 0's key, enc and dec the array. */
static uint64_t keys_arg(struct bufs *b, int fn, unsigned int n, int odd)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		b->kaddr[i] = key_addr(b, b->kidx[i], odd);
	return fn == ENC1 || fn == ENC1G ? b->kaddr[0] : (uintptr_t)b->kaddr;
}

/*
 * cbc-FN-aesN-KEYS: every count, keys aligned and odd, apart and in place,
 * dec with IVs and with NULL.
 */
static void check_cbc(struct bufs *b, int fn, unsigned int key_len, int mode)
{
	const u8 *src = b->srcbuf + 3;
	char name[48], what[160], why[320] = "";
	unsigned int c, odd, v;
	int ok = 1;

	snprintf(name, sizeof(name), "cbc-%s-aes%u-%s", fn_names[fn],
		 key_len * 8, key_modes[mode]);
	for (c = 0; c < sizeof(counts) / sizeof(counts[0]) && ok; c++) {
		unsigned int n = counts[c];
		size_t len = (size_t)n * LOOP_AES_SECTOR_SIZE;

		rng_fill(b->srcbuf, sizeof(b->srcbuf));
		prepare(b, fn, mode, n, src);
		for (odd = 0; odd < 2 && ok; odd++) {
			/* v: bit 0 in place, bit 1 NULL IVs */
			unsigned int nv = fn == DEC ? 4 : fn == ENC1G ? 1 : 2;

			for (v = 0; v < nv && ok; v++) {
				int inplace = v & 1, nulliv = v >> 1;
				size_t dof = GUARD + 1 + (n + v) % 15;
				u8 *dst = b->area + dof;
				const u8 *in = inplace ? dst : b->apart + n % 13;
				const u8 *want = nulliv ? b->ref0 : b->ref;

				snprintf(what, sizeof(what), "%s, %u sectors, keys %s, %s%s",
					 name, n, odd ? "at odd addresses" : "aligned",
					 inplace ? "in place" : "apart",
					 nulliv ? ", NULL IVs" : "");
				memset(b->area, 0xa5, sizeof(b->area));
				if (fn != ENC1G)
					memcpy((u8 *)in, src, len);
				if (!call(fn, keys_arg(b, fn, n, odd),
					  nulliv ? 0 : (uintptr_t)b->ivs,
					  (uintptr_t)dst,
					  fn == ENC1G ? (uintptr_t)b->srcs : (uintptr_t)in,
					  n, what, why, sizeof(why))) {
					ok = 0;
				} else if (memcmp(dst, want, len)) {
					snprintf(why, sizeof(why), "%s: differs from the C code: seed %llu",
						 what, (unsigned long long)seed);
					ok = 0;
				} else if (!t_guards_intact(b->area, sizeof(b->area), dof, len)) {
					snprintf(why, sizeof(why), "%s: wrote outside the sectors: seed %llu",
						 what, (unsigned long long)seed);
					ok = 0;
				}
			}
		}
	}
	t_result(ok, name, "%s", why);
}

/* ---- over-reads ---- */

enum { E_KEY0, E_KEY1, E_KEYS, E_IVS, E_SRC, E_SRCS, E_DST, NEDGES };
static struct edge edges[NEDGES];

static const char *edge_of(const void *addr)
{
	const unsigned char *a = addr;
	unsigned int i;

	for (i = 0; i < NEDGES; i++)
		if (a >= edges[i].base - page &&
		    a < edges[i].base + edges[i].span + page)
			return edges[i].name;
	return "none of the inputs";
}

static int edges_init(void)
{
	static const char *const names[NEDGES] = {
		"a key struct", "a key struct", "the keys array", "the IVs",
		"the sources", "the srcs array", "the destination"
	};
	static const size_t max[NEDGES] = {
		sizeof(struct aes_key), sizeof(struct aes_key),
		MAX_SECT * sizeof(uint64_t), MAX_SECT * AES_BLOCK_LEN,
		MAX_SECT * LOOP_AES_SECTOR_SIZE, MAX_SECT * sizeof(uint64_t),
		MAX_SECT * LOOP_AES_SECTOR_SIZE
	};
	unsigned int i;

	for (i = 0; i < NEDGES; i++)
		if (edge_init(&edges[i], names[i], max[i]))
			return -1;
	return 0;
}

/*
 * overread-FN-aesN: each input flush against a guard page, above and then
 * below; two keys (runs) so that enc and dec read from both key structs.
 */
static void check_overread(struct bufs *b, int fn, unsigned int key_len)
{
	char name[48], what[160], why[320] = "";
	unsigned int c, at_end, v, i;
	int ok = 1;

	snprintf(name, sizeof(name), "overread-%s-aes%u", fn_names[fn],
		 key_len * 8);
	for (c = 0; c < sizeof(counts) / sizeof(counts[0]) && ok; c++) {
		unsigned int n = counts[c];
		size_t len = (size_t)n * LOOP_AES_SECTOR_SIZE;
		int mode = fn == ENC1 || fn == ENC1G ? KEYS_ONE : KEYS_RUNS;

		for (at_end = 0; at_end < 2 && ok; at_end++) {
			struct aes_key *k0 = (struct aes_key *)
				edge_at(&edges[E_KEY0], sizeof(*k0), at_end);
			struct aes_key *k1 = (struct aes_key *)
				edge_at(&edges[E_KEY1], sizeof(*k1), at_end);
			uint64_t *keys = (uint64_t *)
				edge_at(&edges[E_KEYS], n * sizeof(*keys), at_end);
			const u8 **srcs = (const u8 **)
				edge_at(&edges[E_SRCS], n * sizeof(*srcs), at_end);
			u8 *ivs = edge_at(&edges[E_IVS], n * AES_BLOCK_LEN, at_end);
			u8 *src = edge_at(&edges[E_SRC], len, at_end);
			u8 *dst = edge_at(&edges[E_DST], len, at_end);

			rng_fill(src, len);
			prepare(b, fn, mode, n, src);
			memcpy(k0, &b->keys[0], sizeof(*k0));
			memcpy(k1, &b->keys[1], sizeof(*k1));
			for (i = 0; i < n; i++) {
				keys[i] = (uintptr_t)(b->kidx[i] ? k1 : k0);
				srcs[i] = src + (size_t)gather_from(n, i) * 512;
			}
			memcpy(ivs, b->ivs, n * AES_BLOCK_LEN);
			for (v = 0; v < (fn == DEC ? 2u : 1u) && ok; v++) {
				snprintf(what, sizeof(what), "%s, %u sectors, inputs %s a guard page%s",
					 name, n, at_end ? "ending at" : "starting after",
					 v ? ", NULL IVs" : "");
				if (!call(fn, fn == ENC1 || fn == ENC1G ?
					      (uintptr_t)k0 : (uintptr_t)keys,
					  v ? 0 : (uintptr_t)ivs, (uintptr_t)dst,
					  fn == ENC1G ? (uintptr_t)srcs : (uintptr_t)src,
					  n, what, why, sizeof(why))) {
					size_t l = strlen(why);

					snprintf(why + l, sizeof(why) - l, " (%s)",
						 edge_of(fault_addr));
					ok = 0;
				} else if (memcmp(dst, v ? b->ref0 : b->ref, len)) {
					snprintf(why, sizeof(why), "%s: differs from the C code: seed %llu",
						 what, (unsigned long long)seed);
					ok = 0;
				}
			}
		}
	}
	t_result(ok, name, "%s", why);
}

int main(void)
{
	struct bufs *b = calloc(1, sizeof(*b));
	const char *why = NULL;
	unsigned int kl;
	int fn, mode;

	seed = t_seed();
	page = (size_t)sysconf(_SC_PAGESIZE);
	if (!b || catch_faults() || edges_init()) {
		t_result(0, "setup", "out of memory, or no signal handler");
		return t_exit();
	}
	if (!aesloop_arch_cpu_has(AESLOOP_ARM64_CE, &why)) {
		t_skip("cpu-arm64-ce", "this CPU or OS lacks %s", why);
		free(b);
		return t_exit();
	}
	t_result(1, "cpu-arm64-ce", "");

	for (fn = 0; fn < NFN; fn++)
		check_zero(fn);
	for (kl = 16; kl <= 32; kl += 8) {
		setup_keys(b, kl);
		for (fn = 0; fn < NFN; fn++) {
			char name[64];

			regs_why[0] = 0;
			for (mode = KEYS_ONE; mode <= KEYS_GATHER; mode++) {
				if ((fn == ENC1 && mode != KEYS_ONE) ||
				    (fn == ENC1G && mode != KEYS_GATHER) ||
				    ((fn == ENC || fn == DEC) && mode == KEYS_GATHER))
					continue;
				check_cbc(b, fn, kl, mode);
			}
			check_overread(b, fn, kl);
			snprintf(name, sizeof(name), "regs-%s-aes%u",
				 fn_names[fn], kl * 8);
			t_result(!regs_why[0], name, "%s", regs_why);
		}
	}
	free(b);
	return t_exit();
}
