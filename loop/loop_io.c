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
 * Each worker owns its bounce pages from bind to unbind, so a write never
 * waits for memory (swap on an encrypted loop).
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
			  unsigned int off, unsigned int len, loff_t pos)
{
	struct file *file = lo->lo_backing_file;
	struct iov_iter iter;
	struct kiocb kiocb;
	struct bio_vec bv;
	ssize_t ret;

	bvec_set_page(&bv, page, len, off);
	init_sync_kiocb(&kiocb, file);
	kiocb.ki_pos = pos;
	if (lo->lo_flags & LO_FLAGS_DIRECT_IO)
		kiocb.ki_flags |= IOCB_DIRECT;
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
			ret = lo_file_io(lo, WRITE, w->bounce[0], 0, bv.bv_len, pos);
		} else {
			ret = lo_file_io(lo, dir, bv.bv_page, bv.bv_offset,
					 bv.bv_len, pos);
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

/*
 * Straight to the backing block device: reads as one bio into the request's
 * pages, decrypted afterwards; writes in bios of up to lo_prealloc bounce
 * pages of ciphertext (or of the request's own pages on a plain loop).
 */
static int lo_rw_bdev(struct loop_device *lo, struct loop_worker *w,
		      struct request *rq, loff_t pos, u64 iv_sector)
{
	int dir = op_is_write(req_op(rq)) ? WRITE : READ;
	blk_opf_t opf = dir == WRITE ? REQ_OP_WRITE : REQ_OP_READ;
	unsigned int max = dir == WRITE && lo->lo_crypt ? loop_prealloc() :
			   BIO_MAX_VECS;
	unsigned int left = 0, used = 0, limit = 0;
	struct req_iterator iter;
	struct bio *bio = NULL;
	struct bio_vec bv;
	int err = 0;

	/* Page-sized segments, which is what each bio vector will hold. */
	rq_for_each_segment(bv, rq, iter)
		left++;
	rq_for_each_segment(bv, rq, iter) {
		if (!bio) {
			limit = min(max, left);
			bio = bio_alloc(lo->lo_bdev, limit, opf, GFP_NOIO);
			bio->bi_iter.bi_sector = pos >> SECTOR_SHIFT;
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
			err = submit_bio_wait(bio);
			bio_put(bio);
			bio = NULL;
			if (err)
				return err;
		}
	}
	if (err || dir == WRITE || !lo->lo_crypt)
		return err;

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

static int lo_do_cmd(struct loop_device *lo, struct loop_worker *w,
		     struct request *rq)
{
	loff_t pos = ((loff_t)blk_rq_pos(rq) << SECTOR_SHIFT) + lo->lo_offset;

	if (op_is_write(req_op(rq)) && (lo->lo_flags & LO_FLAGS_READ_ONLY))
		return -EIO;
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
	if (!data_race(lo->lo_backing_file))
		return BLK_STS_IOERR;
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
		if (!w->bounce)
			goto fail;
		/* NULL-terminated, so loop_stop_workers() knows how many. */
		for (j = 0; j < prealloc; j++) {
			w->bounce[j] = alloc_page(GFP_KERNEL);
			if (!w->bounce[j])
				goto fail;
		}
		w->kw = kthread_create_worker(0, "loop%d-%u", lo->lo_number, i);
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
	}
	kfree(lo->lo_workers);
	lo->lo_workers = NULL;
	lo->lo_nr_workers = 0;
}
