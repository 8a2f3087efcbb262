// SPDX-License-Identifier: GPL-2.0
/*
 * loop_ioctl.c - aesloop: the ioctls of /dev/loopN.
 *
 * Each command that carries a structure has a typed helper here: copy it
 * in (or out), call the configuration function of loop_config.c, and wipe
 * the copy, which may hold key bytes, on every path.  The dispatchers only
 * check permissions and pick the helper.  The 32-bit struct loop_info of
 * a compat caller is converted here too.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "loop.h"

/*
 * The old struct loop_info and its 32-bit layout, struct compat_loop_info,
 * have loop_info64's fields under the same names, some narrower.  The
 * conversions, one typed pair for each layout, go through loop_info64 and
 * share the list of fields below and the names' handling.
 */
#define loop_info_copy_fields(dst, src)					\
do {									\
	typeof(dst) lcf_dst_ = (dst);					\
	typeof(src) lcf_src_ = (src);					\
									\
	lcf_dst_->lo_number = lcf_src_->lo_number;			\
	lcf_dst_->lo_device = lcf_src_->lo_device;			\
	lcf_dst_->lo_inode = lcf_src_->lo_inode;			\
	lcf_dst_->lo_rdevice = lcf_src_->lo_rdevice;			\
	lcf_dst_->lo_offset = lcf_src_->lo_offset;			\
	lcf_dst_->lo_encrypt_type = lcf_src_->lo_encrypt_type;		\
	lcf_dst_->lo_encrypt_key_size = lcf_src_->lo_encrypt_key_size;	\
	lcf_dst_->lo_flags = lcf_src_->lo_flags;			\
	lcf_dst_->lo_init[0] = lcf_src_->lo_init[0];			\
	lcf_dst_->lo_init[1] = lcf_src_->lo_init[1];			\
} while (0)

/*
 * For SET_STATUS: the old layouts' one name is the file name, and the
 * cipher's name as well unless the encrypt type is none.
 */
static void loop_info64_set_names(struct loop_info64 *info64,
				  const char *name)
{
	memcpy(info64->lo_file_name, name, LO_NAME_SIZE);
	if (info64->lo_encrypt_type != LO_CRYPT_NONE)
		memcpy(info64->lo_crypt_name, name, LO_NAME_SIZE);
}

/* SET_STATUS's struct loop_info into loop_info64; the key comes in. */
static void loop_info_from_old(struct loop_info64 *info64,
			       const struct loop_info *info)
{
	memset(info64, 0, sizeof(*info64));
	loop_info_copy_fields(info64, info);
	loop_info64_set_names(info64, info->lo_name);
	memcpy(info64->lo_encrypt_key, info->lo_encrypt_key, LO_KEY_SIZE);
}

/*
 * GET_STATUS's struct loop_info out of loop_info64: the name is the file
 * name (a device's encrypt type is none or AES, never one whose cipher name
 * was shown instead), and no key byte, not even for root.  Returns 0, or
 * -EOVERFLOW rather than a device, inode or offset cut short, as the stock
 * driver does.
 */
static int loop_info_to_old(struct loop_info *info,
			    const struct loop_info64 *info64)
{
	memset(info, 0, sizeof(*info));
	loop_info_copy_fields(info, info64);
	memcpy(info->lo_name, info64->lo_file_name, LO_NAME_SIZE);
	if (info->lo_device != info64->lo_device ||
	    info->lo_rdevice != info64->lo_rdevice ||
	    info->lo_inode != info64->lo_inode ||
	    info->lo_offset != (s64)info64->lo_offset)
		return -EOVERFLOW;
	return 0;
}

static int loop_ioctl_set_fd(struct loop_device *lo, struct block_device *bdev,
			     bool writable, bool excl, unsigned long fd)
{
	struct loop_config config = { .fd = fd };

	return loop_configure(lo, writable, excl, bdev, &config);
}

static int loop_ioctl_configure(struct loop_device *lo,
				struct block_device *bdev, bool writable,
				bool excl, const void __user *argp)
{
	struct loop_config config;
	int err = -EFAULT;

	/* A partial copy may hold key bytes: wiped on every path. */
	if (!copy_from_user(&config, argp, sizeof(config)))
		err = loop_configure(lo, writable, excl, bdev, &config);
	memzero_explicit(&config, sizeof(config));
	return err;
}

static int loop_ioctl_set_status64(struct loop_device *lo,
				   const void __user *argp)
{
	struct loop_info64 info64;
	int err = -EFAULT;

	if (!copy_from_user(&info64, argp, sizeof(info64)))
		err = loop_set_status(lo, &info64);
	memzero_explicit(&info64, sizeof(info64));
	return err;
}

