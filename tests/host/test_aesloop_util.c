// SPDX-License-Identifier: GPL-2.0
/*
 * test_aesloop_util.c - tools/aesloop-util.c, the loop-AES glue of the
 * patched losetup, mount and swapon:
 *
 *  status-*   the `losetup -a` line of loop-AES (offset=@N, encryption=AES128,
 *             multi-key-v2/v3, loinit=, read-only) from a struct loop_info64
 *  opts-*     mount option strings: the loop-AES options taken, others
 *             ignored, options already set kept
 *  argv-*     the look-ahead that decides what losetup's -P means
 *  fstab-*    losetup -F: the line with loop=DEV, none, two
 *  offset-*   "@N" and "N"
 *
 * Prints PASS/FAIL lines (tests/host/testutil.h); exits 1 if anything failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/loop.h>

#include "aesloop-util.h"
#include "testutil.h"

static void check_line(const char *name, const struct loop_info64 *li,
		       const char *file, const char *want)
{
	char buf[512];

	aesloop_status_line(buf, sizeof(buf), "/dev/loop3", file, li);
	t_result(!strcmp(buf, want), name, "got '%s', expected '%s'", buf, want);
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
	li.lo_encrypt_type = 16;
	li.lo_encrypt_key_size = 16;
	check_line("status-offset-aes128", &li, NULL,
		   "/dev/loop3: [0801]:12345 (/tmp/img) offset=4096 encryption=AES128");

	li.lo_offset = (__u64)-8192;
	li.lo_sizelimit = 1048576;
	li.lo_encrypt_key_size = 32;
	li.lo_flags = 0x100000 | 0x080000;
	check_line("status-at-offset-v3", &li, NULL,
		   "/dev/loop3: [0801]:12345 (/tmp/img) offset=@8192 sizelimit=1048576 encryption=AES256 multi-key-v3");

	li.lo_offset = 0;
	li.lo_sizelimit = 0;
	li.lo_encrypt_key_size = 24;
	li.lo_flags = 0x100000 | 0x200000;
	li.lo_init[0] = 7;
	check_line("status-v2-loinit-ro", &li, NULL,
		   "/dev/loop3: [0801]:12345 (/tmp/img) encryption=AES192 multi-key-v2 loinit=7 read-only");

	li.lo_flags = LO_FLAGS_READ_ONLY;
	li.lo_init[0] = 0;
	li.lo_encrypt_type = 18;
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
	char path[] = "/tmp/test_aesloop_util.XXXXXX", err[512];
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
	      "/dev/sdc2 /b ext4 loop=/dev/loop7 0 0\n", f);
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

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_status();
	test_opts();
	test_argv();
	test_fstab();
	test_offset();
	return t_failures ? 1 : 0;
}
