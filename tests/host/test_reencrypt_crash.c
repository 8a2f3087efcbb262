// SPDX-License-Identifier: GPL-2.0
// covers: aesloop-reencrypt, crash consistency
/*
 * test_reencrypt_crash.c - aesloop-reencrypt's journal (tools/reencrypt.c)
 * against power loss, which a killed process (t-reencrypt.sh) cannot show:
 * its writes are still in the page cache.
 *
 * reencrypt.c is built into this program with its pread, pwrite, fdatasync
 * and sync_file_range on the volume and the journal replaced by a model of
 * a disk: a write lands in the page cache (what reads see), and reaches the
 * disk at the next fdatasync of its file.  At a power cut, each write since
 * its file's last sync has reached the disk whole, not at all, or in part
 * (some of its 512-byte sectors), chosen at random; the rest is lost.
 *
 * For every write and sync of a whole conversion (a volume of 17 chunks, the
 * last one short), and for several random outcomes at each: the power is
 * cut there, a new run (reenc_recover(), the chunks, reenc_finish()) starts
 * from what the disk holds, sometimes cut again itself, and at the end the
 * volume must decrypt with the new keys to the plaintext, sector for
 * sector.  Single-key to multi-key-v3, and v3 to v3 under other keys.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "engines.h"
#include "loop_aes.h"
#include "testutil.h"

/* ---- the disk model ---- */

#define SIM_VOL		1000	/* the descriptors reencrypt.c is given */
#define SIM_JOURNAL	1001

struct pending {
	uint64_t off;
	size_t len;
	uint8_t *data;
};

struct simfile {
	uint8_t *disk;		/* what a power cut keeps for sure */
	uint8_t *cache;		/* what reads see */
	size_t size;
	struct pending *pend;
	unsigned int npend, cap;
};

static struct simfile sim[2];
static unsigned long sim_ops;	/* writes and syncs so far */
static unsigned long sim_cut_at;	/* cut the power at this op; 0: never */
static bool sim_cut;		/* the power is off: nothing more lands */
static unsigned int sim_seed;

static struct simfile *sim_file(int fd)
{
	return fd == SIM_VOL ? &sim[0] : fd == SIM_JOURNAL ? &sim[1] : NULL;
}

static unsigned int rnd(void)
{
	sim_seed = sim_seed * 1103515245u + 12345u;
	return sim_seed >> 8;
}

static void sim_drop_pending(struct simfile *f)
{
	unsigned int i;

	for (i = 0; i < f->npend; i++)
		free(f->pend[i].data);
	f->npend = 0;
}

/* The power goes: what each file's disk holds then, pending writes at random. */
static void sim_power_cut(void)
{
	unsigned int k, i, s;

	for (k = 0; k < 2; k++) {
		struct simfile *f = &sim[k];

		for (i = 0; i < f->npend; i++) {
			struct pending *p = &f->pend[i];

			switch (rnd() % 3) {
			case 0:		/* lost */
				break;
			case 1:		/* landed whole */
				memcpy(f->disk + p->off, p->data, p->len);
				break;
			default:	/* torn: some of its sectors */
				for (s = 0; s < p->len; s += 512)
					if (rnd() % 2)
						memcpy(f->disk + p->off + s, p->data + s,
						       p->len - s < 512 ? p->len - s : 512);
			}
		}
		sim_drop_pending(f);
		memcpy(f->cache, f->disk, f->size);	/* the next boot reads the disk */
	}
	sim_cut = true;
}

/* Counts an op; at the chosen one the power goes before it happens. */
static bool sim_op_lost(void)
{
	if (sim_cut)
		return true;
	if (sim_cut_at && ++sim_ops == sim_cut_at) {
		sim_power_cut();
		return true;
	}
	if (!sim_cut_at)
		sim_ops++;
	return false;
}

static ssize_t sim_pread(int fd, void *buf, size_t len, off_t off)
{
	struct simfile *f = sim_file(fd);

	if (!f)
		return pread(fd, buf, len, off);
	if ((uint64_t)off >= f->size)
		return 0;
	if (len > f->size - (uint64_t)off)
		len = f->size - (uint64_t)off;
	memcpy(buf, f->cache + off, len);
	return (ssize_t)len;
}

static ssize_t sim_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	struct simfile *f = sim_file(fd);
	struct pending *p;

	if (!f)
		return pwrite(fd, buf, len, off);
	if ((uint64_t)off + len > f->size)
		return -1;	/* nothing grows here */
	if (sim_op_lost())
		return (ssize_t)len;	/* the program goes on; nothing lands */
	memcpy(f->cache + off, buf, len);
	if (f->npend == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 16;
		f->pend = realloc(f->pend, f->cap * sizeof(*f->pend));
		if (!f->pend)
			abort();
	}
	p = &f->pend[f->npend++];
	p->off = (uint64_t)off;
	p->len = len;
	p->data = malloc(len);
	if (!p->data)
		abort();
	memcpy(p->data, buf, len);
	return (ssize_t)len;
}

