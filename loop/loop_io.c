// SPDX-License-Identifier: GPL-2.0
/*
 * loop_io.c - aesloop: the request path.
 *
 * queue_rq() never blocks: it hands the request to one of the device's
 * workers (lo_threads kthreads, chosen round-robin), so independent
 * requests are encrypted, decrypted and written in parallel.
 *
 * A backing file is read and written one segment (at most a page) at a
 * time through its read_iter and write_iter, buffered or direct.  A backing
 * block device gets bios of up to lo_prealloc pages instead.  Either way:
 *  - read:  read into the request's pages, decrypt them in place;
 *  - write: encrypt the pages into bounce pages and write those, so the page
 *           cache above never sees ciphertext and the backing store never
 *           sees plaintext.
 * Each worker owns its bounce pages and its bio from bind to unbind, so
 * neither a read nor a write to a backing device waits for memory (swap on
 * an encrypted loop).
 */
#include <linux/fs.h>
#include <linux/falloc.h>
#include <linux/bio.h>
#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "loop.h"

/*
 * One segment of file I/O at @pos, through a sync kiocb.  Returns the
 * bytes read (a read past the end of the file is short, the rest of the
 * segment zeroed) or written (all of them), or a negative errno.
 */
static ssize_t lo_file_io(struct loop_device *lo, int dir, struct page *page,
			  unsigned int off, unsigned int len, loff_t pos,
			  u16 ioprio)
{
	struct file *file = lo->lo_backing_file;
	struct iov_iter iter;
	struct kiocb kiocb;
	struct bio_vec bv;
	ssize_t ret;

	bvec_set_page(&bv, page, len, off);
	init_sync_kiocb(&kiocb, file);
	kiocb.ki_pos = pos;
	kiocb.ki_ioprio = ioprio;
	/* A file opened O_DIRECT gets it only where it suits (loop_can_dio()). */
	if (lo->lo_flags & LO_FLAGS_DIRECT_IO)
		kiocb.ki_flags |= IOCB_DIRECT;
	else
		kiocb.ki_flags &= ~IOCB_DIRECT;
	if (dir == WRITE) {
		iov_iter_bvec(&iter, ITER_SOURCE, &bv, 1, len);
		file_start_write(file);
		ret = file->f_op->write_iter(&kiocb, &iter);
		file_end_write(file);
		if (ret >= 0 && ret != len)
			ret = -EIO;
	} else {
		iov_iter_bvec(&iter, ITER_DEST, &bv, 1, len);
		ret = file->f_op->read_iter(&kiocb, &iter);
		/* Past the end of the file reads as zeros, as on the stock loop. */
		if (ret >= 0 && ret < len)
			memzero_page(page, off + ret, len - ret);
	}
	return ret;
}

static void lo_crypt_segment(struct loop_device *lo, int dir, struct page *dst,
			     unsigned int dst_off, struct bio_vec *bv,
			     u64 iv_sector)
{
	u8 *src = kmap_local_page(bv->bv_page);
	u8 *out = dst == bv->bv_page ? src : kmap_local_page(dst);

	loop_transfer(lo, dir, out + dst_off, src + bv->bv_offset, bv->bv_len,
		      iv_sector);
	if (out != src)
		kunmap_local(out);
	kunmap_local(src);
	if (dir == READ)
		flush_dcache_page(bv->bv_page);
}

/* Through the backing file, a segment at a time. */
static int lo_rw_file(struct loop_device *lo, struct loop_worker *w,
		      struct request *rq, loff_t pos, u64 iv_sector)
{
	int dir = op_is_write(req_op(rq)) ? WRITE : READ;
	struct req_iterator iter;
	struct bio_vec bv;
	ssize_t ret;

	rq_for_each_segment(bv, rq, iter) {
		if (lo->lo_crypt && dir == WRITE) {
			lo_crypt_segment(lo, WRITE, w->bounce[0], 0, &bv, iv_sector);
			ret = lo_file_io(lo, WRITE, w->bounce[0], 0, bv.bv_len, pos,
					 req_get_ioprio(rq));
		} else {
			ret = lo_file_io(lo, dir, bv.bv_page, bv.bv_offset,
					 bv.bv_len, pos, req_get_ioprio(rq));
			/*
			 * Only whole sectors that were read are decrypted: past
			 * the end of the file stays zeros, as on a plain loop.
			 */
			if (ret > 0 && lo->lo_crypt && dir == READ) {
				struct bio_vec part = bv;

				part.bv_len = ret & ~(LOOP_AES_SECTOR_SIZE - 1);
				if (part.bv_len < ret)
					memzero_page(bv.bv_page, bv.bv_offset + part.bv_len,
						     ret - part.bv_len);
				if (part.bv_len)
					lo_crypt_segment(lo, READ, bv.bv_page,
							 bv.bv_offset, &part, iv_sector);
			}
		}
		if (ret < 0)
			return ret;
		pos += bv.bv_len;
		iv_sector += bv.bv_len >> LOOP_AES_SECTOR_SHIFT;
	}
	return 0;
}

