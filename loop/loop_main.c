// SPDX-License-Identifier: GPL-2.0
/*
 * loop_main.c - aesloop: the loop block driver with loop-AES built in.
 *
 * This file holds the life cycle of the module and of the devices:
 * creating and removing /dev/loopN, their block device operations, and
 * /dev/loop-control.  Module parameters are in loop_params.c, binding and
 * configuration in loop_config.c, the ioctls in loop_ioctl.c, the I/O path
 * in loop_io.c, what a backing file makes of a loop in loop_backing.c, keys
 * in loop_crypt.c, kernel version differences in loop_kcompat.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/idr.h>
#include <linux/init.h>
#include <linux/major.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "loop.h"
#include "../aes/engines.h"

/*
 * Every device is in loop_index_idr from the start of loop_add(), so that
 * its index is taken, but REMOVE, GET_FREE and module unload see it only
 * once lo_visible is set, under loop_ctl_mutex, after add_disk() succeeded:
 * a device still being built, or already being removed, is not theirs.
 */
static DEFINE_IDR(loop_index_idr);
static DEFINE_MUTEX(loop_ctl_mutex);

/**
 * loop_open() - a /dev/loopN is being opened (through lo_open())
 * @disk: its gendisk
 *
 * Return: 0, or -ENXIO for a device being deleted or detached (its
 * LOOP_CLR_FD waits for the openers it has, and lets in no others).
 */
static int loop_open(struct gendisk *disk)
{
	struct loop_device *lo = disk->private_data;
	int err = mutex_lock_killable(&lo->lo_mutex);

	if (err)
		return err;
	if (lo->lo_state == LO_DELETING || lo->lo_state == LO_RUNDOWN)
		err = -ENXIO;
	mutex_unlock(&lo->lo_mutex);
	return err;
}

/**
 * loop_release() - a /dev/loopN was closed (through lo_release())
 * @disk: its gendisk
 *
 * On the last close, autoclear unbinds the device.
 */
static void loop_release(struct gendisk *disk)
{
	if (disk_openers(disk) > 0)
		return;
	loop_release_autoclear(disk->private_data);
}

/*
 * The block device methods, with the signatures of the kernel built for
 * (loop_kcompat.h): before 6.5, open() is given the block device and
 * release() the mode as well.
 */
#ifdef AESLOOP_FMODE_OPEN
static int lo_open(struct block_device *bdev, fmode_t mode)
{
	return loop_open(bdev->bd_disk);
}

static void lo_release(struct gendisk *disk, fmode_t mode)
{
	loop_release(disk);
}
#else
static int lo_open(struct gendisk *disk, blk_mode_t mode)
{
	return loop_open(disk);
}

static void lo_release(struct gendisk *disk)
{
	loop_release(disk);
}
#endif

static int lo_ioctl(struct block_device *bdev, blk_mode_t mode,
		    unsigned int cmd, unsigned long arg)
{
	return loop_ioctl(bdev->bd_disk->private_data, bdev,
			  mode & BLK_OPEN_WRITE, mode & BLK_OPEN_EXCL, cmd, arg);
}

#ifdef CONFIG_COMPAT
static int lo_compat_ioctl(struct block_device *bdev, blk_mode_t mode,
			   unsigned int cmd, unsigned long arg)
{
	return loop_compat_ioctl(bdev->bd_disk->private_data, bdev,
				 mode & BLK_OPEN_WRITE, mode & BLK_OPEN_EXCL,
				 cmd, arg);
}
#endif

/* The last reference to a device's gendisk is gone: free the device. */
static void loop_free_disk(struct gendisk *disk)
{
	struct loop_device *lo = disk->private_data;

	if (!lo)	/* loop_add() failed and cleans up itself */
		return;
	bioset_exit(&lo->lo_bio_set);
	mutex_destroy(&lo->lo_mutex);
	kfree(lo);
}

