// SPDX-License-Identifier: GPL-2.0
/*
 * loop_io.c - aesloop: the request path.
 *
 * queue_rq() never blocks: it hands the request to one of the device's
 * workers (lo_threads kthreads, chosen round-robin), so independent
 * requests are encrypted, decrypted and written in parallel; the
 * decryption of one large read is shared with the workers that are idle
 * (lo_decrypt_read()).  A plain loop's request that its worker only sends
 * on asynchronously goes to the first worker instead (lo_only_sent()),
 * unless that one is held up.
 *
 * A backing file is read and written through its read_iter and
 * write_iter, buffered or direct, a whole request per call (up to
 * LOOP_BIO_VECS vectors); direct I/O asynchronously (lo_rw_aio()).  A
 * backing block device gets the request's bios, cloned onto it and sent
 * asynchronously (lo_rw_clones()); which way, and whether direct, is
 * decided at bind and reconfiguration (loop_backing.c).  Either way:
 *  - read:  read into the request's pages, decrypt them in place;
 *  - write: encrypt the pages into the worker's bounce area and write
 *           that, so the page cache above never sees ciphertext and the
 *           backing store never sees plaintext.  The area is a ring of
 *           chunks, each sent as soon as it is full and asynchronously
 *           where the backing store allows (lo_encrypt_rq()).
 * The transforms take a request's scattered pages a few at a time
 * (LOOP_MAP_SEGS) and still hand the engine whole batches of sectors
 * (loop_aes_encrypt_segs()).
 * Each worker of an encrypted loop owns its bounce pages and what its
 * chunks need to be sent, from keying or bind to unbind, so no encrypted
 * write waits for memory; bios cloned to a backing device come from the
 * device's own bio_set, whose reserve lets them through (swap on a loop).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/falloc.h>
#include <linux/bio.h>
#include <linux/blk-cgroup.h>
#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>

#include "loop.h"

/*
 * Map the next segment of a request for a transform.  The pages are mapped
 * in order and unmapped in the reverse order (lo_unmap_segs()), as
 * kmap_local_page() wants.
 */
static void lo_map_seg(struct loop_worker *w, unsigned int i,
		       const struct bio_vec *bv, unsigned int len)
{
	w->seg_page[i] = bv->bv_page;
	w->segs[i].data = (u8 *)kmap_local_page(bv->bv_page) + bv->bv_offset;
	w->segs[i].len = len;
}

static void lo_unmap_segs(struct loop_worker *w, unsigned int nseg,
			  bool written)
{
	while (nseg--) {
		kunmap_local(w->segs[nseg].data);
		if (written)
			flush_dcache_page(w->seg_page[nseg]);
	}
}

/*
 * Decrypt @len bytes (whole sectors) of a request in place, from byte
 * @from of it on, the mapped segments a transform at a time; the worker's
 * scratch takes the multi-key IVs.  @iv_sector is the IV sector of the
 * request's first sector.
 */
static void lo_decrypt_range(struct loop_device *lo, struct loop_worker *w,
			     struct request *rq, u64 iv_sector,
			     unsigned int from, unsigned int len)
{
	unsigned int nseg = 0, mapped = 0;
	struct req_iterator iter;
	struct bio_vec bv;

	iv_sector += from >> LOOP_AES_SECTOR_SHIFT;
	rq_for_each_segment(bv, rq, iter) {
		/* A copy to cut: the iterator steps by bv's own length. */
		struct bio_vec seg = bv;
		unsigned int n;

		if (from >= seg.bv_len) {
			from -= seg.bv_len;
			continue;
		}
		seg.bv_offset += from;
		seg.bv_len -= from;
		from = 0;
		n = min(seg.bv_len, len);
		if (!n)
			break;
		len -= n;
		lo_map_seg(w, nseg++, &seg, n);
		mapped += n;
		if (nseg < LOOP_MAP_SEGS)
			continue;
		loop_decrypt_segs(lo, w->segs, nseg, iv_sector, w->scratch,
				  LOOP_AES_SCRATCH);
		lo_unmap_segs(w, nseg, true);
		iv_sector += mapped >> LOOP_AES_SECTOR_SHIFT;
		nseg = 0;
		mapped = 0;
	}
	if (nseg) {
		loop_decrypt_segs(lo, w->segs, nseg, iv_sector, w->scratch,
				  LOOP_AES_SCRATCH);
		lo_unmap_segs(w, nseg, true);
	}
}

/* A piece of a read's decryption, on a worker that was idle (lo_decrypt_read()). */
static void loop_piece_work(struct kthread_work *work)
{
	struct loop_piece *p = container_of(work, struct loop_piece, work);
	struct request *rq = blk_mq_rq_from_pdu(p->cmd);
	struct loop_device *lo = rq->q->queuedata;
	unsigned int old_flags = current->flags;
	struct loop_worker *w = p->worker;

	/* As for every request the worker runs (loop_cmd_work()). */
	current->flags |= PF_LOCAL_THROTTLE | PF_MEMALLOC_NOIO;
	lo_decrypt_range(lo, w, rq, blk_rq_pos(rq) + lo->lo_iv_offset, p->from,
			 p->len);
	current->flags = old_flags;
	atomic_dec(&w->busy_works);
	/* The read is in and whole: only decryption was left to do. */
	if (atomic_dec_and_test(&p->cmd->pieces))
		blk_mq_end_request(rq, BLK_STS_OK);
}