/* The scheduling hints of a request that its bios to the backing device keep. */
#define LO_BIO_HINTS	(REQ_SYNC | REQ_META | REQ_PRIO | REQ_IDLE)

/*
 * The worker's own bio, at byte @pos of the backing device.  It is
 * embedded in the worker and reused for every bio it sends, so this path
 * never allocates: swap on the loop must make progress when memory is gone.
 */
static struct bio *lo_bio_start(struct loop_device *lo, struct loop_worker *w,
				struct request *rq, blk_opf_t opf, loff_t pos,
				unsigned int nr_vecs)
{
	struct bio *bio = &w->bio;

	bio_init(bio, lo->lo_bdev, w->bvec, nr_vecs,
		 opf | (rq->cmd_flags & LO_BIO_HINTS));
	bio->bi_iter.bi_sector = pos >> SECTOR_SHIFT;
	bio->bi_ioprio = req_get_ioprio(rq);
	return bio;
}

static int lo_bio_submit(struct bio *bio)
{
	int err = submit_bio_wait(bio);

	bio_uninit(bio);
	return err;
}

/*
 * Straight to the backing block device: reads as bios into the request's
 * pages, decrypted afterwards; writes in bios of up to lo_prealloc bounce
 * pages of ciphertext (or of the request's own pages on a plain loop).  A
 * request larger than one bio (up to LOOP_MAX_HW_SECTORS) becomes several.
 */
static int lo_rw_bdev(struct loop_device *lo, struct loop_worker *w,
		      struct request *rq, loff_t pos, u64 iv_sector)
{
	int dir = op_is_write(req_op(rq)) ? WRITE : READ;
	blk_opf_t opf = dir == WRITE ? REQ_OP_WRITE : REQ_OP_READ;
	unsigned int max = dir == WRITE && lo->lo_crypt ? loop_prealloc() :
			   LOOP_BIO_VECS;
	unsigned int left = 0, used = 0, limit = 0;
	struct req_iterator iter;
	struct bio *bio = NULL;
	struct bio_vec bv;
	int err;

	/* Page-sized segments, which is what each bio vector will hold. */
	rq_for_each_segment(bv, rq, iter)
		left++;
	rq_for_each_segment(bv, rq, iter) {
		if (!bio) {
			limit = min(max, left);
			bio = lo_bio_start(lo, w, rq, opf, pos, limit);
			used = 0;
		}
		if (dir == WRITE && lo->lo_crypt) {
			lo_crypt_segment(lo, WRITE, w->bounce[used], 0, &bv, iv_sector);
			__bio_add_page(bio, w->bounce[used], bv.bv_len, 0);
		} else {
			__bio_add_page(bio, bv.bv_page, bv.bv_len, bv.bv_offset);
		}
		used++;
		left--;
		pos += bv.bv_len;
		iv_sector += bv.bv_len >> LOOP_AES_SECTOR_SHIFT;
		if (used == limit) {
			err = lo_bio_submit(bio);
			bio = NULL;
			if (err)
				return err;
		}
	}
	if (dir == WRITE || !lo->lo_crypt)
		return 0;

	/* Reads: all data is in; decrypt it in place. */
	iv_sector = blk_rq_pos(rq) + lo->lo_iv_offset;
	rq_for_each_segment(bv, rq, iter) {
		lo_crypt_segment(lo, READ, bv.bv_page, bv.bv_offset, &bv, iv_sector);
		iv_sector += bv.bv_len >> LOOP_AES_SECTOR_SHIFT;
	}
	return 0;
}

static int lo_rw(struct loop_device *lo, struct loop_worker *w,
		 struct request *rq, loff_t pos)
{
	u64 iv_sector = blk_rq_pos(rq) + lo->lo_iv_offset;
	struct req_iterator iter;
	struct bio_vec bv;

