// SPDX-License-Identifier: GPL-2.0
/*
 * status.c - a loop device's line in loop-AES's `losetup -a` (doc/format.md §7).
 */
#include <stdio.h>
#include <string.h>

#include <linux/loop.h>

#include "libaesloop.h"

/* loop-AES's names of lo_encrypt_type (flags: 1 key bits, 2 a dash). */
static const struct {
	unsigned int type;
	unsigned int flags;
	const char *name;
} crypt_names[] = {
	{ 1, 0, "xor" }, { 3, 1, "twofish" }, { 4, 1, "blowfish" },
	{ 7, 1, "serpent" }, { 8, 1, "mars" }, { 11, 3, "rc6" },
	{ 12, 0, "tripleDES" }, { LO_CRYPT_AES, 1, "AES" },
};

/**
 * aesloop_status_line() - a device as loop-AES's `losetup -a` shows it
 * @buf:    the line, without a newline
 * @len:    its size
 * @dev:    the device name
 * @file:   the backing file's full name (from sysfs), or NULL for the
 *          64-byte lo_file_name of @info64
 * @info64: its struct loop_info64 from LOOP_GET_STATUS64
 *
 * "DEV: [DEVNO]:INODE (FILE)", then as they apply " offset=N" (or
 * " offset=@N" for an offset left out of the IV), " sizelimit=N",
 * " encryption=AES128", " multi-key-v2" or " multi-key-v3", " loinit=N",
 * " read-only"; DEVNO in hexadecimal, at least 4 digits.
 *
 * Return: the length snprintf() gives.
 */
int aesloop_status_line(char *buf, size_t len, const char *dev,
			const char *file_name, const void *info64)
{
	const struct loop_info64 *li = info64;
	char file[LO_NAME_SIZE], cname[LO_NAME_SIZE], enc[LO_NAME_SIZE + 16];
	char part[6][48];
	size_t i;

	memcpy(file, li->lo_file_name, LO_NAME_SIZE);
	file[LO_NAME_SIZE - 1] = '\0';
	memcpy(cname, li->lo_crypt_name, LO_NAME_SIZE);
	cname[LO_NAME_SIZE - 1] = '\0';
	for (i = 0; i < 6; i++)
		part[i][0] = '\0';

	if ((int64_t)li->lo_offset < 0)
		snprintf(part[0], sizeof(part[0]), " offset=@%llu",
			 (unsigned long long)-li->lo_offset);
	else if (li->lo_offset)
		snprintf(part[0], sizeof(part[0]), " offset=%llu",
			 (unsigned long long)li->lo_offset);
	if (li->lo_sizelimit)
		snprintf(part[1], sizeof(part[1]), " sizelimit=%llu",
			 (unsigned long long)li->lo_sizelimit);
	enc[0] = '\0';
	if (li->lo_encrypt_type == LO_CRYPT_CRYPTOAPI) {
		snprintf(enc, sizeof(enc), " encryption=CryptoAPI/%s", cname);
	} else if (li->lo_encrypt_type) {
		const char *name = "undefined";
		unsigned int flags = 0;

		for (i = 0; i < sizeof(crypt_names) / sizeof(crypt_names[0]); i++) {
			if (crypt_names[i].type == li->lo_encrypt_type) {
				name = crypt_names[i].name;
				flags = crypt_names[i].flags;
			}
		}
		if (flags & 1)
			snprintf(enc, sizeof(enc), " encryption=%s%s%u", name,
				 flags & 2 ? "-" : "",
				 li->lo_encrypt_key_size * 8);
		else
			snprintf(enc, sizeof(enc), " encryption=%s", name);
	}
	switch (li->lo_flags & (LO_FLAGS_MULTI_KEY_EXPORTED |
				LO_FLAGS_MULTI_KEY_V3_EXPORTED)) {
	case LO_FLAGS_MULTI_KEY_EXPORTED | LO_FLAGS_MULTI_KEY_V3_EXPORTED:
		snprintf(part[2], sizeof(part[2]), " multi-key-v3");
		break;
	case LO_FLAGS_MULTI_KEY_EXPORTED:
		snprintf(part[2], sizeof(part[2]), " multi-key-v2");
		break;
	}
	if (li->lo_init[0] && li->lo_encrypt_type != LO_CRYPT_DES)
		snprintf(part[3], sizeof(part[3]), " loinit=%llu",
			 (unsigned long long)li->lo_init[0]);
	if (li->lo_flags & (LO_FLAGS_READ_ONLY_EXPORTED | LO_FLAGS_READ_ONLY))
		snprintf(part[4], sizeof(part[4]), " read-only");
	return snprintf(buf, len, "%s: [%04llx]:%llu (%s)%s%s%s%s%s%s", dev,
			(unsigned long long)li->lo_device,
			(unsigned long long)li->lo_inode,
			file_name ? file_name : file, part[0], part[1],
			enc, part[2], part[3], part[4]);
}