static const struct block_device_operations lo_fops = {
	.owner		= THIS_MODULE,
	.open		= lo_open,
	.release	= lo_release,
	.ioctl		= lo_ioctl,
#ifdef CONFIG_COMPAT
	.compat_ioctl	= lo_compat_ioctl,
#endif
	.free_disk	= loop_free_disk,
};

/**
 * loop_of_disk() - the loop device of a gendisk, if it is one of ours
 * @disk: any gendisk with the loop major
 *
 * Return: the device, or NULL for a disk another driver made.
 */
struct loop_device *loop_of_disk(struct gendisk *disk)
{
	return disk->fops == &lo_fops ? disk->private_data : NULL;
}

/*
 * Create loop device number @i, or the lowest free number if @i < 0.
 * Returns the number or a negative errno (-EEXIST if @i is taken).
 */
static int loop_add(int i)
{
	struct loop_device *lo;
	struct gendisk *disk;
	int err;

	lo = kzalloc(sizeof(*lo), GFP_KERNEL);
	if (!lo)
		return -ENOMEM;
	err = bioset_init(&lo->lo_bio_set, BIO_POOL_SIZE, 0, 0);
	if (err) {
		kfree(lo);
		return err;
	}
	lo->lo_state = LO_UNBOUND;
	mutex_init(&lo->lo_mutex);
	spin_lock_init(&lo->lo_lock);
	loop_keyscrub_init(lo);
	INIT_WORK(&lo->lo_limits_work, loop_limits_work);

	err = mutex_lock_killable(&loop_ctl_mutex);
	if (err)
		goto out_free_dev;
	if (i >= 0) {
		err = idr_alloc(&loop_index_idr, lo, i, i + 1, GFP_KERNEL);
		if (err == -ENOSPC)
			err = -EEXIST;
	} else {
		err = idr_alloc(&loop_index_idr, lo, 0, 0, GFP_KERNEL);
	}
	mutex_unlock(&loop_ctl_mutex);
	if (err < 0)
		goto out_free_dev;
	i = err;
	lo->lo_number = i;

	lo->tag_set.ops = &loop_mq_ops;
	lo->tag_set.nr_hw_queues = 1;
	/* Each request in flight costs a struct loop_cmd. */
	lo->tag_set.queue_depth = loop_queue_depth();
	lo->tag_set.numa_node = NUMA_NO_NODE;
	lo->tag_set.cmd_size = sizeof(struct loop_cmd);
	lo->tag_set.flags = loop_tag_set_flags();
	lo->tag_set.driver_data = lo;
	err = blk_mq_alloc_tag_set(&lo->tag_set);
	if (err)
		goto out_free_idr;

	disk = loop_alloc_disk(&lo->tag_set, lo, LOOP_MAX_HW_SECTORS);
	if (IS_ERR(disk)) {
		err = PTR_ERR(disk);
		goto out_free_tags;
	}
	lo->lo_disk = disk;

	disk->major = LOOP_MAJOR;
	disk->first_minor = i << loop_part_shift();
	disk->minors = 1 << loop_part_shift();
	/*
	 * No partition scan unless asked for (losetup -P) or max_part given,
	 * but partitions made from user space (BLKPG, partx) are allowed.
	 */
	if (!loop_part_shift())
		set_bit(GD_SUPPRESS_PART_SCAN, &disk->state);
	disk->fops = &lo_fops;
	disk->private_data = lo;
	disk->queue->queuedata = lo;
	snprintf(disk->disk_name, DISK_NAME_LEN, "loop%d", i);
	set_capacity(disk, 0);

	err = add_disk(disk);
	if (err)
		goto out_put_disk;

	mutex_lock(&loop_ctl_mutex);
	lo->lo_visible = true;
	mutex_unlock(&loop_ctl_mutex);
	return i;

out_put_disk:
	disk->private_data = NULL;
	put_disk(disk);
out_free_tags:
	blk_mq_free_tag_set(&lo->tag_set);
out_free_idr:
	mutex_lock(&loop_ctl_mutex);
	idr_remove(&loop_index_idr, i);
	mutex_unlock(&loop_ctl_mutex);
out_free_dev:
	bioset_exit(&lo->lo_bio_set);
	mutex_destroy(&lo->lo_mutex);
	kfree(lo);
	return err;
}

