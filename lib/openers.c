// SPDX-License-Identifier: GPL-2.0
/*
 * openers.c - who holds a loop device open, for losetup -d's notice when
 * a detach waits for the last close.
 */
#define _GNU_SOURCE		/* program_invocation_short_name */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/loop.h>

#include "aes_types.h"	/* memzero_explicit() */
#include "libaesloop.h"

/*
 * A detach that waits for other openers.  LOOP_CLR_FD on a device that is
 * open elsewhere (and not claimed by a mount, swap or device mapper, which
 * gives EBUSY) returns 0, as with the stock driver; aesloop then lets no
 * new opener in (open gives ENXIO), and the last close unbinds the device
 * and wipes its key.  The binding stays until then, seen in sysfs as a
 * size that is not 0 (aesloop takes the "loop" group away at once, so
 * that util-linux and systemd count the device as detached; the stock
 * driver keeps it).  losetup -d says so, and who holds the device.
 */

/* Whole disk and partitions: DISK_MAX_PARTS. */
#define MAX_DEVNOS	256

/**
 * aesloop_loop_keyed() - has a loop device a key?
 * @fd: the loop device, open; or negative
 *
 * Asked before a detach, for aesloop_detach_notice(): a detach deferred to
 * the last close keeps the key loaded until then.  The key bytes that
 * LOOP_GET_STATUS64 hands back (zeros from aesloop) are wiped.  errno is
 * left as it was.
 *
 * Return: 1 if lo_encrypt_type is not 0 (LO_CRYPT_NONE); 0 if it is, or if
 * the status cannot be read (an unbound device); -1 if @fd is negative
 * (not known).
 */
int aesloop_loop_keyed(int fd)
{
	struct loop_info64 li;
	int saved = errno, keyed;

	if (fd < 0)
		return -1;
	memset(&li, 0, sizeof(li));
	keyed = ioctl(fd, LOOP_GET_STATUS64, &li) == 0 && li.lo_encrypt_type;
	memzero_explicit(&li, sizeof(li));
	errno = saved;
	return keyed;
}

/* The "MAJ:MIN" in @dirfd/@name/dev (sysfs); 0, or -1. */
static int sysfs_devno(int dirfd, const char *name, dev_t *devno)
{
	char path[NAME_MAX + 8], buf[32];
	unsigned int maj, min;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/dev", name);
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%u:%u", &maj, &min) != 2)
		return -1;
	*devno = makedev(maj, min);
	return 0;
}

