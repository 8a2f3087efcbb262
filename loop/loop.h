/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loop.h - aesloop: the loop block driver with loop-AES encryption built in.
 *
 * Lock story (the whole of it):
 *  - loop_ctl_mutex: the device index (loop_index_idr) and each device's
 *    lo_visible; taken to add, find or remove a device.  Never held across
 *    I/O.
 *  - loop_validate_mutex: serialises binding a backing file, so that the
 *    check against loop stacking cycles sees a stable picture.
 *  - lo->lo_mutex: a device's configuration and lo_state.  Taken killable
 *    by ioctls, and held while they wait for I/O (a queue freeze, a sync).
 *    Changes that the I/O path sees (backing file, offsets, key) are made
 *    with the queue frozen, so workers never need a lock: a frozen queue is
 *    the only I/O barrier.
 *  - lo->lo_lock: what the sysfs "loop" group shows (backing file, offset,
 *    size limit, flags) is changed under it as well as under lo_mutex, and
 *    read under it alone, so that reading the group never waits behind an
 *    ioctl's I/O (opening the device takes lo_mutex, as stock 6.1 does).
 *    Innermost; nothing sleeps under it.
 *
 * Device states:
 *  LO_UNBOUND -> LO_BOUND            LOOP_SET_FD / LOOP_CONFIGURE
 *  LO_BOUND   -> LO_RUNDOWN          LOOP_CLR_FD, autoclear on last close
 *  LO_RUNDOWN -> LO_UNBOUND          once the backing file is released
 *  LO_UNBOUND -> LO_DELETING         LOOP_CTL_REMOVE, module unload
 *
 * A LOOP_CLR_FD on a device that is open elsewhere puts it in LO_RUNDOWN
 * at once, with the binding and key still in place for the openers it
 * has; no new opener is let in, and the last close unbinds it.
 */
#ifndef AESLOOP_LOOP_H
#define AESLOOP_LOOP_H

#include <linux/bio.h>
#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <linux/major.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/kthread.h>

#include "../aes/loop_aes.h"
#include "aesloop_uapi.h"
#include "loop_kcompat.h"

/*
 * 64-bit kernels only (x86_64 and arm64 are built and tested): the driver
 * divides 64-bit offsets with C's operators, which a 32-bit kernel cannot
 * link.  Said here rather than by modpost's missing __moddi3.
 */
#if BITS_PER_LONG != 64
#error "aesloop builds for 64-bit kernels only"
#endif

/* Where a device is in its life cycle; see the diagram above. */
enum lo_state {
	LO_UNBOUND,
	LO_BOUND,
	LO_RUNDOWN,
	LO_DELETING,
};

/**
 * struct loop_device - one /dev/loopN
 *
 * Set once when the device is created: @lo_number, @lo_disk, @tag_set.
 *
 * Protected by loop_ctl_mutex: @lo_visible.
 *
 * Protected by @lo_mutex, and changed only with the queue frozen while
 * @lo_state is LO_BOUND (the I/O path reads them without a lock; sysfs
 * reads @lo_backing_file, @lo_offset, @lo_sizelimit and @lo_flags under
 * @lo_lock, which their changes also take):
 * @lo_backing_file, @lo_offset, @lo_iv_offset, @lo_sizelimit, @lo_flags,
 * @lo_crypt, @lo_bdev, @lo_workers, @lo_nr_workers.  Two exceptions, so
 * the I/O path reads those two through loop_io_flags() and
 * loop_encrypted(): a deferred LOOP_CLR_FD sets LO_FLAGS_AUTOCLEAR with
 * @lo_mutex alone, and key scrubbing (KEYSCRUB=y) swaps @lo_crypt for a
 * copy, never to or from NULL.
 *
 * Protected by @lo_mutex: the rest.
 */
struct loop_device {
	int			lo_number;
	bool			lo_visible;	/* to REMOVE and GET_FREE */
	enum lo_state		lo_state;
	struct mutex		lo_mutex;	/* see the lock story above */
	spinlock_t		lo_lock;	/* sysfs' view, as above */

	struct file		*lo_backing_file;
	struct block_device	*lo_bdev;	/* set: I/O goes to it as bios */
	gfp_t			lo_old_gfp_mask;
	loff_t			lo_offset;	/* data start, bytes into the file */
	u64			lo_iv_offset;	/* added to the IV sector, 512-byte sectors */
	loff_t			lo_info_offset;	/* lo_offset as set, negative for "@N" */
	loff_t			lo_sizelimit;	/* bytes, 0: to the end of the file */
	u32			lo_flags;	/* LO_FLAGS_* */
	bool			lo_sysfs;	/* the "loop" group is there */
	char			lo_file_name[LO_NAME_SIZE];

