// SPDX-License-Identifier: GPL-2.0
/*
 * reencrypt.c - the journal and the chunk loop of aesloop-reencrypt: the
 * order of writes that reencrypt.h describes, the journal's blocks, and the
 * recovery after a crash.  Keys, options and the volume's checks are the
 * program's (aesloop-reencrypt.c).
 */
#define _GNU_SOURCE		/* sync_file_range */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "reencrypt.h"

static const char header_magic[16] = "AESLOOP-REENC-J1";
static const char record_magic[16] = "AESLOOP-REENC-R1";

/* Where the checksum of a block starts: its last REENC_HASH_LEN bytes. */
#define SUM_AT		(REENC_BLOCK - REENC_HASH_LEN)

/*
 * The header block: magic, then the fields of struct reenc_params at these
 * offsets, little-endian; zeros; the SHA-256 of bytes 0..SUM_AT-1 at SUM_AT.
 */
enum {
	H_CHUNK = 16, H_OFFSET = 24, H_NSECT = 32, H_IV = 40, H_VOLSIZE = 48,
	H_OLD_NSLOTS = 56, H_OLD_KEYLEN = 60, H_NEW_NSLOTS = 64,
	H_NEW_KEYLEN = 68, H_SALT = 72, H_OLD_CHECK = 104, H_NEW_CHECK = 136,
};

/*
 * A record block: magic, seq, start sector, sector count, flags, the
 * SHA-256 of the chunk's new ciphertext (nsect * 512 bytes); zeros; its
 * checksum.  The old ciphertext in the slot needs no checksum of its own:
 * what it decrypts and encrypts to must have that SHA-256.
 */
enum { R_SEQ = 16, R_START = 24, R_NSECT = 32, R_FLAGS = 36, R_NEW_SUM = 40 };

struct record {
	uint64_t seq;
	uint64_t start;
	uint32_t nsect;
	uint32_t flags;
	uint8_t new_sum[REENC_HASH_LEN];
};

/* Little-endian fields: aes_types.h's 32-bit helpers, twice for 64 bits. */
static void put64(uint8_t *p, uint64_t v)
{
	aes_put_le32(p, (uint32_t)v);
	aes_put_le32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t get64(const uint8_t *p)
{
	return aes_get_le32(p) | (uint64_t)aes_get_le32(p + 4) << 32;
}

static void seterr(struct reenc *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void seterr(struct reenc *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->errmsg, sizeof(r->errmsg), fmt, ap);
	va_end(ap);
}

static int sha256(const void *data, size_t len, uint8_t out[REENC_HASH_LEN])
{
	unsigned int n = 0;

	if (!EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) ||
	    n != REENC_HASH_LEN)
		return -EIO;
	return 0;
}

/* Set the checksum of a block; check it with block_ok(). */
static int block_seal(uint8_t *b)
{
	return sha256(b, SUM_AT, b + SUM_AT);
}

static int block_ok(const uint8_t *b, const char magic[16])
{
	uint8_t sum[REENC_HASH_LEN];

	return !memcmp(b, magic, 16) && !sha256(b, SUM_AT, sum) &&
	       !memcmp(sum, b + SUM_AT, REENC_HASH_LEN);
}

static int pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + got, len - got,
				  (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;	/* shorter than it said */
		got += (size_t)n;
	}
	return 0;
}

static int pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	size_t put = 0;

	while (put < len) {
		ssize_t n = pwrite(fd, (const uint8_t *)buf + put, len - put,
				   (off_t)(off + put));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		put += (size_t)n;
	}
	return 0;
}

static uint64_t chunk_bytes(const struct reenc_params *p)
{
	return (uint64_t)p->chunk_sect * LOOP_AES_SECTOR_SIZE;
}

/* Where slot @i (0 or 1) starts in the journal, bytes. */
static uint64_t slot_at(const struct reenc_params *p, unsigned int i)
{
	return REENC_BLOCK + i * (REENC_BLOCK + chunk_bytes(p));
}