/* The device numbers of @sysdir's disk and its partitions; how many. */
static size_t disk_devnos(const char *sysdir, dev_t *devs, size_t max)
{
	struct dirent *de;
	size_t n = 0;
	int dfd;
	DIR *d;

	dfd = open(sysdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	if (sysfs_devno(dfd, ".", &devs[n]) == 0)
		n++;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return n;
	}
	/* A partition is a subdirectory with a "partition" attribute. */
	while (n < max && (de = readdir(d)) != NULL) {
		char path[NAME_MAX + 16];

		if (de->d_name[0] == '.' ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		snprintf(path, sizeof(path), "%s/partition", de->d_name);
		if (faccessat(dfd, path, F_OK, 0) == 0 &&
		    sysfs_devno(dfd, de->d_name, &devs[n]) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/*
 * Has process @pid (an entry of the /proc at @procfd) one of @devs open?
 * 1 yes, 0 no (or it is gone), -1 its descriptors cannot be read.
 */
static int holds_open(int procfd, const char *pid, const dev_t *devs,
		      size_t ndevs)
{
	char path[NAME_MAX + 8], target[PATH_MAX];
	struct dirent *de;
	int fdfd, found = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/fd", pid);
	fdfd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fdfd < 0)
		return errno == EACCES || errno == EPERM ? -1 : 0;
	d = fdopendir(fdfd);
	if (!d) {
		close(fdfd);
		return 0;
	}
	while (!found && (de = readdir(d)) != NULL) {
		struct stat st;
		ssize_t n;
		size_t i;

		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(fdfd, de->d_name, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		/*
		 * Only nodes under a dev directory are stat()ed: following a
		 * link to a file on a network file system can hang on a dead
		 * server.
		 */
		if (!strstr(target, "/dev/") ||
		    fstatat(fdfd, de->d_name, &st, 0) || !S_ISBLK(st.st_mode))
			continue;
		for (i = 0; i < ndevs; i++)
			if (st.st_rdev == devs[i])
				found = 1;
	}
	closedir(d);
	return found;
}

/* Add "comm[pid]" of the process found (op->nproc counts it already). */
static void list_opener(struct aesloop_openers *op, int procfd, const char *pid)
{
	char path[NAME_MAX + 8], comm[32] = "?";
	size_t used = strlen(op->list), i;
	ssize_t n;
	int fd;

	if (op->nproc > AESLOOP_OPENERS_LISTED) {
		if (op->nproc == AESLOOP_OPENERS_LISTED + 1)
			snprintf(op->list + used, sizeof(op->list) - used, ", ...");
		return;
	}
	snprintf(path, sizeof(path), "%s/comm", pid);
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (n > 0) {
			comm[n] = '\0';
			comm[strcspn(comm, "\n")] = '\0';
		}
	}
	/* A process names itself: no terminal control bytes from it. */
	for (i = 0; comm[i]; i++)
		if (comm[i] < 0x20 || comm[i] > 0x7e)
			comm[i] = '?';
	snprintf(op->list + used, sizeof(op->list) - used, "%s%.16s[%.12s]",
		 used ? ", " : "", comm, pid);
}

/**
 * aesloop_find_openers() - which processes hold a block device open
 * @proc:   the proc file system, "/proc" (tests give a tree of their own)
 * @sysdir: the device's sysfs directory, e.g. "/sys/dev/block/7:0": its
 *          "dev" and those of its partitions (subdirectories with a
 *          "partition" attribute) are the device numbers looked for
 * @op:     filled in
 *
 * Every /proc/PID/fd/N whose link names a node under a dev directory and
 * is a block device of those numbers counts; what the kernel holds (no
 * descriptor) and processes of other PID namespaces are not seen.  Like
 * fuser, this is a snapshot: openers may come (not on an aesloop device in
 * detach) and go meanwhile.
 *
 * Return: the number of processes found (@op->nproc), -ENODEV if @sysdir
 * has no "dev", or -errno if @proc cannot be read.
 */
int aesloop_find_openers(const char *proc, const char *sysdir,
			 struct aesloop_openers *op)
{
	dev_t devs[MAX_DEVNOS];
	struct dirent *de;
	size_t ndevs;
	int procfd;
	DIR *d;

	memset(op, 0, sizeof(*op));
	ndevs = disk_devnos(sysdir, devs, MAX_DEVNOS);
	if (!ndevs)
		return -ENODEV;
	procfd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return -errno;
	d = fdopendir(procfd);
	if (!d) {
		close(procfd);
		return -ENOMEM;
	}
	while ((de = readdir(d)) != NULL) {
		int rc;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    de->d_name[strspn(de->d_name, "0123456789")])
			continue;
		rc = holds_open(procfd, de->d_name, devs, ndevs);
		if (rc < 0) {
			op->unreadable++;
		} else if (rc) {
			op->nproc++;
			list_opener(op, procfd, de->d_name);
		}
	}
	closedir(d);
	return (int)op->nproc;
}

/**
 * aesloop_detach_message() - the notice of a detach deferred to the last close
 * @buf:     the message, without the program name and newline
 * @len:     its size
 * @dev:     the loop device, e.g. "/dev/loop0"
 * @op:      its openers (aesloop_find_openers())
 * @keyed:   1: it has a key (aesloop_loop_keyed()), 0: none, -1: not known
 * @pending: 1 if the detach was asked for before (the device let this
 *           program not open it), 0 if this program's LOOP_CLR_FD did it
 *
 * "DEV: still open by 2 processes (udevd[312], cat[4021]); it is detached
 * at the last close, and its key stays loaded until then".  "at least N"
 * when some processes could not be inspected; "still open elsewhere (no
 * process visible here holds it)" when none was found; "detach already
 * asked for: " before it when @pending.
 *
 * Return: the length snprintf() gives.
 */
int aesloop_detach_message(char *buf, size_t len, const char *dev,
			   const struct aesloop_openers *op, int keyed,
			   int pending)
{
	char who[sizeof(op->list) + 64];

	if (op->nproc)
		snprintf(who, sizeof(who), "still open by %s%u process%s (%s)",
			 op->unreadable ? "at least " : "", op->nproc,
			 op->nproc == 1 ? "" : "es", op->list);
	else
		snprintf(who, sizeof(who),
			 "still open elsewhere (no process visible here holds it)");
	return snprintf(buf, len, "%s: %s%s; it is detached at the last close%s",
			dev, pending ? "detach already asked for: " : "", who,
			keyed > 0 ? ", and its key stays loaded until then" :
			keyed < 0 ? ", and its key (if it has one) stays loaded until then" :
			"");
}

/*
 * Is the device of @sysdir still bound?  It has a "loop" group (the stock
 * driver until the unbind), or a size (aesloop keeps the capacity until the
 * unbind, which sets it to 0).  A bound empty file is not seen.
 */
static int loop_bound(const char *sysdir)
{
	char path[64], buf[32];
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/loop", sysdir);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 1;
	snprintf(path, sizeof(path), "%s/size", sysdir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10) != 0;
}

/**
 * aesloop_detach_notice() - losetup -d: say so if the device stays bound
 * @dev:     the loop device, e.g. "/dev/loop0"
 * @keyed:   as aesloop_detach_message() takes it
 * @pending: 0 after this program's LOOP_CLR_FD succeeded and it closed its
 *           own descriptor of @dev; 1 when opening @dev failed with ENXIO,
 *           which a bound aesloop device gives once a detach was asked for
 *
 * If @dev is still bound (sysfs: its "loop" group, or a size that is not
 * 0), its openers are looked for and one line
 * goes to stderr, "PROG: " and aesloop_detach_message(); nothing is said
 * when the last opener closed it meanwhile.  The exit status of a detach
 * is not changed by it: LOOP_CLR_FD succeeded, and scripts and systemd
 * rely on that.  errno is left as it was.
 *
 * Return: 1 if @dev was bound when looked at (with @pending: the detach is
 * under way, or was completed meanwhile), else 0.
 */
int aesloop_detach_notice(const char *dev, int keyed, int pending)
{
	struct aesloop_openers op;
	char sysdir[48], msg[PATH_MAX + sizeof(op.list) + 256];
	int saved = errno;
	struct stat st;

	if (stat(dev, &st) || !S_ISBLK(st.st_mode))
		goto out_unbound;
	snprintf(sysdir, sizeof(sysdir), "/sys/dev/block/%u:%u",
		 major(st.st_rdev), minor(st.st_rdev));
	if (!loop_bound(sysdir))
		goto out_unbound;
	aesloop_find_openers("/proc", sysdir, &op);
	/* Its last opener may have closed it while we looked. */
	if (loop_bound(sysdir)) {
		aesloop_detach_message(msg, sizeof(msg), dev, &op, keyed, pending);
		fprintf(stderr, "%s: %s\n", program_invocation_short_name, msg);
	}
	errno = saved;
	return 1;
out_unbound:
	errno = saved;
	return 0;
}
