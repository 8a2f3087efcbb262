// SPDX-License-Identifier: GPL-2.0
/*
 * loop_config.c - aesloop: binding, configuring and unbinding a loop device.
 *
 * Every way of configuring a device (LOOP_SET_FD, LOOP_CONFIGURE,
 * LOOP_SET_STATUS, LOOP_SET_STATUS64) reaches here, from loop_ioctl.c, as
 * a struct loop_config or loop_info64 in kernel memory, and is handled by
 * loop_configure() or loop_set_status().  The new state, key context
 * included, is checked and built completely before the device is touched,
 * so a refused request leaves the device as it was.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/file.h>
#include <linux/module.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/stat.h>

#include "loop.h"

static DEFINE_MUTEX(loop_validate_mutex);

/* Flags LOOP_CONFIGURE and LOOP_SET_STATUS accept from user space. */
#define LO_CONFIGURE_FLAGS	(LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR | \
				 LO_FLAGS_PARTSCAN | LO_FLAGS_DIRECT_IO)
#define LO_STATUS_SETTABLE	(LO_FLAGS_AUTOCLEAR | LO_FLAGS_PARTSCAN)
#define LO_STATUS_CLEARABLE	LO_FLAGS_AUTOCLEAR

static struct loop_device *loop_of_file(struct file *file)
{
	struct inode *inode = file->f_mapping->host;

	if (!S_ISBLK(inode->i_mode) || imajor(inode) != LOOP_MAJOR)
		return NULL;
	return loop_of_disk(I_BDEV(inode)->bd_disk);
}

/*
 * A backing file must be a regular file or a block device, and must not be
 * this loop device, directly or through a chain of loops: that would make
 * the device's I/O wait for itself.  Called with loop_validate_mutex held,
 * which keeps every chain stable while it is walked.
 */
static int loop_validate_file(struct file *file, struct block_device *bdev)
{
	struct inode *inode = file->f_mapping->host;
	struct loop_device *l;
	struct file *f = file;

	lockdep_assert_held(&loop_validate_mutex);
	while ((l = loop_of_file(f)) != NULL) {
		if (f->f_mapping->host->i_rdev == bdev->bd_dev)
			return -EBADF;
		if (l->lo_state != LO_BOUND)
			return -EINVAL;
		f = l->lo_backing_file;
	}
	if (!S_ISREG(inode->i_mode) && !S_ISBLK(inode->i_mode))
		return -EINVAL;
	return 0;
}

/* The device size in 512-byte sectors: the file past the offset, limited. */
static sector_t loop_size(struct loop_device *lo)
{
	loff_t bytes = i_size_read(lo->lo_backing_file->f_mapping->host);

	bytes = bytes > lo->lo_offset ? bytes - lo->lo_offset : 0;
	if (lo->lo_sizelimit > 0 && lo->lo_sizelimit < bytes)
		bytes = lo->lo_sizelimit;
	return bytes >> SECTOR_SHIFT;
}

/*
 * Check the parts of a loop_info64 that do not depend on the device.
 * lo_offset "@N" (doc/format.md section 4) arrives as -N: data N bytes in, IV sector
 * numbers not counting the offset.
 */
static int loop_check_info(const struct loop_info64 *info)
{
	if ((s64)info->lo_offset == S64_MIN || info->lo_sizelimit > LLONG_MAX)
		return -EOVERFLOW;
	return 0;
}

/* Set the backing file (lo_mutex held), under lo_lock for sysfs' readers. */
static void loop_set_backing_file(struct loop_device *lo, struct file *file)
{
	lockdep_assert_held(&lo->lo_mutex);
	spin_lock(&lo->lo_lock);
	lo->lo_backing_file = file;
	spin_unlock(&lo->lo_lock);
}

/*
 * Install the offset, size limit and file name of a status; the caller
 * froze the queue or is binding.  Offset and size limit change together
 * for sysfs' readers (lo_lock).
 */
static void loop_apply_geometry(struct loop_device *lo,
				const struct loop_info64 *info)
{
	s64 off = (s64)info->lo_offset;

	spin_lock(&lo->lo_lock);
	lo->lo_info_offset = off;
	lo->lo_offset = off < 0 ? -off : off;
	lo->lo_iv_offset = off < 0 ? 0 : (u64)off >> SECTOR_SHIFT;
	lo->lo_sizelimit = info->lo_sizelimit;
	spin_unlock(&lo->lo_lock);
	memcpy(lo->lo_file_name, info->lo_file_name, LO_NAME_SIZE);
	lo->lo_file_name[LO_NAME_SIZE - 1] = 0;
}

/*
 * Install the key context a status asked for (NULL: a plain loop), and
 * what GET_STATUS reports of it; the key bytes themselves are not kept.
 * The caller froze the queue or is binding.
 */
