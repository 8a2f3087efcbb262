// SPDX-License-Identifier: GPL-2.0
/*
 * loop_ioctl_shim.c - an LD_PRELOAD stand-in for the loop ioctls, so that
 * tests/host/t-losetup.sh can run the patched losetup on the host, where no
 * loop device may be touched, and see exactly what it would hand the kernel.
 *
 * Every ioctl of type 'L' (0x4C: the loop and loop-control ioctls) is
 * answered here and never reaches the kernel; each is logged as one line to
 * the file $AESLOOP_SHIM_LOG:
 *
 *   LOOP_CONFIGURE     logged with its struct loop_info64; fails with EINVAL
 *                      when AESLOOP_SHIM_MODE=fallback (as a kernel without
 *                      LOOP_CONFIGURE does), else succeeds
 *   LOOP_SET_FD        succeeds
 *   LOOP_SET_STATUS64  logged with its struct loop_info64; succeeds
 *   LOOP_CLR_FD        succeeds
 *   any other          fails with ENOTTY
 *
 * An info line reads: NAME type=T keysize=K name=CRYPTNAME key=HEX64
 * offset=O sizelimit=S flags=F file=BACKINGNAME
 *
 * At exit (after losetup's own exit handlers) the shim searches every
 * writable mapping of the process for the first 16 bytes of the last key it
 * saw, and logs "KEYSCAN N" with the number of copies left in memory.
 *
 * Other ioctls go to the C library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/loop.h>

#define KEY_PROBE_LEN	16

static unsigned char seen_key[KEY_PROBE_LEN];
static int have_key;

static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void log_line(const char *fmt, ...)
{
	const char *path = getenv("AESLOOP_SHIM_LOG");
	va_list ap;
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static void log_info(const char *what, const struct loop_info64 *info)
{
	char hex[2 * LO_KEY_SIZE + 1], name[LO_NAME_SIZE + 1], file[LO_NAME_SIZE + 1];
	int i, nonzero = 0;

	for (i = 0; i < LO_KEY_SIZE; i++) {
		snprintf(hex + 2 * i, 3, "%02x", info->lo_encrypt_key[i]);
		nonzero |= info->lo_encrypt_key[i];
	}
	memcpy(name, info->lo_crypt_name, LO_NAME_SIZE);
	name[LO_NAME_SIZE] = '\0';
	memcpy(file, info->lo_file_name, LO_NAME_SIZE);
	file[LO_NAME_SIZE] = '\0';
	log_line("%s type=%u keysize=%u name=%s key=%s offset=%llu sizelimit=%llu flags=%u file=%s\n",
		 what, info->lo_encrypt_type, info->lo_encrypt_key_size, name, hex,
		 (unsigned long long)info->lo_offset,
		 (unsigned long long)info->lo_sizelimit, info->lo_flags, file);
	if (nonzero) {
		memcpy(seen_key, info->lo_encrypt_key, KEY_PROBE_LEN);
		have_key = 1;
	}
}

int ioctl(int fd, unsigned long req, ...)
{
	int (*real)(int, unsigned long, ...);
	const char *mode = getenv("AESLOOP_SHIM_MODE");
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);

	if (((req >> 8) & 0xff) != 0x4C) {
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
		return real(fd, req, arg);
	}
	switch (req) {
	case LOOP_CONFIGURE:
		log_info("LOOP_CONFIGURE", &((struct loop_config *)arg)->info);
		if (mode && !strcmp(mode, "fallback")) {
			errno = EINVAL;
			return -1;
		}
		return 0;
	case LOOP_SET_FD:
		log_line("LOOP_SET_FD\n");
		return 0;
	case LOOP_SET_STATUS64:
		log_info("LOOP_SET_STATUS64", arg);
		return 0;
	case LOOP_CLR_FD:
		log_line("LOOP_CLR_FD\n");
		return 0;
	default:
		log_line("LOOP_OTHER 0x%lx\n", req);
		errno = ENOTTY;
		return -1;
	}
}

/* Count copies of the key probe in the writable mappings, ours excluded. */
static void __attribute__((destructor)) scan_for_key(void)
{
	char line[512];
	FILE *maps;
	long found = 0;

	if (!have_key)
		return;
	maps = fopen("/proc/self/maps", "r");
	if (!maps)
		return;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi;
		char perms[8];
		const unsigned char *p, *end;

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 ||
		    perms[0] != 'r' || perms[1] != 'w' || strstr(line, "[vvar]"))
			continue;
		end = (const unsigned char *)hi - KEY_PROBE_LEN;
		for (p = (const unsigned char *)lo; p <= end; p++) {
			if (*p != seen_key[0] || p == seen_key ||
			    memcmp(p, seen_key, KEY_PROBE_LEN))
				continue;
			found++;
		}
	}
	fclose(maps);
	memset(seen_key, 0, sizeof(seen_key));
	log_line("KEYSCAN %ld\n", found);
}