/*
 * Decrypt the first @len bytes (whole sectors) of a read that is in, on
 * worker @w.  A large one is shared with the device's workers that have
 * nothing queued at this moment, in pieces of at least LOOP_SPLIT_MIN
 * bytes, so that one large read at a time (a single reader with direct
 * I/O, say) is decrypted on as many CPUs as the device has workers.
 * Workers busy with other requests are left alone: under load the
 * requests themselves keep every worker going, and a piece queued behind
 * them would only wait.  The scan starts after @w, so that reads shared at
 * the same time spread their pieces.
 *
 * Return: 0 when the request may end now, or -EIOCBQUEUED when a piece
 * still running elsewhere will end it (loop_piece_work()).
 */
static int lo_decrypt_read(struct loop_device *lo, struct loop_worker *w,
			   struct request *rq, unsigned int len)
{
	struct loop_cmd *cmd = blk_mq_rq_to_pdu(rq);
	u64 iv_sector = blk_rq_pos(rq) + lo->lo_iv_offset;
	unsigned int want = min(len / LOOP_SPLIT_MIN, LOOP_SPLIT_MAX + 1);
	unsigned int own = w - lo->lo_workers, n = 0, i, sectors, each;

	for (i = 1; i < lo->lo_nr_workers && n + 1 < want; i++) {
		struct loop_worker *o =
			&lo->lo_workers[(own + i) % lo->lo_nr_workers];

		if (!atomic_read(&o->busy_works))
			cmd->piece[n++].worker = o;
	}
	if (!n) {
		lo_decrypt_range(lo, w, rq, iv_sector, 0, len);
		return 0;
	}

	/* Equal pieces of whole sectors; the own worker's takes the rest. */
	sectors = len >> LOOP_AES_SECTOR_SHIFT;
	each = sectors / (n + 1);
	atomic_set(&cmd->pieces, n + 1);
	for (i = 0; i < n; i++) {
		struct loop_piece *p = &cmd->piece[i];

		p->cmd = cmd;
		p->from = (sectors - (n - i) * each) << LOOP_AES_SECTOR_SHIFT;
		p->len = each << LOOP_AES_SECTOR_SHIFT;
		kthread_init_work(&p->work, loop_piece_work);
		atomic_inc(&p->worker->busy_works);
		kthread_queue_work(p->worker->kw, &p->work);
	}
	lo_decrypt_range(lo, w, rq, iv_sector, 0,
			 (sectors - n * each) << LOOP_AES_SECTOR_SHIFT);
	return atomic_dec_and_test(&cmd->pieces) ? 0 : -EIOCBQUEUED;
}

/*
 * File I/O of @nr vectors, @len bytes at @pos, through one sync kiocb.
 * Returns the bytes read (fewer only at the end of the file) or written
 * (all of them), or a negative errno.
 */
static ssize_t lo_file_io(struct loop_device *lo, int dir, struct bio_vec *bvec,
			  unsigned int nr, size_t len, loff_t pos, u16 ioprio)
{
	struct file *file = lo->lo_backing_file;
	struct iov_iter iter;
	struct kiocb kiocb;
	ssize_t ret;

	init_sync_kiocb(&kiocb, file);
	kiocb.ki_pos = pos;
	kiocb.ki_ioprio = ioprio;
	/* A file opened O_DIRECT gets it only where it suits (loop_can_dio()). */
	if (loop_io_flags(lo) & LO_FLAGS_DIRECT_IO)
		kiocb.ki_flags |= IOCB_DIRECT;
	else
		kiocb.ki_flags &= ~IOCB_DIRECT;
	if (dir == WRITE) {
		iov_iter_bvec(&iter, ITER_SOURCE, bvec, nr, len);
		file_start_write(file);
		ret = file->f_op->write_iter(&kiocb, &iter);
		file_end_write(file);
		if (ret >= 0 && ret != len)
			ret = -EIO;
	} else {
		size_t done = 0;

		/*
		 * A short read is the end of the file only if the next one
		 * reads nothing: a read that meets an error after some data
		 * returns the data, and the error on the next call.
		 */
		iov_iter_bvec(&iter, ITER_DEST, bvec, nr, len);
		do {
			ret = file->f_op->read_iter(&kiocb, &iter);
			if (ret > 0)
				done += ret;
		} while (ret > 0 && done < len);
		if (ret >= 0)
			ret = done;
	}
	return ret;
}

/* Zero a request's bytes from @from on: what lies past the end of the file. */
static void lo_zero_rq_from(struct request *rq, unsigned int from)
{
	struct req_iterator iter;
	unsigned int at = 0;
	struct bio_vec bv;

	rq_for_each_segment(bv, rq, iter) {
		if (at + bv.bv_len > from) {
			unsigned int skip = from > at ? from - at : 0;

			memzero_page(bv.bv_page, bv.bv_offset + skip,
				     bv.bv_len - skip);
		}
		at += bv.bv_len;
	}
}

/*
 * A read of @done bytes from the backing file is in the request's pages.
 * Past the end of the file reads as zeros, as the stock driver's buffered
 * path gives them (6.1; 7.3's fails the request); on an encrypted loop so
 * does a sector cut by it: only whole sectors that were read are
 * decrypted.
 *
 * Return: as lo_decrypt_read(); 0 for a plain loop.
 */
static int lo_read_done(struct loop_device *lo, struct loop_worker *w,
			struct request *rq, unsigned int done)
{
	if (loop_encrypted(lo))
		done &= ~(LOOP_AES_SECTOR_SIZE - 1);
	if (done < blk_rq_bytes(rq))
		lo_zero_rq_from(rq, done);
	if (loop_encrypted(lo))
		return lo_decrypt_read(lo, w, rq, done);
	return 0;
}

