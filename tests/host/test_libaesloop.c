// SPDX-License-Identifier: GPL-2.0
// covers: losetup, mount, fstab
/*
 * test_libaesloop.c - lib/options.c, fstab.c, status.c and openers.c: the
 * loop-AES parts of libaesloop that the patched losetup, mount and swapon call:
 *
 *  status-*   the `losetup -a` line of loop-AES (offset=@N, encryption=AES128,
 *             multi-key-v2/v3, loinit=, read-only) from a struct loop_info64
 *  opts-*     mount option strings: the loop-AES options taken, others
 *             ignored, options already set kept
 *  argv-*     the look-ahead that decides what losetup's -P means
 *  fstab-*    losetup -F: the line with loop=DEV, none, two
 *  offset-*   "@N" and "N"
 *  openers-*  the /proc scan behind losetup -d's notice of a detach that
 *             waits for other openers, on a fake /proc and sysfs: a device
 *             open by several processes, through a partition, twice in one
 *             process, a comm with control bytes, other devices and nodes
 *             outside a dev directory not counted, the list cut after
 *             AESLOOP_OPENERS_LISTED, descriptors another user may not
 *             read counted as unreadable
 *  notice-*   the notice's wording: names, "at least", none found, the
 *             key, a detach already asked for
 *  losetup-*  lib/losetup.c: which -P is meant, the options taken (and
 *             not), -p's number, what does not go together
 *  mkfs-*     a file system type that could name another program refused
 *  multikey-* the multi-key step after the bind: nothing for single-key; a
 *             refused ioctl (on /dev/null) said on stderr with the mode and
 *             the error, the detach tried and its failure said too
 *
 * Prints TAP (tests/host/testutil.h); exits 1 if anything failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <linux/loop.h>

#include "aesloop-losetup.h"
#include "libaesloop.h"
#include "testutil.h"

static void check_line(const char *name, const struct loop_info64 *li,
		       const char *file, const char *want)
{
	char buf[512];

	aesloop_status_line(buf, sizeof(buf), "/dev/loop3", file, li);
	t_result(!strcmp(buf, want), name, "got '%s', expected '%s'", buf, want);
}

/*
 * loop/aesloop_uapi.h is the one copy of the loop-AES ABI that driver,
 * losetup and tests share, so none of them would notice a slip in it:
 * its values against doc/format.md section 5, written out here on purpose.
 */
static void test_abi(void)
{
	t_result(LO_CRYPT_AES == 16, "abi-crypt-aes", "LO_CRYPT_AES is %d", LO_CRYPT_AES);
	t_result(LOOP_MULTI_KEY_SETUP == 0x4C4D && LOOP_MULTI_KEY_SETUP_V3 == 0x4C4E &&
		 LOOP_RECOMPUTE_DEV_SIZE == 0x4C52, "abi-ioctl-numbers",
		 "0x%X 0x%X 0x%X", LOOP_MULTI_KEY_SETUP, LOOP_MULTI_KEY_SETUP_V3,
		 LOOP_RECOMPUTE_DEV_SIZE);
	t_result(LOOP_MULTI_KEY_SLOTS == 64 && LOOP_MULTI_KEY_SLOTS_V3 == 65 &&
		 LOOP_MULTI_KEY_SLOT_SIZE == 32 &&
		 sizeof(((struct keysetup *)0)->slots) == 65 * 32, "abi-key-slots",
		 "%d and %d slots of %d bytes", LOOP_MULTI_KEY_SLOTS,
		 LOOP_MULTI_KEY_SLOTS_V3, LOOP_MULTI_KEY_SLOT_SIZE);
	t_result(LO_FLAGS_MULTI_KEY_EXPORTED == 0x100000 &&
		 LO_FLAGS_MULTI_KEY_V3_EXPORTED == 0x080000 &&
		 LO_FLAGS_READ_ONLY_EXPORTED == 0x200000, "abi-exported-flags",
		 "0x%X 0x%X 0x%X", LO_FLAGS_MULTI_KEY_EXPORTED,
		 LO_FLAGS_MULTI_KEY_V3_EXPORTED, LO_FLAGS_READ_ONLY_EXPORTED);
}