static void header_encode(uint8_t *b, const struct reenc_params *p)
{
	memset(b, 0, REENC_BLOCK);
	memcpy(b, header_magic, 16);
	aes_put_le32(b + H_CHUNK, p->chunk_sect);
	put64(b + H_OFFSET, p->data_offset);
	put64(b + H_NSECT, p->nsect);
	put64(b + H_IV, p->iv_sector);
	put64(b + H_VOLSIZE, p->vol_size);
	aes_put_le32(b + H_OLD_NSLOTS, p->old_nslots);
	aes_put_le32(b + H_OLD_KEYLEN, p->old_key_len);
	aes_put_le32(b + H_NEW_NSLOTS, p->new_nslots);
	aes_put_le32(b + H_NEW_KEYLEN, p->new_key_len);
	memcpy(b + H_SALT, p->salt, REENC_HASH_LEN);
	memcpy(b + H_OLD_CHECK, p->old_check, REENC_HASH_LEN);
	memcpy(b + H_NEW_CHECK, p->new_check, REENC_HASH_LEN);
}

static void header_decode(const uint8_t *b, struct reenc_params *p)
{
	p->chunk_sect = aes_get_le32(b + H_CHUNK);
	p->data_offset = get64(b + H_OFFSET);
	p->nsect = get64(b + H_NSECT);
	p->iv_sector = get64(b + H_IV);
	p->vol_size = get64(b + H_VOLSIZE);
	p->old_nslots = aes_get_le32(b + H_OLD_NSLOTS);
	p->old_key_len = aes_get_le32(b + H_OLD_KEYLEN);
	p->new_nslots = aes_get_le32(b + H_NEW_NSLOTS);
	p->new_key_len = aes_get_le32(b + H_NEW_KEYLEN);
	memcpy(p->salt, b + H_SALT, REENC_HASH_LEN);
	memcpy(p->old_check, b + H_OLD_CHECK, REENC_HASH_LEN);
	memcpy(p->new_check, b + H_NEW_CHECK, REENC_HASH_LEN);
}

/* fsync the directory that holds @path, so that a new name in it lasts. */
static int sync_dir_of(const char *path)
{
	char copy[PATH_MAX];
	int fd, rc = 0;

	if (snprintf(copy, sizeof(copy), "%s", path) >= (int)sizeof(copy))
		return -ENAMETOOLONG;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd))
		rc = -errno;
	close(fd);
	return rc;
}

/**
 * reenc_journal_create() - make the journal of a new conversion
 * @path:   the journal's name; it must not exist
 * @p:      what the header records
 * @err:    the message of a failure
 * @errlen: its size, bytes
 *
 * The journal appears whole or not at all: it is written as PATH.new (a
 * leftover of a crash is removed first; the new one is created with
 * O_EXCL and O_NOFOLLOW, so that no link planted there is followed), its
 * header synced and its slots allocated (space for two chunks, so that the
 * run cannot fail for lack of it midway), locked (flock), then renamed to
 * @path, never over an existing file (RENAME_NOREPLACE), and the directory
 * synced.  Its slots hold no record.
 *
 * Return: the journal, open read-write and locked, or a negative errno
 * with the message in @err.
 */
int reenc_journal_create(const char *path, const struct reenc_params *p,
			 char *err, size_t errlen)
{
	uint8_t block[REENC_BLOCK];
	char tmp[PATH_MAX];
	const char *step = "create it";
	int fd, rc;

	if (snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "journal %s: name too long", path);
		return -ENAMETOOLONG;
	}
	if (unlink(tmp) && errno != ENOENT) {
		rc = -errno;
		goto fail;
	}
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		goto fail;
	}
	header_encode(block, p);
	step = "write its header";
	rc = block_seal(block);
	if (!rc)
		rc = pwrite_full(fd, block, REENC_BLOCK, 0);
	if (rc)
		goto fail_unlink;
	step = "allocate its space";
	rc = -posix_fallocate(fd, 0, (off_t)slot_at(p, 2));
	if (rc == -EOPNOTSUPP)	/* then at least its size */
		rc = ftruncate(fd, (off_t)slot_at(p, 2)) ? -errno : 0;
	if (rc)
		goto fail_unlink;
	step = "sync it";
	if (fdatasync(fd) || flock(fd, LOCK_EX | LOCK_NB)) {
		rc = -errno;
		goto fail_unlink;
	}
	step = "rename it";
	rc = renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) ? -errno : 0;
	/* File systems without the flag (9p, some FUSE): link() never replaces. */
	if (rc == -EINVAL || rc == -ENOSYS)
		rc = link(tmp, path) ? -errno : unlink(tmp) ? -errno : 0;
	if (rc)
		goto fail_unlink;
	step = "sync its directory";
	rc = sync_dir_of(path);
	if (rc)
		goto fail_close;
	return fd;