	/*
	 * Encryption: NULL for a plain loop.  Transfers read it under
	 * rcu_read_lock(), because key scrubbing (KEYSCRUB=y) moves the keys
	 * to lo_crypt_spare every second and then inverts the old copy.
	 */
	struct loop_aes_ctx	*lo_crypt;
	struct loop_aes_ctx	*lo_crypt_spare;
	size_t			lo_crypt_spare_size;
	struct delayed_work	lo_scrub_work;
	u32			lo_encrypt_type;
	u32			lo_encrypt_key_size;	/* bytes */
	/*
	 * No raw key is kept: a LOOP_SET_STATUS that repeats the key is
	 * recognised by encrypting lo_key_probe (random, per key) with it
	 * and comparing with lo_key_check, made the same way at keying.
	 */
	u8			lo_key_probe[AES_BLOCK_LEN];
	u8			lo_key_check[AES_BLOCK_LEN];
	char			lo_crypt_name[LO_NAME_SIZE];
	u64			lo_init[2];
	kuid_t			lo_key_owner;

	/*
	 * Discard or write-zeroes the backing file turned out not to do
	 * (EOPNOTSUPP): LO_UNSUPP_* bits, and the work that clears those
	 * queue limits outside the I/O path, so that the block layer stops
	 * sending them (mkfs on a file in tmpfs, say).
	 */
	unsigned long		lo_unsupported;
	struct work_struct	lo_limits_work;

	struct bio_set		lo_bio_set;	/* clones to a backing device */
	struct loop_worker	*lo_workers;	/* lo_nr_workers crypto workers */
	unsigned int		lo_nr_workers;
	atomic_t		lo_next_worker;	/* round-robin among them */
	struct blk_mq_tag_set	tag_set;
	struct gendisk		*lo_disk;
};

/*
 * lo_flags read without lo_mutex, by the I/O path: the bits it tests
 * (DIRECT_IO, READ_ONLY) change only with the queue frozen,
 * LO_FLAGS_AUTOCLEAR also beside requests.
 */
static inline u32 loop_io_flags(const struct loop_device *lo)
{
	return READ_ONCE(lo->lo_flags);
}

/*
 * Set lo_flags (lo_mutex held): under lo_lock for sysfs' readers, marked
 * for the I/O path's.
 */
static inline void loop_set_flags(struct loop_device *lo, u32 flags)
{
	lockdep_assert_held(&lo->lo_mutex);
	spin_lock(&lo->lo_lock);
	WRITE_ONCE(lo->lo_flags, flags);
	spin_unlock(&lo->lo_lock);
}

/*
 * The backing block device, whether I/O goes to it as bios or not; NULL
 * for a regular file.
 */
static inline struct block_device *loop_file_bdev(struct file *file)
{
	struct inode *inode = file->f_mapping->host;

	return S_ISBLK(inode->i_mode) ? I_BDEV(inode) : NULL;
}

/* Whether the device has a key, read without lo_mutex. */
static inline bool loop_encrypted(const struct loop_device *lo)
{
	return READ_ONCE(lo->lo_crypt);
}

/*
 * Segments of a request mapped at once for one transform: with 4 KiB
 * pages, four batches of LOOP_AES_BATCH sectors.  Where kmap_local_page()
 * takes a slot (highmem, or a debug kernel that forces it), slots are few
 * and interrupts need some: then four, one batch.
 */
#define LOOP_MAP_SEGS		(IS_ENABLED(CONFIG_KMAP_LOCAL) ? 4 : 16)

/**
 * struct loop_chunk - a piece of an encrypted write, in flight
 * @cmd:   its request, which it holds a reference on
 * @w:     the worker whose bounce pages hold its ciphertext
 * @first: its first bounce page
 * @nr:    its bounce pages
 * @len:   bytes written
 * @iocb:  its direct I/O to a backing file
 * @bio:   its bio to a backing device, over the worker's @chunk_bvec
 */
struct loop_chunk {
	struct loop_cmd		*cmd;
	struct loop_worker	*w;
	unsigned int		first;
	unsigned int		nr;
	unsigned int		len;
	union {
		struct kiocb	iocb;
		struct bio	bio;
	};
};

