// SPDX-License-Identifier: GPL-2.0
/*
 * bench.c - aesloop-bench: MB/s of every crypto path side by side with
 * OpenSSL and aespipe, and the project's performance targets.
 *
 *   aesloop-bench [--tsv] [--quick] [--pipes | --engines]
 *
 * In-process: each engine (generic, ssse3, aesni, vaes-avx2, vaes-avx512) through
 * loop_aes_encrypt/decrypt on a contiguous BUF_BYTES buffer per thread (in
 * place, sector numbers advancing): what the engine can do, against OpenSSL EVP doing
 * the same work one sector at a time with the IV set per sector (for v2/v3
 * the IV from OpenSSL's MD5, key S % 64 from 64 ready EVP contexts), and the
 * same OpenSSL with AES-NI masked off (OPENSSL_ia32cap, in a child process).
 * 1 and 2 threads, each with its own buffer; each figure is the best of
 * three runs.
 *
 * The driver's shape: requests of 4 KiB, 64 KiB and 1 MiB in 4 KiB pages
 * scattered over POOL_PAGES separately allocated pages, through the
 * transfer the module calls (loop_aes_encrypt_segs() into a bounce area
 * of lo_prealloc's default size, loop_aes_decrypt_segs() in place), beside
 * the transfer as the driver called it before (one call per page) and the
 * same engine on the contiguous buffer; the engine loop_aes_set_engine()
 * would get at load (loop_aes_probe()), one thread.
 *
 * Whole processes: Debian's aespipe and build/bin/aesloop-pipe with the
 * same options on the same PIPE_BYTES file in tmpfs, output to tmpfs,
 * single-key, v2 and v3, each program once reading the file itself and once
 * fed through a pipe by cat, beside cat fed the same way (cat <in | cat
 * >out, the pipe's own limit); the median of PIPE_ROUNDS rounds, the runs
 * interleaved; the outputs are compared.  --pipes: only these; --engines:
 * all but these (make bench-kernel's bound of the driver).
 *
 * In-place re-encryption: aesloop-reencrypt on a copy of the single-key
 * (and v3) ciphertext of the same file, to v3 under a key file, against the
 * pipe a user would run for the same job, aesloop-pipe -d | aesloop-pipe,
 * its output synced at the end (sync FILE) as the re-encryption syncs each
 * chunk; in tmpfs and in a directory on disk (/var/tmp, or $TMPDIR), the
 * outputs compared.  The re-encryption also writes every chunk to its
 * journal.  Part of --pipes.
 *
 * MB/s are 1e6 bytes per second of data.  Ratios only hold when measured
 * side by side in one run, as here.  --tsv prints the measurements as
 * "section op threads column MB/s" lines instead of tables.
 */
#define _GNU_SOURCE
#define OPENSSL_SUPPRESS_DEPRECATED	/* MD5_Transform: the raw compression */
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/md5.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aes-intel.h"
#include "loop_aes.h"
#include "md5.h"

#define BUF_BYTES	(256 * 1024)	/* per thread: stays in L2 */
#define BUF_SECT	(BUF_BYTES / LOOP_AES_SECTOR_SIZE)
#define PIPE_BYTES	(256 << 20)
#define MAX_THREADS	2

static double cell_seconds = 0.1;	/* per run; ROUNDS runs per cell */

enum op { OP_SINGLE_ENC, OP_SINGLE_DEC, OP_V2_ENC, OP_V2_DEC, OP_V3_ENC,
	  OP_V3_DEC, OP_SINGLE256_ENC, OP_SINGLE256_DEC, NR_OPS };

static const char *const op_names[NR_OPS] = {
	"single-enc", "single-dec", "v2-enc", "v2-dec", "v3-enc", "v3-dec",
	"single-enc-aes256", "single-dec-aes256",
};

/*
 * Columns: the engines, then OpenSSL with and without AES-NI.  ssse3 is
 * the engine of CPUs without AES-NI: its peer is openssl-noaesni.
 */
enum { COL_GENERIC, COL_SSSE3, COL_AESNI, COL_VAES2, COL_VAES512, COL_OSSL,
       COL_OSSL_NOAESNI, NR_COLS };

static const char *const col_names[NR_COLS] = {
	"generic", "ssse3", "aesni", "vaes-avx2", "vaes-avx512", "openssl",
	"openssl-noaesni",
};

/* The aes-intel path of an engine column, COL_SSSE3..COL_VAES512. */
static enum aesloop_intel_path col_path(int col)
{
	static const enum aesloop_intel_path path[] = {
		[COL_SSSE3] = AESLOOP_INTEL_SSSE3,
		[COL_AESNI] = AESLOOP_INTEL_AESNI,
		[COL_VAES2] = AESLOOP_INTEL_VAES_AVX2,
		[COL_VAES512] = AESLOOP_INTEL_VAES_AVX512,
	};

	return path[col];
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void fill(u8 *p, size_t n, u32 x)
{
	while (n--) {
		x = x * 1103515245 + 12345;
		*p++ = (u8)(x >> 23);
	}
}

/* ---- the volumes ---- */

static u8 slots[(LOOP_AES_MULTI_KEYS + 1) * LOOP_AES_KEY_SLOT];
static struct loop_aes_ctx *ctx_single, *ctx_single256, *ctx_v2, *ctx_v3;

static struct loop_aes_ctx *make_ctx(int mode, unsigned int key_len)
{
	struct loop_aes_ctx *c = malloc(loop_aes_ctx_size(LOOP_AES_MULTI_KEYS));

	if (!c)
		exit(1);
	if (mode == 1)
		loop_aes_setup_single(c, slots, key_len);
	else
		loop_aes_setup_multi(c, slots, LOOP_AES_MULTI_KEYS + (mode == 3),
				     key_len);
	return c;
}

/* ---- OpenSSL doing the same, one sector at a time ---- */

struct ossl {
	EVP_CIPHER_CTX *enc[LOOP_AES_MULTI_KEYS], *dec[LOOP_AES_MULTI_KEYS];
	u32 v3_seed[4];
};

static void ossl_init(struct ossl *o, unsigned int key_len, unsigned int nkeys)
{
	const EVP_CIPHER *ciph = key_len == 16 ? EVP_aes_128_cbc() :
				 EVP_aes_256_cbc();
	unsigned int i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < nkeys; i++) {
		o->enc[i] = EVP_CIPHER_CTX_new();
		o->dec[i] = EVP_CIPHER_CTX_new();
		EVP_CipherInit_ex(o->enc[i], ciph, NULL,
				  slots + i * LOOP_AES_KEY_SLOT, NULL, 1);
		EVP_CipherInit_ex(o->dec[i], ciph, NULL,
				  slots + i * LOOP_AES_KEY_SLOT, NULL, 0);
		EVP_CIPHER_CTX_set_padding(o->enc[i], 0);
		EVP_CIPHER_CTX_set_padding(o->dec[i], 0);
	}
}

