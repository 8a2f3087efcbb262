// SPDX-License-Identifier: GPL-2.0
// covers: arm64-ce, engine choice
/*
 * test_arm64ce.c - the arm64 path (ARM64AES=y: arm64-ce, the ARMv8 Crypto
 * Extensions) against the generic C code and OpenSSL; run natively on arm64
 * or under qemu-aarch64 (tests/host/arm64.sh).
 *
 *  cpu-arm64-ce               the path runs here (HWCAP_AES), or skipped
 *                             (every check of the path is skipped; the probe
 *                             checks then say that the generic engine stays)
 *  selftest-arm64-ce          loop_aes_selftest() passes
 *  cbc-arm64-ce-aesN-DIR-KEYS the assembly (DIR enc or dec; KEYS one: one
 *                             key, enc1; multi: a key per sector; gather:
 *                             one key, enc1g, each sector read from its own
 *                             address, in reverse order, every other one
 *                             from a mapping of its own) equals
 *                             aes_cbc_encrypt/decrypt per sector and OpenSSL
 *                             EVP AES-N-CBC per sector, for every sector
 *                             count 1..40, random keys, IVs and data,
 *                             buffers at odd addresses, apart and in place;
 *                             and never writes outside the sectors
 *  cbc-arm64-ce-dec-zero-iv   decryption with ivs == NULL is zero IVs
 *  engine-arm64-ce-MODE-aesN  loop_aes_encrypt/decrypt through the engine
 *                             equal the generic engine for single-key, v2
 *                             and v3 volumes, 1..40 sectors (more than one
 *                             NEON section), in place
 *  probe                      loop_aes_probe(NULL) picks arm64-ce when the
 *                             CPU has AES, else none (the generic engine)
 *  no-aes-cpu-check, no-aes-probe
 *                             with HWCAP_AES hidden from getauxval() (this
 *                             program's own getauxval() interposes on the
 *                             C library's: QEMU has no arm64 CPU model
 *                             without AES), the path is not offered and
 *                             loop_aes_probe() keeps the generic engine
 *
 * Random data comes from a seeded generator; a failure prints the seed and
 * the parameters (set AESLOOP_SEED to repeat a run).
 */
#include <sys/auxv.h>

#include "aes-arm64.h"
#include "t_cbc.h"

/*
 * A CPU without AES, as far as aes-arm64.c can tell: this getauxval()
 * takes the place of the C library's in the whole program (the library is
 * linked in statically), and hides HWCAP_AES while hide_aes is set.
 */
static int hide_aes;
unsigned long __getauxval(unsigned long type);

unsigned long getauxval(unsigned long type)
{
	unsigned long v = __getauxval(type);

	return type == AT_HWCAP && hide_aes ? v & ~(unsigned long)HWCAP_AES : v;
}

static void check_without_aes(void)
{
	const char *why = NULL, *rejected = "unset";
	const struct loop_aes_engine *e;

	hide_aes = 1;
	t_result(!aesloop_arch_cpu_has(AESLOOP_ARM64_CE, &why) && why,
		 "no-aes-cpu-check", "arm64-ce offered without HWCAP_AES");
	e = loop_aes_probe(&rejected);
	t_result(!e && !rejected, "no-aes-probe",
		 "picked %s, rejected %s", e ? e->name : "none",
		 rejected ? rejected : "none");
	hide_aes = 0;
}

/* The assembly of the one arm64 path. */
static const struct asm_path paths[] = {
	{ "arm64-ce", AESLOOP_ARM64_CE, aesloop_cbc_enc_ce, aesloop_cbc_dec_ce,
	  aesloop_cbc_enc1_ce, aesloop_cbc_enc1g_ce, NULL },
};

static const char *const engine_names[AESLOOP_ARM64_NR_PATHS] = { "arm64-ce" };

int main(void)
{
	static const struct t_cbc_arch arch = {
		T_CBC_TABLES(engine_names, paths), .after_probe = check_without_aes
	};

	return t_cbc_main(&arch);
}
