// SPDX-License-Identifier: GPL-2.0
/*
 * memhog - dirty more anonymous memory than the guest has, and check it
 * back, for the swap tests.
 *
 *   memhog MIB PASSES
 *
 * Maps MIB MiB of anonymous memory and fills every page with words that
 * depend on the page's index and the pass (xorshift64).  Each later pass
 * first checks every page against the previous pass, then refills it, so
 * every pass swaps the whole area out and in again; the last pass only
 * checks.  Prints one line per pass; exits 0 when every word read back as
 * written, 1 on the first wrong page (its index and pass are printed),
 * 2 on a usage or setup error.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t word_seed(uint64_t page, uint64_t pass)
{
	/* Never 0, which xorshift would keep. */
	return (page + 1) * 0x9E3779B97F4A7C15ULL ^ (pass << 48) ^ 1;
}

static uint64_t next(uint64_t x)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

static void fill(uint64_t *p, size_t words, uint64_t page, uint64_t pass)
{
	uint64_t x = word_seed(page, pass);

	for (size_t i = 0; i < words; i++) {
		x = next(x);
		p[i] = x;
	}
}

static int check(const uint64_t *p, size_t words, uint64_t page,
		 uint64_t pass)
{
	uint64_t x = word_seed(page, pass);

	for (size_t i = 0; i < words; i++) {
		x = next(x);
		if (p[i] != x)
			return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	long page_size = sysconf(_SC_PAGESIZE);
	unsigned long mib, passes;
	size_t pages, words, n;
	uint8_t *area;

	if (argc != 3 || (mib = strtoul(argv[1], NULL, 0)) == 0 ||
	    (passes = strtoul(argv[2], NULL, 0)) < 2 || page_size <= 0) {
		fprintf(stderr, "usage: memhog MIB PASSES (PASSES >= 2)\n");
		return 2;
	}
	pages = (size_t)mib * 1024 * 1024 / (size_t)page_size;
	words = (size_t)page_size / sizeof(uint64_t);
	area = mmap(NULL, pages * (size_t)page_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		perror("memhog: mmap");
		return 2;
	}
	for (uint64_t pass = 1; pass <= passes; pass++) {
		for (n = 0; n < pages; n++) {
			uint64_t *p = (uint64_t *)(area + n * (size_t)page_size);

			if (pass > 1 && !check(p, words, n, pass - 1)) {
				printf("memhog: page %zu of pass %" PRIu64 " read back wrong\n",
				       n, pass - 1);
				return 1;
			}
			if (pass < passes)
				fill(p, words, n, pass);
		}
		printf("memhog: pass %" PRIu64 " of %lu over %lu MiB done\n",
		       pass, passes, mib);
		fflush(stdout);
	}
	return 0;
}