/*
 * Read a request from the backing file from byte @start of it on (0, or
 * where an asynchronous read stopped short), its own vectors in as few
 * calls as the worker's vector array allows (one, up to LOOP_BIO_VECS
 * vectors), then decrypt it in place.
 *
 * Return: 0 when the request may end, -EIOCBQUEUED when a piece of its
 * decryption will end it, or a negative errno of the read.
 */
static int lo_read_file(struct loop_device *lo, struct loop_worker *w,
			struct request *rq, unsigned int start)
{
	loff_t pos = ((loff_t)blk_rq_pos(rq) << SECTOR_SHIFT) + lo->lo_offset;
	unsigned int nr = 0, len = 0, done = start, skip = start;
	struct req_iterator iter;
	struct bio_vec bv;
	bool eof = false;
	ssize_t ret;

	rq_for_each_bvec(bv, rq, iter) {
		if (eof)
			continue;
		if (skip >= bv.bv_len) {
			skip -= bv.bv_len;
			continue;
		}
		/* Cut the copy: the iterator steps by bv's own length. */
		w->bvec[nr] = bv;
		w->bvec[nr].bv_offset += skip;
		w->bvec[nr].bv_len -= skip;
		skip = 0;
		len += w->bvec[nr++].bv_len;
		if (nr < LOOP_BIO_VECS)
			continue;
		ret = lo_file_io(lo, READ, w->bvec, nr, len, pos + done,
				 req_get_ioprio(rq));
		if (ret < 0)
			return ret;
		done += ret;
		eof = ret < len;
		nr = 0;
		len = 0;
	}
	if (nr) {
		ret = lo_file_io(lo, READ, w->bvec, nr, len, pos + done,
				 req_get_ioprio(rq));
		if (ret < 0)
			return ret;
		done += ret;
	}
	return lo_read_done(lo, w, rq, done);
}

/*
 * Through the backing file, synchronously: a read as lo_read_file() (and
 * with its return), a plain write the same way.
 */
static int lo_rw_file(struct loop_device *lo, struct loop_worker *w,
		      struct request *rq, loff_t pos)
{
	unsigned int nr = 0, len = 0;
	struct req_iterator iter;
	struct bio_vec bv;
	ssize_t ret;

	if (!op_is_write(req_op(rq)))
		return lo_read_file(lo, w, rq, 0);
	rq_for_each_bvec(bv, rq, iter) {
		w->bvec[nr++] = bv;
		len += bv.bv_len;
		if (nr < LOOP_BIO_VECS)
			continue;
		ret = lo_file_io(lo, WRITE, w->bvec, nr, len, pos,
				 req_get_ioprio(rq));
		if (ret < 0)
			return ret;
		pos += len;
		nr = 0;
		len = 0;
	}
	if (nr) {
		ret = lo_file_io(lo, WRITE, w->bvec, nr, len, pos,
				 req_get_ioprio(rq));
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * The flags of a request that its bios to the backing device keep: the
 * scheduling hints, and swap and background I/O, which cgroup throttling
 * lets through (bio_issue_as_root_blkg()).
 */
#define LO_BIO_HINTS	(REQ_SYNC | REQ_META | REQ_PRIO | REQ_IDLE | \
			 REQ_SWAP | REQ_BACKGROUND | REQ_RAHEAD)

/* A request's end on the worker, in the codes the stock driver gives. */
static blk_status_t lo_status(long err)
{
	/* "Not supported" is told apart, every other error is EIO. */
	return err == -EOPNOTSUPP ? BLK_STS_NOTSUPP :
	       err ? BLK_STS_IOERR : BLK_STS_OK;
}

/*
 * The end of an asynchronous request (lo_rw_aio(), lo_rw_clones(),
 * lo_encrypt_rq()), in the
 * block layer's completion context: all of it done, or an error (a short
 * write is one; a short read went back to the worker, lo_async_done()).
 */
static void loop_complete_rq(struct request *rq)
{
	struct loop_cmd *cmd = blk_mq_rq_to_pdu(rq);
	long ret = cmd->ret;

	/* As stock's asynchronous path: the file system's errno, translated. */
	if (ret >= 0)
		ret = ret < blk_rq_bytes(rq) ? -EIO : 0;
	blk_mq_end_request(rq, errno_to_blk_status(ret));
}

/*
 * Give @cmd to worker @w to run @fn.  A worker's busy_works counts what is
 * queued on it or running there; the work drops it when it is done.
 */
static void lo_queue_cmd(struct loop_worker *w, struct loop_cmd *cmd,
			 kthread_work_func_t fn)
{
	/* A kthread_work remembers its last worker: start afresh each time. */
	kthread_init_work(&cmd->work, fn);
	cmd->worker = w;
	atomic_inc(&w->busy_works);
	kthread_queue_work(w->kw, &cmd->work);
}

/* The worker with the least queued or running, @own on a tie. */
static struct loop_worker *lo_least_busy(struct loop_device *lo,
					 struct loop_worker *own)
{
	struct loop_worker *best = own;
	int least = atomic_read(&own->busy_works);
	unsigned int i;

