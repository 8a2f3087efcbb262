// SPDX-License-Identifier: GPL-2.0
/*
 * loop_crypt.c - aesloop: turning loop_info64 into keys, and the transfer.
 *
 * Key bytes live in one place only: the expanded key context (lo_crypt),
 * wiped before it is freed.  No raw key is kept, and none is ever handed
 * back to user space.
 */
#include <crypto/algapi.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "loop.h"

/* The ioctl payload (aesloop_uapi.h) is what the crypto layer takes as is. */
static_assert(LOOP_MULTI_KEY_SLOT_SIZE == LOOP_AES_KEY_SLOT);
static_assert(LOOP_MULTI_KEY_SLOTS == LOOP_AES_MULTI_KEYS);
static_assert(LOOP_MULTI_KEY_SLOTS_V3 - 1 == LOOP_AES_MULTI_KEYS);

/**
 * loop_crypt_prepare() - build the key context a loop_info64 asks for
 * @info: the status as given by user space; lo_encrypt_type 0 (none) or
 *        16 (AES, doc/format.md section 5), lo_encrypt_key_size in bytes
 * @ctx:  set to the new context, or to NULL for a plain loop
 *
 * Nothing is changed on the device: the caller installs the context with
 * the queue frozen, and frees it with loop_crypt_free() on error.
 *
 * Return: 0; -EINVAL for an unknown encrypt type or a key size other than
 * 16, 24 or 32 bytes; -ENOMEM.
 */
int loop_crypt_prepare(const struct loop_info64 *info,
		       struct loop_aes_ctx **ctx)
{
	struct loop_aes_ctx *c;
	int err;

	*ctx = NULL;
	switch (info->lo_encrypt_type) {
	case LO_CRYPT_NONE:
		return 0;
	case LO_CRYPT_AES:
		break;
	default:
		return -EINVAL;
	}
	if (info->lo_encrypt_key_size != 16 &&
	    info->lo_encrypt_key_size != 24 &&
	    info->lo_encrypt_key_size != 32)
		return -EINVAL;

	c = kvzalloc(loop_aes_ctx_size(1), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	err = loop_aes_setup_single(c, info->lo_encrypt_key,
				    info->lo_encrypt_key_size);
	if (err) {
		kvfree_sensitive(c, loop_aes_ctx_size(1));
		return err;
	}
	*ctx = c;
	return 0;
}

/**
 * loop_crypt_copy_slots() - read a multi-key ioctl payload from user space
 * @arg:   user pointer to @count key slots of LOOP_MULTI_KEY_SLOT_SIZE (32)
 *         bytes (LOOP_MULTI_KEY_SETUP: 64, LOOP_MULTI_KEY_SETUP_V3: 65)
 * @count: LOOP_MULTI_KEY_SLOTS or LOOP_MULTI_KEY_SLOTS_V3
 *
 * The payload is read once, before any lock is taken (a fault may sleep on
 * I/O, even on this very device), into memory the caller frees with
 * kfree_sensitive().  Spec section 5.
 *
 * Return: the slots, or ERR_PTR(-EFAULT) or ERR_PTR(-ENOMEM).
 */
u8 *loop_crypt_copy_slots(const void __user *arg, unsigned int count)
{
	size_t bytes = count * LOOP_MULTI_KEY_SLOT_SIZE;
	u8 *slots = kmalloc(bytes, GFP_KERNEL);

	if (!slots)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(slots, arg, bytes)) {
		/* A partial copy may hold key bytes. */
		kfree_sensitive(slots);
		return ERR_PTR(-EFAULT);
	}
	return slots;
}

/**
 * loop_crypt_prepare_multi() - build a multi-key context from key slots
 * @slots:   @count key slots of LOOP_AES_KEY_SLOT bytes, in kernel memory
 * @count:   64 (v2) or 65 (v3)
 * @key_len: the AES key length in bytes the device's LOOP_SET_STATUS64 set
 * @ctx:     set to the new context
 *
 * Spec sections 2.2, 2.3 and 5.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int loop_crypt_prepare_multi(const u8 *slots, unsigned int count,
			     unsigned int key_len, struct loop_aes_ctx **ctx)
{
	struct loop_aes_ctx *c;
	int err;

	*ctx = NULL;
	c = kvzalloc(loop_aes_ctx_size(LOOP_AES_MULTI_KEYS), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	err = loop_aes_setup_multi(c, slots, count, key_len);
	if (err)
		kvfree_sensitive(c, loop_aes_ctx_size(LOOP_AES_MULTI_KEYS));
	else
		*ctx = c;
	return err;
}

/**
 * loop_crypt_key_check() - the check value of the key a status gave
 * @ctx:   a single-key context, from loop_crypt_prepare()
 * @probe: AES_BLOCK_LEN bytes: the device's lo_key_probe
 * @check: AES_BLOCK_LEN bytes of output: @probe encrypted with the key
 *
 * Two keys give the same check value for the same random probe only if
 * they are the same key; the value tells nothing of the key (AES under a
 * known plaintext).
 */