static int sim_fdatasync(int fd)
{
	struct simfile *f = sim_file(fd);

	if (!f)
		return fdatasync(fd);
	if (sim_op_lost())
		return 0;
	memcpy(f->disk, f->cache, f->size);
	sim_drop_pending(f);
	return 0;
}

static int sim_sync_file_range(int fd, off_t off, off_t len, unsigned int flags)
{
	(void)fd, (void)off, (void)len, (void)flags;
	return 0;
}

#define pread sim_pread
#define pwrite sim_pwrite
#define fdatasync sim_fdatasync
#define sync_file_range sim_sync_file_range
#include "../../tools/reencrypt.c"
#undef pread
#undef pwrite
#undef fdatasync
#undef sync_file_range

/* ---- the conversions ---- */

#define CHUNK_SECT	128		/* 64 KiB, the smallest chunk */
#define NSECT		(16 * CHUNK_SECT + 40)	/* 17 chunks, the last short */
#define VOL_BYTES	((size_t)NSECT * 512)

static uint8_t plain[VOL_BYTES];
static char dir[64];
static char jpath[80];

static struct loop_aes_ctx *ctx_of(unsigned int nkeys, uint8_t seed)
{
	struct loop_aes_ctx *c = calloc(1, loop_aes_ctx_size(LOOP_AES_MULTI_KEYS));
	uint8_t keys[65 * LOOP_AES_KEY_SLOT];
	size_t i;

	for (i = 0; i < sizeof(keys); i++)
		keys[i] = (uint8_t)(seed * 31 + i * 7);
	if (!c || (nkeys == 1 ? loop_aes_setup_single(c, keys, 16) :
		   loop_aes_setup_multi(c, keys, nkeys, 16)))
		abort();
	return c;
}

/*
 * A fresh journal for the volume: the real reenc_journal_create() in a
 * temporary folder, its bytes then the model's journal disk.
 */
