// SPDX-License-Identifier: GPL-2.0
/*
 * loop_io.c - aesloop: the request path.
 *
 * queue_rq() never blocks: it hands the request to the device's workqueue.
 * A worker then moves the data between the request's pages and the backing
 * file with ordinary buffered file I/O, one segment (at most a page) at a
 * time:
 *  - read:  read the file into the request's page, decrypt it in place;
 *  - write: encrypt the page into a bounce page, write that to the file, so
 *           the page cache above never sees ciphertext and the file never
 *           sees plaintext.
 * Bounce pages come from a per-device mempool, so a write makes progress
 * even when memory is short (swap on an encrypted loop).
 */
#include <linux/highmem.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>

#include "loop.h"

static int lo_read_segment(struct loop_device *lo, struct bio_vec *bv,
			   loff_t pos, u64 iv_sector)
{
	u8 *buf = kmap_local_page(bv->bv_page) + bv->bv_offset;
	ssize_t len;
	int err = 0;

	len = kernel_read(lo->lo_backing_file, buf, bv->bv_len, &pos);
	if (len < 0) {
		err = len;
		goto out;
	}
	/* Past the end of the file reads as zeros, as on the stock loop. */
	if (len < bv->bv_len)
		memset(buf + len, 0, bv->bv_len - len);
	if (lo->lo_crypt)
		loop_transfer(lo, READ, buf, buf, bv->bv_len, iv_sector);
	flush_dcache_page(bv->bv_page);
out:
	kunmap_local(buf);
	return err;
}

static int lo_write_segment(struct loop_device *lo, struct bio_vec *bv,
			    loff_t pos, u64 iv_sector, u8 *bounce)
{
	u8 *buf = kmap_local_page(bv->bv_page) + bv->bv_offset;
	const u8 *out = buf;
	ssize_t len;

	if (lo->lo_crypt) {
		loop_transfer(lo, WRITE, bounce, buf, bv->bv_len, iv_sector);
		out = bounce;
	}
	len = kernel_write(lo->lo_backing_file, out, bv->bv_len, &pos);
	kunmap_local(buf);
	if (len < 0)
		return len;
	return len == bv->bv_len ? 0 : -EIO;
}

static int lo_rw(struct loop_device *lo, struct request *rq, loff_t pos)
{
	bool write = op_is_write(req_op(rq));
	u64 iv_sector = blk_rq_pos(rq) + lo->lo_iv_offset;
	struct page *bounce = NULL;
	struct req_iterator iter;
	struct bio_vec bv;
	int err = 0;

	if (write && lo->lo_crypt)
		bounce = mempool_alloc(lo->lo_bounce_pool, GFP_NOIO);

	rq_for_each_segment(bv, rq, iter) {
		/* The format works on whole 512-byte sectors only. */
		if (lo->lo_crypt && (bv.bv_len & (LOOP_AES_SECTOR_SIZE - 1))) {
			pr_err_ratelimited("loop%d: segment of %u bytes is not whole sectors\n",
					   lo->lo_number, bv.bv_len);
			err = -EIO;
			break;
		}
		if (write)
			err = lo_write_segment(lo, &bv, pos, iv_sector,
					       bounce ? page_address(bounce) : NULL);
		else
			err = lo_read_segment(lo, &bv, pos, iv_sector);
		if (err)
			break;
		pos += bv.bv_len;
		iv_sector += bv.bv_len >> LOOP_AES_SECTOR_SHIFT;
	}

	if (bounce) {
		/* The bounce page held ciphertext only, but leave nothing behind. */
		memzero_page(bounce, 0, PAGE_SIZE);
		mempool_free(bounce, lo->lo_bounce_pool);
	}
	return err;
}

static int lo_do_cmd(struct loop_device *lo, struct request *rq)
{
	loff_t pos = ((loff_t)blk_rq_pos(rq) << SECTOR_SHIFT) + lo->lo_offset;

	switch (req_op(rq)) {
	case REQ_OP_FLUSH:
		return vfs_fsync(lo->lo_backing_file, 0);
	case REQ_OP_WRITE:
		if (lo->lo_flags & LO_FLAGS_READ_ONLY)
			return -EIO;
		fallthrough;
	case REQ_OP_READ:
		return lo_rw(lo, rq, pos);
	default:
		return -EIO;
	}
}

static void loop_cmd_work(struct work_struct *work)
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

	blk_mq_start_request(rq);
	/*
	 * The backing file is set and cleared only with the queue frozen, so
	 * it stays for the life of this request.  It is still there while an
	 * unbind writes the page cache back (LO_RUNDOWN).
	 */
	if (!data_race(lo->lo_backing_file))
		return BLK_STS_IOERR;
	queue_work(lo->lo_wq, &cmd->work);
	return BLK_STS_OK;
}

static int loop_init_request(struct blk_mq_tag_set *set, struct request *rq,
			     unsigned int hctx_idx, unsigned int numa_node)
{
	struct loop_cmd *cmd = blk_mq_rq_to_pdu(rq);

	INIT_WORK(&cmd->work, loop_cmd_work);
	return 0;
}

const struct blk_mq_ops loop_mq_ops = {
	.queue_rq	= loop_queue_rq,
	.init_request	= loop_init_request,
};

/**
 * loop_alloc_workqueue() - create the workqueue of a device being bound
 * @lo: the device, LO_UNBOUND, lo_mutex held
 *
 * WQ_MEM_RECLAIM gives it a rescuer thread, so requests are served even
 * when no new worker can be created (swap, writeback under pressure).
 *
 * Return: 0 or -ENOMEM.
 */
int loop_alloc_workqueue(struct loop_device *lo)
{
	lo->lo_wq = alloc_workqueue("loop%d", WQ_UNBOUND | WQ_MEM_RECLAIM, 1,
				    lo->lo_number);
	return lo->lo_wq ? 0 : -ENOMEM;
}