	for (i = 0; i < lo->lo_nr_workers && least > 0; i++) {
		int n = atomic_read(&lo->lo_workers[i].busy_works);

		if (n < least) {
			least = n;
			best = &lo->lo_workers[i];
		}
	}
	return best;
}

/*
 * An asynchronous read is in, on a worker: the rest of a short one is
 * read (the end of the file, or an error, shows there), and the
 * ciphertext of an encrypted one decrypted.
 */
static void loop_read_finish_work(struct kthread_work *work)
{
	struct loop_cmd *cmd = container_of(work, struct loop_cmd, work);
	struct request *rq = blk_mq_rq_from_pdu(cmd);
	struct loop_device *lo = rq->q->queuedata;
	unsigned int old_flags = current->flags;
	struct loop_worker *w = cmd->worker;
	int err = 0;

	/* As for every request the worker runs (loop_cmd_work()). */
	current->flags |= PF_LOCAL_THROTTLE | PF_MEMALLOC_NOIO;
	if (cmd->ret < blk_rq_bytes(rq))
		err = lo_read_file(lo, w, rq, cmd->ret);
	else
		err = lo_read_done(lo, w, rq, cmd->ret);
	current->flags = old_flags;
	atomic_dec(&w->busy_works);
	if (err != -EIOCBQUEUED)
		blk_mq_end_request(rq, lo_status(err));
}

/* An asynchronous request's I/O is over: end it, or finish a read first. */
static void lo_async_done(struct loop_cmd *cmd)
{
	struct request *rq = blk_mq_rq_from_pdu(cmd);

	/*
	 * Decryption needs a worker's mapping slots and scratch, and the
	 * rest of a short read synchronous I/O: neither may run in the
	 * completion's context.  A worker does them, between the other
	 * requests it runs: the least busy one, so that a read that is in
	 * does not wait behind the writes queued on its own.
	 */
	if (cmd->ret >= 0 && req_op(rq) == REQ_OP_READ &&
	    (cmd->decrypt || cmd->ret < blk_rq_bytes(rq))) {
		lo_queue_cmd(lo_least_busy(rq->q->queuedata, cmd->worker), cmd,
			     loop_read_finish_work);
		return;
	}
	/* Fault injection's fake timeouts (fail_io_timeout), as stock. */
	if (likely(!blk_should_fake_timeout(rq->q)))
		blk_mq_complete_request(rq);
}

/* Both the submitter and the file system's completion are done with @cmd. */
static void lo_aio_put(struct loop_cmd *cmd)
{
	struct request *rq = blk_mq_rq_from_pdu(cmd);

	if (!atomic_dec_and_test(&cmd->ref))
		return;
	kfree(cmd->bvec);
	cmd->bvec = NULL;
	if (req_op(rq) == REQ_OP_WRITE)
		kiocb_end_write(&cmd->iocb);
	lo_async_done(cmd);
}

static void lo_aio_complete(struct kiocb *iocb, long ret)
{
	struct loop_cmd *cmd = container_of(iocb, struct loop_cmd, iocb);

	cmd->ret = ret;
	lo_aio_put(cmd);
}

/*
 * Start asynchronous direct I/O of @iter at byte @pos of the backing file,
 * for request @rq, to end in @complete (with kiocb_end_write() for a
 * write).  Returns -EIOCBQUEUED, or the result of a call that did not
 * queue, for which @complete is not called.
 */
static ssize_t lo_dio_start(struct file *file, struct kiocb *iocb,
			    struct iov_iter *iter, loff_t pos,
			    struct request *rq,
			    void (*complete)(struct kiocb *iocb, long ret))
{
	memset(iocb, 0, sizeof(*iocb));
	iocb->ki_filp = file;
	iocb->ki_pos = pos;
	iocb->ki_ioprio = req_get_ioprio(rq);
	iocb->ki_flags = IOCB_DIRECT;
	iocb->ki_complete = complete;
	if (iov_iter_rw(iter) == WRITE) {
		kiocb_start_write(iocb);
		return file->f_op->write_iter(iocb, iter);
	}
	return file->f_op->read_iter(iocb, iter);
}

/*
 * Direct I/O as the stock driver does it: the whole request as one
 * asynchronous kiocb over its own pages, finished by the file system's
 * ki_complete, so the worker goes on to the next request and many are in
 * flight.  On an encrypted loop, reads only (a write's ciphertext goes
 * through the bounce pages, lo_encrypt_rq()); a worker decrypts a read
 * once it is in, and reads the rest of a short one
 * (loop_read_finish_work()).  The vectors of a request of several bios are
 * gathered into an array; where that cannot be had without reclaim, the
 * synchronous path takes the request.
 *
 * Return: -EIOCBQUEUED (the request ends in loop_complete_rq(),
 * loop_read_finish_work() or loop_piece_work()), or -ENOMEM with nothing
 * done.
 */
static int lo_rw_aio(struct loop_device *lo, struct loop_cmd *cmd,
		     struct request *rq, loff_t pos)
{
	struct file *file = lo->lo_backing_file;
	int dir = op_is_write(req_op(rq)) ? ITER_SOURCE : ITER_DEST;
	unsigned int nr = 0, i = 0;
	struct req_iterator iter;
	struct iov_iter ioi;
	struct bio_vec bv;
	ssize_t ret;