static void ossl_free(struct ossl *o)
{
	unsigned int i;

	for (i = 0; i < LOOP_AES_MULTI_KEYS; i++) {
		EVP_CIPHER_CTX_free(o->enc[i]);
		EVP_CIPHER_CTX_free(o->dec[i]);
	}
}

static void ossl_cbc(EVP_CIPHER_CTX *c, u8 *p, const u8 *iv)
{
	int n;

	EVP_CipherInit_ex(c, NULL, NULL, NULL, iv, -1);
	EVP_CipherUpdate(c, p, &n, p, LOOP_AES_SECTOR_SIZE);
}

/* The multi-key IV with OpenSSL's MD5: v2 as plain MD5, v3 block by block. */
static void ossl_multi_iv(int v3, const u32 seed[4], const u8 *p, u64 s,
			  u8 iv[16])
{
	u8 tail[7], last[64];
	MD5_CTX m;
	int i;

	MD5_Init(&m);
	if (!v3) {
		for (i = 0; i < 7; i++)
			tail[i] = (u8)(s >> (8 * i));
		MD5_Update(&m, p + 16, 496);
		MD5_Update(&m, tail, 7);
		MD5_Final(iv, &m);
		return;
	}
	m.A = seed[0];
	m.B = seed[1];
	m.C = seed[2];
	m.D = seed[3];
	for (i = 0; i < 7; i++)
		MD5_Transform(&m, p + 16 + 64 * i);
	memcpy(last, p + 464, 48);
	aes_put_le32(last + 48, (u32)s);
	aes_put_le32(last + 52, (u32)((s >> 32) & 0xffffff) | 0x80000000U);
	aes_put_le32(last + 56, 4024);
	aes_put_le32(last + 60, 0);
	MD5_Transform(&m, last);
	aes_put_le32(iv, m.A);
	aes_put_le32(iv + 4, m.B);
	aes_put_le32(iv + 8, m.C);
	aes_put_le32(iv + 12, m.D);
}

static void ossl_run(struct ossl *o, enum op op, u8 *buf, u64 s)
{
	static const u8 zero[16];
	int multi = op >= OP_V2_ENC && op <= OP_V3_DEC;
	int v3 = op == OP_V3_ENC || op == OP_V3_DEC;
	int enc = op == OP_SINGLE_ENC || op == OP_V2_ENC || op == OP_V3_ENC ||
		  op == OP_SINGLE256_ENC;
	unsigned int i, j;
	u8 iv[16];

	for (i = 0; i < BUF_SECT; i++, s++, buf += LOOP_AES_SECTOR_SIZE) {
		unsigned int k = multi ? s % LOOP_AES_MULTI_KEYS : 0;

		if (!multi) {
			aes_put_le32(iv, (u32)s);
			aes_put_le32(iv + 4, (u32)(s >> 32));
			memset(iv + 8, 0, 8);
			ossl_cbc(enc ? o->enc[0] : o->dec[0], buf, iv);
		} else if (enc) {
			ossl_multi_iv(v3, o->v3_seed, buf, s, iv);
			ossl_cbc(o->enc[k], buf, iv);
		} else {
			ossl_cbc(o->dec[k], buf, zero);
			ossl_multi_iv(v3, o->v3_seed, buf, s, iv);
			for (j = 0; j < 16; j++)
				buf[j] ^= iv[j];
		}
	}
}

/* ---- one measurement: a column and an operation, on N threads ---- */

struct job {
	int col;
	enum op op;
	pthread_barrier_t *start;
	double t_end;
	unsigned long long bytes;
};

static void engine_run(enum op op, u8 *buf, u64 s)
{
	switch (op) {
	case OP_SINGLE_ENC:
		loop_aes_encrypt(ctx_single, buf, buf, BUF_SECT, s);
		break;
	case OP_SINGLE_DEC:
		loop_aes_decrypt(ctx_single, buf, buf, BUF_SECT, s);
		break;
	case OP_V2_ENC:
		loop_aes_encrypt(ctx_v2, buf, buf, BUF_SECT, s);
		break;
	case OP_V2_DEC:
		loop_aes_decrypt(ctx_v2, buf, buf, BUF_SECT, s);
		break;
	case OP_V3_ENC:
		loop_aes_encrypt(ctx_v3, buf, buf, BUF_SECT, s);
		break;
	case OP_V3_DEC:
		loop_aes_decrypt(ctx_v3, buf, buf, BUF_SECT, s);
		break;
	case OP_SINGLE256_ENC:
		loop_aes_encrypt(ctx_single256, buf, buf, BUF_SECT, s);
		break;
	case OP_SINGLE256_DEC:
		loop_aes_decrypt(ctx_single256, buf, buf, BUF_SECT, s);
		break;
	default:
		break;
	}
}

static void *worker(void *arg)
{
	struct job *j = arg;
	int ossl = j->col == COL_OSSL || j->col == COL_OSSL_NOAESNI;
	u8 *buf = aligned_alloc(64, BUF_BYTES);
	struct ossl *o = NULL;
	u64 s = 1000;
	double t0;

	if (!buf)
		exit(1);
	fill(buf, BUF_BYTES, 7);
	if (ossl) {
		o = malloc(sizeof(*o));
		if (!o)
			exit(1);
		ossl_init(o, j->op >= OP_SINGLE256_ENC ? 32 : 16,
			  j->op >= OP_V2_ENC && j->op <= OP_V3_DEC ?
			  LOOP_AES_MULTI_KEYS : 1);
		memcpy(o->v3_seed, ctx_v3->iv_seed, sizeof(o->v3_seed));
	}
	/* one untimed pass: caches, page faults, lazy setup */
	if (ossl)
		ossl_run(o, j->op, buf, s);
	else
		engine_run(j->op, buf, s);
	pthread_barrier_wait(j->start);
	t0 = now();
	do {
		s += BUF_SECT;
		if (ossl)
			ossl_run(o, j->op, buf, s);
		else
			engine_run(j->op, buf, s);
		j->bytes += BUF_BYTES;
	} while (now() - t0 < cell_seconds);
	j->t_end = now();
	if (o) {
		ossl_free(o);
		free(o);
	}
	free(buf);
	return NULL;
}