/*
 * Remove a device in LO_DELETING, already hidden (lo_visible false); lo is
 * freed when the disk is released.
 */
static void loop_remove(struct loop_device *lo)
{
	int i = lo->lo_number;

	/* No scrub timer may outlive the device (it is unbound, so idle). */
	loop_keyscrub_cancel(lo);
	del_gendisk(lo->lo_disk);
	blk_mq_free_tag_set(&lo->tag_set);
	mutex_lock(&loop_ctl_mutex);
	idr_remove(&loop_index_idr, i);
	mutex_unlock(&loop_ctl_mutex);
	put_disk(lo->lo_disk);
}

/* Opening /dev/loopN of a device that does not exist yet creates it. */
static void loop_probe(dev_t dev)
{
	int i = MINOR(dev) >> loop_part_shift();

	if (!loop_probe_allowed(i))
		return;
	loop_add(i);
}

static int loop_control_remove(int i)
{
	struct loop_device *lo;
	int err;

	if (i < 0)
		return -EINVAL;
	err = mutex_lock_killable(&loop_ctl_mutex);
	if (err)
		return err;
	lo = idr_find(&loop_index_idr, i);
	if (!lo || !lo->lo_visible) {
		mutex_unlock(&loop_ctl_mutex);
		return -ENODEV;
	}
	/*
	 * Hidden first, so that this is the one remover; then lo_mutex
	 * without loop_ctl_mutex, which must not wait on a busy device.
	 */
	lo->lo_visible = false;
	mutex_unlock(&loop_ctl_mutex);

	/* Only an unused, unbound device can go. */
	err = mutex_lock_killable(&lo->lo_mutex);
	if (!err) {
		if (lo->lo_state != LO_UNBOUND || disk_openers(lo->lo_disk) > 0)
			err = -EBUSY;
		else
			lo->lo_state = LO_DELETING;
		mutex_unlock(&lo->lo_mutex);
	}
	if (err) {
		mutex_lock(&loop_ctl_mutex);
		lo->lo_visible = true;
		mutex_unlock(&loop_ctl_mutex);
	}
	if (!err)
		loop_remove(lo);
	return err;
}

static int loop_control_get_free(void)
{
	struct loop_device *lo;
	int id, err;

	err = mutex_lock_killable(&loop_ctl_mutex);
	if (err)
		return err;
	idr_for_each_entry(&loop_index_idr, lo, id) {
		/* Unlocked peek: a racing user gets -EBUSY at bind and retries. */
		if (lo->lo_visible && data_race(lo->lo_state) == LO_UNBOUND) {
			mutex_unlock(&loop_ctl_mutex);
			return id;
		}
	}
	mutex_unlock(&loop_ctl_mutex);
	return loop_add(-1);
}

static long loop_control_ioctl(struct file *file, unsigned int cmd,
			       unsigned long parm)
{
	switch (cmd) {
	case LOOP_CTL_ADD:
		return loop_add(parm > INT_MAX ? -1 : (int)parm);
	case LOOP_CTL_REMOVE:
		return loop_control_remove(parm > INT_MAX ? -1 : (int)parm);
	case LOOP_CTL_GET_FREE:
		return loop_control_get_free();
	default:
		return -ENOTTY;
	}
}

static const struct file_operations loop_ctl_fops = {
	.open		= nonseekable_open,
	.unlocked_ioctl	= loop_control_ioctl,
	.compat_ioctl	= loop_control_ioctl,
	.owner		= THIS_MODULE,
	.llseek		= noop_llseek,
};