	/* The format works on whole 512-byte sectors only. */
	if (lo->lo_crypt)
		rq_for_each_segment(bv, rq, iter)
			if (bv.bv_len & (LOOP_AES_SECTOR_SIZE - 1)) {
				pr_err_ratelimited("loop%d: segment of %u bytes is not whole sectors\n",
						   lo->lo_number, bv.bv_len);
				return -EIO;
			}
	if (lo->lo_bdev)
		return lo_rw_bdev(lo, w, rq, pos, iv_sector);
	return lo_rw_file(lo, w, rq, pos, iv_sector);
}

/*
 * Discard and write-zeroes become holes or zeroed ranges in the backing
 * file.  They are offered on plain loops only: on an encrypted loop a hole
 * would read back as garbage, not zeros, and would show what is unused.
 */
static int lo_fallocate(struct loop_device *lo, struct request *rq, loff_t pos)
{
	struct file *file = lo->lo_backing_file;
	int mode = FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE;
	int err;

	if (req_op(rq) == REQ_OP_WRITE_ZEROES && (rq->cmd_flags & REQ_NOUNMAP))
		mode = FALLOC_FL_KEEP_SIZE | FALLOC_FL_ZERO_RANGE;
	if (lo->lo_crypt || !file->f_op->fallocate)
		return -EOPNOTSUPP;
	err = file->f_op->fallocate(file, mode, pos, blk_rq_bytes(rq));
	if (err == -EINVAL || err == -EOPNOTSUPP) {
		/* Once is enough: the block layer stops sending it. */
		if (!test_and_set_bit(mode & FALLOC_FL_ZERO_RANGE ?
				      LO_UNSUPP_WRITE_ZEROES : LO_UNSUPP_DISCARD,
				      &lo->lo_unsupported))
			schedule_work(&lo->lo_limits_work);
		return -EOPNOTSUPP;
	}
	return err;
}

/**
 * loop_limits_work() - clear the limits of what the backing file refused
 * @work: the device's lo_limits_work
 *
 * Scheduled by the first EOPNOTSUPP of a discard or write-zeroes; the
 * unbind cancels it before the limits are reset.
 */
void loop_limits_work(struct work_struct *work)
{
	struct loop_device *lo = container_of(work, struct loop_device,
					      lo_limits_work);

	loop_clear_limits(lo, test_bit(LO_UNSUPP_DISCARD, &lo->lo_unsupported),
			  test_bit(LO_UNSUPP_WRITE_ZEROES, &lo->lo_unsupported));
}

/* The backing block device, whether I/O goes to it as bios or not. */
static struct block_device *lo_file_bdev(struct file *file)
{
	struct inode *inode = file->f_mapping->host;

	return S_ISBLK(inode->i_mode) ? I_BDEV(inode) : NULL;
}

static bool loop_backing_read_only(struct loop_device *lo)
{
	struct block_device *bdev = lo_file_bdev(lo->lo_backing_file);

	return bdev && bdev_read_only(bdev);
}

static int lo_do_cmd(struct loop_device *lo, struct loop_worker *w,
		     struct request *rq)
{
	loff_t pos = ((loff_t)blk_rq_pos(rq) << SECTOR_SHIFT) + lo->lo_offset;

	if (op_is_write(req_op(rq)) && (lo->lo_flags & LO_FLAGS_READ_ONLY))
		return -EIO;
	/*
	 * A backing device made read-only after the bind refuses writes, as
	 * its page cache does; its bios would only be warned about.
	 */
	if (op_is_write(req_op(rq)) && loop_backing_read_only(lo))
		return -EPERM;
	switch (req_op(rq)) {
	case REQ_OP_FLUSH:
		if (lo->lo_bdev)
			return blkdev_issue_flush(lo->lo_bdev);
		return vfs_fsync(lo->lo_backing_file, 0);
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		return lo_fallocate(lo, rq, pos);
	case REQ_OP_WRITE:
	case REQ_OP_READ:
		return lo_rw(lo, w, rq, pos);
	default:
		return -EIO;
	}
}

static void loop_cmd_work(struct kthread_work *work)
{
	struct loop_cmd *cmd = container_of(work, struct loop_cmd, work);
	struct request *rq = blk_mq_rq_from_pdu(cmd);
	struct loop_device *lo = rq->q->queuedata;
	unsigned int old_flags = current->flags;
	int err;

	/*
	 * Allocations here must not recurse into I/O on this very device, and
	 * writeback of the backing file must not be throttled against the
	 * loop device it serves.
	 */
	current->flags |= PF_LOCAL_THROTTLE | PF_MEMALLOC_NOIO;
	err = lo_do_cmd(lo, cmd->worker, rq);
	current->flags = old_flags;

	/* As stock: "not supported" is told apart, every other error is EIO. */
	blk_mq_end_request(rq, err == -EOPNOTSUPP ? BLK_STS_NOTSUPP :
			   err ? BLK_STS_IOERR : BLK_STS_OK);
}