static double measure_once(int col, enum op op, int threads)
{
	struct job jobs[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	pthread_barrier_t start;
	unsigned long long bytes = 0;
	double t0, t1 = 0;
	int i;

	if (col == COL_GENERIC)
		loop_aes_set_engine(&loop_aes_generic_engine);
	else if (col <= COL_VAES512)
		loop_aes_set_engine(aesloop_arch_engine(col_path(col)));
	pthread_barrier_init(&start, NULL, threads + 1);
	for (i = 0; i < threads; i++) {
		jobs[i] = (struct job){ .col = col, .op = op, .start = &start };
		pthread_create(&tid[i], NULL, worker, &jobs[i]);
	}
	pthread_barrier_wait(&start);
	t0 = now();
	for (i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		bytes += jobs[i].bytes;
		if (jobs[i].t_end > t1)
			t1 = jobs[i].t_end;
	}
	pthread_barrier_destroy(&start);
	loop_aes_set_engine(&loop_aes_generic_engine);
	return bytes / (t1 - t0) / 1e6;
}

/*
 * The best of ROUNDS short runs: other load on a shared machine only ever
 * slows a run down, so the fastest is the closest to what the code can do.
 */
#define ROUNDS	3

static double measure(int col, enum op op, int threads)
{
	double best = 0, mbs;
	int r;

	for (r = 0; r < ROUNDS; r++) {
		mbs = measure_once(col, op, threads);
		if (mbs > best)
			best = mbs;
	}
	return best;
}

/* ---- the driver's shape: requests of scattered pages ---- */

static double results[NR_COLS][NR_OPS][MAX_THREADS + 1];

#define PAGE_BYTES	4096
#define PAGE_SECT	(PAGE_BYTES / LOOP_AES_SECTOR_SIZE)
#define POOL_PAGES	1024			/* 4 MiB: beyond L2, as the page cache */
#define BOUNCE_BYTES	(32 * PAGE_BYTES)	/* lo_prealloc's default */

enum { SHAPE_SINGLE_ENC, SHAPE_SINGLE_DEC, SHAPE_V3_ENC, SHAPE_V3_DEC,
       NR_SHAPE_OPS };
static const enum op shape_op[NR_SHAPE_OPS] = {
	OP_SINGLE_ENC, OP_SINGLE_DEC, OP_V3_ENC, OP_V3_DEC,
};
static const size_t shape_bytes[] = { 4096, 64 * 1024, 1024 * 1024 };
#define NR_SHAPES	(sizeof(shape_bytes) / sizeof(shape_bytes[0]))

static u8 *pool[POOL_PAGES];
static u8 *bounce, *scratch;

/* The pages in a random order, so that no two are side by side. */
static void pool_init(void)
{
	u32 x = 99;
	int i;

	for (i = 0; i < POOL_PAGES; i++) {
		pool[i] = aligned_alloc(PAGE_BYTES, PAGE_BYTES);
		if (!pool[i])
			exit(1);
		fill(pool[i], PAGE_BYTES, i);
	}
	for (i = POOL_PAGES - 1; i > 0; i--) {
		int j;
		u8 *t;

		x = x * 1103515245 + 12345;
		j = (int)((x >> 8) % (u32)(i + 1));
		t = pool[i];
		pool[i] = pool[j];
		pool[j] = t;
	}
	bounce = aligned_alloc(PAGE_BYTES, BOUNCE_BYTES);
	scratch = aligned_alloc(64, LOOP_AES_SCRATCH);
	if (!bounce || !scratch)
		exit(1);
}

/*
 * One request of @pages pages from pool index @first, as the driver
 * transfers it: @per_page, one call per page (as the driver did before it
 * took whole requests), or the whole request through the _segs()
 * transforms, a bounce area at a time for writes.
 */
static void shape_request(const struct loop_aes_ctx *ctx, int enc,
			  int per_page, int first, int pages, u64 s)
{
	struct loop_aes_seg segs[BOUNCE_BYTES / PAGE_BYTES];
	int i, done;

	if (per_page) {
		for (i = 0; i < pages; i++, s += PAGE_SECT) {
			u8 *page = pool[(first + i) % POOL_PAGES];

			if (enc)
				loop_aes_encrypt(ctx, bounce + i % 32 * PAGE_BYTES,
						 page, PAGE_SECT, s);
			else
				loop_aes_decrypt(ctx, page, page, PAGE_SECT, s);
		}
		return;
	}
	for (done = 0; done < pages;) {
		int n = pages - done;

		if (n > BOUNCE_BYTES / PAGE_BYTES)
			n = BOUNCE_BYTES / PAGE_BYTES;
		for (i = 0; i < n; i++) {
			segs[i].data = pool[(first + done + i) % POOL_PAGES];
			segs[i].len = PAGE_BYTES;
		}
		if (enc)
			loop_aes_encrypt_segs(ctx, bounce, segs, n, s);
		else
			loop_aes_decrypt_segs(ctx, segs, n, s, scratch,
					      LOOP_AES_SCRATCH);
		done += n;
		s += (u64)n * PAGE_SECT;
	}
}

/* Ways to run a shape row: the columns of the table. */
enum { SHAPE_PER_PAGE, SHAPE_REQUEST, SHAPE_ENGINE, NR_SHAPE_COLS };

/* MB/s of one short run of @how. */
static double shape_once(int sop, size_t bytes, int how, u8 *buf)
{
	enum op op = shape_op[sop];
	const struct loop_aes_ctx *ctx = op <= OP_SINGLE_DEC ? ctx_single : ctx_v3;
	int enc = op == OP_SINGLE_ENC || op == OP_V3_ENC;
	int pages = (int)(bytes / PAGE_BYTES);
	static int first;
	unsigned long long done = 0;
	double t0 = now(), t;
	u64 s = 1000;

	do {
		if (how == SHAPE_ENGINE) {
			engine_run(op, buf, s);
			s += BUF_SECT;
			done += BUF_BYTES;
			continue;
		}
		shape_request(ctx, enc, how == SHAPE_PER_PAGE, first, pages, s);
		first = (first + pages) % POOL_PAGES;
		s += bytes / LOOP_AES_SECTOR_SIZE;
		done += bytes;
	} while ((t = now() - t0) < cell_seconds);
	return done / t / 1e6;
}

static double shape_results[NR_SHAPE_OPS][NR_SHAPES][NR_SHAPE_COLS];

/*
 * The three columns of a row in turn, ROUNDS times, the best of each: the
 * engine on its contiguous buffer is measured beside the request shapes,
 * so that their ratio holds on a busy machine too.
 */
static void shape_row(int sop, int i, u8 *buf)
{
	int r, how;

	for (r = 0; r < ROUNDS; r++)
		for (how = 0; how < NR_SHAPE_COLS; how++) {
			double mbs = shape_once(sop, shape_bytes[i], how, buf);

			if (mbs > shape_results[sop][i][how])
				shape_results[sop][i][how] = mbs;
		}
}

/* Fills shape_results; returns the engine's column. */
static int bench_shapes(void)
{
	const char *rejected = NULL;
	const struct loop_aes_engine *e = loop_aes_probe(&rejected);
	int col = COL_GENERIC, sop, i;
	u8 *buf;

	for (i = COL_SSSE3; e && i <= COL_VAES512; i++)
		if (!strcmp(e->name, col_names[i]))
			col = i;
	loop_aes_set_engine(col == COL_GENERIC ? &loop_aes_generic_engine : e);
	pool_init();
	buf = aligned_alloc(64, BUF_BYTES);
	if (!buf)
		exit(1);
	fill(buf, BUF_BYTES, 7);
	for (sop = 0; sop < NR_SHAPE_OPS; sop++)
		for (i = 0; i < (int)NR_SHAPES; i++)
			shape_row(sop, i, buf);
	free(buf);
	loop_aes_set_engine(&loop_aes_generic_engine);
	return col;
}

static void print_shapes(int tsv, int col)
{
	int sop, i;

	if (!tsv)
		printf("\nthe driver's shape: %s, 1 thread, requests of 4 KiB pages scattered over %d MiB;\n"
		       "per-page: a transfer call per page (the driver before whole requests); request: the whole\n"
		       "request through loop_aes_encrypt_segs (into a %d KiB bounce area) / _decrypt_segs (in place),\n"
		       "as the module calls it; engine: the same engine on the contiguous %d KiB buffer,\n"
		       "measured in turn with them (best of %d each)\n"
		       "%-12s %9s %10s %10s %10s %14s %14s\n",
		       col_names[col], POOL_PAGES * PAGE_BYTES >> 20,
		       BOUNCE_BYTES / 1024, BUF_BYTES / 1024, ROUNDS, "operation",
		       "request", "per-page", "request", "engine",
		       "per-page/eng", "request/eng");
	for (sop = 0; sop < NR_SHAPE_OPS; sop++)
		for (i = 0; i < (int)NR_SHAPES; i++) {
			double *r = shape_results[sop][i];
			double eng = r[SHAPE_ENGINE];

			if (tsv) {
				printf("shape\t%s\t%zu\tper-page\t%.1f\n",
				       op_names[shape_op[sop]], shape_bytes[i], r[0]);
				printf("shape\t%s\t%zu\trequest\t%.1f\n",
				       op_names[shape_op[sop]], shape_bytes[i], r[1]);
				printf("shape\t%s\t%zu\tengine\t%.1f\n",
				       op_names[shape_op[sop]], shape_bytes[i], r[2]);
				continue;
			}
			printf("%-12s %6zuKiB %10.0f %10.0f %10.0f %13.2fx %13.2fx\n",
			       op_names[shape_op[sop]], shape_bytes[i] / 1024,
			       r[0], r[1], eng, eng > 0 ? r[0] / eng : 0,
			       eng > 0 ? r[1] / eng : 0);
		}
}

/* ---- whole processes: cat, aespipe and aesloop-pipe ---- */

enum { PIPE_SINGLE_ENC, PIPE_SINGLE_DEC, PIPE_V2_ENC, PIPE_V2_DEC, PIPE_V3_ENC,
       PIPE_V3_DEC, NR_PIPE };

static const char *const pipe_names[NR_PIPE] = {
	"single-enc", "single-dec", "v2-enc", "v2-dec", "v3-enc", "v3-dec"
};

/*
 * The runs of an operation, in their order within a round.  The first two
 * read and write the files themselves (PROG <in >out); the piped ones get
 * their input through a pipe from cat (cat <in | PROG >out), beside the
 * pipe's own limit, cat <in | cat >out: what the pipe and the output file
 * allow a program that has every byte in user space.  (A lone cat <in >out
 * is no such peer: GNU cat copies a file to a file with copy_file_range(),
 * inside the kernel.)
 */
enum { RUN_AESPIPE, RUN_OURS, RUN_CAT_PIPED, RUN_AESPIPE_PIPED, RUN_OURS_PIPED,
       NR_RUN };

static const char *const run_names[NR_RUN] = {
	"aespipe", "aesloop-pipe", "piped-cat", "piped-aespipe",
	"piped-aesloop-pipe"
};

#define PIPE_ROUNDS	5	/* --quick: 3 */

struct pipe_result {
	double mbs[NR_RUN];	/* medians of the rounds; 0: a run failed */
	int same;		/* every run gave aespipe's bytes */
	char note[160];
};

struct pipe_run {
	char src[128], dst[128], cmd[1024];
};

/* Run "sh -c CMD" and return its wall time, or -1 if it failed. */
static double run_timed(const char *cmd)
{
	double t0 = now();
	int st = system(cmd);

	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return now() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Run @k of operation @t.  Encryptions in the file runs write the
 * program's ciphertext (ct0-* aespipe's, ct1-* aesloop-pipe's), which its
 * decryptions read; cat copies aesloop-pipe's.  Everything else writes
 * one scratch file.
 */
static void pipe_run(struct pipe_run *pr, const char *dir, const char *ours,
		     int t, int k)
{
	static const char *const family[3] = { "single", "v2", "v3" };
	int f = t / 2, dec = t % 2, piped = k >= RUN_CAT_PIPED;
	int p = k != RUN_AESPIPE && k != RUN_AESPIPE_PIPED;
	const char *prog = k == RUN_CAT_PIPED ? "cat" : p ? ours : "aespipe";
	char ct[128], opts[256] = "";

	snprintf(ct, sizeof(ct), "%s/ct%d-%s", dir, p, family[f]);
	if (dec)
		snprintf(pr->src, sizeof(pr->src), "%s", ct);
	else
		snprintf(pr->src, sizeof(pr->src), "%s/plain", dir);
	if (!dec && !piped)
		snprintf(pr->dst, sizeof(pr->dst), "%s", ct);
	else
		snprintf(pr->dst, sizeof(pr->dst), "%s/out", dir);
	if (k != RUN_CAT_PIPED && f)
		snprintf(opts, sizeof(opts), "-e AES128 %s -P %s/keys%d",
			 dec ? "-d" : "", dir, f == 1 ? 64 : 65);
	else if (k != RUN_CAT_PIPED)
		snprintf(opts, sizeof(opts), "-e AES128 %s -p 3 3<%s/pass",
			 dec ? "-d" : "", dir);
	if (piped)
		snprintf(pr->cmd, sizeof(pr->cmd), "cat <%s | %s %s >%s 2>%s/err",
			 pr->src, prog, opts, pr->dst, dir);
	else
		snprintf(pr->cmd, sizeof(pr->cmd), "%s %s <%s >%s 2>%s/err",
			 prog, opts, pr->src, pr->dst, dir);
}

/* The first line of the last run's standard error into @res's note. */
static void pipe_note(struct pipe_result *res, const char *dir, int k)
{
	char err[256] = "", path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/err", dir);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(err, sizeof(err), f))
			err[0] = 0;
		fclose(f);
	}
	err[strcspn(err, "\n")] = 0;
	snprintf(res->note, sizeof(res->note), "%s failed: %.100s",
		 run_names[k], err);
}

static void pipe_files(const char *dir)
{
	char path[160];
	FILE *f;
	u8 *data;
	int n, r, i;

	snprintf(path, sizeof(path), "%s/plain", dir);
	data = malloc(PIPE_BYTES);
	if (!data)
		exit(1);
	fill(data, PIPE_BYTES, 99);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, PIPE_BYTES, f) != PIPE_BYTES || fclose(f)) {
		fprintf(stderr, "aesloop-bench: cannot write %s\n", path);
		exit(1);
	}
	free(data);
	snprintf(path, sizeof(path), "%s/pass", dir);
	f = fopen(path, "w");
	fputs("correct horse battery staple, twice\n", f);
	fclose(f);
	/*
	 * key files of 64 lines (v2) and 65 (v3), the same first 64; and
	 * keys65b, 65 other lines (the re-encryption's new keys)
	 */
	for (n = 64; n <= 66; n++) {
		snprintf(path, sizeof(path), n == 66 ? "%s/keys65b" : "%s/keys%d",
			 dir, n);
		f = fopen(path, "w");
		for (r = 0; r < (n == 66 ? 65 : n); r++) {
			u8 line[40];

			fill(line, sizeof(line), (n == 66 ? 2000 : 1000) + r);
			for (i = 0; i < 40; i++)
				fputc('a' + line[i] % 26, f);
			fputc('\n', f);
		}
		fclose(f);
	}
}

