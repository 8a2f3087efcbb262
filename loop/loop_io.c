// SPDX-License-Identifier: GPL-2.0
/*
 * loop_io.c - aesloop: the request path.
 *
 * queue_rq() never blocks: it hands the request to one of the device's
 * workers (lo_threads kthreads, chosen round-robin), so independent
 * requests are encrypted, decrypted and written in parallel.  A worker
 * moves the data between the request's pages and the backing file one
 * segment (at most a page) at a time, through the file's read_iter and
 * write_iter, buffered or direct:
 *  - read:  read the file into the request's page, decrypt it in place;
 *  - write: encrypt the page into a bounce page and write that, so the page
 *           cache above never sees ciphertext and the file never sees
 *           plaintext.
 * Bounce pages come from a per-device mempool holding one page per worker,
 * so a write makes progress even when memory is short (swap on a loop).
 */
#include <linux/fs.h>
#include <linux/falloc.h>
#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "loop.h"

/* One segment of file I/O at @pos, through a sync kiocb. */
static int lo_file_io(struct loop_device *lo, int dir, struct page *page,
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
	return ret < 0 ? ret : 0;
}

static int lo_rw(struct loop_device *lo, struct request *rq, loff_t pos)
{
	int dir = op_is_write(req_op(rq)) ? WRITE : READ;
	u64 iv_sector = blk_rq_pos(rq) + lo->lo_iv_offset;
	struct page *bounce = NULL;
	struct req_iterator iter;
	struct bio_vec bv;
	int err = 0;

	if (dir == WRITE && lo->lo_crypt)
		bounce = mempool_alloc(lo->lo_bounce_pool, GFP_NOIO);

	rq_for_each_segment(bv, rq, iter) {
		u8 *buf;

		if (!lo->lo_crypt) {
			err = lo_file_io(lo, dir, bv.bv_page, bv.bv_offset,
					 bv.bv_len, pos);
			goto next;
		}
		/* The format works on whole 512-byte sectors only. */
		if (bv.bv_len & (LOOP_AES_SECTOR_SIZE - 1)) {
			pr_err_ratelimited("loop%d: segment of %u bytes is not whole sectors\n",
					   lo->lo_number, bv.bv_len);
			err = -EIO;
			break;
		}
		if (dir == WRITE) {
			buf = kmap_local_page(bv.bv_page);
			loop_transfer(lo, WRITE, page_address(bounce),
				      buf + bv.bv_offset, bv.bv_len, iv_sector);
			kunmap_local(buf);
			err = lo_file_io(lo, WRITE, bounce, 0, bv.bv_len, pos);
		} else {
			err = lo_file_io(lo, READ, bv.bv_page, bv.bv_offset,
					 bv.bv_len, pos);
			if (err)
				break;
			buf = kmap_local_page(bv.bv_page);
			loop_transfer(lo, READ, buf + bv.bv_offset,
				      buf + bv.bv_offset, bv.bv_len, iv_sector);
			kunmap_local(buf);
			flush_dcache_page(bv.bv_page);
		}
next:
		if (err)
			break;
		pos += bv.bv_len;
		iv_sector += bv.bv_len >> LOOP_AES_SECTOR_SHIFT;
	}

	if (bounce)
		mempool_free(bounce, lo->lo_bounce_pool);
	return err;
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
	return err == -EINVAL ? -EOPNOTSUPP : err;
}

static int lo_do_cmd(struct loop_device *lo, struct request *rq)
{
	loff_t pos = ((loff_t)blk_rq_pos(rq) << SECTOR_SHIFT) + lo->lo_offset;

	if (op_is_write(req_op(rq)) && (lo->lo_flags & LO_FLAGS_READ_ONLY))
		return -EIO;
	switch (req_op(rq)) {
	case REQ_OP_FLUSH:
		return vfs_fsync(lo->lo_backing_file, 0);
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		return lo_fallocate(lo, rq, pos);
	case REQ_OP_WRITE:
	case REQ_OP_READ:
		return lo_rw(lo, rq, pos);
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
	err = lo_do_cmd(lo, rq);
	current->flags = old_flags;

	blk_mq_end_request(rq, errno_to_blk_status(err));
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
	kthread_queue_work(lo->lo_workers[i], &cmd->work);
	return BLK_STS_OK;
}

const struct blk_mq_ops loop_mq_ops = {
	.queue_rq	= loop_queue_rq,
};

/**
 * loop_start_workers() - create the workers and bounce pool of a device
 * @lo:      the device being bound, lo_mutex held
 * @threads: number of workers, 1..LOOP_MAX_THREADS (lo_threads)
 * @nice:    their nice value (lo_nice)
 *
 * Each worker is a kthread; with one bounce page per worker in the pool, a
 * worker never waits for memory to write.
 *
 * Return: 0 or -ENOMEM (nothing is left allocated then).
 */
int loop_start_workers(struct loop_device *lo, unsigned int threads, int nice)
{
	unsigned int i;

	lo->lo_workers = kcalloc(threads, sizeof(*lo->lo_workers), GFP_KERNEL);
	if (!lo->lo_workers)
		return -ENOMEM;
	lo->lo_bounce_pool = mempool_create_page_pool(threads, 0);
	if (!lo->lo_bounce_pool)
		goto fail;
	for (i = 0; i < threads; i++) {
		struct kthread_worker *w;

		w = kthread_create_worker(0, "loop%d-%u", lo->lo_number, i);
		if (IS_ERR(w))
			goto fail;
		set_user_nice(w->task, nice);
		lo->lo_workers[i] = w;
		lo->lo_nr_workers = i + 1;
	}
	return 0;
fail:
	loop_stop_workers(lo);
	return -ENOMEM;
}

/**
 * loop_stop_workers() - destroy the workers and bounce pool of a device
 * @lo: the device; its queue is frozen or was never live, so no work is
 *      pending
 */
void loop_stop_workers(struct loop_device *lo)
{
	unsigned int i;

	for (i = 0; i < lo->lo_nr_workers; i++)
		kthread_destroy_worker(lo->lo_workers[i]);
	kfree(lo->lo_workers);
	lo->lo_workers = NULL;
	lo->lo_nr_workers = 0;
	mempool_destroy(lo->lo_bounce_pool);
	lo->lo_bounce_pool = NULL;
}
