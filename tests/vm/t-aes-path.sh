#!/bin/bash
# covers: engine choice, AES generic, SSSE3, AES-NI, VAES, arm64-ce
# VM test (a module with the CPU's own AES code: the default build on x86_64
# and arm64): the AES path the module chose is the one the CPU allows, and it
# says so in the log and in aes_impl.
#   t-aes-path.sh max      x86_64 with AES-NI: an AES-NI or VAES path; arm64
#                          with the Crypto Extensions: arm64-ce
#   t-aes-path.sh Nehalem  SSSE3 and no AES-NI: ssse3, the vector-permute AES
#   t-aes-path.sh qemu64   neither (or an arm64 CPU without the extensions):
#                          the generic C code
# and a faster path the CPU claims is used, or the log says why not.
# The argument names the CPU model, for the log only.
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

impl=$(cat /sys/module/loop/parameters/aes_impl)
t_check aes-path-logged sh -c "dmesg | grep -q 'aesloop driver loaded.*AES: $impl'"
if [ "$(uname -m)" = aarch64 ]; then
	best=generic
	t_cpu_has aes && best=arm64-ce
	if [ "$impl" != "$best" ]; then
		t_check aes-path-rejected-logged sh -c \
			"dmesg | grep -q 'AES path $best failed its self-test'"
	else
		t_expect_eq aes-path-best "$best" "$impl"
	fi
	exit 0
fi
if t_cpu_has aes && dmesg | grep -q 'AES path aesni failed its self-test'; then
	# Every AES-NI path failed: the constant-time engine where the CPU has SSSE3.
	t_check aes-path-hardware sh -c "echo '$impl' | grep -Eqx 'ssse3|generic'"
elif t_cpu_has aes; then
	t_check aes-path-hardware sh -c "echo '$impl' | grep -Eqx 'aesni|vaes-avx2|vaes-avx512'"
elif t_cpu_has ssse3; then
	t_expect_eq aes-path-ssse3 ssse3 "$impl"
else
	t_expect_eq aes-path-fallback generic "$impl"
fi
# A faster path the CPU claims but that was not chosen must have failed its
# self-test, and the log must say so (QEMU 7.2's TCG gets VAES on ymm wrong).
best=generic
t_cpu_has ssse3 && best=ssse3
t_cpu_has aes && best=aesni
t_cpu_has vaes && t_cpu_has avx2 && best=vaes-avx2
t_cpu_has vaes && t_cpu_has avx2 && t_cpu_has avx512f && best=vaes-avx512
if [ "$impl" != "$best" ]; then
	t_check aes-path-rejected-logged sh -c \
		"dmesg | grep -q 'AES path $best failed its self-test'"
else
	t_expect_eq aes-path-best "$best" "$impl"
fi