static void loop_apply_key(struct loop_device *lo,
			   const struct loop_info64 *info,
			   struct loop_aes_ctx *ctx)
{
	lo->lo_crypt = ctx;
	lo->lo_encrypt_type = ctx ? info->lo_encrypt_type : LO_CRYPT_NONE;
	lo->lo_encrypt_key_size = ctx ? info->lo_encrypt_key_size : 0;
	memcpy(lo->lo_crypt_name, info->lo_crypt_name, LO_NAME_SIZE);
	lo->lo_crypt_name[LO_NAME_SIZE - 1] = 0;
	lo->lo_init[0] = info->lo_init[0];
	lo->lo_init[1] = info->lo_init[1];
	lo->lo_key_owner = current_uid();
	if (ctx) {
		loop_crypt_set_check(lo, ctx);
	} else {
		memset(lo->lo_key_probe, 0, sizeof(lo->lo_key_probe));
		memset(lo->lo_key_check, 0, sizeof(lo->lo_key_check));
	}
}

/*
 * Drop every cached page of the device, mapped ones too (unlike
 * invalidate_bdev(), they are unmapped first), so that no read is served
 * from a page of the old offset, key or file.  Only the whole device's
 * cache: an open partition keeps its own.
 */
static int loop_drop_page_cache(struct loop_device *lo)
{
	return invalidate_inode_pages2(loop_bdev_mapping(lo->lo_disk->part0));
}

/*
 * Freeze the queue with the device's page cache written back and empty,
 * for a change of what its sectors mean (offset, size limit, key).  A page
 * that came back before the freeze was read or dirtied meanwhile: try
 * again, then give up with -EAGAIN, which util-linux retries.  Stock
 * drivers write back and invalidate, but a page dirtied in between would
 * later be written at the new offset or under the new key.
 *
 * Return: 0 with the queue frozen (@memflags for loop_unfreeze()), or
 * -EAGAIN with it not.
 */
static int loop_freeze_clean(struct loop_device *lo, unsigned int *memflags)
{
	struct block_device *bdev = lo->lo_disk->part0;
	int tries;

	for (tries = 0; tries < 3; tries++) {
		sync_blockdev(bdev);
		loop_drop_page_cache(lo);
		*memflags = loop_freeze(lo->lo_disk->queue);
		if (!loop_bdev_mapping(bdev)->nrpages)
			return 0;
		loop_unfreeze(lo->lo_disk->queue, *memflags);
	}
	return -EAGAIN;
}

/* Rescan the partition table; lo_mutex must not be held (lock order). */
static void loop_reread_partitions(struct loop_device *lo)
{
	int err;

	mutex_lock(&lo->lo_disk->open_mutex);
	err = bdev_disk_changed(lo->lo_disk, false);
	mutex_unlock(&lo->lo_disk->open_mutex);
	if (err)
		pr_warn("%s: partition scan failed (%d)\n",
			lo->lo_disk->disk_name, err);
}

/*
 * The first scan of a just bound device.  Binding left GD_NEED_PART_SCAN
 * set, so whoever opens the disk first scans it: udev's probe of the
 * change event, an opener that waited on lo_mutex, or this.  Scanning only
 * while the bit is still set makes that one scan: a second would drop each
 * partition and add it back (uevents udev has to follow).
 */
static void loop_scan_partitions_once(struct loop_device *lo)
{
	struct gendisk *disk = lo->lo_disk;
	int err = 0;

	mutex_lock(&disk->open_mutex);
	if (test_bit(GD_NEED_PART_SCAN, &disk->state))
		err = bdev_disk_changed(disk, false);
	mutex_unlock(&disk->open_mutex);
	if (err)
		pr_warn("%s: partition scan failed (%d)\n",
			lo->lo_disk->disk_name, err);
}

/*
 * The logical block sizes an encrypted loop takes: up to a page, as the
 * format's users have always had.  The encrypted write path carries the
 * rest of a block from one chunk of the bounce area to the next, which
 * needs a block to fit in a page (7.3 takes blocks up to 64 KiB).
 */
static bool loop_crypt_block_size_ok(unsigned int bsize,
				     const struct loop_aes_ctx *crypt)
{
	return !crypt || bsize <= PAGE_SIZE;
}

/*
 * Set the queue limits for backing file @file (NULL when unbinding), block
 * size @bsize (bytes) and key @crypt (NULL for none): discard and
 * write-zeroes, the rotational and write-cache flags
 * (loop_fill_queue_caps()).  What the backing file refused
 * (lo_unsupported) stays off.  On a bound device the I/O path follows the
 * new block size in the same freeze, so no request sees one without the
 * other.
 */
static int loop_set_limits(struct loop_device *lo, struct file *file,
			   unsigned int bsize, const struct loop_aes_ctx *crypt)
{
	struct request_queue *q = lo->lo_disk->queue;
	struct loop_queue_caps caps;
	unsigned int memflags;
	int err;

	loop_fill_queue_caps(file, crypt, &caps);
	if (test_bit(LO_UNSUPP_DISCARD, &lo->lo_unsupported)) {
		caps.discard_granularity = 0;
		caps.max_discard_sectors = 0;
	}
	if (test_bit(LO_UNSUPP_WRITE_ZEROES, &lo->lo_unsupported))
		caps.max_write_zeroes_sectors = 0;
	err = loop_commit_limits(q, bsize, &caps, &memflags);
	if (!err && lo->lo_state == LO_BOUND)
		loop_update_io_path(lo, false, lo->lo_flags);
	loop_unfreeze(q, memflags);
	return err;
}

