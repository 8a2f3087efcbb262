// SPDX-License-Identifier: GPL-2.0
/*
 * loop_sysfs.c - aesloop: /sys/block/loopN/loop/, present while bound.
 *
 * util-linux reads these before it falls back to LOOP_GET_STATUS64, and
 * takes the directory's presence to mean "in use".
 */
#include <linux/dcache.h>
#include <linux/device.h>
#include <linux/spinlock.h>
#include <linux/sysfs.h>

#include "loop.h"

static struct loop_device *dev_to_loop(struct device *dev)
{
	return dev_to_disk(dev)->private_data;
}

/*
 * The attributes are read under lo_lock alone, never lo_mutex: an ioctl
 * may hold that while it waits for I/O, and listing loops (losetup -l,
 * lsblk, udev) must not wait with it.  Their changes take lo_lock too, so
 * a read sees a whole value (a 64-bit offset on a 32-bit CPU, the flags
 * before or after a LOOP_SET_STATUS64, which sets them at once).
 */
static ssize_t backing_file_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct loop_device *lo = dev_to_loop(dev);
	ssize_t ret = 0;
	char *p;

	/*
	 * The path is made under lo_lock, as the stock driver does: a
	 * reference taken here could outlive a LOOP_CHANGE_FD and make the
	 * old file's last close this reader's.
	 */
	spin_lock(&lo->lo_lock);
	if (lo->lo_backing_file) {
		p = file_path(lo->lo_backing_file, buf, PAGE_SIZE - 1);
		if (IS_ERR(p)) {
			ret = PTR_ERR(p);
		} else {
			ret = strlen(p);
			memmove(buf, p, ret);
			buf[ret++] = '\n';
			buf[ret] = 0;
		}
	}
	spin_unlock(&lo->lo_lock);
	return ret;
}

static ssize_t offset_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct loop_device *lo = dev_to_loop(dev);
	loff_t offset;

	spin_lock(&lo->lo_lock);
	offset = lo->lo_offset;
	spin_unlock(&lo->lo_lock);
	return sysfs_emit(buf, "%llu\n", (unsigned long long)offset);
}

static ssize_t sizelimit_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct loop_device *lo = dev_to_loop(dev);
	loff_t sizelimit;

	spin_lock(&lo->lo_lock);
	sizelimit = lo->lo_sizelimit;
	spin_unlock(&lo->lo_lock);
	return sysfs_emit(buf, "%llu\n", (unsigned long long)sizelimit);
}

static ssize_t lo_flag_show(struct device *dev, char *buf, u32 flag)
{
	struct loop_device *lo = dev_to_loop(dev);
	u32 flags;

	spin_lock(&lo->lo_lock);
	flags = lo->lo_flags;
	spin_unlock(&lo->lo_lock);
	return sysfs_emit(buf, "%d\n", !!(flags & flag));
}

static ssize_t autoclear_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return lo_flag_show(dev, buf, LO_FLAGS_AUTOCLEAR);
}

static ssize_t partscan_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	return lo_flag_show(dev, buf, LO_FLAGS_PARTSCAN);
}

static ssize_t dio_show(struct device *dev, struct device_attribute *attr,
			char *buf)
{
	return lo_flag_show(dev, buf, LO_FLAGS_DIRECT_IO);
}

static DEVICE_ATTR_RO(backing_file);
static DEVICE_ATTR_RO(offset);
static DEVICE_ATTR_RO(sizelimit);
static DEVICE_ATTR_RO(autoclear);
static DEVICE_ATTR_RO(partscan);
static DEVICE_ATTR_RO(dio);

static struct attribute *loop_attrs[] = {
	&dev_attr_backing_file.attr,
	&dev_attr_offset.attr,
	&dev_attr_sizelimit.attr,
	&dev_attr_autoclear.attr,
	&dev_attr_partscan.attr,
	&dev_attr_dio.attr,
	NULL,
};

const struct attribute_group loop_attribute_group = {
	.name	= "loop",
	.attrs	= loop_attrs,
};