static void bench_pipes(const char *dir, const char *ours, int rounds,
			struct pipe_result *res, int keep)
{
	static const char *const files[] = {
		"plain", "pass", "keys64", "keys65", "keys65b", "out", "err", "ct0-single",
		"ct1-single", "ct0-v2", "ct1-v2", "ct0-v3", "ct1-v3",
	};
	static double sec[NR_PIPE][NR_RUN][PIPE_ROUNDS];
	char cmd[512], path[160];
	struct pipe_run pr, ref;
	int t, k, r;

	pipe_files(dir);
	for (t = 0; t < NR_PIPE; t++) {
		memset(&res[t], 0, sizeof(res[t]));
		res[t].same = 1;
	}
	/*
	 * Round by round, and in a round each operation's runs one after the
	 * other, so that a spell of other load on the machine falls on all
	 * of them alike.  The first round also compares each output: a
	 * ciphertext with aespipe's (its file run, the first of the round), a
	 * decryption with the input.
	 */
	for (r = 0; r < rounds; r++)
		for (t = 0; t < NR_PIPE; t++)
			for (k = 0; k < NR_RUN; k++) {
				pipe_run(&pr, dir, ours, t, k);
				sec[t][k][r] = run_timed(pr.cmd);
				if (sec[t][k][r] < 0 && !res[t].note[0])
					pipe_note(&res[t], dir, k);
				if (r || k == RUN_CAT_PIPED ||
				    (k == RUN_AESPIPE && !(t % 2)))
					continue;
				pipe_run(&ref, dir, ours, t, RUN_AESPIPE);
				if (t % 2)
					snprintf(cmd, sizeof(cmd), "cmp -s %s %s/plain",
						 pr.dst, dir);
				else
					snprintf(cmd, sizeof(cmd), "cmp -s %s %s",
						 pr.dst, ref.dst);
				if (sec[t][k][r] < 0 || run_timed(cmd) < 0)
					res[t].same = 0;
			}
	for (t = 0; t < NR_PIPE; t++)
		for (k = 0; k < NR_RUN; k++) {
			qsort(sec[t][k], rounds, sizeof(double), cmp_double);
			if (sec[t][k][0] > 0)
				res[t].mbs[k] = PIPE_BYTES / sec[t][k][rounds / 2] / 1e6;
		}
	for (k = 0; k < (int)(sizeof(files) / sizeof(files[0])); k++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[k]);
		if (!keep)
			unlink(path);
	}
}