fail_unlink:
	unlink(tmp);
fail_close:
	close(fd);
fail:
	snprintf(err, errlen, "journal %s: cannot %s: %s", path, step,
		 rc == -EEXIST ? "it exists already" : strerror(-rc));
	return rc;
}

/**
 * reenc_journal_read_params() - the parameters a journal's header records
 * @jfd: the journal, open
 * @p:   set from its header
 *
 * Return: 0; -EINVAL if the header is not a whole aesloop-reencrypt header
 * (its magic or checksum wrong) or its values cannot be; -errno of a
 * failed read.
 */
int reenc_journal_read_params(int jfd, struct reenc_params *p)
{
	uint8_t block[REENC_BLOCK];
	int rc;

	rc = pread_full(jfd, block, REENC_BLOCK, 0);
	if (rc)
		return rc == -ENODATA ? -EINVAL : rc;
	if (!block_ok(block, header_magic))
		return -EINVAL;
	header_decode(block, p);
	if (p->chunk_sect * (uint64_t)LOOP_AES_SECTOR_SIZE < REENC_CHUNK_MIN ||
	    p->chunk_sect * (uint64_t)LOOP_AES_SECTOR_SIZE > REENC_CHUNK_MAX ||
	    !p->nsect)
		return -EINVAL;
	return 0;
}

/* Read slot @i's record; 0 if it is whole and fits the header, else -1. */
static int record_read(struct reenc *r, unsigned int i, struct record *rec)
{
	uint8_t block[REENC_BLOCK];
	uint64_t last_seq = (r->p.nsect + r->p.chunk_sect - 1) / r->p.chunk_sect;

	if (pread_full(r->jfd, block, REENC_BLOCK, slot_at(&r->p, i)) ||
	    !block_ok(block, record_magic))
		return -1;
	rec->seq = get64(block + R_SEQ);
	rec->start = get64(block + R_START);
	rec->nsect = aes_get_le32(block + R_NSECT);
	rec->flags = aes_get_le32(block + R_FLAGS);
	memcpy(rec->new_sum, block + R_NEW_SUM, REENC_HASH_LEN);
	if (rec->flags & REENC_DONE)
		return rec->seq == last_seq + 1 ? 0 : -1;
	/* Chunk k is in slot k % 2 with seq k + 1, and is whole but the last. */
	if (!rec->seq || rec->seq > last_seq || (rec->seq - 1) % 2 != i ||
	    rec->start != (rec->seq - 1) * r->p.chunk_sect ||
	    rec->nsect != (rec->seq < last_seq ? r->p.chunk_sect :
			   r->p.nsect - rec->start))
		return -1;
	return 0;
}

static int record_write(struct reenc *r, const struct record *rec)
{
	uint8_t block[REENC_BLOCK];
	int rc;

	memset(block, 0, sizeof(block));
	memcpy(block, record_magic, 16);
	put64(block + R_SEQ, rec->seq);
	put64(block + R_START, rec->start);
	aes_put_le32(block + R_NSECT, rec->nsect);
	aes_put_le32(block + R_FLAGS, rec->flags);
	memcpy(block + R_NEW_SUM, rec->new_sum, REENC_HASH_LEN);
	rc = block_seal(block);
	if (!rc)
		rc = pwrite_full(r->jfd, block, REENC_BLOCK,
				 slot_at(&r->p, (unsigned int)((rec->seq - 1) % 2)));
	return rc;
}

/* Write @rec in its slot and sync the journal: the record counts from now on. */
static int record_commit(struct reenc *r, const struct record *rec)
{
	int rc = record_write(r, rec);

	if (!rc && fdatasync(r->jfd))
		rc = -errno;
	if (rc)
		seterr(r, "cannot write the journal: %s", strerror(-rc));
	return rc;
}

/*
 * The @nsect sectors of old ciphertext in @r->old (data sector @start on),
 * decrypted with the old keys and encrypted with the new ones into @r->new;
 * @sum gets the SHA-256 of the result.
 */
static int transform(struct reenc *r, uint64_t start, uint32_t nsect,
		     uint8_t sum[REENC_HASH_LEN])
{
	uint64_t iv = r->p.iv_sector + start;

	loop_aes_decrypt(r->old_ctx, r->new, r->old, nsect, iv);
	loop_aes_encrypt(r->new_ctx, r->new, r->new, nsect, iv);
	return sha256(r->new, (size_t)nsect * LOOP_AES_SECTOR_SIZE, sum);
}

