// SPDX-License-Identifier: GPL-2.0
/*
 * loop_main.c - aesloop: the loop block driver with loop-AES built in.
 *
 * This file holds the life cycle of the module and of the devices: module
 * parameters, creating and removing /dev/loopN, their block device
 * operations, and /dev/loop-control.  Configuration is in loop_ctl.c, the
 * I/O path in loop_io.c, keys in loop_crypt.c.
 */
#include <linux/idr.h>
#include <linux/init.h>
#include <linux/major.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include "loop.h"
#ifdef AESLOOP_INTELAES
#include "../aes-intel/aes-intel.h"
#endif

/*
 * Every device is in loop_index_idr from the start of loop_add(), so that
 * its index is taken, but REMOVE, GET_FREE and module unload see it only
 * once lo_visible is set, under loop_ctl_mutex, after add_disk() succeeded:
 * a device still being built, or already being removed, is not theirs.
 */
static DEFINE_IDR(loop_index_idr);
static DEFINE_MUTEX(loop_ctl_mutex);

/*
 * max_loop: devices made at load.  Given explicitly it is also a limit on
 * the devices an open of /dev/loopN creates, as in the stock driver; the
 * default is none.
 */
static int max_loop = 8;
static bool max_loop_given;

static int max_loop_set(const char *val, const struct kernel_param *kp)
{
	int err = param_set_int(val, kp);

	if (!err)
		max_loop_given = true;
	return err;
}

static const struct kernel_param_ops max_loop_ops = {
	.set	= max_loop_set,
	.get	= param_get_int,
};
module_param_cb(max_loop, &max_loop_ops, &max_loop, 0444);
MODULE_PARM_DESC(max_loop, "Number of loop devices created at load (default 8); if given, also the limit of devices made by opening /dev/loopN");

static int max_part;
module_param(max_part, int, 0444);
MODULE_PARM_DESC(max_part, "Minor numbers reserved for partitions per device (default 0: dynamic)");

/*
 * lo_threads=N[,INDEX,N]...: N workers per device, and per-device
 * exceptions as INDEX,N pairs, as loop-AES takes them.
 */
static int lo_threads[1 + 2 * 16] = { 1 };
static int lo_threads_count;
module_param_array(lo_threads, int, &lo_threads_count, 0444);
MODULE_PARM_DESC(lo_threads, "Crypto workers per device: N[,INDEX,N]... (default 1, at most 16)");

static int lo_prealloc = 32;
module_param(lo_prealloc, int, 0444);
MODULE_PARM_DESC(lo_prealloc, "Bounce pages per worker of an encrypted loop (default 32, 1..256)");

static int lo_nice;
module_param(lo_nice, int, 0444);
MODULE_PARM_DESC(lo_nice, "Nice value of the workers, -20..19 (default 0)");

/* As the stock driver: requests in flight per device, 1..BLK_MQ_MAX_DEPTH. */
static int hw_queue_depth = 128;
module_param(hw_queue_depth, int, 0444);
MODULE_PARM_DESC(hw_queue_depth, "Queue depth of each device (default 128)");

static unsigned int part_shift;

/* Which AES code runs the transfers; read-only, set once at load. */
static char aes_impl[32] = "generic";
module_param_string(aes_impl, aes_impl, sizeof(aes_impl), 0444);
MODULE_PARM_DESC(aes_impl, "AES code in use (read-only): generic, or with INTELAES=y aesni, vaes-avx2 or vaes-avx512");

/**
 * loop_threads_of() - the number of workers a device gets (lo_threads)
 * @lo: the device
 *
 * Return: 1..LOOP_MAX_THREADS.
 */
unsigned int loop_threads_of(const struct loop_device *lo)
{
	int n = lo_threads[0], i;

	for (i = 1; i + 1 < lo_threads_count; i += 2)
		if (lo_threads[i] == lo->lo_number)
			n = lo_threads[i + 1];
	return n;
}

/**
 * loop_prealloc() - bounce pages each worker keeps (lo_prealloc)
 *
 * Return: 1..LOOP_MAX_PREALLOC.
 */
unsigned int loop_prealloc(void)
{
	return lo_prealloc;
}

/**
 * loop_nice() - the nice value of the workers (lo_nice)
 *
 * Return: -20..19.
 */
int loop_nice(void)
{
	return lo_nice;
}

/**
 * loop_part_shift() - minor-number bits per device reserved for partitions
 *
 * Return: 0 (max_part=0: partitions get dynamic numbers) .. 8.
 */
unsigned int loop_part_shift(void)
{
	return part_shift;
}

/**
 * loop_open() - a /dev/loopN is being opened
 * @lo: the device
 *
 * Return: 0, or -ENXIO for a device being deleted or detached (its
 * LOOP_CLR_FD waits for the openers it has, and lets in no others).
 */
int loop_open(struct loop_device *lo)
{
	int err = mutex_lock_killable(&lo->lo_mutex);

	if (err)
		return err;
	if (lo->lo_state == LO_DELETING || lo->lo_state == LO_RUNDOWN)
		err = -ENXIO;
	mutex_unlock(&lo->lo_mutex);
	return err;
}

/**
 * loop_release() - a /dev/loopN was closed
 * @lo: the device
 *
 * On the last close, an autoclear device is unbound.
 */
void loop_release(struct loop_device *lo)
{
	if (disk_openers(lo->lo_disk) > 0)
		return;
	loop_release_autoclear(lo);
}