/* ---- in-place re-encryption: aesloop-reencrypt and the pipe ---- */

enum { RE_SINGLE_V3, RE_V3_V3, NR_RE };

static const char *const re_names[NR_RE] = { "single-to-v3", "v3-new-keys" };

enum { RE_PIPE, RE_OURS, NR_RE_RUN };

struct re_result {
	double mbs[NR_RE_RUN];	/* medians; 0: a run failed */
	int same;		/* the two give the same bytes */
};

/*
 * The commands of conversion @t in @dir (plaintext, ciphertexts and keys of
 * pipe_files() in @src): the pipe writes @dir/out; the re-encryption
 * rewrites @dir/vol, which @prep copies from the ciphertext first.
 */
static void re_cmds(char *pipe_cmd, char *re_cmd, char *prep, size_t len,
		    const char *src, const char *dir, const char *bindir, int t)
{
	const char *old = t == RE_SINGLE_V3 ? "-p 3 3<" : "-P ";
	const char *old_key = t == RE_SINGLE_V3 ? "pass" : "keys65";
	const char *ct = t == RE_SINGLE_V3 ? "ct1-single" : "ct1-v3";

	snprintf(prep, len, "cp %s/%s %s/vol && sync %s/vol", src, ct, dir, dir);
	snprintf(pipe_cmd, len,
		 "%s/aesloop-pipe -d -e AES128 %s%s/%s <%s/%s | %s/aesloop-pipe -e AES128 -P %s/keys65b >%s/out && sync %s/out",
		 bindir, old, src, old_key, src, ct, bindir, src, dir, dir);
	snprintf(re_cmd, len,
		 "%s/aesloop-reencrypt -q --force -e AES128 %s%s/%s --new-cleartextkey %s/keys65b %s/vol",
		 bindir, old, src, old_key, src, dir);
}