/**
 * loop_configure() - bind a backing file (LOOP_SET_FD, LOOP_CONFIGURE)
 * @lo:       the device, unbound
 * @writable: the device was opened for writing (else the loop is read-only)
 * @excl:     ... and exclusively, so the caller holds the claim already
 * @bdev:     the block device the ioctl came through
 * @config:   what to bind, in kernel memory: file descriptor, block size
 *            (bytes, 0 for the default), and loop_info64 with offset,
 *            size limit, flags and key (doc/format.md section 5)
 *
 * Return: 0; -EBADF for no such file, -EBUSY for a bound or claimed
 * device, -EINVAL for a bad flag, size, offset or key, -ENOMEM, or what
 * the file's checks said.  On error the device is as it was.
 */
int loop_configure(struct loop_device *lo, bool writable, bool excl,
		   struct block_device *bdev, const struct loop_config *config)
{
	const struct loop_info64 *info = &config->info;
	unsigned int bsize = config->block_size ?: SECTOR_SIZE;
	u32 flags = info->lo_flags;
	struct loop_aes_ctx *ctx = NULL;
	struct address_space *mapping;
	unsigned int memflags;
	struct file *file;
	int err;

	file = fget(config->fd);
	if (!file)
		return -EBADF;

	err = -EINVAL;
	if (flags & ~LO_CONFIGURE_FLAGS)
		goto out_putf;
	if (blk_validate_block_size(bsize))
		goto out_putf;
	err = loop_check_info(info);
	if (err)
		goto out_putf;
	err = loop_crypt_prepare(info, &ctx);
	if (err)
		goto out_putf;
	err = -EINVAL;
	if (!loop_crypt_block_size_ok(bsize, ctx))
		goto out_free_ctx;

	/*
	 * A caller without an exclusive open of its own claims the device
	 * for the set-up, so that nobody mounts it half made.
	 */
	if (!excl) {
		err = loop_claim(bdev, loop_configure);
		if (err)
			goto out_free_ctx;
	}
	err = mutex_lock_killable(&loop_validate_mutex);
	if (err)
		goto out_unclaim;
	err = mutex_lock_killable(&lo->lo_mutex);
	if (err)
		goto out_unlock_validate;
	err = -EBUSY;
	if (lo->lo_state != LO_UNBOUND)
		goto out_unlock;
	err = loop_validate_file(file, bdev);
	if (err)
		goto out_unlock;
	/* The backing device's block size, if direct I/O is asked for. */
	if (!config->block_size)
		bsize = loop_default_block_size(file, flags);
	if (!loop_crypt_block_size_ok(bsize, ctx))
		bsize = SECTOR_SIZE;	/* through the page cache then */
	err = loop_set_limits(lo, file, bsize, ctx);
	if (err)
		goto out_unlock;
	err = loop_start_workers(lo, loop_threads_of(lo), loop_nice());
	if (err)
		goto out_reset_limits;	/* it left nothing behind */
	if (ctx) {
		err = loop_workers_bounce(lo, loop_prealloc());
		if (err) {
			loop_stop_workers(lo);
			goto out_reset_limits;
		}
	}
	if (!(file->f_mode & FMODE_WRITE) || !writable ||
	    !file->f_op->write_iter)
		flags |= LO_FLAGS_READ_ONLY;
	/* With minors reserved for partitions, they are always scanned. */
	if (loop_part_shift())
		flags |= LO_FLAGS_PARTSCAN;

	/* One change event when the device is ready, not one per step. */
	dev_set_uevent_suppress(disk_to_dev(lo->lo_disk), 1);
	memflags = loop_freeze(lo->lo_disk->queue);
	mapping = file->f_mapping;
	lo->lo_old_gfp_mask = mapping_gfp_mask(mapping);
	/* Reclaim must not re-enter the file system under the loop's I/O. */
	mapping_set_gfp_mask(mapping, lo->lo_old_gfp_mask & ~(__GFP_IO | __GFP_FS));
	loop_set_backing_file(lo, file);
	loop_apply_geometry(lo, info);
	loop_apply_key(lo, info, ctx);
	/* Without direct I/O support, buffered I/O, as the stock driver does. */
	loop_update_io_path(lo, true, flags);
	flags = lo->lo_flags;
	set_disk_ro(lo->lo_disk, flags & LO_FLAGS_READ_ONLY);
	lo->lo_state = LO_BOUND;
	loop_unfreeze(lo->lo_disk->queue, memflags);
	/*
	 * The "loop" group once the device is whole: util-linux takes it to
	 * mean "in use" and reads the binding from it.  Without it (no
	 * memory) the device still works, as with the stock driver.
	 */
	if (sysfs_create_group(&disk_to_dev(lo->lo_disk)->kobj,
			       &loop_attribute_group))
		pr_warn("%s: no sysfs loop attributes\n", lo->lo_disk->disk_name);
	else
		lo->lo_sysfs = true;