	rq_for_each_bvec(bv, rq, iter)
		nr++;
	if (rq->bio == rq->biotail) {
		struct bio *bio = rq->bio;
		const struct bio_vec *first = __bvec_iter_bvec(bio->bi_io_vec,
							       bio->bi_iter);

		/* One bio: its own vectors, from where it starts (a split). */
		iov_iter_bvec(&ioi, dir, first, nr, blk_rq_bytes(rq));
		ioi.iov_offset = mp_bvec_iter_offset(bio->bi_io_vec, bio->bi_iter) -
				 first->bv_offset;
	} else {
		/* No reclaim here: the synchronous path is the fallback. */
		cmd->bvec = kmalloc_array(nr, sizeof(*cmd->bvec),
					  GFP_NOWAIT | __GFP_NOWARN);
		if (!cmd->bvec)
			return -ENOMEM;
		rq_for_each_bvec(bv, rq, iter)
			cmd->bvec[i++] = bv;
		iov_iter_bvec(&ioi, dir, cmd->bvec, nr, blk_rq_bytes(rq));
	}
	/* One reference for this function, one for the completion. */
	atomic_set(&cmd->ref, 2);
	cmd->ret = 0;
	cmd->decrypt = loop_encrypted(lo) && dir == ITER_DEST;
	ret = lo_dio_start(file, &cmd->iocb, &ioi, pos, rq, lo_aio_complete);
	lo_aio_put(cmd);
	/* Done already (or failed): the file system will not call back. */
	if (ret != -EIOCBQUEUED)
		lo_aio_complete(&cmd->iocb, ret);
	return -EIOCBQUEUED;
}

static void lo_clone_end_io(struct bio *clone)
{
	struct loop_cmd *cmd = clone->bi_private;

	/*
	 * The backing device's status passes through, as through stock's
	 * asynchronous direct I/O on a block device (loop_complete_rq()).
	 */
	if (clone->bi_status)
		WRITE_ONCE(cmd->ret, blk_status_to_errno(clone->bi_status));
	bio_put(clone);
	if (atomic_dec_and_test(&cmd->ref))
		lo_async_done(cmd);
}

/*
 * Straight to the backing block device, asynchronously: each bio of the
 * request is cloned onto it at the loop's offset (the clone shares the
 * bio's pages) and sent, and the last clone to complete ends the request,
 * or for an encrypted read hands it to the worker to decrypt.  Plain loops
 * and encrypted reads; an encrypted write goes through the bounce pages
 * (lo_encrypt_rq()).  The clones come from the device's own bio_set, whose
 * reserve lets them through when memory is short (swap on the loop).
 *
 * The request ends in loop_complete_rq(), loop_read_finish_work() or
 * loop_piece_work().
 */
static void lo_rw_clones(struct loop_device *lo, struct loop_cmd *cmd,
			 struct request *rq, loff_t pos)
{
	blk_opf_t opf = (op_is_write(req_op(rq)) ? REQ_OP_WRITE : REQ_OP_READ) |
			(rq->cmd_flags & LO_BIO_HINTS);
	struct bio *bio;

	cmd->ret = blk_rq_bytes(rq);
	cmd->decrypt = loop_encrypted(lo) && !op_is_write(req_op(rq));
	/* One reference for this function, one for each clone. */
	atomic_set(&cmd->ref, 1);
	__rq_for_each_bio(bio, rq) {
		/* From a bio_set with direct reclaim: never NULL. */
		struct bio *clone = bio_alloc_clone(lo->lo_bdev, bio, GFP_NOIO,
						    &lo->lo_bio_set);

		clone->bi_opf = opf;
		/*
		 * Charged to the root, as the worker's own bios are: the
		 * worker serves every cgroup, and a clone throttled for one
		 * would hold up the loop for all.
		 */
		bio_associate_blkg_from_css(clone, blkcg_root_css);
		clone->bi_iter.bi_sector = pos >> SECTOR_SHIFT;
		clone->bi_private = cmd;
		clone->bi_end_io = lo_clone_end_io;
		pos += bio->bi_iter.bi_size;
		atomic_inc(&cmd->ref);
		submit_bio(clone);
	}
	if (atomic_dec_and_test(&cmd->ref))
		lo_async_done(cmd);
}

/*
 * ---- Encrypted writes ----
 *
 * The worker encrypts a write into its bounce area a chunk at a time and
 * sends each chunk as soon as it is full: asynchronously to a backing
 * device (a bio) or through direct I/O (a kiocb), so the worker encrypts
 * the next chunk, or the next request, while the last one is written;
 * synchronously through a page cache.  The bounce area is a ring of
 * chunks: a chunk takes pages after the last one, waiting for chunks in
 * flight to give theirs back.  A chunk is at most half the area (two
 * pages at least), so two alternate on a large request.  Everything a chunk needs (its bio or
 * kiocb, its vectors) was allocated with the bounce pages, so an encrypted
 * write never waits for memory, only for its own earlier writes.
 */

/* Bounce pages for the next chunk of a write with @bytes left to send. */
static unsigned int lo_chunk_pages(struct loop_worker *w, unsigned int bytes)
{
	/* Two at least: the rest of a logical block and a page after it. */
	unsigned int max = max(w->nr_bounce / 2, 2U);

	return min(DIV_ROUND_UP(bytes, PAGE_SIZE), max);
}

/* Claim pages @first..@first+@nr-1 if no chunk in flight holds one. */
static bool lo_chunk_claim(struct loop_worker *w, unsigned int first,
			   unsigned int nr)
{
	unsigned long flags;
	bool free;

	spin_lock_irqsave(&w->lock, flags);
	free = find_next_bit(w->busy, first + nr, first) >= first + nr;
	if (free)
		bitmap_set(w->busy, first, nr);
	spin_unlock_irqrestore(&w->lock, flags);
	return free;
}

/*
 * The next chunk of the ring, @nr pages, for a write of @cmd: waits for
 * earlier chunks to complete where they still hold its pages.  Takes a
 * reference on @cmd, which the chunk's completion drops.
 */
static struct loop_chunk *lo_chunk_get(struct loop_worker *w,
				       struct loop_cmd *cmd, unsigned int nr)
{
	unsigned int first = w->head;
	struct loop_chunk *c;