/* Sync the volume's last chunk write, if one is waiting for it. */
static int sync_volume(struct reenc *r)
{
	int rc = 0;

	if (!r->vol_unsynced)
		return 0;
	if (fdatasync(r->vol_fd)) {
		rc = -errno;
		seterr(r, "cannot sync the volume: %s", strerror(-rc));
		return rc;
	}
	r->vol_unsynced = 0;
	return 0;
}

/*
 * Write @r->new over the volume's sectors of @rec; the sync is left for
 * sync_volume(), which must come before the next record is written.  The
 * write-back starts at once, so that the next chunk's work overlaps it.
 */
static int write_chunk(struct reenc *r, const struct record *rec)
{
	uint64_t at = r->p.data_offset + rec->start * LOOP_AES_SECTOR_SIZE;
	size_t len = (size_t)rec->nsect * LOOP_AES_SECTOR_SIZE;
	int rc;

	rc = pwrite_full(r->vol_fd, r->new, len, at);
	if (rc) {
		seterr(r, "cannot write the volume at byte %llu: %s",
		       (unsigned long long)at, strerror(-rc));
		return rc;
	}
	r->vol_unsynced = 1;
	/* only a hint: sync_volume()'s fdatasync() is what counts */
	sync_file_range(r->vol_fd, (off_t)at, (off_t)len, SYNC_FILE_RANGE_WRITE);
	return 0;
}

/* Read the volume's sectors of @rec into @r->old. */
static int read_chunk(struct reenc *r, const struct record *rec)
{
	uint64_t at = r->p.data_offset + rec->start * LOOP_AES_SECTOR_SIZE;
	int rc;

	rc = pread_full(r->vol_fd, r->old,
			(size_t)rec->nsect * LOOP_AES_SECTOR_SIZE, at);
	if (rc)
		seterr(r, "cannot read the volume at byte %llu: %s",
		       (unsigned long long)at,
		       rc == -ENODATA ? "it is shorter than when the conversion started" :
		       strerror(-rc));
	return rc;
}

/*
 * Is every sector of the volume's chunk of @rec (in @cur) either that of
 * the old ciphertext (@r->old) or of the new (@r->new)?  A write torn by a
 * crash leaves whole sectors of each; anything else is another volume.
 */
static bool sectors_old_or_new(const struct reenc *r, const struct record *rec,
			       const uint8_t *cur)
{
	size_t i, n = LOOP_AES_SECTOR_SIZE;

	for (i = 0; i < (size_t)rec->nsect * n; i += n)
		if (memcmp(cur + i, r->old + i, n) && memcmp(cur + i, r->new + i, n))
			return false;
	return true;
}

static void seterr_sectors(struct reenc *r, const struct record *rec,
			   const char *what)
{
	seterr(r, "sectors %llu-%llu of the volume %s: not the volume this journal was made for, or a damaged journal; nothing was written",
	       (unsigned long long)rec->start,
	       (unsigned long long)(rec->start + rec->nsect - 1), what);
}

/*
 * Finish the chunk of @rec, the newest whole record.  Its old ciphertext
 * is in the journal (whole unless the crash came before the journal's
 * sync), or, if not, still on the volume, which was then not yet touched;
 * or the volume has the new ciphertext already.  Whichever it is, the new
 * ciphertext is what has the record's SHA-256.  With the journal's copy,
 * the volume's chunk must be old or new, sector by sector.
 */