static void test_status(void)
{
	struct loop_info64 li;

	memset(&li, 0, sizeof(li));
	li.lo_device = 0x801;
	li.lo_inode = 12345;
	strcpy((char *)li.lo_file_name, "/tmp/img");
	check_line("status-plain", &li, NULL, "/dev/loop3: [0801]:12345 (/tmp/img)");
	check_line("status-full-file-name", &li, "/a/much/longer/name",
		   "/dev/loop3: [0801]:12345 (/a/much/longer/name)");

	li.lo_offset = 4096;
	li.lo_encrypt_type = LO_CRYPT_AES;
	li.lo_encrypt_key_size = 16;
	check_line("status-offset-aes128", &li, NULL,
		   "/dev/loop3: [0801]:12345 (/tmp/img) offset=4096 encryption=AES128");

	li.lo_offset = (__u64)-8192;
	li.lo_sizelimit = 1048576;
	li.lo_encrypt_key_size = 32;
	li.lo_flags = LO_FLAGS_MULTI_KEY_EXPORTED | LO_FLAGS_MULTI_KEY_V3_EXPORTED;
	check_line("status-at-offset-v3", &li, NULL,
		   "/dev/loop3: [0801]:12345 (/tmp/img) offset=@8192 sizelimit=1048576 encryption=AES256 multi-key-v3");

	li.lo_offset = 0;
	li.lo_sizelimit = 0;
	li.lo_encrypt_key_size = 24;
	li.lo_flags = LO_FLAGS_MULTI_KEY_EXPORTED | LO_FLAGS_READ_ONLY_EXPORTED;
	li.lo_init[0] = 7;
	check_line("status-v2-loinit-ro", &li, NULL,
		   "/dev/loop3: [0801]:12345 (/tmp/img) encryption=AES192 multi-key-v2 loinit=7 read-only");

	li.lo_flags = LO_FLAGS_READ_ONLY;
	li.lo_init[0] = 0;
	li.lo_encrypt_type = LO_CRYPT_CRYPTOAPI;
	strcpy((char *)li.lo_crypt_name, "twofish-cbc");
	check_line("status-cryptoapi-mainline-ro", &li, NULL,
		   "/dev/loop3: [0801]:12345 (/tmp/img) encryption=CryptoAPI/twofish-cbc read-only");

	li.lo_flags = 0;
	li.lo_encrypt_type = 11;
	li.lo_encrypt_key_size = 16;
	check_line("status-rc6-dash", &li, NULL,
		   "/dev/loop3: [0801]:12345 (/tmp/img) encryption=rc6-128");

	memset(li.lo_file_name, 'x', sizeof(li.lo_file_name));
	li.lo_encrypt_type = 0;
	{
		char want[128];

		snprintf(want, sizeof(want), "/dev/loop3: [0801]:12345 (%.63s)",
			 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		check_line("status-unterminated-name", &li, NULL, want);
	}
}

static void test_opts(void)
{
	struct aesloop_opts o;
	int n;

	aesloop_opts_init(&o);
	o.encryption = "AES256";	/* the command line wins */
	n = aesloop_opts_merge(&o, "defaults,noauto,loop=/dev/loop3,encryption=AES128,"
			       "gpgkey=/etc/k.gpg,offset=@8192,phash=random/1777,user,"
			       "pseed=s,itercountk=10,loinit=3,gpghome=/root/.gnupg,"
			       "cleartextkey=/k.txt,sizelimit=4096,encryptionx=1,=odd,");
	t_result(n == 11 && !strcmp(o.loop, "/dev/loop3") &&
		 !strcmp(o.encryption, "AES256") && !strcmp(o.gpgkey, "/etc/k.gpg") &&
		 !strcmp(o.offset, "@8192") && !strcmp(o.phash, "random/1777") &&
		 !strcmp(o.pseed, "s") && !strcmp(o.itercountk, "10") &&
		 !strcmp(o.loinit, "3") && !strcmp(o.gpghome, "/root/.gnupg") &&
		 !strcmp(o.cleartextkey, "/k.txt") && !strcmp(o.sizelimit, "4096") &&
		 o.passfd == -1, "opts-merge",
		 "%d options; loop %s encryption %s gpgkey %s offset %s phash %s",
		 n, o.loop, o.encryption, o.gpgkey, o.offset, o.phash);
	aesloop_opts_free(&o);
	t_result(!o.loop && !o.nstorage, "opts-free", "options left after free");

	/* libmount's quoting: a value in double quotes may hold commas. */
	n = aesloop_opts_merge(&o, "ro,gpgkey=\"/etc/a,b.gpg\",loop=/dev/loop3");
	t_result(n == 2 && o.gpgkey && !strcmp(o.gpgkey, "/etc/a,b.gpg") &&
		 o.loop && !strcmp(o.loop, "/dev/loop3"), "opts-quoted-comma",
		 "%d options; gpgkey %s", n, o.gpgkey ? o.gpgkey : "-");
	aesloop_opts_free(&o);

	n = aesloop_opts_merge(&o, "");
	t_result(n == 0, "opts-empty", "%d options from ''", n);
	n = aesloop_opts_merge(&o, "ro,loop");
	t_result(n == 0 && !o.loop, "opts-loop-without-value", "%d options", n);
	aesloop_opts_free(&o);

	t_result(aesloop_opts_is_loop_aes("encryption=AES128") &&
		 aesloop_opts_is_loop_aes("gpghome") &&
		 !aesloop_opts_is_loop_aes("encryptio") &&
		 !aesloop_opts_is_loop_aes("user=x"), "opts-is-loop-aes",
		 "wrong answer");
}

static int has(const char *const *args)
{
	static const char *const longs[] = { "encryption", "fstab", NULL };
	int argc = 0;

	while (args[argc])
		argc++;
	return aesloop_argv_has(argc, (char *const *)args, "bcdjoOeHSCIKGps", "eF", longs);
}

static void test_argv(void)
{
	static const char *const a1[] = { "losetup", "-e", "AES128", "-P", "k", "/dev/loop0", "f", NULL };
	static const char *const a2[] = { "losetup", "-P", "/dev/loop0", "f", NULL };
	static const char *const a3[] = { "losetup", "-rP", "k", "--encryption=AES128", "d", "f", NULL };
	static const char *const a4[] = { "losetup", "-o", "-e", "-P", "d", "f", NULL };
	static const char *const a5[] = { "losetup", "-oe", "-P", "d", "f", NULL };
	static const char *const a6[] = { "losetup", "-P", "--", "-e", NULL };
	static const char *const a7[] = { "losetup", "-F", "/dev/loop3", NULL };
	static const char *const a8[] = { "losetup", "-reAES128", "-P", "k", "d", "f", NULL };
	static const char *const a9[] = { "losetup", "--encryptionx", "-P", "d", "f", NULL };

	t_result(has(a1), "argv-e", "-e not seen");
	t_result(!has(a2), "argv-partscan", "-e seen in a stock command");
	t_result(has(a3), "argv-long-encryption", "--encryption= not seen");
	t_result(!has(a4), "argv-arg-of-o", "the argument of -o taken for -e");
	t_result(!has(a5), "argv-attached-arg-of-o", "-oe taken for -e");
	t_result(!has(a6), "argv-stops-at-dashdash", "-e after -- seen");
	t_result(has(a7), "argv-F", "-F not seen");
	t_result(has(a8), "argv-cluster", "-e in -reAES128 not seen");
	t_result(!has(a9), "argv-long-prefix", "--encryptionx taken for --encryption");
}

static void test_fstab(void)
{
	char path[] = "/tmp/test_libaesloop.XXXXXX", err[512];
	struct aesloop_opts o;
	char *src = NULL;
	FILE *f;
	int fd, rc;

	fd = mkstemp(path);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		t_result(0, "fstab-write", "cannot write %s", path);
		return;
	}
	fputs("# comment\n"
	      "/dev/sda1 / ext4 defaults 0 1\n"
	      "/dev/sdb1 /secret ext4 defaults,noauto,loop=/dev/loop3,encryption=AES128,gpgkey=/etc/fskey.gpg 0 0\n"
	      "/dev/sda9 none swap sw,loop=/dev/loop6,encryption=AES128,phash=random 0 0\n"
	      "/dev/sdc1 /a ext4 loop=/dev/loop7 0 0\n"
	      "/dev/sdc2 /b ext4 loop=/dev/loop7 0 0\n"
	      "/srv/my\\040disk.img /c ext4 loop=/dev/loop2,encryption=AES192 0 0\n"
	      "/var/swap.img none swap sw,loop=/dev/loop4,encryption=AES256 0 0\n", f);
	fclose(f);

	aesloop_opts_init(&o);
	rc = aesloop_fstab_lookup(path, "/dev/loop3", &o, &src, err, sizeof(err));
	t_result(rc == 0 && src && !strcmp(src, "/dev/sdb1") &&
		 !strcmp(o.encryption, "AES128") && !strcmp(o.gpgkey, "/etc/fskey.gpg"),
		 "fstab-found", "rc %d (%s), source %s", rc, rc ? err : "", src ? src : "-");
	free(src);
	src = NULL;
	aesloop_opts_free(&o);

	rc = aesloop_fstab_lookup(path, "/dev/loop6", &o, &src, err, sizeof(err));
	t_result(rc == 0 && !strcmp(o.phash, "random"), "fstab-swap-line",
		 "rc %d (%s)", rc, rc ? err : "");
	free(src);
	src = NULL;
	aesloop_opts_free(&o);

	/* fstab's octal escapes, as libmount reads them. */
	rc = aesloop_fstab_lookup(path, "/dev/loop2", &o, &src, err, sizeof(err));
	t_result(rc == 0 && src && !strcmp(src, "/srv/my disk.img"), "fstab-escaped-source",
		 "rc %d (%s), source %s", rc, rc ? err : "", src ? src : "-");
	free(src);
	src = NULL;
	aesloop_opts_free(&o);

	/* swapoff SOURCE: the loop of the encrypted swap line of SOURCE. */
	{
		char loopdev[64] = "";

		t_result(aesloop_fstab_swap_loop(path, "/dev/sda9", loopdev, sizeof(loopdev)) == 1 &&
			 !strcmp(loopdev, "/dev/loop6"), "fstab-swap-loop-device",
			 "got '%s'", loopdev);
		loopdev[0] = 0;
		t_result(aesloop_fstab_swap_loop(path, "/var/swap.img", loopdev, sizeof(loopdev)) == 1 &&
			 !strcmp(loopdev, "/dev/loop4"), "fstab-swap-loop-file",
			 "got '%s'", loopdev);
		t_result(aesloop_fstab_swap_loop(path, "/dev/sdb1", loopdev, sizeof(loopdev)) == 0,
			 "fstab-swap-loop-not-swap", "a mount line counted as swap");
		t_result(aesloop_fstab_swap_loop("/nonexistent/fstab", "/dev/sda9", loopdev,
						 sizeof(loopdev)) == 0,
			 "fstab-swap-loop-missing-file", "found a line in no file");
	}

	rc = aesloop_fstab_lookup(path, "/dev/loop5", &o, &src, err, sizeof(err));
	t_result(rc == -ENOENT && strstr(err, "no line") && !src, "fstab-none",
		 "rc %d (%s)", rc, err);
	rc = aesloop_fstab_lookup(path, "/dev/loop7", &o, &src, err, sizeof(err));
	t_result(rc == -EINVAL && strstr(err, "2 lines") && !src, "fstab-twice",
		 "rc %d (%s)", rc, err);
	aesloop_opts_free(&o);
	rc = aesloop_fstab_lookup("/nonexistent/fstab", "/dev/loop3", &o, &src, err, sizeof(err));
	t_result(rc == -ENOENT && strstr(err, "cannot read /nonexistent/fstab"),
		 "fstab-missing-file", "rc %d (%s)", rc, err);
	unlink(path);
}