	if (first + nr > w->nr_bounce)
		first = 0;
	/* Counted as waiting for I/O, which it is. */
	io_wait_event(w->wait, lo_chunk_claim(w, first, nr));
	w->head = first + nr < w->nr_bounce ? first + nr : 0;
	c = &w->chunks[first];
	c->cmd = cmd;
	c->w = w;
	c->first = first;
	c->nr = nr;
	atomic_inc(&cmd->ref);
	return c;
}

static u8 *lo_chunk_va(const struct loop_chunk *c)
{
	return c->w->bounce_va + ((size_t)c->first << PAGE_SHIFT);
}

/* A chunk's write is over: its pages go back to the ring. */
static void lo_chunk_done(struct loop_chunk *c, long err)
{
	struct loop_worker *w = c->w;
	struct loop_cmd *cmd = c->cmd;
	unsigned long flags;

	if (err)
		WRITE_ONCE(cmd->ret, err);
	/* From here the worker may reuse @c. */
	spin_lock_irqsave(&w->lock, flags);
	bitmap_clear(w->busy, c->first, c->nr);
	spin_unlock_irqrestore(&w->lock, flags);
	wake_up(&w->wait);
	if (atomic_dec_and_test(&cmd->ref))
		lo_async_done(cmd);
}

static void lo_chunk_end_io(struct bio *bio)
{
	struct loop_chunk *c = container_of(bio, struct loop_chunk, bio);
	int err = blk_status_to_errno(bio->bi_status);

	bio_uninit(bio);
	lo_chunk_done(c, err);
}

static void lo_chunk_aio_complete(struct kiocb *iocb, long ret)
{
	struct loop_chunk *c = container_of(iocb, struct loop_chunk, iocb);

	kiocb_end_write(iocb);
	/* A short direct write is an error, as stock's. */
	lo_chunk_done(c, ret < 0 ? ret : ret == c->len ? 0 : -EIO);
}

/*
 * Write the first @len bytes (whole logical blocks) of chunk @c at byte
 * @pos of the backing store; its completion gives the chunk back.
 */
static void lo_chunk_write(struct loop_device *lo, struct loop_chunk *c,
			   struct request *rq, unsigned int len, loff_t pos)
{
	struct loop_worker *w = c->w;
	struct bio_vec *bvec = &w->chunk_bvec[c->first];
	struct file *file = lo->lo_backing_file;
	unsigned int i, nr = DIV_ROUND_UP(len, PAGE_SIZE);
	struct iov_iter iter;
	ssize_t ret;

	c->len = len;
	/* Written through the vmap() alias, read through the pages. */
	flush_kernel_vmap_range(lo_chunk_va(c), len);
	if (lo->lo_bdev) {
		bio_init(&c->bio, lo->lo_bdev, bvec, nr,
			 REQ_OP_WRITE | (rq->cmd_flags & LO_BIO_HINTS));
		c->bio.bi_iter.bi_sector = pos >> SECTOR_SHIFT;
		c->bio.bi_ioprio = req_get_ioprio(rq);
		c->bio.bi_end_io = lo_chunk_end_io;
		for (i = 0; i < nr; i++)
			__bio_add_page(&c->bio, w->bounce[c->first + i],
				       min_t(unsigned int, len - i * PAGE_SIZE,
					     PAGE_SIZE), 0);
		submit_bio(&c->bio);
		return;
	}
	for (i = 0; i < nr; i++)
		bvec_set_page(&bvec[i], w->bounce[c->first + i],
			      min_t(unsigned int, len - i * PAGE_SIZE,
				    PAGE_SIZE), 0);
	if (!(loop_io_flags(lo) & LO_FLAGS_DIRECT_IO)) {
		ret = lo_file_io(lo, WRITE, bvec, nr, len, pos,
				 req_get_ioprio(rq));
		/* As the worker's other requests: EIO, or not supported. */
		lo_chunk_done(c, ret >= 0 ? 0 : ret == -EOPNOTSUPP ? ret : -EIO);
		return;
	}
	iov_iter_bvec(&iter, ITER_SOURCE, bvec, nr, len);
	ret = lo_dio_start(file, &c->iocb, &iter, pos, rq, lo_chunk_aio_complete);
	if (ret != -EIOCBQUEUED)
		lo_chunk_aio_complete(&c->iocb, ret);
}

/*
 * Encrypt a write request into the bounce area's chunks, the mapped
 * segments a transform at a time (the engine gets whole batches however
 * the pages lie), and send each chunk in whole logical blocks: segments
 * need not be whole blocks (a direct I/O buffer at an odd offset, say),
 * so the rest of one moves on to the next chunk.
 *
 * Return: -EIOCBQUEUED: the request ends when its last chunk is written
 * (loop_complete_rq()).
 */
static int lo_encrypt_rq(struct loop_device *lo, struct loop_worker *w,
			 struct request *rq, loff_t pos, u64 iv_sector)
{
	struct loop_cmd *cmd = blk_mq_rq_to_pdu(rq);
	unsigned int bsize = queue_logical_block_size(rq->q);
	unsigned int left = blk_rq_bytes(rq), fill = 0, mapped = 0, nseg = 0;
	struct req_iterator iter;
	struct loop_chunk *c;
	struct bio_vec bv;
	unsigned int cap;
	u8 *area;