	loop_media_changed(lo->lo_disk);
	set_capacity_and_notify(lo->lo_disk, loop_size(lo));
	if (flags & LO_FLAGS_PARTSCAN) {
		clear_bit(GD_SUPPRESS_PART_SCAN, &lo->lo_disk->state);
		/* loop_scan_partitions_once(); 6.1's media change sets it, 7.3's not */
		set_bit(GD_NEED_PART_SCAN, &lo->lo_disk->state);
	}
	/* A bound device pins the module; unbinding lets it go. */
	__module_get(THIS_MODULE);
	loop_keyscrub_start(lo);
	dev_set_uevent_suppress(disk_to_dev(lo->lo_disk), 0);
	kobject_uevent(&disk_to_dev(lo->lo_disk)->kobj, KOBJ_CHANGE);
	mutex_unlock(&lo->lo_mutex);
	mutex_unlock(&loop_validate_mutex);
	if (flags & LO_FLAGS_PARTSCAN)
		loop_scan_partitions_once(lo);
	if (!excl)
		loop_unclaim(bdev, loop_configure);
	return 0;

out_reset_limits:
	loop_set_limits(lo, NULL, SECTOR_SIZE, NULL);
out_unlock:
	mutex_unlock(&lo->lo_mutex);
out_unlock_validate:
	mutex_unlock(&loop_validate_mutex);
out_unclaim:
	if (!excl)
		loop_unclaim(bdev, loop_configure);
out_free_ctx:
	loop_crypt_free(ctx);
out_putf:
	fput(file);
	return err;
}

/*
 * Take the sysfs "loop" group away, once: at a deferred detach, or at the
 * unbind.  Under lo_mutex, so that an unbind racing a deferred detach
 * cannot let a new bind create the group while it is still there; its
 * readers, which the removal waits for, take only lo_lock.
 */
static void loop_sysfs_remove(struct loop_device *lo)
{
	mutex_lock(&lo->lo_mutex);
	if (lo->lo_sysfs)
		sysfs_remove_group(&disk_to_dev(lo->lo_disk)->kobj,
				   &loop_attribute_group);
	lo->lo_sysfs = false;
	mutex_unlock(&lo->lo_mutex);
}

/*
 * Tear down a device in LO_RUNDOWN: write back what the page cache still
 * holds (with the key still in place), stop I/O, drop the backing file and
 * wipe the key.  loop_validate_mutex is taken because loop_validate_file()
 * follows other devices' backing files.  @release: called from the block
 * device's release, with the disk's open_mutex already held.
 */
static void loop_unbind(struct loop_device *lo, bool release)
{
	struct block_device *bdev = lo->lo_disk->part0;
	struct request_queue *q = lo->lo_disk->queue;
	unsigned int memflags;
	struct file *file;
	int err;

	sync_blockdev(bdev);
	loop_keyscrub_stop(lo);
	loop_sysfs_remove(lo);

	mutex_lock(&loop_validate_mutex);
	mutex_lock(&lo->lo_mutex);
	memflags = loop_freeze(q);
	file = lo->lo_backing_file;
	mapping_set_gfp_mask(file->f_mapping, lo->lo_old_gfp_mask);
	loop_set_backing_file(lo, NULL);
	lo->lo_bdev = NULL;
	loop_crypt_free(lo->lo_crypt);
	lo->lo_crypt = NULL;
	memzero_explicit(lo->lo_key_probe, sizeof(lo->lo_key_probe));
	memzero_explicit(lo->lo_key_check, sizeof(lo->lo_key_check));
	lo->lo_encrypt_key_size = 0;
	lo->lo_encrypt_type = LO_CRYPT_NONE;
	memset(lo->lo_crypt_name, 0, LO_NAME_SIZE);
	memset(lo->lo_file_name, 0, LO_NAME_SIZE);
	spin_lock(&lo->lo_lock);
	lo->lo_offset = 0;
	lo->lo_iv_offset = 0;
	lo->lo_info_offset = 0;
	lo->lo_sizelimit = 0;
	spin_unlock(&lo->lo_lock);
	lo->lo_init[0] = 0;
	lo->lo_init[1] = 0;
	loop_set_flags(lo, 0);
	loop_unfreeze(q, memflags);
	/* The queue is drained and refuses new work: nothing is queued. */
	loop_stop_workers(lo);
	cancel_work_sync(&lo->lo_limits_work);
	lo->lo_unsupported = 0;
	/* As the stock driver: the next binding starts from 512-byte blocks. */
	loop_set_limits(lo, NULL, SECTOR_SIZE, NULL);

	set_capacity(lo->lo_disk, 0);
	/* Cached plaintext must not outlive the key that decrypted it. */
	invalidate_bdev(bdev);
	set_disk_ro(lo->lo_disk, false);
	mutex_unlock(&lo->lo_mutex);
	mutex_unlock(&loop_validate_mutex);

	/*
	 * With the capacity at 0, a rescan drops every partition, scanned or
	 * added with BLKPG, so none is left to read the next binding's data.
	 * Still in LO_RUNDOWN: no new binding can race with it.
	 */
	if (!release)
		mutex_lock(&lo->lo_disk->open_mutex);
	err = bdev_disk_changed(lo->lo_disk, false);
	if (!release)
		mutex_unlock(&lo->lo_disk->open_mutex);
	if (err)
		pr_warn("%s: partitions not dropped at detach (%d)\n",
			lo->lo_disk->disk_name, err);
	if (!loop_part_shift())
		set_bit(GD_SUPPRESS_PART_SCAN, &lo->lo_disk->state);
	loop_media_changed(lo->lo_disk);
	kobject_uevent(&disk_to_dev(lo->lo_disk)->kobj, KOBJ_CHANGE);

	mutex_lock(&lo->lo_mutex);
	lo->lo_state = LO_UNBOUND;
	mutex_unlock(&lo->lo_mutex);
	fput(file);
	module_put(THIS_MODULE);
}