static void test_offset(void)
{
	int iv_free = -1;
	const char *n = aesloop_offset_number(" @8192", &iv_free);

	t_result(iv_free == 1 && !strcmp(n, "8192"), "offset-at", "'%s' %d", n, iv_free);
	n = aesloop_offset_number("4096", &iv_free);
	t_result(iv_free == 0 && !strcmp(n, "4096"), "offset-plain", "'%s' %d", n, iv_free);
}

/* Write @text to @root/@path, making its directories. */
static int put(const char *root, const char *path, const char *text)
{
	char full[512], *p;
	FILE *f;

	snprintf(full, sizeof(full), "%s/%s", root, path);
	for (p = full + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(full, 0755);
		*p = '/';
	}
	if (!text)
		return mkdir(full, 0755) && errno != EEXIST ? -1 : 0;
	f = fopen(full, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* A fake process @pid of @comm with descriptor @fd linked to @target. */
static int fake_fd(const char *root, unsigned int pid, const char *comm,
		   unsigned int fd, const char *target)
{
	char path[512];

	snprintf(path, sizeof(path), "proc/%u/comm", pid);
	if (put(root, path, comm))
		return -1;
	snprintf(path, sizeof(path), "proc/%u/fd", pid);
	if (put(root, path, NULL))
		return -1;
	snprintf(path, sizeof(path), "%s/proc/%u/fd/%u", root, pid, fd);
	return symlink(target, path);
}

static int count_of(const char *s, const char *sub)
{
	int n = 0;

	for (; (s = strstr(s, sub)) != NULL; s += strlen(sub))
		n++;
	return n;
}

/*
 * The nodes are made with mknod and never opened (stat() only), so no
 * device of the host is touched; the numbers are of no device there.
 */
static void test_openers(void)
{
	char root[] = "/tmp/test_aesloop_openers.XXXXXX", proc[600], sys[600];
	char node[600], part[600], other[600], outside[600], cmd[700];
	struct aesloop_openers op;
	int rc, ok;

	if (!mkdtemp(root)) {
		t_result(0, "openers-setup", "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys/7:250", root);
	snprintf(node, sizeof(node), "%s/dev/loop250", root);
	snprintf(part, sizeof(part), "%s/dev/loop250p1", root);
	snprintf(other, sizeof(other), "%s/dev/loop251", root);
	snprintf(outside, sizeof(outside), "%s/nodes/loop250", root);
	put(root, "dev", NULL);
	put(root, "nodes", NULL);
	if (mknod(node, S_IFBLK | 0600, makedev(7, 250)) ||
	    mknod(part, S_IFBLK | 0600, makedev(259, 250)) ||
	    mknod(other, S_IFBLK | 0600, makedev(7, 251)) ||
	    mknod(outside, S_IFBLK | 0600, makedev(7, 250))) {
		t_skip("openers", "mknod: %s (needs root)", strerror(errno));
		goto out;
	}
	ok = !put(root, "sys/7:250/dev", "7:250\n") &&
	     !put(root, "sys/7:250/loop/backing_file", "/tmp/img\n") &&
	     !put(root, "sys/7:250/queue/dev", "1:1\n") &&	/* no "partition" */
	     !put(root, "sys/7:250/loop250p1/dev", "259:250\n") &&
	     !put(root, "sys/7:250/loop250p1/partition", "1\n") &&
	     !fake_fd(root, 100, "bash\n", 0, "/dev/null") &&
	     !fake_fd(root, 100, "bash\n", 7, node) &&
	     !fake_fd(root, 100, "bash\n", 8, node) &&
	     !fake_fd(root, 200, "cat\n", 3, part) &&
	     !fake_fd(root, 300, "blkid\n", 3, other) &&
	     !fake_fd(root, 400, "hidden\n", 3, outside) &&
	     !fake_fd(root, 700, "evil\033[2J\n", 5, node) &&
	     !put(root, "proc/500", NULL) &&		/* gone: no fd/ */
	     !put(root, "proc/self/fd", NULL) &&
	     !put(root, "proc/sys", NULL);
	if (!ok) {
		t_result(0, "openers-setup", "cannot build the fake tree in %s", root);
		goto out;
	}

	rc = aesloop_find_openers(proc, sys, &op);
	t_result(rc == 3 && op.nproc == 3 && op.unreadable == 0 &&
		 count_of(op.list, "bash[100]") == 1 && strstr(op.list, "cat[200]") &&
		 strstr(op.list, "evil?[2J[700]") && count_of(op.list, ", ") == 2,
		 "openers-found", "rc %d, %u processes: '%s'", rc, op.nproc, op.list);
	t_result(!strstr(op.list, "blkid") && !strstr(op.list, "hidden"),
		 "openers-others-not-counted", "'%s'", op.list);

	/* More than AESLOOP_OPENERS_LISTED: counted, the list cut. */
	ok = !fake_fd(root, 801, "a\n", 3, node) && !fake_fd(root, 802, "b\n", 3, node) &&
	     !fake_fd(root, 803, "c\n", 3, part);
	rc = aesloop_find_openers(proc, sys, &op);
	t_result(ok && rc == 6 && count_of(op.list, "[") == AESLOOP_OPENERS_LISTED + 1 &&
		 strlen(op.list) > 5 && !strcmp(op.list + strlen(op.list) - 5, ", ..."),
		 "openers-list-cut", "rc %d: '%s'", rc, op.list);

	rc = aesloop_find_openers(proc, root, &op);
	t_result(rc == -ENODEV && op.nproc == 0, "openers-no-sysfs-dev", "rc %d", rc);
	snprintf(cmd, sizeof(cmd), "%s/none", root);
	rc = aesloop_find_openers(cmd, sys, &op);
	t_result(rc == -ENOENT, "openers-no-proc", "rc %d", rc);

	/* Descriptors another user may not read: counted as unreadable. */
	ok = !fake_fd(root, 900, "secret\n", 3, node);
	snprintf(cmd, sizeof(cmd), "%s/900/fd", proc);
	if (ok && !chmod(cmd, 0700) && !chmod(root, 0755)) {
		pid_t pid = fork();
		int status = -1;

		if (pid == 0) {
			if (setgid(65534) || setuid(65534))
				_exit(2);
			rc = aesloop_find_openers(proc, sys, &op);
			_exit(op.unreadable == 1 && rc == 6 &&
			      !strstr(op.list, "secret") ? 0 : 1);
		}
		if (pid > 0)
			waitpid(pid, &status, 0);
		t_result(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			 "openers-unreadable-counted", "child status %#x", status);
	} else {
		t_result(0, "openers-unreadable-counted", "cannot set up %s", cmd);
	}
out:
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		t_result(0, "openers-cleanup", "%s left behind", root);
}

static void check_notice(const char *name, unsigned int nproc,
			 unsigned int unreadable, const char *list, int keyed,
			 int pending, const char *want)
{
	struct aesloop_openers op;
	char buf[512];

	memset(&op, 0, sizeof(op));
	op.nproc = nproc;
	op.unreadable = unreadable;
	snprintf(op.list, sizeof(op.list), "%s", list);
	aesloop_detach_message(buf, sizeof(buf), "/dev/loop0", &op, keyed, pending);
	t_result(!strcmp(buf, want), name, "got '%s', expected '%s'", buf, want);
}

static void test_notice(void)
{
	check_notice("notice-keyed-two", 2, 0, "udevd[312], cat[4021]", 1, 0,
		     "/dev/loop0: still open by 2 processes (udevd[312], cat[4021]); "
		     "it is detached at the last close, and its key stays loaded until then");
	check_notice("notice-plain-one", 1, 0, "bash[7]", 0, 0,
		     "/dev/loop0: still open by 1 process (bash[7]); it is detached at the last close");
	check_notice("notice-at-least", 1, 3, "bash[7]", 0, 0,
		     "/dev/loop0: still open by at least 1 process (bash[7]); it is detached at the last close");
	check_notice("notice-none-found", 0, 0, "", 1, 0,
		     "/dev/loop0: still open elsewhere (no process visible here holds it); "
		     "it is detached at the last close, and its key stays loaded until then");
	check_notice("notice-pending", 1, 0, "bash[7]", -1, 1,
		     "/dev/loop0: detach already asked for: still open by 1 process (bash[7]); "
		     "it is detached at the last close, and its key (if it has one) stays loaded until then");
	/* Not a block device: nothing said, errno kept. */
	errno = EXDEV;
	t_result(aesloop_detach_notice("/dev/null", 1, 0) == 0 && errno == EXDEV,
		 "notice-not-block", "said something for /dev/null, or changed errno");
	t_result(aesloop_loop_keyed(-1) == -1, "keyed-no-fd", "not -1");
}

static void test_losetup(void)
{
	char *with_e[] = { "losetup", "-o", "-e", "-e", "AES128", "-P", "k", "/dev/loop0", "f", NULL };
	char *plain[] = { "losetup", "-o", "-e", "-P", "/dev/loop0", "f", NULL };
	struct aesloop_losetup lo;

	aesloop_losetup_init(&lo, 9, with_e, "bcdjoO");
	t_result(lo.keyfile_P == 1 && lo.o.passfd == -1, "losetup-P-keyfile",
		 "keyfile_P %d passfd %d", lo.keyfile_P, lo.o.passfd);
	t_result(aesloop_losetup_option(&lo, 'P', "k") == 1 &&
		 !strcmp(lo.o.cleartextkey, "k"), "losetup-P-taken", "not taken");
	aesloop_losetup_init(&lo, 6, plain, "bcdjoO");
	t_result(lo.keyfile_P == 0 && aesloop_losetup_option(&lo, 'P', NULL) == 0,
		 "losetup-P-partscan", "-o's argument -e counted as -e");
	t_result(aesloop_losetup_option(&lo, AESLOOP_OPT_PARTSCAN, NULL) == 0 &&
		 aesloop_losetup_option(&lo, 'r', NULL) == 0 &&
		 aesloop_losetup_option(&lo, 'o', "@4096") == 0,
		 "losetup-not-ours", "took util-linux's own option");
	t_result(aesloop_losetup_option(&lo, 'p', "7") == 1 && lo.o.passfd == 7 &&
		 aesloop_losetup_option(&lo, 'p', "x") == -EINVAL &&
		 aesloop_losetup_option(&lo, 'p', "-1") == -EINVAL &&
		 aesloop_losetup_option(&lo, 'p', "99999999999") == -EINVAL,
		 "losetup-pass-fd", "passfd %d", lo.o.passfd);
	t_result(aesloop_losetup_check(&lo, 1, 0) != NULL, "losetup-check-needs-e",
		 "-p without -e passed");
	aesloop_losetup_option(&lo, 'e', "AES256");
	aesloop_losetup_option(&lo, 'H', "random");
	aesloop_losetup_option(&lo, 'R', NULL);
	t_result(aesloop_losetup_check(&lo, 1, 0) == NULL && lo.recompute &&
		 aesloop_losetup_check(&lo, 0, 0) != NULL &&
		 aesloop_losetup_check(&lo, 1, 1) != NULL, "losetup-check",
		 "-e outside a set-up, or phash=random read-only, passed");
	aesloop_opts_free(&lo.o);
	t_result(aesloop_mkfs("/dev/null", "../bin/sh") == -EINVAL &&
		 aesloop_mkfs("/dev/null", "0123456789abcdef0123456789abcdef0") == -EINVAL,
		 "mkfs-bad-type", "not refused");
}

/*
 * aesloop_multi_key_setup() on /dev/null, where every ioctl fails: with
 * ENOTTY from a kernel, ENOSYS from qemu-user (which does not know
 * loop-AES's ioctls), so the errno to pass on is the one a plain call gets.
 */
static void test_multikey_setup(void)
{
	char path[] = "/tmp/test_libaesloop.XXXXXX", said[512] = "";
	struct keysetup ks;
	int fd = open("/dev/null", O_RDWR), out = mkstemp(path), saved, rc, err, want;
	ssize_t n;

	if (fd < 0 || out < 0) {
		t_result(0, "multikey-setup", "cannot open /dev/null or %s", path);
		return;
	}
	unlink(path);
	want = ioctl(fd, LOOP_MULTI_KEY_SETUP_V3, 0) ? errno : 0;
	t_result(want == ENOTTY || want == ENOSYS, "multikey-plain-ioctl",
		 "a multi-key ioctl on /dev/null gave errno %d", want);
	keysetup_init(&ks, "test");
	t_result(aesloop_multi_key_setup(fd, "/dev/loop3", &ks) == 0,
		 "multikey-single-key", "not 0 for a single-key setup");
	ks.nslots = KEYSETUP_MULTI_V3;
	fflush(stderr);
	saved = dup(2);
	dup2(out, 2);
	rc = aesloop_multi_key_setup(fd, "/dev/loop3", &ks);
	err = errno;
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(out, said, sizeof(said) - 1, 0);
	said[n > 0 ? n : 0] = '\0';
	t_result(rc == -want && err == want, "multikey-refused",
		 "returned %d, errno %d (a plain ioctl: %d)", rc, err, want);
	t_result(strstr(said, ": /dev/loop3: multi-key set-up (multi-key-v3) failed: ") &&
		 strstr(said, ": /dev/loop3: detach failed: "), "multikey-said",
		 "stderr: '%s'", said);
	keysetup_wipe(&ks);
	close(out);
	close(fd);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_abi();
	test_status();
	test_opts();
	test_argv();
	test_fstab();
	test_offset();
	test_openers();
	test_notice();
	test_losetup();
	test_multikey_setup();
	return t_exit();
}
