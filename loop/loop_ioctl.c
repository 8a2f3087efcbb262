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
 * have the same fields under the same names, some narrower than
 * loop_info64's: the conversions below serve both, with loop_info64 as the
 * pivot.
 */

/* The numeric fields all three have, from @src to @dst, either way. */
#define loop_info_copy_fields(dst, src)					\
do {									\
	typeof(dst) d_ = (dst);						\
	typeof(src) s_ = (src);						\
									\
	d_->lo_number = s_->lo_number;					\
	d_->lo_device = s_->lo_device;					\
	d_->lo_inode = s_->lo_inode;					\
	d_->lo_rdevice = s_->lo_rdevice;				\
	d_->lo_offset = s_->lo_offset;					\
	d_->lo_encrypt_type = s_->lo_encrypt_type;			\
	d_->lo_encrypt_key_size = s_->lo_encrypt_key_size;		\
	d_->lo_flags = s_->lo_flags;					\
	d_->lo_init[0] = s_->lo_init[0];				\
	d_->lo_init[1] = s_->lo_init[1];				\
} while (0)

/*
 * Into loop_info64, for SET_STATUS: lo_name is the file name, and the
 * cipher's name as well when there is a key; the key comes in.
 */
#define loop_info_to_info64(info64, info)				\
do {									\
	struct loop_info64 *to_ = (info64);				\
	typeof(info) from_ = (info);					\
									\
	memset(to_, 0, sizeof(*to_));					\
	loop_info_copy_fields(to_, from_);				\
	memcpy(to_->lo_file_name, from_->lo_name, LO_NAME_SIZE);	\
	if (from_->lo_encrypt_type != LO_CRYPT_NONE)			\
		memcpy(to_->lo_crypt_name, from_->lo_name, LO_NAME_SIZE); \
	memcpy(to_->lo_encrypt_key, from_->lo_encrypt_key, LO_KEY_SIZE); \
} while (0)

/*
 * Out of loop_info64, for GET_STATUS: lo_name is the file name (a device's
 * encrypt type is none or AES, never one with a cipher name to show
 * instead); no key byte, not even for root.  Evaluates to -EOVERFLOW
 * rather than hand out a truncated value, otherwise to 0 (lo_init can only
 * be truncated in the 32-bit layout on a 64-bit kernel).
 */
#define loop_info_from_info64(info, info64)				\
({									\
	typeof(info) to_ = (info);					\
	const struct loop_info64 *from_ = (info64);			\
									\
	memset(to_, 0, sizeof(*to_));					\
	loop_info_copy_fields(to_, from_);				\
	memcpy(to_->lo_name, from_->lo_file_name, LO_NAME_SIZE);	\
	(to_->lo_device != from_->lo_device ||				\
	 to_->lo_rdevice != from_->lo_rdevice ||			\
	 to_->lo_inode != from_->lo_inode ||				\
	 to_->lo_offset != (s64)from_->lo_offset ||			\
	 to_->lo_init[0] != from_->lo_init[0] ||			\
	 to_->lo_init[1] != from_->lo_init[1]) ? -EOVERFLOW : 0;	\
})

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
		loop_info_to_info64(&info64, &info);
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
		err = loop_info_from_info64(&info, &info64);
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
 *            spec section 5)
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

static int loop_compat_set_status(struct loop_device *lo, compat_uptr_t arg)
{
	struct compat_loop_info cinfo;
	struct loop_info64 info64;
	int err = -EFAULT;

	if (!copy_from_user(&cinfo, compat_ptr(arg), sizeof(cinfo))) {
		loop_info_to_info64(&info64, &cinfo);
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
		err = loop_info_from_info64(&cinfo, &info64);
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