/**
 * loop_clr_fd() - unbind a device (LOOP_CLR_FD)
 * @lo:   the device
 * @excl: the caller opened it exclusively
 *
 * A device open elsewhere is unbound on its last close (LO_RUNDOWN), as
 * the stock driver does.
 *
 * Return: 0, -ENXIO for an unbound device, -EINTR on a signal.
 */
int loop_clr_fd(struct loop_device *lo, bool excl)
{
	struct gendisk *disk = lo->lo_disk;
	int err;

	/*
	 * Under open_mutex the openers counted are all there are: an open
	 * in progress holds it, and one that comes after sees LO_RUNDOWN.
	 */
	mutex_lock(&disk->open_mutex);
	err = mutex_lock_killable(&lo->lo_mutex);
	if (err)
		goto out_open;
	/* A detach asked for before, still waiting for its openers. */
	if (lo->lo_state == LO_RUNDOWN && lo->lo_backing_file)
		goto out_unlock;
	err = -ENXIO;
	if (lo->lo_state != LO_BOUND)
		goto out_unlock;
	/*
	 * The caller holds one open.  A device claimed by a file system, swap
	 * or a stacked driver (a partition's claim marks the whole disk too)
	 * is refused, as loop-AES does, unless the claim is the caller's own.
	 * Other openers (udev's blkid, a reader), or a partition the caller
	 * holds, defer the detach to the last close, as the stock driver
	 * does: losetup -d right after an attach must not fail because udev
	 * is looking at the device.  From here on no new opener gets in, the
	 * device is gone from sysfs' point of view (no "loop" group, so
	 * util-linux counts it as detached), and the last close unbinds and
	 * wipes the key.
	 */
	if (disk_openers(disk) > 1 || disk->open_partitions) {
		err = -EBUSY;
		if (!excl && READ_ONCE(disk->part0->bd_holder))
			goto out_unlock;
		/* Beside requests: see struct loop_device. */
		loop_set_flags(lo, lo->lo_flags | LO_FLAGS_AUTOCLEAR);
		lo->lo_state = LO_RUNDOWN;
		mutex_unlock(&lo->lo_mutex);
		mutex_unlock(&disk->open_mutex);
		loop_sysfs_remove(lo);
		return 0;
	}
	lo->lo_state = LO_RUNDOWN;
	mutex_unlock(&lo->lo_mutex);
	mutex_unlock(&disk->open_mutex);

	loop_unbind(lo, false);
	return 0;

out_unlock:
	mutex_unlock(&lo->lo_mutex);
out_open:
	mutex_unlock(&disk->open_mutex);
	return err;
}

/**
 * loop_release_autoclear() - unbind a device on its last close
 * @lo: the device; called from the block device release with no openers
 *
 * An autoclear device, or one whose LOOP_CLR_FD was deferred to this
 * close (LO_RUNDOWN with the binding still there), is unbound.
 */
void loop_release_autoclear(struct loop_device *lo)
{
	mutex_lock(&lo->lo_mutex);
	if (lo->lo_state == LO_BOUND && (lo->lo_flags & LO_FLAGS_AUTOCLEAR)) {
		lo->lo_state = LO_RUNDOWN;
	} else if (lo->lo_state != LO_RUNDOWN || !lo->lo_backing_file) {
		/* Not to unbind, or an unbind is already under way. */
		mutex_unlock(&lo->lo_mutex);
		return;
	}
	mutex_unlock(&lo->lo_mutex);
	loop_unbind(lo, true);
}

/**
 * loop_set_status() - change a bound device (LOOP_SET_STATUS64)
 * @lo:   the device
 * @info: offset, size limit, settable flags and key, in kernel memory
 *        (doc/format.md section 5); the key bytes are the caller's to wipe
 *
 * Return: 0; -ENXIO for an unbound device, -EPERM for another user's key,
 * -EINVAL for a bad offset, size, flag or key, -EBUSY, -ENOMEM.  On error
 * the device is as it was.
 */
