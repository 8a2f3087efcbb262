/* SPDX-License-Identifier: GPL-2.0 */
/*
 * testutil.h - the little that host tests share: result lines, hex, files.
 *
 * Each check prints one TAP line as kselftest does ("ok N name",
 * "not ok N name # details", "ok N name # SKIP why"; tests/tap.sh has the
 * format), and t_exit() the plan; tests/host/run.sh joins the streams.
 */
#ifndef AESLOOP_TESTUTIL_H
#define AESLOOP_TESTUTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int t_failures;
static int t_count;

static int t_began;

static inline void t_begin(void)
{
	if (t_began)
		return;
	/*
	 * Line-buffered, so that what a library prints on stderr (merged
	 * into the same pipe by the runners) never splits a result line.
	 */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	t_began = 1;
}

/* A comment line ("# ..."): what a reader of the output needs besides results. */
static inline void __attribute__((format(printf, 1, 2)))
t_note(const char *fmt, ...)
{
	va_list ap;

	t_begin();
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static inline void t_vline(const char *state, const char *name,
			   const char *fmt, va_list ap)
{
	t_begin();
	t_count++;
	printf("%s %d %s", state, t_count, name);
	if (fmt) {
		printf(" # %s", strcmp(state, "ok") ? "" : "SKIP ");
		vprintf(fmt, ap);
	}
	printf("\n");
}

/* One check: passed when @ok, else failed with the details @fmt formats. */
static inline void t_result(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (ok) {
		t_vline("ok", name, NULL, ap);
	} else {
		t_failures++;
		t_vline("not ok", name, fmt, ap);
	}
	va_end(ap);
}

/* A check that could not run here, and why. */
static inline void __attribute__((format(printf, 2, 3)))
t_skip(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	t_vline("ok", name, fmt, ap);
	va_end(ap);
}

/* The plan, last; main's return value: 1 when a check failed. */
static inline int t_exit(void)
{
	printf("1..%d\n", t_count);
	return t_failures ? 1 : 0;
}

/* Parse @len bytes of hex from @s; returns 0 or -1 on bad input. */
static inline int t_unhex(unsigned char *out, size_t len, const char *s)
{
	size_t i;

	if (strlen(s) != 2 * len)
		return -1;
	for (i = 0; i < len; i++) {
		unsigned int v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (unsigned char)v;
	}
	return 0;
}

static inline void t_hex(char *out, const unsigned char *in, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", in[i]);
}

/* The vectors folder: $AESLOOP_VECTORS, else ../shared/vectors. */
static inline const char *t_vectors_dir(void)
{
	const char *d = getenv("AESLOOP_VECTORS");

	return d && *d ? d : "../shared/vectors";
}

/* Read a whole file into a malloc'd buffer; NULL if it cannot. */
static inline unsigned char *t_read_file(const char *name, size_t *len)
{
	char path[4096];
	unsigned char *buf = NULL;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", t_vectors_dir(), name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc(n ? n : 1);
		if (buf && fread(buf, 1, n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = n;
	}
	fclose(f);
	return buf;
}

/*
 * Split a tab-separated line in place into at most @max fields.
 * Returns the number of fields.
 */
static inline int t_split_tsv(char *line, char **field, int max)
{
	int n = 0;
	char *p = line;

	line[strcspn(line, "\r\n")] = 0;
	while (n < max) {
		field[n++] = p;
		p = strchr(p, '\t');
		if (!p)
			break;
		*p++ = 0;
	}
	return n;
}

/*
 * Test data: xorshift64*, plenty for it, and repeatable from the seed each
 * test prints.  Set rng_state (never 0) before the first call.
 */
static uint64_t rng_state;

static inline uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static inline void rng_fill(unsigned char *p, size_t n)
{
	while (n--)
		*p++ = (unsigned char)(rng_next() >> 56);
}

/*
 * The run's seed: $AESLOOP_SEED, else the time; printed, so that a failed
 * run can be repeated, and rng_state set from it.
 */
static inline uint64_t t_seed(void)
{
	const char *env = getenv("AESLOOP_SEED");
	uint64_t seed = env && *env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);

	rng_state = seed ? seed : 1;
	t_note("seed %llu", (unsigned long long)seed);
	return seed;
}

/*
 * An output of @len bytes at @off in @area (@size bytes, filled with 0xa5
 * before): nothing outside it was written.
 */
static inline int t_guards_intact(const unsigned char *area, size_t size,
				  size_t off, size_t len)
{
	size_t i;

	for (i = 0; i < off; i++)
		if (area[i] != 0xa5)
			return 0;
	for (i = off + len; i < size; i++)
		if (area[i] != 0xa5)
			return 0;
	return 1;
}

#endif /* AESLOOP_TESTUTIL_H */