	/* One reference for this function, one for each chunk in flight. */
	cmd->ret = blk_rq_bytes(rq);
	atomic_set(&cmd->ref, 1);
	c = lo_chunk_get(w, cmd, lo_chunk_pages(w, left));
	area = lo_chunk_va(c);
	cap = c->nr << PAGE_SHIFT;
	rq_for_each_segment(bv, rq, iter) {
		if (nseg == LOOP_MAP_SEGS ||
		    (nseg && fill + mapped + bv.bv_len > cap)) {
			loop_encrypt_segs(lo, area + fill, w->segs, nseg,
					  iv_sector);
			lo_unmap_segs(w, nseg, false);
			fill += mapped;
			iv_sector += mapped >> LOOP_AES_SECTOR_SHIFT;
			nseg = 0;
			mapped = 0;
		}
		if (fill + bv.bv_len > cap) {
			unsigned int out = round_down(fill, bsize);
			unsigned int rest = fill - out;

			/*
			 * The rest waits in the scratch (idle on a write):
			 * the next chunk may reuse this one's pages.
			 */
			memcpy(w->scratch, area + out, rest);
			lo_chunk_write(lo, c, rq, out, pos);
			pos += out;
			left -= out;
			c = lo_chunk_get(w, cmd, lo_chunk_pages(w, left));
			area = lo_chunk_va(c);
			cap = c->nr << PAGE_SHIFT;
			memcpy(area, w->scratch, rest);
			fill = rest;
		}
		lo_map_seg(w, nseg++, &bv, bv.bv_len);
		mapped += bv.bv_len;
	}
	if (nseg) {
		loop_encrypt_segs(lo, area + fill, w->segs, nseg, iv_sector);
		lo_unmap_segs(w, nseg, false);
		fill += mapped;
	}
	if (fill)
		lo_chunk_write(lo, c, rq, fill, pos);
	else
		lo_chunk_done(c, 0);
	if (atomic_dec_and_test(&cmd->ref))
		lo_async_done(cmd);
	return -EIOCBQUEUED;
}

static int lo_rw(struct loop_device *lo, struct loop_worker *w,
		 struct request *rq, loff_t pos)
{
	u64 iv_sector = blk_rq_pos(rq) + lo->lo_iv_offset;
	struct req_iterator iter;
	struct bio_vec bv;

	/* The format works on whole 512-byte sectors only. */
	if (loop_encrypted(lo))
		rq_for_each_segment(bv, rq, iter)
			if (bv.bv_len & (LOOP_AES_SECTOR_SIZE - 1)) {
				pr_err_ratelimited("%s: segment of %u bytes is not whole sectors\n",
						   lo->lo_disk->disk_name,
						   bv.bv_len);
				return -EIO;
			}
	if (loop_encrypted(lo) && op_is_write(req_op(rq)))
		return lo_encrypt_rq(lo, w, rq, pos, iv_sector);
	if (lo->lo_bdev) {
		lo_rw_clones(lo, blk_mq_rq_to_pdu(rq), rq, pos);
		return -EIOCBQUEUED;
	}
	if ((loop_io_flags(lo) & LO_FLAGS_DIRECT_IO) &&
	    lo_rw_aio(lo, blk_mq_rq_to_pdu(rq), rq, pos) == -EIOCBQUEUED)
		return -EIOCBQUEUED;
	return lo_rw_file(lo, w, rq, pos);
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
	if (loop_encrypted(lo) || !file->f_op->fallocate)
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

	loop_clear_limits(lo->lo_disk->queue,
			  test_bit(LO_UNSUPP_DISCARD, &lo->lo_unsupported),
			  test_bit(LO_UNSUPP_WRITE_ZEROES, &lo->lo_unsupported));
}

static bool loop_backing_read_only(struct loop_device *lo)
{
	struct block_device *bdev = loop_file_bdev(lo->lo_backing_file);

	return bdev && bdev_read_only(bdev);
}

static int lo_do_cmd(struct loop_device *lo, struct loop_worker *w,
		     struct request *rq)
{
	loff_t pos = ((loff_t)blk_rq_pos(rq) << SECTOR_SHIFT) + lo->lo_offset;

	if (op_is_write(req_op(rq)) && (loop_io_flags(lo) & LO_FLAGS_READ_ONLY))
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
	/* An asynchronous request may be done, even requeued, on return. */
	struct loop_worker *w = cmd->worker;
	int err;

