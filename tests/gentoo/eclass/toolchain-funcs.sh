# shellcheck shell=bash
# shellcheck disable=SC2154 # CHOST, CBUILD, ARCH: set by harness.sh
#
# Stand-in for toolchain-funcs.eclass, from its documentation: tc-getPROG
# gives the user's variable (CC, AR...) when set, else the tool for CHOST
# (CHOST-gcc...) when there is one, else the plain name; tc-arch-kernel maps
# the profile's ARCH to the kernel's.  Only what aesloop's ebuilds and the
# linux-mod-r1 stand-in use.

# __h_tc_get VAR PROG [HOST]
__h_tc_get() {
	local var=$1 prog=$2 host=${3-${CHOST}}
	if [[ -n ${!var-} ]]; then
		echo "${!var}"
	elif [[ -n ${host} ]] && type -P "${host}-${prog}" >/dev/null; then
		echo "${host}-${prog}"
	else
		echo "${prog}"
	fi
}

tc-getCC() { __h_tc_get CC gcc; }
tc-getCXX() { __h_tc_get CXX g++; }
tc-getLD() { __h_tc_get LD ld; }
tc-getAR() { __h_tc_get AR ar; }
tc-getNM() { __h_tc_get NM nm; }
tc-getOBJCOPY() { __h_tc_get OBJCOPY objcopy; }
tc-getOBJDUMP() { __h_tc_get OBJDUMP objdump; }
tc-getREADELF() { __h_tc_get READELF readelf; }
tc-getSTRIP() { __h_tc_get STRIP strip; }
tc-getPKG_CONFIG() { __h_tc_get PKG_CONFIG pkg-config; }
tc-getBUILD_CC() { __h_tc_get BUILD_CC gcc "${CBUILD:-${CHOST}}"; }
tc-getBUILD_CXX() { __h_tc_get BUILD_CXX g++ "${CBUILD:-${CHOST}}"; }
tc-getBUILD_PKG_CONFIG() { __h_tc_get BUILD_PKG_CONFIG pkg-config "${CBUILD:-${CHOST}}"; }

tc-arch-kernel() {
	case ${ARCH} in
		amd64 | x86) echo x86 ;;
		arm64) echo arm64 ;;
		ppc | ppc64) echo powerpc ;;
		riscv) echo riscv ;;
		*) echo "${ARCH}" ;;
	esac
}