static blk_status_t loop_queue_rq(struct blk_mq_hw_ctx *hctx,
				  const struct blk_mq_queue_data *bd)
{
	struct request *rq = bd->rq;
	struct loop_device *lo = rq->q->queuedata;
	struct loop_cmd *cmd = blk_mq_rq_to_pdu(rq);
	unsigned int i;

	blk_mq_start_request(rq);
	/*
	 * The backing file and the workers are set and cleared only with the
	 * queue frozen, so they stay for the life of this request.  They are
	 * still there while an unbind writes the page cache back.
	 */
	if (!data_race(lo->lo_backing_file)) {
		/*
		 * Unbound, or the unbind has not yet taken the write cache
		 * away (the stock driver does that first): a flush has nothing
		 * to write.
		 */
		if (req_op(rq) == REQ_OP_FLUSH) {
			blk_mq_end_request(rq, BLK_STS_OK);
			return BLK_STS_OK;
		}
		return BLK_STS_IOERR;
	}
	i = (unsigned int)atomic_inc_return(&lo->lo_next_worker) % lo->lo_nr_workers;
	/* A kthread_work remembers its last worker: start afresh each time. */
	kthread_init_work(&cmd->work, loop_cmd_work);
	cmd->worker = &lo->lo_workers[i];
	kthread_queue_work(cmd->worker->kw, &cmd->work);
	return BLK_STS_OK;
}

const struct blk_mq_ops loop_mq_ops = {
	.queue_rq	= loop_queue_rq,
};

/**
 * loop_start_workers() - create the workers of a device being bound
 * @lo:       the device, lo_mutex held
 * @threads:  number of workers, 1..LOOP_MAX_THREADS (lo_threads)
 * @nice:     their nice value (lo_nice)
 * @prealloc: bounce pages per worker, 1..LOOP_MAX_PREALLOC (lo_prealloc)
 *
 * Return: 0 or -ENOMEM (nothing is left allocated then).
 */
int loop_start_workers(struct loop_device *lo, unsigned int threads, int nice,
		       unsigned int prealloc)
{
	unsigned int i, j;

	lo->lo_workers = kcalloc(threads, sizeof(*lo->lo_workers), GFP_KERNEL);
	if (!lo->lo_workers)
		return -ENOMEM;
	for (i = 0; i < threads; i++) {
		struct loop_worker *w = &lo->lo_workers[i];

		lo->lo_nr_workers = i + 1;
		w->bounce = kcalloc(prealloc + 1, sizeof(*w->bounce), GFP_KERNEL);
		w->bvec = kcalloc(LOOP_BIO_VECS, sizeof(*w->bvec), GFP_KERNEL);
		if (!w->bounce || !w->bvec)
			goto fail;
		/* NULL-terminated, so loop_stop_workers() knows how many. */
		for (j = 0; j < prealloc; j++) {
			w->bounce[j] = alloc_page(GFP_KERNEL);
			if (!w->bounce[j])
				goto fail;
		}
		w->kw = loop_run_worker(lo->lo_number, i);
		if (IS_ERR(w->kw)) {
			w->kw = NULL;
			goto fail;
		}
		set_user_nice(w->kw->task, nice);
	}
	return 0;
fail:
	loop_stop_workers(lo);
	return -ENOMEM;
}

/**
 * loop_stop_workers() - destroy the workers of a device
 * @lo: the device; its queue is frozen or was never live, so no work is
 *      pending
 */
void loop_stop_workers(struct loop_device *lo)
{
	unsigned int i, j;

	for (i = 0; i < lo->lo_nr_workers; i++) {
		struct loop_worker *w = &lo->lo_workers[i];

		if (w->kw)
			kthread_destroy_worker(w->kw);
		for (j = 0; w->bounce && w->bounce[j]; j++)
			__free_page(w->bounce[j]);
		kfree(w->bounce);
		kfree(w->bvec);
	}
	kfree(lo->lo_workers);
	lo->lo_workers = NULL;
	lo->lo_nr_workers = 0;
}