/**
 * struct loop_worker - one crypto worker of a device
 * @kw:         the kthread that runs requests
 * @bvec:       LOOP_BIO_VECS vectors for its synchronous file I/O
 * @segs:       the mapped segments of the piece being transformed
 * @seg_page:   their pages
 * @busy_works: requests and pieces of reads queued on it or running there
 *              (lo_queue_cmd(), lo_decrypt_read())
 *
 * An encrypted loop's workers also have, from keying or bind to unbind
 * (loop_workers_bounce()), so that a write never waits for memory (swap
 * on an encrypted loop):
 * @bounce:     lo_prealloc pages for ciphertext on the way to the backing
 *              file or device: a ring of chunks (struct loop_chunk)
 * @nr_bounce:  how many
 * @bounce_va:  the same pages mapped side by side (vmap()): the engine
 *              writes a chunk there as one run of sectors
 * @chunks:     a chunk's state, at the index of its first page
 * @chunk_bvec: the chunks' vectors, at the index of their pages
 * @lock:       protects @busy, which completions change
 * @busy:       the bounce pages of chunks in flight
 * @head:       where the next chunk starts (the worker's own)
 * @wait:       the worker waits here for pages of chunks in flight
 * @scratch:    LOOP_AES_SCRATCH bytes: a read's multi-key IVs, the rest
 *              of a logical block between two chunks
 */
struct loop_worker {
	struct kthread_worker	*kw;
	struct bio_vec		*bvec;
	struct loop_aes_seg	segs[LOOP_MAP_SEGS];
	struct page		*seg_page[LOOP_MAP_SEGS];
	atomic_t		busy_works;

	struct page		**bounce;
	unsigned int		nr_bounce;
	u8			*bounce_va;
	struct loop_chunk	*chunks;
	struct bio_vec		*chunk_bvec;
	spinlock_t		lock;		/* protects @busy */
	unsigned long		*busy;
	unsigned int		head;
	wait_queue_head_t	wait;
	u8			*scratch;
};

/*
 * A large read's decryption is shared with idle workers (lo_decrypt_read()):
 * pieces of at least LOOP_SPLIT_MIN bytes, up to LOOP_SPLIT_MAX of them
 * besides the request's own worker's.  With AES-NI a piece of 128 KiB
 * takes some tens of microseconds, well above what waking an idle worker
 * on another CPU costs; so a read of 256 KiB or more is shared, the
 * 128 KiB of the usual readahead is not.
 */
#define LOOP_SPLIT_MIN		(128U * 1024)
#define LOOP_SPLIT_MAX		3U

/**
 * struct loop_piece - a piece of a read's decryption, on another worker
 * @work:      runs it on @worker
 * @worker:    the worker; it had nothing queued when it was chosen, but
 *             a request may have been queued on it since (best effort)
 * @cmd:       its request
 * @from:      its first byte in the request
 * @len:       its bytes, whole sectors
 */
struct loop_piece {
	struct kthread_work	work;
	struct loop_worker	*worker;
	struct loop_cmd		*cmd;
	unsigned int		from;
	unsigned int		len;
};

/**
 * struct loop_cmd - the per-request context (the blk-mq PDU)
 * @work:   runs the request on @worker
 * @worker: the worker it was given to
 * @iocb:   asynchronous direct I/O (lo_rw_aio())
 * @bvec:   the vectors of a request of several bios for @iocb, or NULL
 * @ref:    held by the submitter and by @iocb's completion, or by the
 *          submitter and each clone (lo_rw_clones()) or chunk of an
 *          encrypted write (lo_encrypt_rq()) in flight
 * @ret:    what @iocb's completion said, or the clones' or chunks': bytes
 *          done, or a negative errno
 * @decrypt: the I/O reads ciphertext: its completion hands the request back
 *          to @worker (@work) to decrypt
 * @pieces: pieces of its decryption not yet done, when shared: the last
 *          piece ends the request, or the own worker's caller if it is
 *          the last
 * @piece:  the pieces given to other workers
 */
struct loop_cmd {
	struct kthread_work	work;
	struct loop_worker	*worker;
	struct kiocb		iocb;
	struct bio_vec		*bvec;
	atomic_t		ref;
	long			ret;
	bool			decrypt;
	atomic_t		pieces;
	struct loop_piece	piece[LOOP_SPLIT_MAX];
};

/* lo_unsupported bits */
#define LO_UNSUPP_DISCARD	0
#define LO_UNSUPP_WRITE_ZEROES	1