int loop_set_status(struct loop_device *lo, const struct loop_info64 *info)
{
	struct loop_aes_ctx *ctx;
	bool partscan = false, rekey, remap;
	unsigned int memflags;
	int err;

	err = loop_check_info(info);
	if (err)
		return err;
	err = loop_crypt_prepare(info, &ctx);
	if (err)
		return err;

	err = mutex_lock_killable(&lo->lo_mutex);
	if (err)
		goto out_free_ctx;
	if (lo->lo_state != LO_BOUND) {
		err = -ENXIO;
		goto out_unlock;
	}
	/* Only the key's owner or an administrator may change a key. */
	if (lo->lo_encrypt_key_size && !uid_eq(lo->lo_key_owner, current_uid()) &&
	    !capable(CAP_SYS_ADMIN)) {
		err = -EPERM;
		goto out_unlock;
	}
	/*
	 * A device without a key takes the one given (loop-AES sets up with
	 * LOOP_SET_FD, then LOOP_SET_STATUS64 with the key).  A keyed device
	 * keeps its key context, multi-key included, when the status repeats
	 * its key or gives zeros, which is what GET_STATUS hands out: udisks
	 * changes a flag with a GET, SET round trip.  Any other key, or
	 * none, is refused: it would make the data written so far unreadable.
	 * A plain device given no key stays plain.
	 */
	rekey = !lo->lo_crypt;
	if (!rekey && (info->lo_encrypt_type != lo->lo_encrypt_type ||
		       info->lo_encrypt_key_size != lo->lo_encrypt_key_size ||
		       !loop_crypt_same_key(lo, info, ctx))) {
		err = -EBUSY;
		goto out_unlock;
	}

	/*
	 * A new key, offset or size limit changes what the sectors mean: the
	 * page cache above goes first.  A change of flags alone (udisks'
	 * autoclear, on a mounted file system, plain or keyed) leaves it be,
	 * as stock does.
	 */
	remap = (rekey && ctx) || (s64)info->lo_offset != lo->lo_info_offset ||
		info->lo_sizelimit != lo->lo_sizelimit;
	/* Bounce pages for the ciphertext of a plain loop's first key. */
	if (rekey && ctx) {
		err = -EINVAL;
		if (!loop_crypt_block_size_ok(queue_logical_block_size(lo->lo_disk->queue),
					      ctx))
			goto out_unlock;
		err = loop_workers_bounce(lo, loop_prealloc());
		if (err)
			goto out_unlock;
	}
	/* The limits follow the new offset and key (discard: plain loops only). */
	if (remap) {
		err = loop_set_limits(lo, lo->lo_backing_file,
				      queue_logical_block_size(lo->lo_disk->queue),
				      rekey ? ctx : lo->lo_crypt);
		if (err)
			goto out_unlock;
		err = loop_freeze_clean(lo, &memflags);
		if (err) {
			/* As it was. */
			loop_set_limits(lo, lo->lo_backing_file,
					queue_logical_block_size(lo->lo_disk->queue),
					lo->lo_crypt);
			goto out_unlock;
		}
	} else {
		memflags = loop_freeze(lo->lo_disk->queue);
	}
	loop_apply_geometry(lo, info);
	if (rekey) {
		loop_apply_key(lo, info, ctx);
		ctx = NULL;	/* installed */
	}
	partscan = !(lo->lo_flags & LO_FLAGS_PARTSCAN) &&
		   (info->lo_flags & LO_FLAGS_PARTSCAN);
	/*
	 * The settable flags, and direct I/O as far as the new offset still
	 * suits it, in one change.
	 */
	loop_update_io_path(lo, false, (lo->lo_flags & ~LO_STATUS_CLEARABLE) |
				       (info->lo_flags & LO_STATUS_SETTABLE));
	if (partscan)
		clear_bit(GD_SUPPRESS_PART_SCAN, &lo->lo_disk->state);
	loop_unfreeze(lo->lo_disk->queue, memflags);

	set_capacity_and_notify(lo->lo_disk, loop_size(lo));
out_unlock:
	mutex_unlock(&lo->lo_mutex);
	if (!err && partscan)
		loop_reread_partitions(lo);
out_free_ctx:
	loop_crypt_free(ctx);
	return err;
}

/**
 * loop_multi_key_setup() - LOOP_MULTI_KEY_SETUP and LOOP_MULTI_KEY_SETUP_V3
 * @lo:    the device, bound with a single AES key
 * @arg:   user pointer to @count key slots of LOOP_MULTI_KEY_SLOT_SIZE
 *         bytes (doc/format.md section 5)
 * @count: LOOP_MULTI_KEY_SLOTS (v2: 64 keys) or LOOP_MULTI_KEY_SLOTS_V3
 *         (64 keys and the IV seed)
 *
 * Replaces the single key LOOP_SET_STATUS64 set, with the same key length.
 *
 * Return: 0; -ENXIO unbound, -EINVAL without an AES key, -EPERM for
 * another user's key, -EBUSY when multi-key already, -EAGAIN when the page
 * cache kept being refilled (nothing changed), -EFAULT, -ENOMEM.
 */