/**
 * loop_free_disk() - the last reference to a device's gendisk is gone
 * @disk: the gendisk; its private_data is the loop_device to free
 */
void loop_free_disk(struct gendisk *disk)
{
	struct loop_device *lo = disk->private_data;

	if (!lo)	/* loop_add() failed and cleans up itself */
		return;
	bioset_exit(&lo->lo_bio_set);
	mutex_destroy(&lo->lo_mutex);
	kfree(lo);
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
	lo->tag_set.queue_depth = hw_queue_depth;
	lo->tag_set.numa_node = NUMA_NO_NODE;
	lo->tag_set.cmd_size = sizeof(struct loop_cmd);
	lo->tag_set.flags = loop_tag_set_flags();
	lo->tag_set.driver_data = lo;
	err = blk_mq_alloc_tag_set(&lo->tag_set);
	if (err)
		goto out_free_idr;

	disk = loop_alloc_disk(lo);
	if (IS_ERR(disk)) {
		err = PTR_ERR(disk);
		goto out_free_tags;
	}
	lo->lo_disk = disk;

	disk->major = LOOP_MAJOR;
	disk->first_minor = i << part_shift;
	disk->minors = 1 << part_shift;
	/*
	 * No partition scan unless asked for (losetup -P) or max_part given,
	 * but partitions made from user space (BLKPG, partx) are allowed.
	 */
	if (!part_shift)
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
	int i = MINOR(dev) >> part_shift;

	if (max_loop_given && max_loop && i >= max_loop)
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

/*
 * With INTELAES=y, the fastest AES-NI/VAES path whose features the CPU has
 * and whose known-answer self-test passed; otherwise the generic C code.
 */
static void __init loop_choose_aes(void)
{
#ifdef AESLOOP_INTELAES
	const char *rejected;
	const struct loop_aes_engine *engine = aesloop_intel_probe(&rejected);

	if (rejected)
		pr_notice("loop: AES path %s failed its self-test on this CPU; not used\n",
			  rejected);
	if (engine)
		loop_aes_set_engine(engine);
#endif
	strscpy(aes_impl, loop_aes_get_engine()->name, sizeof(aes_impl));
}

/* Out-of-range parameters refuse the load rather than being bent silently. */
static int __init loop_check_params(void)
{
	int i;

	if (max_part < 0 || max_part > (1 << (MINORBITS - 1))) {
		pr_err("loop: max_part=%d is out of range\n", max_part);
		return -EINVAL;
	}
	/* Minors per device: a power of two above max_part. */
	if (max_part > 0)
		part_shift = fls(max_part);
	if ((1U << part_shift) > DISK_MAX_PARTS) {
		pr_err("loop: max_part=%d is out of range 0..%d\n", max_part,
		       DISK_MAX_PARTS - 1);
		return -EINVAL;
	}
	/* What the minors really allow, as the stock driver reports it. */
	if (part_shift)
		max_part = (1 << part_shift) - 1;
	if (max_loop < 0 || max_loop > (1 << (MINORBITS - part_shift))) {
		pr_err("loop: max_loop=%d is out of range\n", max_loop);
		return -EINVAL;
	}
	if (hw_queue_depth < 1 || hw_queue_depth > BLK_MQ_MAX_DEPTH) {
		pr_err("loop: hw_queue_depth=%d is out of range 1..%d\n",
		       hw_queue_depth, BLK_MQ_MAX_DEPTH);
		return -EINVAL;
	}
	if (lo_threads_count && !(lo_threads_count & 1)) {
		pr_err("loop: lo_threads: an INDEX without its count\n");
		return -EINVAL;
	}
	/* lo_threads[0] is the default; then INDEX,N pairs. */
	for (i = 0; i < max(lo_threads_count, 1); i += 2) {
		if (lo_threads[i] < 1 || lo_threads[i] > LOOP_MAX_THREADS) {
			pr_err("loop: lo_threads: %d workers is out of range 1..%d\n",
			       lo_threads[i], LOOP_MAX_THREADS);
			return -EINVAL;
		}
		if (i + 1 < lo_threads_count && lo_threads[i + 1] < 0) {
			pr_err("loop: lo_threads: device index %d is negative\n",
			       lo_threads[i + 1]);
			return -EINVAL;
		}
	}
	if (lo_prealloc < 1 || lo_prealloc > LOOP_MAX_PREALLOC) {
		pr_err("loop: lo_prealloc=%d is out of range 1..%d\n",
		       lo_prealloc, LOOP_MAX_PREALLOC);
		return -EINVAL;
	}
	if (lo_nice < MIN_NICE || lo_nice > MAX_NICE) {
		pr_err("loop: lo_nice=%d is out of range %d..%d\n",
		       lo_nice, MIN_NICE, MAX_NICE);
		return -EINVAL;
	}
	return 0;
}

static int __init loop_init(void)
{
	int i, err;

	err = loop_check_params();
	if (err)
		return err;

	loop_choose_aes();
	err = misc_register(&loop_misc);
	if (err)
		return err;
	err = __register_blkdev(LOOP_MAJOR, "loop", loop_probe);
	if (err)
		goto out_misc;

	/* Pre-created devices are a convenience: a failure is not fatal. */
	for (i = 0; i < max_loop; i++)
		loop_add(i);

	pr_info("loop: aesloop driver loaded, %d devices, AES: %s%s\n", max_loop,
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
