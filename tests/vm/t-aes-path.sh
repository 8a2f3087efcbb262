#!/bin/bash
# VM test (a module built with INTELAES=y): the AES path the module chose
# is the one the CPU allows, and it says so in the log and in aes_impl.
#   t-aes-path.sh max      the CPU has AES-NI: an AES-NI or VAES path
#   t-aes-path.sh qemu64   no AES-NI: the generic C code
# shellcheck source=lib.sh
. "${AESLOOP_LIB:-/aesloop/tests/vm/lib.sh}"

impl=$(cat /sys/module/loop/parameters/aes_impl)
t_check aes-path-logged sh -c "dmesg | grep -q 'aesloop driver loaded.*AES: $impl'"
if t_cpu_has aes; then
	t_check aes-path-hardware sh -c "echo '$impl' | grep -Eqx 'aesni|vaes-avx2|vaes-avx512'"
else
	t_expect_eq aes-path-fallback generic "$impl"
fi