int loop_multi_key_setup(struct loop_device *lo, const void __user *arg,
			 unsigned int count)
{
	struct loop_aes_ctx *ctx = NULL, *old_ctx;
	unsigned int memflags;
	u8 *slots;
	int err;

	/* Copied before lo_mutex: a page fault may need this very device. */
	slots = loop_crypt_copy_slots(arg, count);
	if (IS_ERR(slots))
		return PTR_ERR(slots);
	err = mutex_lock_killable(&lo->lo_mutex);
	if (err)
		goto out_free_slots;
	err = -ENXIO;
	if (lo->lo_state != LO_BOUND)
		goto out_unlock;
	/* Only on top of an AES key: the key length comes from there. */
	err = -EINVAL;
	if (lo->lo_encrypt_type != LO_CRYPT_AES || !lo->lo_crypt)
		goto out_unlock;
	err = -EPERM;
	if (!uid_eq(lo->lo_key_owner, current_uid()) && !capable(CAP_SYS_ADMIN))
		goto out_unlock;
	/* Multi-key once, on the single key: a second set would re-key. */
	err = -EBUSY;
	if (lo->lo_crypt->mode != LOOP_AES_SINGLE)
		goto out_unlock;
	err = loop_crypt_prepare_multi(slots, count, lo->lo_encrypt_key_size,
				       &ctx);
	if (err)
		goto out_unlock;

	/* Pages decrypted with the single key must not outlive it. */
	err = loop_freeze_clean(lo, &memflags);
	if (err)
		goto out_unlock;
	old_ctx = lo->lo_crypt;
	lo->lo_crypt = ctx;
	loop_unfreeze(lo->lo_disk->queue, memflags);
	ctx = old_ctx;		/* freed below */
	loop_keyscrub_forget(lo);
out_unlock:
	mutex_unlock(&lo->lo_mutex);
	loop_crypt_free(ctx);
out_free_slots:
	kfree_sensitive(slots);
	return err;
}

/* The lo_flags LOOP_GET_STATUS64 reports: ours plus loop-AES's exports. */
static u32 loop_exported_flags(const struct loop_device *lo)
{
	u32 flags = lo->lo_flags;

	if (flags & LO_FLAGS_READ_ONLY)
		flags |= LO_FLAGS_READ_ONLY_EXPORTED;
	if (lo->lo_crypt && lo->lo_crypt->mode != LOOP_AES_SINGLE)
		flags |= LO_FLAGS_MULTI_KEY_EXPORTED;
	if (lo->lo_crypt && lo->lo_crypt->mode == LOOP_AES_MULTI_V3)
		flags |= LO_FLAGS_MULTI_KEY_V3_EXPORTED;
	return flags;
}

/**
 * loop_get_status() - a bound device's status (LOOP_GET_STATUS64)
 * @lo:   the device
 * @info: filled in; never a key byte, lo_init only for CAP_SYS_ADMIN
 *
 * Return: 0, -ENXIO for an unbound device, or vfs_getattr()'s error.
 */
int loop_get_status(struct loop_device *lo, struct loop_info64 *info)
{
	struct path path;
	struct kstat stat;
	int err;

	memset(info, 0, sizeof(*info));
	err = mutex_lock_killable(&lo->lo_mutex);
	if (err)
		return err;
	if (lo->lo_state != LO_BOUND) {
		mutex_unlock(&lo->lo_mutex);
		return -ENXIO;
	}
	info->lo_number = lo->lo_number;
	info->lo_offset = lo->lo_info_offset;
	info->lo_sizelimit = lo->lo_sizelimit;
	info->lo_flags = loop_exported_flags(lo);
	memcpy(info->lo_file_name, lo->lo_file_name, LO_NAME_SIZE);
	memcpy(info->lo_crypt_name, lo->lo_crypt_name, LO_NAME_SIZE);
	info->lo_encrypt_type = lo->lo_encrypt_type;
	info->lo_encrypt_key_size = lo->lo_encrypt_key_size;
	/* No key bytes to anyone (none are kept); lo_init as loop-AES shows it. */
	if (capable(CAP_SYS_ADMIN)) {
		info->lo_init[0] = lo->lo_init[0];
		info->lo_init[1] = lo->lo_init[1];
	}

	/* Do not call into the file system with lo_mutex held. */
	path = lo->lo_backing_file->f_path;
	path_get(&path);
	mutex_unlock(&lo->lo_mutex);
	err = vfs_getattr(&path, &stat, STATX_INO, AT_STATX_SYNC_AS_STAT);
	if (!err) {
		info->lo_device = huge_encode_dev(stat.dev);
		info->lo_inode = stat.ino;
		info->lo_rdevice = huge_encode_dev(stat.rdev);
	}
	path_put(&path);
	return err;
}

/**
 * loop_set_block_size() - LOOP_SET_BLOCK_SIZE
 * @lo:    the device
 * @ibdev: the block device the ioctl came through
 * @excl:  the caller opened it exclusively
 * @arg:   the new logical block size: 512, 1024, 2048 or 4096 bytes
 *
 * Return: 0; -EINVAL for another size, -ENXIO unbound, -EBUSY claimed.
 */
int loop_set_block_size(struct loop_device *lo, struct block_device *ibdev,
			bool excl, unsigned long arg)
{
	struct block_device *bdev = lo->lo_disk->part0;
	int err;

	if (blk_validate_block_size(arg))
		return -EINVAL;
	/* As at bind: nobody may mount the device while its blocks change. */
	if (!excl) {
		err = loop_claim(ibdev, loop_set_block_size);
		if (err)
			return err;
	}
	err = mutex_lock_killable(&lo->lo_mutex);
	if (err)
		goto out_unclaim;
	if (lo->lo_state != LO_BOUND) {
		err = -ENXIO;
		goto out;
	}
	if (queue_logical_block_size(lo->lo_disk->queue) == arg)
		goto out;
	if (!loop_crypt_block_size_ok(arg, lo->lo_crypt)) {
		err = -EINVAL;
		goto out;
	}
	sync_blockdev(bdev);
	invalidate_bdev(bdev);
	/* Direct I/O and bios to a backing device follow, in the same freeze. */
	err = loop_set_limits(lo, lo->lo_backing_file, arg, lo->lo_crypt);
out:
	mutex_unlock(&lo->lo_mutex);
out_unclaim:
	if (!excl)
		loop_unclaim(ibdev, loop_set_block_size);
	return err;
}