static void loop_crypt_key_check(const struct loop_aes_ctx *ctx,
				 const u8 *probe, u8 *check)
{
	aes_encrypt_block(&ctx->keys[0], check, probe);
}

/**
 * loop_crypt_set_check() - remember the key a device was given
 * @lo:  the device, lo_mutex held, being keyed
 * @ctx: the single-key context built from the LOOP_SET_STATUS(64) or
 *       LOOP_CONFIGURE key, before any LOOP_MULTI_KEY_SETUP
 */
void loop_crypt_set_check(struct loop_device *lo,
			  const struct loop_aes_ctx *ctx)
{
	get_random_bytes(lo->lo_key_probe, sizeof(lo->lo_key_probe));
	loop_crypt_key_check(ctx, lo->lo_key_probe, lo->lo_key_check);
}

/**
 * loop_crypt_same_key() - does a status repeat the key a device has?
 * @lo:   the device, lo_mutex held, keyed
 * @info: the status given; same encrypt type and key size as the device's
 * @ctx:  the single-key context built from @info
 *
 * All-zero key bytes count as "the same": LOOP_GET_STATUS(64) hands out
 * zeros, so that is what a GET, change flags, SET round trip gives back.
 *
 * Return: true if the device's key context may stay as it is.
 */
bool loop_crypt_same_key(const struct loop_device *lo,
			 const struct loop_info64 *info,
			 const struct loop_aes_ctx *ctx)
{
	u8 check[AES_BLOCK_LEN];
	bool same;

	if (!memchr_inv(info->lo_encrypt_key, 0, LO_KEY_SIZE))
		return true;
	loop_crypt_key_check(ctx, lo->lo_key_probe, check);
	same = !crypto_memneq(check, lo->lo_key_check, sizeof(check));
	memzero_explicit(check, sizeof(check));
	return same;
}

/**
 * loop_crypt_free() - wipe and free a key context
 * @ctx: the context, or NULL
 */
void loop_crypt_free(struct loop_aes_ctx *ctx)
{
	if (!ctx)
		return;
	/* kvfree_sensitive() wipes the keys before it frees them. */
	kvfree_sensitive(ctx, loop_aes_ctx_size(ctx->nkeys));
}

/**
 * loop_encrypt_segs() - encrypt a piece of a request into a bounce area
 * @lo:        the device; lo->lo_crypt is not NULL
 * @dst:       the ciphertext: as many bytes as the segments hold together,
 *             contiguous (the worker's bounce area)
 * @segs:      the plaintext: @nseg mapped segments of whole 512-byte
 *             sectors, in the request's order
 * @nseg:      number of segments
 * @iv_sector: IV sector number of the first sector (doc/format.md section 4)
 *
 * The engine gets whole batches whatever the page layout
 * (loop_aes_encrypt_segs()).
 */
void loop_encrypt_segs(const struct loop_device *lo, u8 *dst,
		       const struct loop_aes_seg *segs, unsigned int nseg,
		       u64 iv_sector)
{
	/* Key scrubbing waits for this section before it inverts a copy. */
	rcu_read_lock();
	loop_aes_encrypt_segs(READ_ONCE(lo->lo_crypt), dst, segs, nseg,
			      iv_sector);
	rcu_read_unlock();
}

/**
 * loop_decrypt_segs() - decrypt a piece of a request in place
 * @lo:          the device; lo->lo_crypt is not NULL
 * @segs:        @nseg mapped segments of whole 512-byte sectors of
 *               ciphertext, in the request's order; replaced by plaintext
 * @nseg:        number of segments
 * @iv_sector:   IV sector number of the first sector (doc/format.md section 4)
 * @scratch:     @scratch_len bytes for the multi-key IVs (the worker's
 *               scratch)
 * @scratch_len: bytes, at least 512
 */
void loop_decrypt_segs(const struct loop_device *lo,
		       const struct loop_aes_seg *segs, unsigned int nseg,
		       u64 iv_sector, u8 *scratch, size_t scratch_len)
{
	rcu_read_lock();
	loop_aes_decrypt_segs(READ_ONCE(lo->lo_crypt), segs, nseg, iv_sector,
			      scratch, scratch_len);
	rcu_read_unlock();
}