static struct miscdevice loop_misc = {
	.minor		= LOOP_CTRL_MINOR,
	.name		= "loop-control",
	.fops		= &loop_ctl_fops,
};

/* aes_impl=NAME: that engine, if this CPU runs it and it passes its self-test. */
static int __init loop_request_aes(const char *name)
{
	char names[64] = "generic";
	const struct loop_aes_engine *e;
	unsigned int path;
	const char *why;
	int err;

	for (path = 0; (e = aesloop_arch_engine(path)); path++) {
		strlcat(names, " ", sizeof(names));
		strlcat(names, e->name, sizeof(names));
		if (strcmp(e->name, name))
			continue;
		if (!aesloop_arch_cpu_has(path, &why)) {
			pr_err("aes_impl=%s: this CPU has no %s\n", name, why);
			return -EINVAL;
		}
		err = loop_aes_selftest(e);
		if (err) {
			pr_err("aes_impl=%s: its self-test failed (%d)\n", name, err);
			return -EINVAL;
		}
		loop_aes_set_engine(e);
		return 0;
	}
	pr_err("aes_impl=%s: no such AES code in this module (it has: %s)\n",
	       name, names);
	return -EINVAL;
}

/*
 * The engine of the transfers: the one aes_impl asks for, else the fastest
 * of the CPU's own (aes-intel/ on x86_64: VAES, AES-NI, or the constant-time
 * ssse3) whose features the CPU has and whose self-test passed, else the
 * generic C code.
 */
static int __init loop_choose_aes(void)
{
	const char *name = loop_params_aes_request();

	if (name && strcmp(name, loop_aes_generic_engine.name)) {
		int err = loop_request_aes(name);

		if (err)
			return err;
	} else if (!name) {
		/* It logs each path it passes over. */
		const struct loop_aes_engine *engine = loop_aes_probe(NULL);

		if (engine)
			loop_aes_set_engine(engine);
	}
	loop_params_set_aes_impl(loop_aes_get_engine()->name);
	return 0;
}

static int __init loop_init(void)
{
	unsigned int i;
	int err;

	err = loop_check_params();
	if (err)
		return err;

	err = loop_choose_aes();
	if (err)
		return err;
	err = misc_register(&loop_misc);
	if (err)
		return err;
	err = __register_blkdev(LOOP_MAJOR, "loop", loop_probe);
	if (err)
		goto out_misc;

	/* Pre-created devices are a convenience: a failure is not fatal. */
	for (i = 0; i < loop_devices_at_load(); i++)
		loop_add(i);

	pr_info("aesloop driver loaded, %u devices, AES: %s%s\n",
		loop_devices_at_load(),
		loop_aes_get_engine()->name,
		IS_ENABLED(CONFIG_AESLOOP_KEYSCRUB) ? ", keys scrubbed every second" : "");
	return 0;

out_misc:
	misc_deregister(&loop_misc);
	return err;
}

static void __exit loop_exit(void)
{
	struct loop_device *lo;
	int id;

	unregister_blkdev(LOOP_MAJOR, "loop");
	misc_deregister(&loop_misc);

	/*
	 * Bound devices hold a module reference, so none is left here; no new
	 * device can appear once the major and loop-control are gone, and
	 * none is half built or half removed: those callers held a reference
	 * to the module too.
	 */
	idr_for_each_entry(&loop_index_idr, lo, id) {
		lo->lo_state = LO_DELETING;
		lo->lo_visible = false;
		loop_remove(lo);
	}
	idr_destroy(&loop_index_idr);
}

module_init(loop_init);
module_exit(loop_exit);

MODULE_DESCRIPTION("Loop block device with loop-AES compatible AES encryption");
MODULE_LICENSE("GPL");
MODULE_VERSION(AESLOOP_VERSION);
MODULE_ALIAS_BLOCKDEV_MAJOR(LOOP_MAJOR);
MODULE_ALIAS_MISCDEV(LOOP_CTRL_MINOR);
MODULE_ALIAS("devname:loop-control");
