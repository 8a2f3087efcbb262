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
 *   LOOP_MULTI_KEY_SETUP, LOOP_MULTI_KEY_SETUP_V3 (loop-AES, 0x4C4D/0x4C4E)
 *                      logged with the 64/65 key slots; fail with EINVAL
 *                      when AESLOOP_SHIM_FAIL=multi; the first N fail
 *                      with EAGAIN when AESLOOP_SHIM_BUSY=N (as the driver
 *                      does while udev's probe refills the page cache);
 *                      else succeed
 *   LOOP_RECOMPUTE_DEV_SIZE (0x4C52)  logged; succeeds
 *   LOOP_GET_STATUS64  with AESLOOP_SHIM_STATUS=MAJ:MIN set: a bound device
 *                      whose backing file is /shim/backing on device
 *                      MAJ:MIN, inode 4711 (for losetup --list); else as
 *                      any other
 *   any other          fails with ENOTTY
 *
 * An info line reads: NAME type=T keysize=K name=CRYPTNAME key=HEX64
 * offset=O sizelimit=S flags=F file=BACKINGNAME init=I
 * (O as a signed number: loop-AES's "@N" offsets are negative).  A
 * multi-key line: NAME n=64|65 s0=HEX64 s63=HEX64 s64=HEX64|- distinct=D
 * (D: how many of the slots differ from all others).
 *
 * At exit (after losetup's own exit handlers) the shim searches every
 * writable mapping of the process for the first 16 bytes of the last key
 * and of the multi-key slots 0, 63 and 64 it saw, and logs "KEYSCAN N"
 * with the number of copies left in memory.
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
#include <sys/sysmacros.h>

#include "../../../loop/aesloop_uapi.h"

#define KEY_PROBE_LEN	16
#define NPROBES		4	/* lo_encrypt_key, slots 0, 63, 64 */
#define SLOT_LEN	LOOP_MULTI_KEY_SLOT_SIZE

static unsigned char seen_key[NPROBES][KEY_PROBE_LEN];
static int have_key[NPROBES];

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

/*
 * The logging below handles key bytes in its own stack frames: wipe the
 * stack under ioctl() afterwards, so that the key scan at exit sees only
 * what losetup itself left.
 */
static void __attribute__((noinline)) scrub_stack(void)
{
	volatile unsigned char pad[32768];
	size_t i;

	for (i = 0; i < sizeof(pad); i++)
		pad[i] = 0;
}

static void __attribute__((noinline))
log_info(const char *what, const struct loop_info64 *info)
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
	log_line("%s type=%u keysize=%u name=%s key=%s offset=%lld sizelimit=%llu flags=%u file=%s init=%llu\n",
		 what, info->lo_encrypt_type, info->lo_encrypt_key_size, name, hex,
		 (long long)info->lo_offset,
		 (unsigned long long)info->lo_sizelimit, info->lo_flags, file,
		 (unsigned long long)info->lo_init[0]);
	if (nonzero) {
		memcpy(seen_key[0], info->lo_encrypt_key, KEY_PROBE_LEN);
		have_key[0] = 1;
	}
}

static void slot_hex(char *out, const unsigned char *slot)
{
	int i;

	for (i = 0; i < SLOT_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", slot[i]);
}

static void __attribute__((noinline))
log_multi(const char *what, const unsigned char (*slots)[SLOT_LEN], int n)
{
	char s0[2 * SLOT_LEN + 1], s63[2 * SLOT_LEN + 1], s64[2 * SLOT_LEN + 1];
	int i, j, distinct = 0;

	for (i = 0; i < n; i++) {
		int same = 0;

		for (j = 0; j < n; j++)
			if (j != i && !memcmp(slots[i], slots[j], SLOT_LEN))
				same = 1;
		distinct += !same;
	}
	slot_hex(s0, slots[0]);
	slot_hex(s63, slots[63]);
	if (n == 65)
		slot_hex(s64, slots[64]);
	else
		strcpy(s64, "-");
	log_line("%s n=%d s0=%s s63=%s s64=%s distinct=%d\n", what, n, s0, s63,
		 s64, distinct);
	memcpy(seen_key[1], slots[0], KEY_PROBE_LEN);
	memcpy(seen_key[2], slots[63], KEY_PROBE_LEN);
	have_key[1] = have_key[2] = 1;
	if (n == 65) {
		memcpy(seen_key[3], slots[64], KEY_PROBE_LEN);
		have_key[3] = 1;
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
		scrub_stack();
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
		scrub_stack();
		return 0;
	case LOOP_CLR_FD:
		log_line("LOOP_CLR_FD\n");
		return 0;
	case LOOP_MULTI_KEY_SETUP:
	case LOOP_MULTI_KEY_SETUP_V3:
	{
		const char *fail = getenv("AESLOOP_SHIM_FAIL");
		const char *busy = getenv("AESLOOP_SHIM_BUSY");
		static long busy_seen;
		int v2 = req == LOOP_MULTI_KEY_SETUP;

		log_multi(v2 ? "LOOP_MULTI_KEY_SETUP" : "LOOP_MULTI_KEY_SETUP_V3",
			  arg, v2 ? LOOP_MULTI_KEY_SLOTS : LOOP_MULTI_KEY_SLOTS_V3);
		scrub_stack();
		if (fail && strstr(fail, "multi")) {
			errno = EINVAL;
			return -1;
		}
		if (busy && busy_seen < strtol(busy, NULL, 10)) {
			busy_seen++;
			errno = EAGAIN;
			return -1;
		}
		return 0;
	}
	case LOOP_RECOMPUTE_DEV_SIZE:
		log_line("LOOP_RECOMPUTE_DEV_SIZE\n");
		return 0;
	case LOOP_GET_STATUS64:
	{
		const char *status = getenv("AESLOOP_SHIM_STATUS");
		struct loop_info64 *info = arg;
		unsigned int maj, min;

		if (!status || sscanf(status, "%u:%u", &maj, &min) != 2)
			break;
		log_line("LOOP_GET_STATUS64\n");
		memset(info, 0, sizeof(*info));
		info->lo_device = makedev(maj, min);
		info->lo_inode = 4711;
		strcpy((char *)info->lo_file_name, "/shim/backing");
		return 0;
	}
	default:
		break;
	}
	log_line("LOOP_OTHER 0x%lx\n", req);
	errno = ENOTTY;
	return -1;
}

/* Count copies of the key probe in the writable mappings, ours excluded. */
static void __attribute__((destructor)) scan_for_key(void)
{
	char line[512];
	FILE *maps;
	long found = 0;
	int k, any = 0;

	for (k = 0; k < NPROBES; k++)
		any |= have_key[k];
	if (!any)
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
			for (k = 0; k < NPROBES; k++) {
				if (!have_key[k] || *p != seen_key[k][0] ||
				    (p >= &seen_key[0][0] &&
				     p < &seen_key[0][0] + sizeof(seen_key)) ||
				    memcmp(p, seen_key[k], KEY_PROBE_LEN))
					continue;
				found++;
				log_line("KEYCOPY probe=%d at=%p in %s", k,
					 (const void *)p, line);
			}
		}
	}
	fclose(maps);
	memset(seen_key, 0, sizeof(seen_key));
	log_line("KEYSCAN %ld\n", found);
}