/*
 * aesloop-reencrypt against the pipe in @dir, @rounds rounds; @src holds
 * pipe_files()' files and the ciphertexts of bench_pipes().
 */
static void bench_reencrypt(const char *src, const char *dir, const char *bindir,
			    int rounds, struct re_result *res)
{
	static double sec[NR_RE][NR_RE_RUN][PIPE_ROUNDS];
	char pipe_cmd[1024], re_cmd[1024], prep[1024], cmd[1200];
	int t, k, r;

	for (t = 0; t < NR_RE; t++) {
		memset(&res[t], 0, sizeof(res[t]));
		for (r = 0; r < rounds; r++) {
			re_cmds(pipe_cmd, re_cmd, prep, sizeof(prep), src, dir,
				bindir, t);
			sec[t][RE_PIPE][r] = run_timed(pipe_cmd);
			sec[t][RE_OURS][r] = run_timed(prep) < 0 ? -1 :
					     run_timed(re_cmd);
			if (r)
				continue;
			snprintf(cmd, sizeof(cmd), "cmp -s %s/vol %s/out", dir, dir);
			res[t].same = sec[t][RE_PIPE][0] > 0 &&
				      sec[t][RE_OURS][0] > 0 && run_timed(cmd) >= 0;
		}
		for (k = 0; k < NR_RE_RUN; k++) {
			qsort(sec[t][k], rounds, sizeof(double), cmp_double);
			if (sec[t][k][0] > 0)
				res[t].mbs[k] = PIPE_BYTES / sec[t][k][rounds / 2] / 1e6;
		}
	}
	snprintf(cmd, sizeof(cmd), "rm -f %s/vol %s/out %s/vol.reencrypt", dir, dir, dir);
	run_timed(cmd);
}

/* ---- OpenSSL without AES-NI, in a child with OPENSSL_ia32cap set ---- */

static void openssl_noaesni(const char *self, double res[NR_OPS][MAX_THREADS + 1])
{
	char cmd[4096 + 128], line[256];
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "OPENSSL_ia32cap='~0x200000200000000' '%s' --child-openssl %g",
		 self, cell_seconds);
	f = popen(cmd, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		int op, thr;
		double mbs;

		if (sscanf(line, "%d %d %lf", &op, &thr, &mbs) == 3 &&
		    op >= 0 && op < NR_OPS && thr >= 1 && thr <= MAX_THREADS)
			res[op][thr] = mbs;
	}
	pclose(f);
}

/* ---- output ---- */

static double best_engine(enum op op, int thr, const char **name)
{
	double best = 0;
	int c;

	for (c = COL_AESNI; c <= COL_VAES512; c++)
		if (results[c][op][thr] > best) {
			best = results[c][op][thr];
			if (name)
				*name = col_names[c];
		}
	return best;
}

static void target(int tsv, const char *what, double got, double base,
		   double want, const char *detail)
{
	double ratio = base > 0 ? got / base : 0;

	if (tsv) {
		printf("target\t%s\t%.2f\t%.2f\t%s\n", what, ratio, want,
		       base <= 0 ? "n/a" : ratio >= want ? "met" : "missed");
		return;
	}
	if (base <= 0) {
		printf("  %-44s n/a (%s)\n", what, detail);
		return;
	}
	printf("  %-44s %6.2fx  (want >= %gx) %-6s %s\n", what, ratio, want,
	       ratio >= want ? "MET" : "MISSED", detail);
}

/* The engines and OpenSSL in process, then the driver's shape; printed. */
static int bench_inproc(int tsv, const int *have, const char *self)
{
	int c, op, thr, shape_col;

	if (!tsv) {
		printf("aesloop-bench: MB/s (1e6 bytes/s); AES-128 unless named; in process: %d KiB per thread, in place,\n"
		       "through loop_aes_encrypt/decrypt on a contiguous buffer (batches of %d sectors); openssl: EVP one sector at a time,\n"
		       "IV set per sector (v2/v3: OpenSSL MD5 for the IV); openssl-noaesni: OPENSSL_ia32cap=~0x200000200000000\n\n",
		       BUF_BYTES / 1024, LOOP_AES_BATCH);
		printf("%-18s %3s", "operation", "thr");
		for (c = 0; c < NR_COLS; c++)
			printf(" %11s", col_names[c]);
		printf("\n");
		fflush(stdout);
	}
	for (op = 0; op < NR_OPS; op++)
		for (thr = 1; thr <= MAX_THREADS; thr++)
			for (c = 0; c < COL_OSSL_NOAESNI; c++)
				if (have[c])
					results[c][op][thr] = measure(c, op, thr);
	{
		double noaesni[NR_OPS][MAX_THREADS + 1] = { { 0 } };

		openssl_noaesni(self, noaesni);
		for (op = 0; op < NR_OPS; op++)
			for (thr = 1; thr <= MAX_THREADS; thr++)
				results[COL_OSSL_NOAESNI][op][thr] = noaesni[op][thr];
	}
	for (op = 0; op < NR_OPS; op++)
		for (thr = 1; thr <= MAX_THREADS; thr++) {
			if (tsv) {
				for (c = 0; c < NR_COLS; c++)
					if (have[c])
						printf("inproc\t%s\t%d\t%s\t%.1f\n",
						       op_names[op], thr,
						       col_names[c],
						       results[c][op][thr]);
				continue;
			}
			printf("%-18s %3d", op_names[op], thr);
			for (c = 0; c < NR_COLS; c++) {
				if (have[c])
					printf(" %11.0f", results[c][op][thr]);
				else
					printf(" %11s", "-");
			}
			printf("\n");
		}

	shape_col = bench_shapes();
	print_shapes(tsv, shape_col);
	return shape_col;
}