static int redo(struct reenc *r, const struct record *rec)
{
	size_t len = (size_t)rec->nsect * LOOP_AES_SECTOR_SIZE;
	uint8_t sum[REENC_HASH_LEN], *cur;
	int rc;

	rc = pread_full(r->jfd, r->old, len,
			slot_at(&r->p, (unsigned int)((rec->seq - 1) % 2)) + REENC_BLOCK);
	if (rc && rc != -ENODATA) {
		seterr(r, "cannot read the journal: %s", strerror(-rc));
		return rc;
	}
	if (!rc && !transform(r, rec->start, rec->nsect, sum) &&
	    !memcmp(sum, rec->new_sum, REENC_HASH_LEN)) {
		cur = malloc(len);
		if (!cur) {
			seterr(r, "out of memory for a chunk");
			return -ENOMEM;
		}
		rc = pread_full(r->vol_fd, cur, len,
				r->p.data_offset + rec->start * LOOP_AES_SECTOR_SIZE);
		if (!rc && !sectors_old_or_new(r, rec, cur)) {
			seterr_sectors(r, rec, "hold neither the old nor the new ciphertext the journal has");
			rc = -EIO;
		} else if (rc) {
			seterr(r, "cannot read the volume: %s", strerror(-rc));
		}
		free(cur);
		return rc ? rc : write_chunk(r, rec);
	}
	rc = read_chunk(r, rec);
	if (rc)
		return rc;
	if (!sha256(r->old, len, sum) && !memcmp(sum, rec->new_sum, REENC_HASH_LEN)) {
		r->vol_unsynced = 1;	/* a crash may have left it unsynced */
		return 0;
	}
	if (!transform(r, rec->start, rec->nsect, sum) &&
	    !memcmp(sum, rec->new_sum, REENC_HASH_LEN)) {
		/*
		 * The old ciphertext is on the volume alone: into the journal
		 * first, synced, or a crash in the write below would leave
		 * neither.
		 */
		rc = pwrite_full(r->jfd, r->old, len,
				 slot_at(&r->p, (unsigned int)((rec->seq - 1) % 2)) +
				 REENC_BLOCK);
		if (!rc && fdatasync(r->jfd))
			rc = -errno;
		if (rc) {
			seterr(r, "cannot write the journal: %s", strerror(-rc));
			return rc;
		}
		return write_chunk(r, rec);
	}
	seterr_sectors(r, rec, "give neither the old nor the new ciphertext the journal recorded, and the journal's copy is damaged");
	return -EIO;
}

/*
 * The record before the newest (@prev, in the other slot) names a chunk
 * that was rewritten and synced before the newest record was written: the
 * volume must have its new ciphertext.  (A volume that is another one, say
 * a clone whose device name the reboot gave to this one, has not.)
 */
static int check_prev(struct reenc *r, const struct record *prev)
{
	uint8_t sum[REENC_HASH_LEN];
	int rc;

	rc = read_chunk(r, prev);
	if (rc)
		return rc;
	if (!sha256(r->old, (size_t)prev->nsect * LOOP_AES_SECTOR_SIZE, sum) &&
	    !memcmp(sum, prev->new_sum, REENC_HASH_LEN))
		return 0;
	seterr_sectors(r, prev, "do not hold the new ciphertext the journal says was written there");
	return -EIO;
}

/* Sync what a run killed earlier in this boot left in the page cache. */
static int sync_leftovers(struct reenc *r)
{
	int rc = 0;

	if (fdatasync(r->jfd) || fdatasync(r->vol_fd))
		rc = -errno;
	if (!rc && r->path)
		rc = sync_dir_of(r->path);
	if (rc)
		seterr(r, "cannot sync the journal and the volume: %s", strerror(-rc));
	return rc;
}

/**
 * reenc_recover() - where a conversion stands, from its journal
 * @r: @p, @vol_fd, @jfd, @path, both key contexts, @old and @new set
 *
 * First syncs the journal and the volume: a run killed earlier in this boot
 * may have left writes in the page cache, which this run must not build on
 * before they are on disk.  Then finds the newest whole record (reencrypt.h)
 * and finishes its chunk: from the old ciphertext kept in the journal, or,
 * if the crash came before that copy was synced, from the volume, whose
 * chunk was then not touched yet.  Either must decrypt and encrypt to the
 * new ciphertext whose SHA-256 the record holds.  The record before it, if
 * whole, must name a chunk the volume has new.  @done then points after the
 * chunk.  Without a whole record nothing was written to the volume: @done
 * is 0.  After the record of the end, @finished is set.  The caller has
 * checked both keys against the header's check values.
 *
 * Return: 0, or a negative errno with @errmsg set.
 */
int reenc_recover(struct reenc *r)
{
	struct record rec[2], tmp;
	unsigned int i, n = 0;
	int rc;

	rc = sync_leftovers(r);
	if (rc)
		return rc;
	for (i = 0; i < 2; i++)
		if (!record_read(r, i, &rec[n]))
			n++;
	if (n == 2 && rec[1].seq > rec[0].seq) {
		tmp = rec[0];
		rec[0] = rec[1];
		rec[1] = tmp;
	}
	r->done = 0;
	r->seq = 0;
	if (!n)
		return 0;
	if (n == 2 && rec[1].seq + 1 == rec[0].seq) {
		rc = check_prev(r, &rec[1]);
		if (rc)
			return rc;
	}
	if (rec[0].flags & REENC_DONE) {
		r->done = r->p.nsect;
		r->seq = rec[0].seq;
		r->finished = 1;
		return 0;
	}
	rc = redo(r, &rec[0]);
	if (rc)
		return rc;
	r->done = rec[0].start + rec[0].nsect;
	r->seq = rec[0].seq;
	return 0;
}

