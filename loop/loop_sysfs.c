// SPDX-License-Identifier: GPL-2.0
/*
 * loop_sysfs.c - aesloop: /sys/block/loopN/loop/, present while bound.
 *
 * util-linux reads these before it falls back to LOOP_GET_STATUS64, and
 * takes the directory's presence to mean "in use".
 */
#include <linux/dcache.h>
#include <linux/device.h>
#include <linux/sysfs.h>

#include "loop.h"

static struct loop_device *dev_to_loop(struct device *dev)
{
	return dev_to_disk(dev)->private_data;
}

static ssize_t backing_file_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct loop_device *lo = dev_to_loop(dev);
	ssize_t ret = 0;
	char *p;

	mutex_lock(&lo->lo_mutex);
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
	mutex_unlock(&lo->lo_mutex);
	return ret;
}

/*
 * The attributes below change under lo_mutex, the flags' AUTOCLEAR even
 * beside requests: read them under it, as LOOP_GET_STATUS64 does.
 */
static ssize_t offset_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct loop_device *lo = dev_to_loop(dev);
	loff_t offset;

	mutex_lock(&lo->lo_mutex);
	offset = lo->lo_offset;
	mutex_unlock(&lo->lo_mutex);
	return sysfs_emit(buf, "%llu\n", (unsigned long long)offset);
}

static ssize_t sizelimit_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct loop_device *lo = dev_to_loop(dev);
	loff_t sizelimit;

	mutex_lock(&lo->lo_mutex);
	sizelimit = lo->lo_sizelimit;
	mutex_unlock(&lo->lo_mutex);
	return sysfs_emit(buf, "%llu\n", (unsigned long long)sizelimit);
}

static ssize_t lo_flag_show(struct device *dev, char *buf, u32 flag)
{
	struct loop_device *lo = dev_to_loop(dev);
	u32 flags;

	mutex_lock(&lo->lo_mutex);
	flags = lo->lo_flags;
	mutex_unlock(&lo->lo_mutex);
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