	/*
	 * Allocations here must not recurse into I/O on this very device, and
	 * writeback of the backing file must not be throttled against the
	 * loop device it serves.
	 */
	current->flags |= PF_LOCAL_THROTTLE | PF_MEMALLOC_NOIO;
	err = lo_do_cmd(lo, w, rq);
	current->flags = old_flags;
	atomic_dec(&w->busy_works);
	if (err != -EIOCBQUEUED)
		blk_mq_end_request(rq, lo_status(err));
}

/*
 * Whether the worker's whole part in @rq is to send it on asynchronously:
 * a read or write of a plain loop, to a backing device or with direct I/O.
 * Such requests go to the first worker, as stock 6.1 sends a cgroup's
 * requests from one work item: spread over two workers, plain direct I/O
 * took up to 1.8 times the CPU per GiB and ran at 0.75 of stock's speed
 * (make bench-io, 6.1), the cost of waking a second thread for what one
 * does in a few microseconds.  Encrypted reads are left spread: their
 * workers' queues also decide where decryption runs (lo_least_busy()).
 * The backing device and direct I/O change only with the queue frozen.
 */
static bool lo_only_sent(const struct loop_device *lo,
			 const struct request *rq)
{
	if (req_op(rq) != REQ_OP_READ && req_op(rq) != REQ_OP_WRITE)
		return false;
	if (loop_encrypted(lo))
		return false;
	return lo->lo_bdev || (loop_io_flags(lo) & LO_FLAGS_DIRECT_IO);
}

/*
 * Requests queued on the first worker beyond which those it would only
 * send on are spread after all: the worker may have to wait for the file
 * system (a frozen one, in kiocb_start_write(); an ext4 write that extends
 * the file, or a fallback to buffered I/O, in write_iter), and then the
 * others go on.  Twice the 16 in flight of bench-io's direct jobs, a bound
 * chosen, not measured.
 */
#define LOOP_SENDER_BACKLOG	32

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
	i = 0;
	if (!lo_only_sent(lo, rq) ||
	    atomic_read(&lo->lo_workers[0].busy_works) >= LOOP_SENDER_BACKLOG)
		i = (unsigned int)atomic_inc_return(&lo->lo_next_worker) %
		    lo->lo_nr_workers;
	lo_queue_cmd(&lo->lo_workers[i], cmd, loop_cmd_work);
	return BLK_STS_OK;
}

const struct blk_mq_ops loop_mq_ops = {
	.queue_rq	= loop_queue_rq,
	.complete	= loop_complete_rq,
};

/**
 * loop_start_workers() - create the workers of a device being bound
 * @lo:       the device, lo_mutex held
 * @threads:  number of workers, 1..LOOP_MAX_THREADS (lo_threads)
 * @nice:     their nice value (lo_nice)
 *
 * They have no bounce pages yet: a plain loop needs none, an encrypted one
 * gets them from loop_workers_bounce() before its key is installed.
 *
 * Return: 0 or -ENOMEM (nothing is left allocated then).
 */
int loop_start_workers(struct loop_device *lo, unsigned int threads, int nice)
{
	unsigned int i;

	lo->lo_workers = kcalloc(threads, sizeof(*lo->lo_workers), GFP_KERNEL);
	if (!lo->lo_workers)
		return -ENOMEM;
	for (i = 0; i < threads; i++) {
		struct loop_worker *w = &lo->lo_workers[i];

		lo->lo_nr_workers = i + 1;
		spin_lock_init(&w->lock);
		init_waitqueue_head(&w->wait);
		w->bvec = kcalloc(LOOP_BIO_VECS, sizeof(*w->bvec), GFP_KERNEL);
		if (!w->bvec)
			goto fail;
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
 * loop_workers_bounce() - give every worker its bounce pages
 * @lo:       the device, lo_mutex held, its workers started; about to get
 *            a key (the I/O path reads the pages only once lo_crypt is set,
 *            with the queue frozen in between)
 * @prealloc: bounce pages per worker, 1..LOOP_MAX_PREALLOC (lo_prealloc);
 *            at least two are given
 *
 * Workers that have them keep them; loop_stop_workers() wipes and frees
 * them.
 *
 * Return: 0 or -ENOMEM.
 */
int loop_workers_bounce(struct loop_device *lo, unsigned int prealloc)
{
	unsigned int i, j;

	/* Room for the rest of a logical block and a whole page after it. */
	prealloc = max(prealloc, 2U);

	for (i = 0; i < lo->lo_nr_workers; i++) {
		struct loop_worker *w = &lo->lo_workers[i];

		if (w->bounce_va)
			continue;
		/* NULL-terminated, so loop_stop_workers() knows how many. */
		if (!w->bounce)
			w->bounce = kcalloc(prealloc + 1, sizeof(*w->bounce),
					    GFP_KERNEL);
		if (!w->bounce)
			return -ENOMEM;
		for (j = 0; j < prealloc; j++) {
			if (!w->bounce[j])
				w->bounce[j] = alloc_page(GFP_KERNEL);
			if (!w->bounce[j])
				return -ENOMEM;
		}
		w->nr_bounce = prealloc;
		if (!w->chunks)
			w->chunks = kcalloc(prealloc, sizeof(*w->chunks),
					    GFP_KERNEL);
		if (!w->chunk_bvec)
			w->chunk_bvec = kcalloc(prealloc, sizeof(*w->chunk_bvec),
						GFP_KERNEL);
		if (!w->busy)
			w->busy = bitmap_zalloc(prealloc, GFP_KERNEL);
		if (!w->scratch)
			w->scratch = kvmalloc(LOOP_AES_SCRATCH, GFP_KERNEL);
		if (!w->chunks || !w->chunk_bvec || !w->busy || !w->scratch)
			return -ENOMEM;
		w->bounce_va = vmap(w->bounce, prealloc, VM_MAP, PAGE_KERNEL);
		if (!w->bounce_va)
			return -ENOMEM;
	}
	return 0;
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
		/* A read's multi-key IVs were computed from a plaintext copy. */
		kvfree_sensitive(w->scratch, LOOP_AES_SCRATCH);
		if (w->bounce_va)
			vunmap(w->bounce_va);
		for (j = 0; w->bounce && w->bounce[j]; j++)
			__free_page(w->bounce[j]);
		kfree(w->bounce);
		kfree(w->bvec);
		kfree(w->chunks);
		kfree(w->chunk_bvec);
		bitmap_free(w->busy);
	}
	kfree(lo->lo_workers);
	lo->lo_workers = NULL;
	lo->lo_nr_workers = 0;
}