/**
 * reenc_chunk() - rewrite the next chunk (reencrypt.h, steps 1 and 2)
 * @r: a conversion after reenc_recover(), @done < @p.nsect
 *
 * The volume's sync of this chunk is left for the next call (or
 * reenc_finish(), reenc_stop()), before its record: the two overlap the
 * work on the next chunk.
 *
 * Return: 0 with @done advanced, or a negative errno with @errmsg set.  A
 * failure leaves the journal and the volume as a crash would: a new run
 * goes on from there.
 */
int reenc_chunk(struct reenc *r)
{
	struct record rec = { 0 };
	uint64_t slot;
	size_t len;
	int rc;

	rec.seq = r->seq + 1;
	rec.start = r->done;
	rec.nsect = (uint32_t)(r->p.nsect - r->done < r->p.chunk_sect ?
			       r->p.nsect - r->done : r->p.chunk_sect);
	len = (size_t)rec.nsect * LOOP_AES_SECTOR_SIZE;
	slot = slot_at(&r->p, (unsigned int)((rec.seq - 1) % 2));

	rc = read_chunk(r, &rec);
	if (rc)
		return rc;
	/* The slot's data may go: the newest record, in the other slot, is synced. */
	rc = pwrite_full(r->jfd, r->old, len, slot + REENC_BLOCK);
	if (!rc)
		rc = transform(r, rec.start, rec.nsect, rec.new_sum);
	if (rc) {
		seterr(r, "cannot write the journal: %s", strerror(-rc));
		return rc;
	}
	/* No record of this chunk before the last one is on the volume. */
	rc = sync_volume(r);
	if (rc)
		return rc;
	rc = record_commit(r, &rec);
	if (rc)
		return rc;
	rc = write_chunk(r, &rec);
	if (rc)
		return rc;
	r->done += rec.nsect;
	r->seq = rec.seq;
	return 0;
}

/**
 * reenc_stop() - end a run before the conversion is finished
 * @r: the conversion
 *
 * Syncs the last chunk written and the journal, so that the next run finds
 * them on disk.  (A crash instead would be as safe: the next run writes the
 * chunk again.)
 *
 * Return: 0, or a negative errno with @errmsg set.
 */
int reenc_stop(struct reenc *r)
{
	int rc = sync_volume(r);

	if (!rc && fdatasync(r->jfd)) {
		rc = -errno;
		seterr(r, "cannot sync the journal: %s", strerror(-rc));
	}
	return rc;
}

/**
 * reenc_finish() - end a conversion whose chunks are all rewritten
 * @r:    the conversion, @done == @p.nsect
 * @path: the journal's name
 *
 * Records the end (a record with REENC_DONE, in the slot that does not hold
 * the last chunk's, synced after the volume), overwrites the old ciphertext
 * kept in both slots with zeros, then removes the journal.  A crash
 * anywhere in this leaves a journal that a new run finishes the same way.
 *
 * Return: 0, or a negative errno with @errmsg set.
 */
int reenc_finish(struct reenc *r, const char *path)
{
	struct record rec = { 0 };
	size_t len = chunk_bytes(&r->p);
	unsigned int i;
	int rc;

	rc = sync_volume(r);
	if (rc)
		return rc;
	if (!r->finished) {
		rec.seq = r->seq + 1;
		rec.start = r->p.nsect;
		rec.flags = REENC_DONE;
		rc = record_commit(r, &rec);
		if (rc)
			return rc;
		r->seq = rec.seq;
		r->finished = 1;
	}
	memset(r->old, 0, len);
	for (i = 0; i < 2 && !rc; i++)
		rc = pwrite_full(r->jfd, r->old, len, slot_at(&r->p, i) + REENC_BLOCK);
	if (!rc && fdatasync(r->jfd))
		rc = -errno;
	if (!rc && unlink(path))
		rc = -errno;
	if (!rc)
		rc = sync_dir_of(path);
	if (rc)
		seterr(r, "cannot clear and remove the journal %s: %s", path,
		       strerror(-rc));
	return rc;
}