/**
 * loop_set_direct_io() - LOOP_SET_DIRECT_IO
 * @lo:  the device
 * @arg: nonzero to use direct I/O on the backing file
 *
 * Return: 0; -ENXIO unbound, -EINVAL where the file cannot do it.
 */
int loop_set_direct_io(struct loop_device *lo, unsigned long arg)
{
	int err = mutex_lock_killable(&lo->lo_mutex);
	unsigned int memflags;

	if (err)
		return err;
	if (lo->lo_state != LO_BOUND) {
		err = -ENXIO;
	} else if (arg && !loop_can_dio(lo, lo->lo_backing_file)) {
		err = -EINVAL;
	} else if (!!arg != !!(lo->lo_flags & LO_FLAGS_DIRECT_IO)) {
		/* Cached pages of the file must reach it before I/O bypasses them. */
		vfs_fsync(lo->lo_backing_file, 0);
		memflags = loop_freeze(lo->lo_disk->queue);
		loop_set_flags(lo, lo->lo_flags ^ LO_FLAGS_DIRECT_IO);
		loop_unfreeze(lo->lo_disk->queue, memflags);
	}
	mutex_unlock(&lo->lo_mutex);
	return err;
}

/**
 * loop_change_fd() - LOOP_CHANGE_FD
 * @lo:   the device, bound read-only
 * @bdev: the block device the ioctl came through
 * @fd:   the new backing file, of the same size
 *
 * Swaps the backing file of a read-only loop (a live CD's image moved to
 * RAM, say).
 *
 * Return: 0; -EBADF, -ENXIO unbound, -EINVAL writable or another size.
 */
int loop_change_fd(struct loop_device *lo, struct block_device *bdev,
		   unsigned int fd)
{
	struct file *file = fget(fd), *old;
	unsigned int memflags;
	bool partscan;
	gfp_t old_gfp;
	int err;

	if (!file)
		return -EBADF;
	err = mutex_lock_killable(&loop_validate_mutex);
	if (err)
		goto out_putf;
	err = mutex_lock_killable(&lo->lo_mutex);
	if (err)
		goto out_unlock_validate;
	err = -ENXIO;
	if (lo->lo_state != LO_BOUND)
		goto out_unlock;
	err = -EINVAL;
	if (!(lo->lo_flags & LO_FLAGS_READ_ONLY))
		goto out_unlock;
	err = loop_validate_file(file, bdev);
	if (err)
		goto out_unlock;
	err = -EINVAL;
	if (i_size_read(file->f_mapping->host) !=
	    i_size_read(lo->lo_backing_file->f_mapping->host))
		goto out_unlock;

	old = lo->lo_backing_file;
	old_gfp = lo->lo_old_gfp_mask;
	/* New media: a new disk sequence number, the old cached pages go. */
	loop_media_changed(lo->lo_disk);
	memflags = loop_freeze(lo->lo_disk->queue);
	lo->lo_old_gfp_mask = mapping_gfp_mask(file->f_mapping);
	mapping_set_gfp_mask(file->f_mapping,
			     lo->lo_old_gfp_mask & ~(__GFP_IO | __GFP_FS));
	loop_set_backing_file(lo, file);
	loop_update_io_path(lo, true, lo->lo_flags);
	loop_unfreeze(lo->lo_disk->queue, memflags);
	mapping_set_gfp_mask(old->f_mapping, old_gfp);
	/* Read-only, so nothing is dirty: pages read meanwhile go too. */
	loop_drop_page_cache(lo);
	partscan = lo->lo_flags & LO_FLAGS_PARTSCAN;
	mutex_unlock(&lo->lo_mutex);
	mutex_unlock(&loop_validate_mutex);
	fput(old);
	if (partscan)
		loop_reread_partitions(lo);
	kobject_uevent(&disk_to_dev(lo->lo_disk)->kobj, KOBJ_CHANGE);
	return 0;

out_unlock:
	mutex_unlock(&lo->lo_mutex);
out_unlock_validate:
	mutex_unlock(&loop_validate_mutex);
out_putf:
	fput(file);
	return err;
}

/**
 * loop_set_capacity() - LOOP_SET_CAPACITY: follow the backing file's size
 * @lo: the device
 *
 * Return: 0, -ENXIO for an unbound device.
 */
int loop_set_capacity(struct loop_device *lo)
{
	int err = mutex_lock_killable(&lo->lo_mutex);

	if (err)
		return err;
	if (lo->lo_state == LO_BOUND)
		set_capacity_and_notify(lo->lo_disk, loop_size(lo));
	else
		err = -ENXIO;
	mutex_unlock(&lo->lo_mutex);
	return err;
}
