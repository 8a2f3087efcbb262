// SPDX-License-Identifier: GPL-2.0
/*
 * loop_params.c - aesloop: the module parameters, in one place.
 *
 * The stock driver's max_loop, max_part and hw_queue_depth, loop-AES's
 * lo_threads, lo_prealloc and lo_nice, and aes_impl; checked
 * once at load (loop_check_params()) and read through the functions below.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/cpumask.h>
#include <linux/moduleparam.h>
#include <linux/sched/prio.h>
#include <linux/string.h>

#include "loop.h"

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
 * exceptions as INDEX,N pairs, as loop-AES takes them.  Not given: one per
 * online CPU, up to LOOP_AUTO_THREADS.
 */
static int lo_threads[1 + 2 * 16];
static int lo_threads_count;
module_param_array(lo_threads, int, &lo_threads_count, 0444);
MODULE_PARM_DESC(lo_threads, "Crypto workers per device: N[,INDEX,N]... (default: one per CPU, up to 4; at most 16)");

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

/*
 * Which AES code runs the transfers: empty at load for the fastest this CPU
 * runs, or a name to ask for that one; afterwards, the one in use.
 */
static char aes_impl[32];
module_param_string(aes_impl, aes_impl, sizeof(aes_impl), 0444);
MODULE_PARM_DESC(aes_impl, "AES code: generic, ssse3, aesni, vaes-avx2, vaes-avx512 or arm64-ce; given at load, that one (the load fails if the CPU cannot run it); default the fastest the CPU runs. Reads the one in use");

/**
 * loop_threads_of() - the number of workers a device gets (lo_threads)
 * @lo: the device, being bound
 *
 * Without lo_threads, as many as CPUs are online, up to LOOP_AUTO_THREADS:
 * requests are spread over the workers, so independent ones are encrypted
 * and decrypted on as many CPUs (a single-threaded device had one CPU's
 * AES, which the generic C code makes slower than most disks).  More take
 * memory (each worker of an encrypted loop has lo_prealloc bounce pages)
 * for parallelism that one device's queue seldom has.
 *
 * Return: 1..LOOP_MAX_THREADS.
 */
unsigned int loop_threads_of(const struct loop_device *lo)
{
	int n, i;

	if (!lo_threads_count)
		return clamp(num_online_cpus(), 1U, LOOP_AUTO_THREADS);
	n = lo_threads[0];

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
 * loop_devices_at_load() - how many devices the module creates at load
 *
 * Return: max_loop, 0.. (default 8).
 */
unsigned int loop_devices_at_load(void)
{
	return max_loop;
}

/**
 * loop_probe_allowed() - may an open of /dev/loopN create device @i?
 * @i: the device index, 0..
 *
 * Return: false when max_loop was given and @i is beyond it, as the stock
 * driver limits it.
 */
bool loop_probe_allowed(int i)
{
	return !max_loop_given || !max_loop || i < max_loop;
}

/**
 * loop_queue_depth() - requests in flight per device (hw_queue_depth)
 *
 * Return: 1..BLK_MQ_MAX_DEPTH.
 */
unsigned int loop_queue_depth(void)
{
	return hw_queue_depth;
}

/**
 * loop_params_aes_request() - the AES code asked for at load
 *
 * Return: the name given as aes_impl, or NULL when none was (the fastest
 * then).  Only before loop_params_set_aes_impl().
 */
const char * __init loop_params_aes_request(void)
{
	return aes_impl[0] ? aes_impl : NULL;
}

/**
 * loop_params_set_aes_impl() - show the AES code chosen at load
 * @name: the engine's name, as the aes_impl parameter reads it
 */
void __init loop_params_set_aes_impl(const char *name)
{
	strscpy(aes_impl, name, sizeof(aes_impl));
}

/**
 * loop_check_params() - check the module parameters at load
 *
 * Out-of-range parameters refuse the load rather than being bent silently.
 * Also derives the partition shift from max_part.
 *
 * Return: 0, or -EINVAL with the reason in the kernel log.
 */
int __init loop_check_params(void)
{
	int i;

	if (max_part < 0 || max_part > (1 << (MINORBITS - 1))) {
		pr_err("max_part=%d is out of range\n", max_part);
		return -EINVAL;
	}
	/* Minors per device: a power of two above max_part. */
	if (max_part > 0)
		part_shift = fls(max_part);
	if ((1U << part_shift) > DISK_MAX_PARTS) {
		pr_err("max_part=%d is out of range 0..%d\n", max_part,
		       DISK_MAX_PARTS - 1);
		return -EINVAL;
	}
	/* What the minors really allow, as the stock driver reports it. */
	if (part_shift)
		max_part = (1 << part_shift) - 1;
	if (max_loop < 0 || max_loop > (1 << (MINORBITS - part_shift))) {
		pr_err("max_loop=%d is out of range\n", max_loop);
		return -EINVAL;
	}
	if (hw_queue_depth < 1 || hw_queue_depth > BLK_MQ_MAX_DEPTH) {
		pr_err("hw_queue_depth=%d is out of range 1..%d\n",
		       hw_queue_depth, BLK_MQ_MAX_DEPTH);
		return -EINVAL;
	}
	if (lo_threads_count && !(lo_threads_count & 1)) {
		pr_err("lo_threads: an INDEX without its count\n");
		return -EINVAL;
	}
	/* lo_threads[0] is the default; then INDEX,N pairs. */
	for (i = 0; i < lo_threads_count; i += 2) {
		if (lo_threads[i] < 1 || lo_threads[i] > LOOP_MAX_THREADS) {
			pr_err("lo_threads: %d workers is out of range 1..%d\n",
			       lo_threads[i], LOOP_MAX_THREADS);
			return -EINVAL;
		}
		if (i + 1 < lo_threads_count && lo_threads[i + 1] < 0) {
			pr_err("lo_threads: device index %d is negative\n",
			       lo_threads[i + 1]);
			return -EINVAL;
		}
	}
	if (lo_prealloc < 1 || lo_prealloc > LOOP_MAX_PREALLOC) {
		pr_err("lo_prealloc=%d is out of range 1..%d\n",
		       lo_prealloc, LOOP_MAX_PREALLOC);
		return -EINVAL;
	}
	if (lo_nice < MIN_NICE || lo_nice > MAX_NICE) {
		pr_err("lo_nice=%d is out of range %d..%d\n",
		       lo_nice, MIN_NICE, MAX_NICE);
		return -EINVAL;
	}
	return 0;
}