/* lo_threads: workers per device, as in loop-AES but not capped at 4. */
#define LOOP_MAX_THREADS	16
/* Workers per device without lo_threads: one per CPU, up to this many. */
#define LOOP_AUTO_THREADS	4U
/* lo_prealloc: bounce pages per worker; a chunk takes at most half. */
#define LOOP_MAX_PREALLOC	256
/* Vectors of a worker's bio: a larger request is sent as several bios. */
#define LOOP_BIO_VECS		BIO_MAX_VECS
/* Largest request, 512-byte sectors: 1280 KiB, as the stock driver. */
#define LOOP_MAX_HW_SECTORS	2560u

/* loop_io.c: the request path */
extern const struct blk_mq_ops loop_mq_ops;
int loop_start_workers(struct loop_device *lo, unsigned int threads, int nice);
int loop_workers_bounce(struct loop_device *lo, unsigned int prealloc);
void loop_stop_workers(struct loop_device *lo);
void loop_limits_work(struct work_struct *work);

/* loop_backing.c: what a backing file makes of a loop, for loop_config.c */
bool loop_can_dio(struct loop_device *lo, struct file *file);
unsigned int loop_default_block_size(struct file *file, u32 flags);
void loop_fill_queue_caps(struct file *file, const struct loop_aes_ctx *crypt,
			  struct loop_queue_caps *caps);
void loop_update_io_path(struct loop_device *lo, bool bind, u32 flags);

/* loop_crypt.c: keys and the transfer */
int loop_crypt_prepare(const struct loop_info64 *info,
		       struct loop_aes_ctx **ctx);
u8 *loop_crypt_copy_slots(const void __user *arg, unsigned int count);
int loop_crypt_prepare_multi(const u8 *slots, unsigned int count,
			     unsigned int key_len, struct loop_aes_ctx **ctx);
void loop_crypt_set_check(struct loop_device *lo,
			  const struct loop_aes_ctx *ctx);
bool loop_crypt_same_key(const struct loop_device *lo,
			 const struct loop_info64 *info,
			 const struct loop_aes_ctx *ctx);
void loop_crypt_free(struct loop_aes_ctx *ctx);
void loop_encrypt_segs(const struct loop_device *lo, u8 *dst,
		       const struct loop_aes_seg *segs, unsigned int nseg,
		       u64 iv_sector);
void loop_decrypt_segs(const struct loop_device *lo,
		       const struct loop_aes_seg *segs, unsigned int nseg,
		       u64 iv_sector, u8 *scratch, size_t scratch_len);
void loop_keyscrub_init(struct loop_device *lo);
void loop_keyscrub_start(struct loop_device *lo);
void loop_keyscrub_stop(struct loop_device *lo);
void loop_keyscrub_forget(struct loop_device *lo);
void loop_keyscrub_cancel(struct loop_device *lo);

/* loop_config.c: binding and configuration, for loop_ioctl.c */
int loop_configure(struct loop_device *lo, bool writable, bool excl,
		   struct block_device *bdev, const struct loop_config *config);
int loop_clr_fd(struct loop_device *lo, bool excl);
int loop_set_status(struct loop_device *lo, const struct loop_info64 *info);
int loop_get_status(struct loop_device *lo, struct loop_info64 *info);
int loop_multi_key_setup(struct loop_device *lo, const void __user *arg,
			 unsigned int count);
int loop_set_block_size(struct loop_device *lo, struct block_device *ibdev,
			bool excl, unsigned long arg);
int loop_set_direct_io(struct loop_device *lo, unsigned long arg);
int loop_change_fd(struct loop_device *lo, struct block_device *bdev,
		   unsigned int fd);
int loop_set_capacity(struct loop_device *lo);
void loop_release_autoclear(struct loop_device *lo);

/* loop_ioctl.c: the ioctls of /dev/loopN, for the block device methods */
int loop_ioctl(struct loop_device *lo, struct block_device *bdev,
	       bool writable, bool excl, unsigned int cmd, unsigned long arg);
int loop_compat_ioctl(struct loop_device *lo, struct block_device *bdev,
		      bool writable, bool excl, unsigned int cmd,
		      unsigned long arg);

/* loop_main.c: the devices' life cycle */
struct loop_device *loop_of_disk(struct gendisk *disk);

/* loop_params.c: the module parameters */
int loop_check_params(void);
unsigned int loop_threads_of(const struct loop_device *lo);
unsigned int loop_prealloc(void);
int loop_nice(void);
unsigned int loop_part_shift(void);
unsigned int loop_devices_at_load(void);
bool loop_probe_allowed(int i);
unsigned int loop_queue_depth(void);
const char *loop_params_aes_request(void);
void loop_params_set_aes_impl(const char *name);

/* loop_sysfs.c */
extern const struct attribute_group loop_attribute_group;

#endif /* AESLOOP_LOOP_H */
