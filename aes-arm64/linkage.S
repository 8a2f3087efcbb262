/* SPDX-License-Identifier: GPL-2.0 */
/*
 * linkage.S - included by aes-ce.S (not assembled on its own): what the
 * assembly needs from its host.
 *
 * In loop.ko: the kernel's own SYM_FUNC_START()/SYM_FUNC_END() (with the
 * BTI landing pad where the kernel is built for BTI).  In userspace:
 * stand-ins that make plain ELF functions of the same source, with a BTI
 * landing pad (a NOP on CPUs without BTI); a GNU-stack note so the stack
 * stays non-executable; and the GNU property note that says the object is
 * BTI and PAC compatible (every entry has its landing pad, no indirect
 * branch is taken inside, and the functions are leaves that leave the link
 * register alone), without which the linker turns BTI off for every
 * program this object is linked into (Debian's hardening=+all builds them
 * with -mbranch-protection=standard).
 */
#ifdef __KERNEL__
#include <linux/linkage.h>
#else
.macro	user_func_start	name, global
.if \global
	.globl		\name
.endif
	.type		\name, %function
	.p2align	4
\name:
	hint		#34		/* bti c */
.endm

.macro	user_func_end	name
	.size		\name, . - \name
.endm

#define SYM_FUNC_START(name)		user_func_start name, 1
#define SYM_FUNC_START_LOCAL(name)	user_func_start name, 0
#define SYM_FUNC_END(name)		user_func_end name

	.pushsection	.note.GNU-stack, "", %progbits
	.popsection

	.pushsection	.note.gnu.property, "a"
	.balign		8
	.long		4, 16, 5	/* name size, data size, NT_GNU_PROPERTY_TYPE_0 */
	.asciz		"GNU"
	.long		0xc0000000	/* GNU_PROPERTY_AARCH64_FEATURE_1_AND */
	.long		4
	.long		3		/* BTI | PAC */
	.long		0
	.popsection
#endif
