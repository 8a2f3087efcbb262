/* SPDX-License-Identifier: GPL-2.0 */
/*
 * reencrypt.h - rewriting a loop-AES volume from one key setup to another,
 * chunk by chunk, with a journal that makes a crash at any instant
 * recoverable.
 *
 * The journal is a file of its own (never on the volume):
 *
 *	0                       header block (REENC_BLOCK bytes), written once
 *	REENC_BLOCK             slot 0: a record block, then chunk bytes
 *	REENC_BLOCK + slot size slot 1: the same
 *
 * Chunk k (sectors k * chunk .. k * chunk + n - 1 of the data) is rewritten
 * in this order:
 *	1. its old ciphertext is read from the volume and copied into slot
 *	   k % 2; it is decrypted with the old keys and encrypted with the
 *	   new ones; the slot's record says seq = k + 1, where the chunk
 *	   starts, and the SHA-256 of its new ciphertext; fdatasync of the
 *	   journal;
 *	2. the new ciphertext is written over the old; fdatasync of the
 *	   volume, which may wait until just before the next record.
 * The record of chunk k + 1 is only written after step 2 of chunk k, so the
 * newest whole record (its checksum right) names the only chunk that can be
 * half rewritten: everything before it is new, everything after it old.  A
 * resume rewrites that chunk again from the old ciphertext in the journal
 * (which the crash cannot have touched: slots alternate, and a slot is
 * only reused once the other holds a synced record); if that copy is not
 * whole, the crash came before the journal's sync, and the volume's chunk
 * is still the old ciphertext (copied to the journal again before it is
 * rewritten), or already the new one.  Which it is, the record's SHA-256 of
 * the new ciphertext tells.  A crash while a record is written leaves the
 * one before it, in the other slot, the newest: its chunk is rewritten once
 * more, which changes nothing.  A resume first syncs what a killed run left
 * in the page cache, and checks that the volume is the journal's: the chunk
 * in flight old or new sector by sector, the one before it new.  When every chunk is done, a record with REENC_DONE is
 * written, in the slot not holding the last chunk's record.  The man page,
 * aesloop-reencrypt.8, says the same for users.
 */
#ifndef AESLOOP_REENCRYPT_H
#define AESLOOP_REENCRYPT_H

#include <stdint.h>

#include "loop_aes.h"

/* The journal's header and record blocks, in bytes. */
#define REENC_BLOCK		4096U

/* SHA-256's output, bytes. */
#define REENC_HASH_LEN		32U

/* Chunk sizes accepted, in bytes (multiples of 4096). */
#define REENC_CHUNK_MIN		(64U * 1024)
#define REENC_CHUNK_MAX		(64U * 1024 * 1024)
#define REENC_CHUNK_DEFAULT	(4U * 1024 * 1024)

/**
 * struct reenc_params - what the journal's header records of a conversion
 * @chunk_sect:  sectors per chunk (512 bytes each)
 * @data_offset: bytes: where sector 0 of the data is on the volume
 * @nsect:       sectors to rewrite
 * @iv_sector:   IV sector number (doc/format.md §4) of data sector 0
 * @vol_size:    bytes: the whole volume (file or device) as first seen
 * @old_nslots:  the old setup's mode: 0 (single-key), 64 or 65
 * @old_key_len: its AES key length, bytes
 * @new_nslots:  the new setup's mode
 * @new_key_len: its AES key length, bytes
 * @salt:        random bytes that the key check values hash first
 * @old_check:   check value of the old keys (see aesloop-reencrypt.c)
 * @new_check:   check value of the new keys
 */
struct reenc_params {
	uint32_t chunk_sect;
	uint64_t data_offset;
	uint64_t nsect;
	uint64_t iv_sector;
	uint64_t vol_size;
	uint32_t old_nslots;
	uint32_t old_key_len;
	uint32_t new_nslots;
	uint32_t new_key_len;
	uint8_t salt[REENC_HASH_LEN];
	uint8_t old_check[REENC_HASH_LEN];
	uint8_t new_check[REENC_HASH_LEN];
};

/**
 * struct reenc - one conversion in progress
 * @p:        the parameters (from the header of the journal)
 * @vol_fd:   the volume, open read-write
 * @jfd:      the journal, open read-write
 * @path:     its name (its directory is synced), or NULL
 * @old_ctx:  the old keys
 * @new_ctx:  the new keys
 * @old:      chunk_sect * 512 bytes, page-aligned: a chunk's old ciphertext
 * @new:      the same size: its new ciphertext (plaintext on the way)
 * @done:     sectors before this one are rewritten (and synced)
 * @seq:      the sequence number of the last record written
 * @vol_unsynced: the last chunk written to the volume waits for its sync
 * @finished: the journal says every chunk is rewritten
 * @errmsg:   what failed, for the caller to print
 */
struct reenc {
	struct reenc_params p;
	int vol_fd;
	int jfd;
	const char *path;
	const struct loop_aes_ctx *old_ctx;
	const struct loop_aes_ctx *new_ctx;
	uint8_t *old;
	uint8_t *new;
	uint64_t done;
	uint64_t seq;
	int vol_unsynced;
	int finished;
	char errmsg[256];
};

/* Flags of a record (its "flags" field). */
#define REENC_DONE	1U

int reenc_journal_create(const char *path, const struct reenc_params *p,
			 char *err, size_t errlen);
int reenc_journal_read_params(int jfd, struct reenc_params *p);
int reenc_recover(struct reenc *r);
int reenc_chunk(struct reenc *r);
int reenc_stop(struct reenc *r);
int reenc_finish(struct reenc *r, const char *path);

#endif /* AESLOOP_REENCRYPT_H */