static int loop_ioctl_set_status(struct loop_device *lo,
				 const void __user *argp)
{
	struct loop_info64 info64;
	struct loop_info info;
	int err = -EFAULT;

	if (!copy_from_user(&info, argp, sizeof(info))) {
		loop_info_from_old(&info64, &info);
		err = loop_set_status(lo, &info64);
		memzero_explicit(&info64, sizeof(info64));
	}
	memzero_explicit(&info, sizeof(info));
	return err;
}

static int loop_ioctl_get_status64(struct loop_device *lo, void __user *argp)
{
	struct loop_info64 info64;
	int err;

	if (!argp)	/* as the stock driver, before anything else */
		return -EINVAL;
	err = loop_get_status(lo, &info64);
	if (!err && copy_to_user(argp, &info64, sizeof(info64)))
		err = -EFAULT;
	memzero_explicit(&info64, sizeof(info64));
	return err;
}

static int loop_ioctl_get_status(struct loop_device *lo, void __user *argp)
{
	struct loop_info64 info64;
	struct loop_info info;
	int err;

	if (!argp)
		return -EINVAL;
	err = loop_get_status(lo, &info64);
	if (!err)
		err = loop_info_to_old(&info, &info64);
	if (!err && copy_to_user(argp, &info, sizeof(info)))
		err = -EFAULT;
	memzero_explicit(&info64, sizeof(info64));
	memzero_explicit(&info, sizeof(info));
	return err;
}

/* The commands that change a bound device, its permission checked. */
static int loop_ioctl_change(struct loop_device *lo, struct block_device *bdev,
			     bool excl, unsigned int cmd, unsigned long arg)
{
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case LOOP_SET_STATUS64:
		return loop_ioctl_set_status64(lo, argp);
	case LOOP_SET_STATUS:
		return loop_ioctl_set_status(lo, argp);
	case LOOP_SET_BLOCK_SIZE:
		return loop_set_block_size(lo, bdev, excl, arg);
	case LOOP_SET_DIRECT_IO:
		return loop_set_direct_io(lo, arg);
	case LOOP_SET_CAPACITY:
	case LOOP_RECOMPUTE_DEV_SIZE:
		return loop_set_capacity(lo);
	case LOOP_MULTI_KEY_SETUP:
		return loop_multi_key_setup(lo, argp, LOOP_MULTI_KEY_SLOTS);
	case LOOP_MULTI_KEY_SETUP_V3:
		return loop_multi_key_setup(lo, argp, LOOP_MULTI_KEY_SLOTS_V3);
	default:
		return -ENOTTY;
	}
}

/**
 * loop_ioctl() - the loop ioctls of a /dev/loopN
 * @lo:       the device
 * @bdev:     the block device the ioctl came through
 * @writable: the device was opened for writing
 * @excl:     ... and opened exclusively (O_EXCL), so the caller holds the
 *            claim
 * @cmd:      LOOP_* command (linux/loop.h, and loop-AES's multi-key setup,
 *            doc/format.md section 5)
 * @arg:      user pointer or value, per command
 *
 * Binding, unbinding and reading the status need no more than the open;
 * every change of a bound device needs it open for writing, or
 * CAP_SYS_ADMIN, as in the stock driver.
 *
 * Return: 0 or a positive value on success, a negative errno otherwise;
 * -ENOTTY for a command this driver does not know.
 */
int loop_ioctl(struct loop_device *lo, struct block_device *bdev,
	       bool writable, bool excl, unsigned int cmd, unsigned long arg)
{
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case LOOP_SET_FD:
		return loop_ioctl_set_fd(lo, bdev, writable, excl, arg);
	case LOOP_CONFIGURE:
		return loop_ioctl_configure(lo, bdev, writable, excl, argp);
	case LOOP_CLR_FD:
		return loop_clr_fd(lo, excl);
	case LOOP_CHANGE_FD:
		return loop_change_fd(lo, bdev, arg);
	case LOOP_GET_STATUS64:
		return loop_ioctl_get_status64(lo, argp);
	case LOOP_GET_STATUS:
		return loop_ioctl_get_status(lo, argp);
	case LOOP_SET_STATUS64:
	case LOOP_SET_STATUS:
	case LOOP_SET_BLOCK_SIZE:
	case LOOP_SET_DIRECT_IO:
	case LOOP_SET_CAPACITY:
	case LOOP_RECOMPUTE_DEV_SIZE:
	case LOOP_MULTI_KEY_SETUP:
	case LOOP_MULTI_KEY_SETUP_V3:
		if (!writable && !capable(CAP_SYS_ADMIN))
			return -EPERM;
		return loop_ioctl_change(lo, bdev, excl, cmd, arg);
	default:
		return -ENOTTY;
	}
}

