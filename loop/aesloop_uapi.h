/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * aesloop_uapi.h - loop-AES's additions to the loop device ABI (doc/format.md
 * section 5): what the driver and the programs that call it must agree on,
 * written once.  The driver (loop.h), the userland key setup
 * (lib/keysetup.h, so losetup, mount and swapon) and the tests include it.
 *
 * Plain constants and nothing else, so that it builds as kernel code and as
 * C11 userland without any other header.  It lives in loop/ rather than in an
 * include/uapi/ of its own because loop/ is what the DKMS source tree carries.
 */
#ifndef _UAPI_AESLOOP_H
#define _UAPI_AESLOOP_H

/* lo_encrypt_type of loop-AES's AES (lo_encrypt_key_size 16, 24 or 32). */
#define LO_CRYPT_AES			16

/* ioctls on /dev/loopN, beside those of <linux/loop.h>. */
#define LOOP_MULTI_KEY_SETUP		0x4C4D	/* multi-key-v2: 64 slots */
#define LOOP_MULTI_KEY_SETUP_V3		0x4C4E	/* multi-key-v3: 65 slots */
#define LOOP_RECOMPUTE_DEV_SIZE		0x4C52	/* no argument */

/*
 * The multi-key ioctls' argument: an array of key slots, each the AES key
 * in its first lo_encrypt_key_size bytes; v3's slot 65 seeds the IVs (its
 * first 16 bytes).
 */
#define LOOP_MULTI_KEY_SLOT_SIZE	32	/* bytes */
#define LOOP_MULTI_KEY_SLOTS		64	/* LOOP_MULTI_KEY_SETUP */
#define LOOP_MULTI_KEY_SLOTS_V3		65	/* LOOP_MULTI_KEY_SETUP_V3 */

/* lo_flags bits that LOOP_GET_STATUS(64) reports besides the stock ones. */
#define LO_FLAGS_MULTI_KEY_V3_EXPORTED	0x080000 /* with the next: v3 */
#define LO_FLAGS_MULTI_KEY_EXPORTED	0x100000 /* multi-key (v2 or v3) */
#define LO_FLAGS_READ_ONLY_EXPORTED	0x200000 /* as LO_FLAGS_READ_ONLY */

#endif /* _UAPI_AESLOOP_H */