int main(int argc, char **argv)
{
	int tsv = 0, child = 0, quick = 0, pipes_only = 0, no_pipes = 0;
	int i, c, k, op, thr;
	int have[NR_COLS], shape_col = COL_GENERIC;
	struct pipe_result pipes[NR_PIPE];
	struct re_result re_shm[NR_RE], re_disk[NR_RE];
	char disk_dir[1100];
	int rounds;
	char self[1024], pipe_prog[1100], dir[] = "/dev/shm/aesloop-bench.XXXXXX";
	const char *name = "";
	ssize_t n;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--tsv")) {
			tsv = 1;
		} else if (!strcmp(argv[i], "--quick")) {
			quick = 1;
		} else if (!strcmp(argv[i], "--pipes")) {
			pipes_only = 1;
		} else if (!strcmp(argv[i], "--engines")) {
			no_pipes = 1;
		} else if (!strcmp(argv[i], "--child-openssl") && i + 1 < argc) {
			child = 1;
			cell_seconds = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: aesloop-bench [--tsv] [--quick] [--pipes | --engines]\n");
			return 2;
		}
	}
	if (quick)
		cell_seconds = 0.02;
	fill(slots, sizeof(slots), 42);
	ctx_single = make_ctx(1, 16);
	ctx_single256 = make_ctx(1, 32);
	ctx_v2 = make_ctx(2, 16);
	ctx_v3 = make_ctx(3, 16);

	if (child) {
		for (op = 0; op < NR_OPS; op++)
			for (thr = 1; thr <= MAX_THREADS; thr++)
				printf("%d %d %.1f\n", op, thr,
				       measure(COL_OSSL, op, thr));
		return 0;
	}

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = 0;
	/* build/bin/aesloop-bench -> build/bin/aesloop-pipe */
	snprintf(pipe_prog, sizeof(pipe_prog), "%.*s/aesloop-pipe",
		 (int)(strrchr(self, '/') - self), self);

	have[COL_GENERIC] = have[COL_OSSL] = have[COL_OSSL_NOAESNI] = 1;
	for (c = COL_SSSE3; c <= COL_VAES512; c++)
		have[c] = aesloop_arch_cpu_has(col_path(c), NULL);
	for (c = COL_SSSE3; c <= COL_VAES512; c++)
		if (have[c] && loop_aes_selftest(aesloop_arch_engine(col_path(c)))) {
			fprintf(stderr, "aesloop-bench: %s fails its self-test\n",
				col_names[c]);
			have[c] = 0;
		}

	if (!pipes_only)
		shape_col = bench_inproc(tsv, have, self);
	if (no_pipes)
		return 0;

	if (!mkdtemp(dir)) {
		perror("aesloop-bench: mkdtemp in /dev/shm");
		return 1;
	}
	rounds = quick ? 3 : PIPE_ROUNDS;
	bench_pipes(dir, pipe_prog, rounds, pipes, 1);
	*strrchr(pipe_prog, '/') = 0;
	bench_reencrypt(dir, dir, pipe_prog, rounds, re_shm);
	snprintf(disk_dir, sizeof(disk_dir), "%s/aesloop-bench.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp");
	if (mkdtemp(disk_dir)) {
		bench_reencrypt(dir, disk_dir, pipe_prog, rounds, re_disk);
		rmdir(disk_dir);
	} else {
		perror("aesloop-bench: mkdtemp on disk");
	}
	snprintf(disk_dir, sizeof(disk_dir), "rm -rf %s", dir);
	if (system(disk_dir))
		fprintf(stderr, "aesloop-bench: cannot remove %s\n", dir);
	if (tsv) {
		for (i = 0; i < NR_PIPE; i++)
			for (k = 0; k < NR_RUN; k++)
				printf("pipe\t%s\t1\t%s\t%.1f\n", pipe_names[i],
				       run_names[k], pipes[i].mbs[k]);
	} else {
		printf("\nwhole processes, %d MiB file in tmpfs to tmpfs, AES-128 (v2, v3: -P key files of 64, 65 lines),\n"
		       "medians of %d rounds; same output: every run gave aespipe's bytes (decryption: the input)\n",
		       PIPE_BYTES >> 20, quick ? 3 : PIPE_ROUNDS);
		printf("%-12s %-31s | %s\n", "", "PROG <in >out",
		       "cat <in | PROG >out");
		printf("%-12s %9s %13s %7s | %7s %9s %13s %7s  %s\n", "operation",
		       "aespipe", "aesloop-pipe", "ratio", "cat", "aespipe",
		       "aesloop-pipe", "vs cat", "same output");
		for (i = 0; i < NR_PIPE; i++) {
			const double *m = pipes[i].mbs;

			printf("%-12s %9.0f %13.0f %6.2fx | %7.0f %9.0f %13.0f %6.2fx  %s %s\n",
			       pipe_names[i], m[RUN_AESPIPE], m[RUN_OURS],
			       m[RUN_AESPIPE] > 0 ? m[RUN_OURS] / m[RUN_AESPIPE] : 0,
			       m[RUN_CAT_PIPED], m[RUN_AESPIPE_PIPED],
			       m[RUN_OURS_PIPED], m[RUN_CAT_PIPED] > 0 ?
			       m[RUN_OURS_PIPED] / m[RUN_CAT_PIPED] : 0,
			       pipes[i].same ? "yes" : "NO", pipes[i].note);
		}
		printf("\nin-place re-encryption of the same %d MiB, AES-128, to v3 under a key file, medians of %d rounds:\n"
		       "pipe: aesloop-pipe -d <ct | aesloop-pipe -P new >out && sync out; aesloop-reencrypt: ct copied to vol,\n"
		       "rewritten in place through its journal, synced per 4 MiB chunk; same output: both give the same bytes\n",
		       PIPE_BYTES >> 20, rounds);
		printf("%-12s %-6s %9s %18s %7s  %s\n", "conversion", "where", "pipe",
		       "aesloop-reencrypt", "ratio", "same output");
		for (i = 0; i < NR_RE; i++)
			for (k = 0; k < 2; k++) {
				const struct re_result *e = k ? &re_disk[i] : &re_shm[i];

				printf("%-12s %-6s %9.0f %18.0f %6.2fx  %s\n", re_names[i],
				       k ? "disk" : "tmpfs", e->mbs[RE_PIPE], e->mbs[RE_OURS],
				       e->mbs[RE_PIPE] > 0 ? e->mbs[RE_OURS] / e->mbs[RE_PIPE] : 0,
				       e->same ? "yes" : "NO");
			}
		printf("\ntargets (1 thread, ratios from this run):\n");
	}
	if (tsv)
		for (i = 0; i < NR_RE; i++)
			for (k = 0; k < NR_RE_RUN; k++) {
				printf("reencrypt\t%s\t1\t%s-tmpfs\t%.1f\n", re_names[i],
				       k ? "aesloop-reencrypt" : "pipe", re_shm[i].mbs[k]);
				printf("reencrypt\t%s\t1\t%s-disk\t%.1f\n", re_names[i],
				       k ? "aesloop-reencrypt" : "pipe", re_disk[i].mbs[k]);
			}
	for (i = 0; i < NR_RE; i++)
		for (k = 0; k < 2; k++) {
			const struct re_result *e = k ? &re_disk[i] : &re_shm[i];
			char what[64];

			snprintf(what, sizeof(what), "reencrypt %s vs the pipe, %s",
				 re_names[i], k ? "disk" : "tmpfs");
			target(tsv, what, e->same ? e->mbs[RE_OURS] : 0, e->mbs[RE_PIPE],
			       0.5, e->same ? "in place, journal" : "outputs differ");
		}

	for (i = 0; i < NR_PIPE; i++) {
		char what[64];

		snprintf(what, sizeof(what), "aesloop-pipe %s vs cat, both piped",
			 pipe_names[i]);
		target(tsv, what, pipes[i].mbs[RUN_OURS_PIPED],
		       pipes[i].mbs[RUN_CAT_PIPED], 0.8,
		       pipes[i].note[0] ? pipes[i].note : "cat <in | PROG >out");
	}
	target(tsv, "aesloop-pipe v3 enc vs aespipe v3 enc",
	       pipes[PIPE_V3_ENC].mbs[RUN_OURS], pipes[PIPE_V3_ENC].mbs[RUN_AESPIPE], 5,
	       pipes[PIPE_V3_ENC].note[0] ? pipes[PIPE_V3_ENC].note :
	       "whole processes");
	target(tsv, "aesloop-pipe v3 dec vs aespipe v3 dec",
	       pipes[PIPE_V3_DEC].mbs[RUN_OURS], pipes[PIPE_V3_DEC].mbs[RUN_AESPIPE], 5,
	       pipes[PIPE_V3_DEC].note[0] ? pipes[PIPE_V3_DEC].note :
	       "whole processes");
	if (pipes_only)
		return 0;
	best_engine(OP_SINGLE_ENC, 1, &name);
	target(tsv, "single-key encryption vs openssl",
	       best_engine(OP_SINGLE_ENC, 1, NULL),
	       results[COL_OSSL][OP_SINGLE_ENC][1], 10, name);
	best_engine(OP_SINGLE_DEC, 1, &name);
	target(tsv, "single-key decryption vs openssl",
	       best_engine(OP_SINGLE_DEC, 1, NULL),
	       results[COL_OSSL][OP_SINGLE_DEC][1], 3, name);
	best_engine(OP_V2_ENC, 1, &name);
	target(tsv, "v2 encryption vs aespipe v3 encryption",
	       best_engine(OP_V2_ENC, 1, NULL), pipes[PIPE_V3_ENC].mbs[RUN_AESPIPE], 5, name);
	best_engine(OP_V2_DEC, 1, &name);
	target(tsv, "v2 decryption vs aespipe v3 decryption",
	       best_engine(OP_V2_DEC, 1, NULL), pipes[PIPE_V3_DEC].mbs[RUN_AESPIPE], 5, name);
	best_engine(OP_V3_ENC, 1, &name);
	target(tsv, "v3 encryption vs aespipe v3 encryption",
	       best_engine(OP_V3_ENC, 1, NULL), pipes[PIPE_V3_ENC].mbs[RUN_AESPIPE], 5, name);
	best_engine(OP_V3_DEC, 1, &name);
	target(tsv, "v3 decryption vs aespipe v3 decryption",
	       best_engine(OP_V3_DEC, 1, NULL), pipes[PIPE_V3_DEC].mbs[RUN_AESPIPE], 5, name);
	for (i = 0; i < NR_SHAPE_OPS; i++) {
		char what[64];

		snprintf(what, sizeof(what), "%s, 64 KiB requests, vs the engine",
			 op_names[shape_op[i]]);
		target(tsv, what, shape_results[i][1][SHAPE_REQUEST],
		       shape_results[i][1][SHAPE_ENGINE], 0.8, col_names[shape_col]);
	}
	target(tsv, "generic encryption vs openssl without AES-NI",
	       results[COL_GENERIC][OP_SINGLE_ENC][1],
	       results[COL_OSSL_NOAESNI][OP_SINGLE_ENC][1], 1, "generic C");
	target(tsv, "generic decryption vs openssl without AES-NI",
	       results[COL_GENERIC][OP_SINGLE_DEC][1],
	       results[COL_OSSL_NOAESNI][OP_SINGLE_DEC][1], 1, "generic C");
	target(tsv, "ssse3 encryption vs openssl without AES-NI",
	       results[COL_SSSE3][OP_SINGLE_ENC][1],
	       results[COL_OSSL_NOAESNI][OP_SINGLE_ENC][1], 1, "ssse3");
	target(tsv, "ssse3 decryption vs openssl without AES-NI",
	       results[COL_SSSE3][OP_SINGLE_DEC][1],
	       results[COL_OSSL_NOAESNI][OP_SINGLE_DEC][1], 1, "ssse3");
	return 0;
}