/**
 * loop_bio_target() - the block device a loop sends its bios to, if any
 * @file:   the backing file
 * @offset: where the loop's data starts in @file, bytes
 * @bsize:  the loop's logical block size, bytes
 *
 * A backing block device is driven with bios, no page cache in between,
 * when @offset and @bsize are multiples of its logical block size, so that
 * every request suits it.  Otherwise, and for a regular file, I/O goes
 * through the file (its page cache, or O_DIRECT).
 *
 * Return: the block device, or NULL.
 */
struct block_device *loop_bio_target(struct file *file, loff_t offset,
				     unsigned int bsize)
{
	struct block_device *bdev = lo_file_bdev(file);
	unsigned int lbs;

	if (!bdev)
		return NULL;
	lbs = bdev_logical_block_size(bdev);
	if (offset % lbs || bsize % lbs)
		return NULL;
	return bdev;
}

/**
 * loop_can_dio() - whether direct I/O on the backing file suits a device
 * @lo:   the device, its offset and logical block size set
 * @file: the backing file
 *
 * Direct I/O needs the file system's support, and the offset and the
 * loop's logical block size (which every request and every segment of it
 * is aligned to) to be multiples of the file's direct I/O alignment: what
 * statx() reports as STATX_DIOALIGN (file offsets and memory), as the
 * stock driver asks from 6.14 on, or where the file system does not say,
 * the logical block size of the device below (the backing device itself,
 * or the file system's).
 *
 * Return: true when direct I/O can be used.
 */
bool loop_can_dio(struct loop_device *lo, struct file *file)
{
	unsigned int bsize = queue_logical_block_size(lo->lo_disk->queue);
	struct inode *inode = file->f_mapping->host;
	struct block_device *bdev = S_ISBLK(inode->i_mode) ? I_BDEV(inode) :
				    inode->i_sb->s_bdev;
	unsigned int align = bdev ? bdev_logical_block_size(bdev) : SECTOR_SIZE;
	unsigned int mem_align = 1;
	struct kstat st;

	if (!(file->f_mode & FMODE_CAN_ODIRECT))
		return false;
	if (!vfs_getattr(&file->f_path, &st, STATX_DIOALIGN, AT_STATX_SYNC_AS_STAT) &&
	    (st.result_mask & STATX_DIOALIGN) && st.dio_offset_align) {
		align = st.dio_offset_align;
		mem_align = st.dio_mem_align;
	}
	return bsize % align == 0 && lo->lo_offset % align == 0 &&
	       mem_align && bsize % mem_align == 0;
}

/**
 * loop_default_block_size() - the logical block size of a loop bound
 *                             without one
 * @file:  the backing file
 * @flags: the lo_flags asked for
 *
 * As the stock driver (6.12's; 6.1's for files opened O_DIRECT): when
 * direct I/O is asked for, by LO_FLAGS_DIRECT_IO or a file opened O_DIRECT,
 * the logical block size of the device below (the backing device, or the
 * file system's), so that direct I/O, and bios to a backing device with
 * 4096-byte sectors, work.  Otherwise 512 bytes, which every backing file
 * takes, through the page cache if need be (loop_update_io_path() says so).
 *
 * Return: the block size in bytes, 512..PAGE_SIZE.
 */
unsigned int loop_default_block_size(struct file *file, u32 flags)
{
	struct inode *inode = file->f_mapping->host;
	struct block_device *bdev = S_ISBLK(inode->i_mode) ? I_BDEV(inode) :
				    inode->i_sb->s_bdev;

	if (!(flags & LO_FLAGS_DIRECT_IO) && !(file->f_flags & O_DIRECT))
		return SECTOR_SIZE;
	return bdev ? bdev_logical_block_size(bdev) : SECTOR_SIZE;
}

/**
 * loop_queue_caps() - what a loop's queue offers over a backing file
 * @file:   the backing file, or NULL for an unbound device
 * @crypt:  the key the loop has or will have, NULL for none
 * @caps:   filled in
 *
 * As the stock driver: a backing device's rotational flag, or that of the
 * file system's device; discard and write-zeroes as far as the backing
 * device can zero (a discard becomes a zeroing fallocate of the device,
 * so it reads back as zeros), or a punched hole in a file.  Never on an
 * encrypted loop: a hole would read back as garbage, not zeros, and show
 * what is unused.  A bound queue always caches writes, as stock: even
 * where bios could go straight to a backing device without a volatile
 * cache, the I/O path may fall back to its page cache (loop_update_io_path()),
 * and a flush is then what writes it back; one that reaches a device
 * without a cache costs nothing.  An unbound device has none, as stock: a
 * flush there (an fsync of /dev/loopN after its detach, as e2fsprogs'
 * tools do at close) has nothing to write and must not fail.
 */