#ifdef CONFIG_COMPAT
/* struct loop_info as a 32-bit process lays it out. */
struct compat_loop_info {
	compat_int_t	lo_number;
	compat_dev_t	lo_device;
	compat_ulong_t	lo_inode;
	compat_dev_t	lo_rdevice;
	compat_int_t	lo_offset;
	compat_int_t	lo_encrypt_type;
	compat_int_t	lo_encrypt_key_size;
	compat_int_t	lo_flags;
	char		lo_name[LO_NAME_SIZE];
	unsigned char	lo_encrypt_key[LO_KEY_SIZE];
	compat_ulong_t	lo_init[2];
	char		reserved[4];
};

/* As loop_info_from_old(), from the 32-bit layout. */
static void loop_info_from_compat(struct loop_info64 *info64,
				  const struct compat_loop_info *info)
{
	memset(info64, 0, sizeof(*info64));
	loop_info_copy_fields(info64, info);
	loop_info64_set_names(info64, info->lo_name);
	memcpy(info64->lo_encrypt_key, info->lo_encrypt_key, LO_KEY_SIZE);
}

/*
 * As loop_info_to_old(), into the 32-bit layout, whose lo_init is narrower
 * too: -EOVERFLOW for that as well.
 */
static int loop_info_to_compat(struct compat_loop_info *info,
			       const struct loop_info64 *info64)
{
	memset(info, 0, sizeof(*info));
	loop_info_copy_fields(info, info64);
	memcpy(info->lo_name, info64->lo_file_name, LO_NAME_SIZE);
	if (info->lo_device != info64->lo_device ||
	    info->lo_rdevice != info64->lo_rdevice ||
	    info->lo_inode != info64->lo_inode ||
	    info->lo_offset != (s64)info64->lo_offset ||
	    info->lo_init[0] != info64->lo_init[0] ||
	    info->lo_init[1] != info64->lo_init[1])
		return -EOVERFLOW;
	return 0;
}

static int loop_compat_set_status(struct loop_device *lo, compat_uptr_t arg)
{
	struct compat_loop_info cinfo;
	struct loop_info64 info64;
	int err = -EFAULT;

	if (!copy_from_user(&cinfo, compat_ptr(arg), sizeof(cinfo))) {
		loop_info_from_compat(&info64, &cinfo);
		err = loop_set_status(lo, &info64);
		memzero_explicit(&info64, sizeof(info64));
	}
	memzero_explicit(&cinfo, sizeof(cinfo));
	return err;
}

static int loop_compat_get_status(struct loop_device *lo, compat_uptr_t arg)
{
	struct compat_loop_info cinfo;
	struct loop_info64 info64;
	int err;

	if (!arg)
		return -EINVAL;
	err = loop_get_status(lo, &info64);
	if (!err)
		err = loop_info_to_compat(&cinfo, &info64);
	if (!err && copy_to_user(compat_ptr(arg), &cinfo, sizeof(cinfo)))
		err = -EFAULT;
	memzero_explicit(&info64, sizeof(info64));
	memzero_explicit(&cinfo, sizeof(cinfo));
	return err;
}

/**
 * loop_compat_ioctl() - the loop ioctls of a 32-bit process
 * @lo:       the device
 * @bdev:     the block device the ioctl came through
 * @writable: the device was opened for writing
 * @excl:     ... and opened exclusively
 * @cmd:      LOOP_* command
 * @arg:      32-bit user pointer or value, per command
 *
 * Only struct loop_info differs in layout; loop_info64, loop_config and
 * the multi-key payloads are the same for 32 and 64-bit callers.
 *
 * Return: as loop_ioctl(); -ENOIOCTLCMD for an unknown command.
 */
int loop_compat_ioctl(struct loop_device *lo, struct block_device *bdev,
		      bool writable, bool excl, unsigned int cmd,
		      unsigned long arg)
{
	switch (cmd) {
	case LOOP_SET_STATUS:
		if (!writable && !capable(CAP_SYS_ADMIN))
			return -EPERM;
		return loop_compat_set_status(lo, arg);
	case LOOP_GET_STATUS:
		return loop_compat_get_status(lo, arg);
	case LOOP_SET_STATUS64:
	case LOOP_GET_STATUS64:
	case LOOP_CONFIGURE:
	case LOOP_MULTI_KEY_SETUP:
	case LOOP_MULTI_KEY_SETUP_V3:
		arg = (unsigned long)compat_ptr(arg);
		fallthrough;
	case LOOP_SET_FD:
	case LOOP_CHANGE_FD:
	case LOOP_CLR_FD:
	case LOOP_SET_CAPACITY:
	case LOOP_RECOMPUTE_DEV_SIZE:
	case LOOP_SET_DIRECT_IO:
	case LOOP_SET_BLOCK_SIZE:
		return loop_ioctl(lo, bdev, writable, excl, cmd, arg);
	default:
		return -ENOIOCTLCMD;
	}
}
#endif