static void new_journal(const struct reenc_params *p)
{
	char err[256];
	size_t size = REENC_BLOCK + 2 * (REENC_BLOCK + (size_t)p->chunk_sect * 512);
	int fd;

	unlink(jpath);
	sim_drop_pending(&sim[0]);
	sim_drop_pending(&sim[1]);
	fd = reenc_journal_create(jpath, p, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	sim[1].size = size;
	free(sim[1].disk);
	free(sim[1].cache);
	sim[1].disk = malloc(size);
	sim[1].cache = malloc(size);
	if (!sim[1].disk || !sim[1].cache || pread(fd, sim[1].disk, size, 0) != (ssize_t)size)
		abort();
	memcpy(sim[1].cache, sim[1].disk, size);
	close(fd);
}

/*
 * One run on the model's disks, as the program does it: recover, rewrite
 * the chunks, finish (the journal's real file, an empty stand-in, is what
 * reenc_finish() removes).  Return: 0, or -1 with @why set.
 */
static int one_run(const struct reenc_params *p, const struct loop_aes_ctx *old,
		   const struct loop_aes_ctx *new, char *why, size_t len)
{
	struct reenc r = {
		.p = *p, .vol_fd = SIM_VOL, .jfd = SIM_JOURNAL, .path = jpath,
		.old_ctx = old, .new_ctx = new,
	};
	int fd, rc;

	fd = open(jpath, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	r.old = aligned_alloc(4096, (size_t)p->chunk_sect * 512);
	r.new = aligned_alloc(4096, (size_t)p->chunk_sect * 512);
	if (!r.old || !r.new)
		abort();
	rc = reenc_recover(&r);
	while (!rc && r.done < r.p.nsect)
		rc = reenc_chunk(&r);
	if (!rc)
		rc = reenc_finish(&r, jpath);
	if (rc)
		snprintf(why, len, "%s", r.errmsg);
	free(r.old);
	free(r.new);
	return rc ? -1 : 0;
}

/* The volume's disk, decrypted with @new: the plaintext? */
static bool volume_is_plain(const struct loop_aes_ctx *new, uint64_t *bad)
{
	static uint8_t buf[VOL_BYTES];

	loop_aes_decrypt(new, buf, sim[0].disk, NSECT, 0);
	for (*bad = 0; *bad < NSECT; (*bad)++)
		if (memcmp(buf + *bad * 512, plain + *bad * 512, 512))
			return false;
	return true;
}

/*
 * Every op of a conversion from @old to @new as a power-cut point, @tries
 * random outcomes each; one in four recoveries cut once more.
 */
static void conversion(const char *name, const struct loop_aes_ctx *old,
		       const struct loop_aes_ctx *new, unsigned int tries)
{
	struct reenc_params p = {
		.chunk_sect = CHUNK_SECT, .nsect = NSECT, .vol_size = VOL_BYTES,
	};
	unsigned long ops, at, bad_runs = 0, trials = 0;
	char why[300] = "", first[400] = "";
	unsigned int t;
	uint64_t bad;

	/* A run with no cut: how many ops it has. */
	new_journal(&p);
	loop_aes_encrypt(old, sim[0].disk, plain, NSECT, 0);
	memcpy(sim[0].cache, sim[0].disk, VOL_BYTES);
	sim_cut_at = 0;
	sim_ops = 0;
	sim_cut = false;
	if (one_run(&p, old, new, why, sizeof(why)) || !volume_is_plain(new, &bad)) {
		t_result(0, name, "an uninterrupted run failed: %s", why);
		return;
	}
	ops = sim_ops;
	for (at = 1; at <= ops; at++) {
		for (t = 0; t < tries; t++) {
			unsigned long again = 0;

			trials++;
			sim_seed = (unsigned int)(at * 7919 + t * 104729);
			new_journal(&p);
			loop_aes_encrypt(old, sim[0].disk, plain, NSECT, 0);
			memcpy(sim[0].cache, sim[0].disk, VOL_BYTES);
			sim_ops = 0;
			sim_cut = false;
			sim_cut_at = at;
			one_run(&p, old, new, why, sizeof(why));
			if (!sim_cut)
				continue;	/* that run ended before op @at */
			/* The next boot; one in four is cut again, somewhere. */
			sim_ops = 0;
			sim_cut = false;
			sim_cut_at = 0;
			if (t % 4 == 3) {
				again = 1 + rnd() % ops;
				sim_cut_at = again;
				one_run(&p, old, new, why, sizeof(why));
				sim_ops = 0;
				sim_cut = false;
				sim_cut_at = 0;
			}
			why[0] = 0;
			bad = 0;
			if (one_run(&p, old, new, why, sizeof(why)) ||
			    !volume_is_plain(new, &bad)) {
				if (!bad_runs++)
					snprintf(first, sizeof(first),
						 "cut at op %lu (then %lu), seed %u: %s%s%llu",
						 at, again, (unsigned int)(at * 7919 + t * 104729),
						 why, *why ? "; " : "wrong from sector ",
						 (unsigned long long)bad);
			}
			why[0] = 0;
		}
	}
	printf("# %s: %lu ops, %lu power cuts recovered\n", name, ops, trials);
	t_result(!bad_runs, name, "%lu of %lu failed; the first: %s", bad_runs,
		 trials, first);
}

int main(void)
{
	struct loop_aes_ctx *single = ctx_of(1, 1), *v3 = ctx_of(65, 2),
			    *v3b = ctx_of(65, 3);
	const struct loop_aes_engine *engine = loop_aes_probe(NULL);
	size_t i;

	t_begin();
	if (engine)
		loop_aes_set_engine(engine);
	/* The journal's real file only stands in for reenc_finish(): memory will do. */
	strcpy(dir, "/dev/shm/test_reencrypt_crash.XXXXXX");
	if (!mkdtemp(dir)) {
		strcpy(dir, "/tmp/test_reencrypt_crash.XXXXXX");
		if (!mkdtemp(dir))
			return 1;
	}
	snprintf(jpath, sizeof(jpath), "%s/journal", dir);
	for (i = 0; i < VOL_BYTES; i++)
		plain[i] = (uint8_t)(i % 4096 < 1024 ? 0 : i * 2654435761u >> 24);
	sim[0].size = VOL_BYTES;
	sim[0].disk = malloc(VOL_BYTES);
	sim[0].cache = malloc(VOL_BYTES);
	if (!sim[0].disk || !sim[0].cache)
		return 1;

	conversion("power-cut-single-to-v3", single, v3, 8);
	conversion("power-cut-v3-new-keys", v3, v3b, 8);

	unlink(jpath);
	rmdir(dir);
	for (i = 0; i < 2; i++) {
		sim_drop_pending(&sim[i]);
		free(sim[i].pend);
		free(sim[i].disk);
		free(sim[i].cache);
	}
	loop_aes_wipe(single);
	loop_aes_wipe(v3);
	loop_aes_wipe(v3b);
	free(single);
	free(v3);
	free(v3b);
	return t_exit();
}