void loop_queue_caps(struct file *file, const struct loop_aes_ctx *crypt,
		     struct loop_queue_caps *caps)
{
	struct block_device *bdev;
	struct inode *inode;

	memset(caps, 0, sizeof(*caps));
	if (!file)
		return;
	caps->write_cache = true;
	inode = file->f_mapping->host;
	bdev = lo_file_bdev(file);
	if (bdev) {
		caps->rotational = loop_bdev_rotational(bdev);
		if (!crypt) {
			caps->max_discard_sectors = bdev_write_zeroes_sectors(bdev);
			caps->discard_granularity = bdev_discard_granularity(bdev) ?:
						    bdev_physical_block_size(bdev);
		}
	} else {
		if (inode->i_sb->s_bdev)
			caps->rotational = loop_bdev_rotational(inode->i_sb->s_bdev);
		if (!crypt && file->f_op->fallocate) {
			caps->max_discard_sectors = UINT_MAX >> SECTOR_SHIFT;
			caps->discard_granularity = inode->i_sb->s_blocksize;
		}
	}
	if (!caps->max_discard_sectors)
		caps->discard_granularity = 0;
}

/*
 * Write back and drop the page cache of a backing block device: bios that
 * bypass it must not read data older than it holds, and none of its pages
 * may be written back over theirs later.  The loop's queue is frozen, so
 * reclaim must not write to it meanwhile (swap on this loop).
 */
static int lo_drop_backing_cache(struct loop_device *lo, struct file *file)
{
	struct address_space *mapping = file->f_mapping;
	unsigned int noio = memalloc_noio_save();
	int err;

	err = filemap_write_and_wait(mapping);
	if (!err)
		err = invalidate_inode_pages2(mapping);
	memalloc_noio_restore(noio);
	if (err)
		pr_warn("loop%d: cannot write back and drop the page cache of %pg (%d)\n",
			lo->lo_number, I_BDEV(mapping->host), err);
	return err;
}

/**
 * loop_update_io_path() - choose between bios and the backing file
 * @lo:   the device: lo_mutex held and the queue frozen (or not yet live);
 *        its backing file, offset, logical block size and lo_flags set
 * @bind: the backing file is new (LOOP_SET_FD, LOOP_CONFIGURE,
 *        LOOP_CHANGE_FD)
 *
 * Sets @lo->lo_bdev (see loop_bio_target()) and LO_FLAGS_DIRECT_IO: asked
 * for, or the file was opened O_DIRECT (as the stock driver), and possible
 * (loop_can_dio()).  Bios bypass the backing device's page cache, so when
 * I/O starts going as bios (at a bind too: another opener may have left
 * dirty pages), and when it goes back to the page cache (its pages are
 * older than the bios), that cache is written back and dropped.  If that
 * fails, I/O stays in the page cache, which is always correct.  A backing
 * device whose sectors the loop cannot take as bios gets a notice: its
 * page cache needs memory, which swap on the loop cannot count on.
 */
void loop_update_io_path(struct loop_device *lo, bool bind)
{
	struct file *file = lo->lo_backing_file;
	struct block_device *bdev = lo_file_bdev(file), *target;
	unsigned int bsize = queue_logical_block_size(lo->lo_disk->queue);

	if (file->f_flags & O_DIRECT)
		lo->lo_flags |= LO_FLAGS_DIRECT_IO;
	if (!loop_can_dio(lo, file))
		lo->lo_flags &= ~LO_FLAGS_DIRECT_IO;

	target = loop_bio_target(file, lo->lo_offset, bsize);
	if (!bdev || (!bind && target == lo->lo_bdev))
		return;
	if (!target) {
		if (!bind)
			lo_drop_backing_cache(lo, file);
		pr_notice("loop%d: offset %lld and %u-byte blocks do not suit the %u-byte sectors of %pg: I/O goes through its page cache, not safe for swap\n",
			  lo->lo_number, (long long)lo->lo_offset, bsize,
			  bdev_logical_block_size(bdev), bdev);
	} else if (lo_drop_backing_cache(lo, file)) {
		pr_warn("loop%d: I/O stays in the page cache of %pg\n",
			lo->lo_number, bdev);
		target = NULL;
	}
	lo->lo_bdev = target;
}