#ifdef CONFIG_AESLOOP_KEYSCRUB
/*
 * KEYSCRUB=y (doc/format.md section 6): DRAM cells that hold the same bits for a
 * long time can keep an imprint of them.  Every second the key context is
 * copied to a spare buffer, transfers are switched to the copy, and once
 * no transfer can still be using the old buffer (synchronize_rcu()), its
 * bits are inverted.  Each cell thus holds a key bit and its complement in
 * turn.  The spare is allocated here, outside the I/O path.
 */
#define LOOP_SCRUB_INTERVAL	HZ

static void loop_keyscrub_work(struct work_struct *work)
{
	struct loop_device *lo = container_of(to_delayed_work(work),
					      struct loop_device, lo_scrub_work);
	struct loop_aes_ctx *ctx;
	size_t size, i;

	mutex_lock(&lo->lo_mutex);
	ctx = lo->lo_crypt;
	/* A deferred detach (LO_RUNDOWN) still has the key loaded. */
	if (lo->lo_state != LO_BOUND && lo->lo_state != LO_RUNDOWN) {
		mutex_unlock(&lo->lo_mutex);
		return;
	}
	if (!ctx)
		goto out;
	size = loop_aes_ctx_size(ctx->nkeys);
	if (lo->lo_crypt_spare_size != size) {
		kvfree_sensitive(lo->lo_crypt_spare, lo->lo_crypt_spare_size);
		lo->lo_crypt_spare_size = 0;
		lo->lo_crypt_spare = kvmalloc(size, GFP_KERNEL);
		if (!lo->lo_crypt_spare)
			goto out;	/* try again next time */
		lo->lo_crypt_spare_size = size;
	}
	memcpy(lo->lo_crypt_spare, ctx, size);
	WRITE_ONCE(lo->lo_crypt, lo->lo_crypt_spare);
	synchronize_rcu();
	for (i = 0; i < size; i++)
		((u8 *)ctx)[i] ^= 0xff;
	lo->lo_crypt_spare = ctx;
out:
	mutex_unlock(&lo->lo_mutex);
	schedule_delayed_work(&lo->lo_scrub_work, LOOP_SCRUB_INTERVAL);
}

/**
 * loop_keyscrub_init() - set up key scrubbing for a new device
 * @lo: the device
 */
void loop_keyscrub_init(struct loop_device *lo)
{
	INIT_DELAYED_WORK(&lo->lo_scrub_work, loop_keyscrub_work);
}

/**
 * loop_keyscrub_start() - start scrubbing a device that is being bound
 * @lo: the device, lo_mutex held, so that an unbind (which cancels the
 *      work before it takes lo_mutex) cannot come in between
 */
void loop_keyscrub_start(struct loop_device *lo)
{
	lockdep_assert_held(&lo->lo_mutex);
	schedule_delayed_work(&lo->lo_scrub_work, LOOP_SCRUB_INTERVAL);
}

/**
 * loop_keyscrub_cancel() - make sure no scrub work is left
 * @lo: the device, unbound and about to be freed; lo_mutex not held
 */
void loop_keyscrub_cancel(struct loop_device *lo)
{
	cancel_delayed_work_sync(&lo->lo_scrub_work);
}

/**
 * loop_keyscrub_forget() - wipe the spare copy when the keys are replaced
 * @lo: the device, lo_mutex held (which keeps the scrub work out)
 *
 * The spare holds the inverted old keys; they must not outlive a key change.
 */
void loop_keyscrub_forget(struct loop_device *lo)
{
	lockdep_assert_held(&lo->lo_mutex);
	kvfree_sensitive(lo->lo_crypt_spare, lo->lo_crypt_spare_size);
	lo->lo_crypt_spare = NULL;
	lo->lo_crypt_spare_size = 0;
}

/**
 * loop_keyscrub_stop() - stop scrubbing and free the spare copy
 * @lo: the device, being unbound; lo_mutex not held (the work takes it)
 */
void loop_keyscrub_stop(struct loop_device *lo)
{
	cancel_delayed_work_sync(&lo->lo_scrub_work);
	mutex_lock(&lo->lo_mutex);
	loop_keyscrub_forget(lo);
	mutex_unlock(&lo->lo_mutex);
}
#else
void loop_keyscrub_forget(struct loop_device *lo)
{
}

void loop_keyscrub_init(struct loop_device *lo)
{
}

void loop_keyscrub_start(struct loop_device *lo)
{
}

void loop_keyscrub_stop(struct loop_device *lo)
{
}

void loop_keyscrub_cancel(struct loop_device *lo)
{
}
#endif
