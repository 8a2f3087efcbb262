# shellcheck shell=bash
# shellcheck disable=SC2154 # KV_*, ED, CHOST, modlist/modargs...: set at run time
#
# Stand-in for linux-mod-r1.eclass, written from its documentation
# (devmanual eclass reference): what an ebuild sees of it, not its code.
#
#  linux-mod-r1_pkg_setup: linux-info's pkg_setup with CONFIG_CHECK plus
#    MODULES (and !TRIM_UNUSED_KSYMS); needs a configured and built kernel
#    (Module.symvers); aborts below MODULES_KERNEL_MIN; picks the toolchain
#    the kernel was built with (KERNEL_CC...) and sets MODULES_MAKEARGS: ARCH,
#    V=1, the toolchain (CC, LD, AR...), and the switches that leave
#    stripping, signing, compression and depmod to the eclass.
#  linux-mod-r1_src_compile: for each modlist entry
#    name=install-dir:source-dir:build-dir:target (defaults: extra, the
#    current directory, source-dir, a guessed target), runs in source-dir
#      emake "${MODULES_MAKEARGS[@]}" "${modargs[@]}" target
#    and remembers build-dir/name.ko for install-dir.
#  linux-mod-r1_src_install: linux_moduleinto install-dir + linux_domodule
#    for each, i.e. /lib/modules/${KV_FULL}/install-dir/name.ko; then
#    modules_post_process (strip unless USE=-strip, sign with
#    USE=modules-sign, check each module's vermagic against KV_FULL, compress
#    as the kernel's config says) and einstalldocs.
#  linux-mod-r1_pkg_postinst: depmod for KV_FULL (recorded here, not run:
#    this is the build host).

inherit linux-info toolchain-funcs

# shellcheck disable=SC2034 # accumulated by inherit
IUSE="dist-kernel modules-sign +strip"

declare -gA __H_MODULES_INSTALL=()
__H_MODULES_INTO=
__H_MODULES_SETUP=
__H_MODULES_POSTPROC=

__h_modules_need_setup() {
	[[ -n ${__H_MODULES_SETUP} ]] ||
		die "${FUNCNAME[1]} was called without running linux-mod-r1_pkg_setup"
}

# __h_version_lt A B: A < B, comparing dotted numbers.
__h_version_lt() {
	[[ $1 != "$2" && $(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1) == "$1" ]]
}

# __h_first_tool VAR CANDIDATE...: VAR (if the user set it) or the first
# candidate found in PATH.
__h_first_tool() {
	local var=$1 c
	shift
	[[ -n ${!var-} ]] && return 0
	for c; do
		if type -P "${c}" >/dev/null; then
			printf -v "${var}" '%s' "${c}"
			return 0
		fi
	done
	return 1
}

linux-mod-r1_pkg_setup() {
	[[ ${MERGE_TYPE} != binary ]] || return 0
	__H_MODULES_SETUP=1
	# What the ebuild left in CONFIG_CHECK (run.sh checks it is there).
	__h_event modules_config_check "${CONFIG_CHECK-}"

	get_version || die "Unable to get the kernel version"
	[[ -n ${KV_FULL} ]] || die "kernel sources are required to build kernel modules"
	require_configured_kernel
	[[ -r ${KV_OUT_DIR}/Module.symvers ]] ||
		die "${KV_OUT_DIR}/Module.symvers: the kernel was not built"
	if [[ -n ${MODULES_KERNEL_MIN-} ]] &&
		__h_version_lt "${KV_MAJOR}.${KV_MINOR}.${KV_PATCH}" "${MODULES_KERNEL_MIN}"; then
		die "kernel ${KV_FULL} is older than MODULES_KERNEL_MIN=${MODULES_KERNEL_MIN}"
	fi

	local CONFIG_CHECK="${CONFIG_CHECK-} MODULES !TRIM_UNUSED_KSYMS"
	linux-info_pkg_setup

	# The toolchain of the kernel's config: gcc of the same major version.
	: "${KERNEL_CHOST:=${CHOST}}"
	if linux_chkconfig_present CC_IS_GCC; then
		local gccv
		gccv=$(linux_chkconfig_string GCC_VERSION)
		gccv=${gccv::2}
		__h_first_tool KERNEL_CC "${KERNEL_CHOST}-gcc-${gccv}" "${KERNEL_CHOST}-gcc" \
			"gcc-${gccv}" gcc
		__h_first_tool KERNEL_CXX "${KERNEL_CHOST}-g++-${gccv}" "${KERNEL_CHOST}-g++" \
			"g++-${gccv}" g++
	fi
	linux_chkconfig_present LD_IS_BFD &&
		__h_first_tool KERNEL_LD "${KERNEL_CHOST}-ld.bfd" ld.bfd
	local t
	for t in AR NM OBJCOPY OBJDUMP READELF STRIP; do
		__h_first_tool "KERNEL_${t}" "${KERNEL_CHOST}-${t,,}" "${t,,}"
	done
	local CHOST=${KERNEL_CHOST}
	: "${KERNEL_CC:=$(tc-getCC)}" "${KERNEL_CXX:=$(tc-getCXX)}" "${KERNEL_LD:=$(tc-getLD)}"

	MODULES_MAKEARGS=(
		ARCH="$(tc-arch-kernel)"
		V=1
		KBUILD_VERBOSE=1
		CONFIG_WERROR=
		# installing: the eclass strips, signs, compresses and runs depmod
		CONFIG_MODULE_SIG_ALL=
		CONFIG_MODULE_COMPRESS_GZIP=
		CONFIG_MODULE_COMPRESS_XZ=
		CONFIG_MODULE_COMPRESS_ZSTD=
		DEPMOD=true
		STRIP=true
		CROSS_COMPILE="${KERNEL_CHOST}-"
		HOSTCC="$(tc-getBUILD_CC)"
		HOSTCXX="$(tc-getBUILD_CXX)"
		CC="${KERNEL_CC}"
		CXX="${KERNEL_CXX}"
		LD="${KERNEL_LD}"
		AR="${KERNEL_AR}"
		NM="${KERNEL_NM}"
		OBJCOPY="${KERNEL_OBJCOPY}"
		OBJDUMP="${KERNEL_OBJDUMP}"
		READELF="${KERNEL_READELF}"
	)
	__h_event modules_makeargs "${MODULES_MAKEARGS[@]}"
}

linux-mod-r1_src_compile() {
	__h_modules_need_setup
	[[ ${modlist@a} == *a* && ${#modlist[@]} -gt 0 ]] ||
		die "linux-mod-r1_src_compile was called without a 'modlist' array"
	local -a args=( "${MODULES_MAKEARGS[@]}" )
	[[ ${modargs@a} == *a* ]] && args+=( "${modargs[@]}" )

	local entry name rest installdir srcdir builddir target t
	local -a f
	for entry in "${modlist[@]}"; do
		name=${entry%%=*}
		[[ -n ${name} && ${name} != *:* ]] || die "invalid modlist entry '${entry}'"
		rest=
		[[ ${entry} == *=* ]] && rest=${entry#*=}
		IFS=: read -ra f <<<"${rest}"
		[[ ${#f[@]} -le 4 ]] || die "too many ':' in the modlist entry of ${name}"
		installdir=${f[0]:-extra}
		srcdir=${f[1]:-${PWD}}
		[[ ${srcdir} == /* ]] || srcdir=${PWD}/${srcdir}
		builddir=${f[2]:-${srcdir}}
		[[ ${builddir} == /* ]] || builddir=${PWD}/${builddir}
		target=${f[3]-}
		__h_event modlist "${name}" "${installdir}" "${srcdir}" "${builddir}" "${target}"
		__H_MODULES_INSTALL[${builddir}/${name}.ko]=${installdir}

		pushd "${srcdir}" >/dev/null || die "modlist: no source directory ${srcdir}"
		if [[ -z ${target} ]]; then
			# Documented guess: the first of these the Makefile can make.
			for t in modules module "${name}.ko" default all; do
				if make -n "${args[@]}" "${t}" &>/dev/null; then
					target=${t}
					break
				fi
			done
		fi
		einfo "Building ${name} module in ${srcdir} ..."
		# shellcheck disable=SC2086 # several targets may be given, space-separated
		emake "${args[@]}" ${target}
		popd >/dev/null || die
	done
}

linux_moduleinto() {
	[[ $# -eq 1 ]] || die "Usage: linux_moduleinto <install-dir>"
	__H_MODULES_INTO=$1
}

linux_domodule() {
	__h_modules_need_setup
	[[ $# -ge 1 ]] || die "Usage: linux_domodule <module>..."
	(
		insinto "/lib/modules/${KV_FULL}/${__H_MODULES_INTO:-extra}"
		doins "$@"
	)
}

# shellcheck disable=SC2120 # [<path>] is optional
modules_post_process() {
	__h_modules_need_setup
	[[ ${EBUILD_PHASE} == install ]] ||
		die "modules_post_process can only be called in the src_install phase"
	local path=${ED%/}${1-/lib/modules/${KV_FULL}} m ver
	local -a mods=()
	[[ -d ${path} ]] && mapfile -td '' mods < <(find "${path}" -type f -name '*.ko' -print0)
	[[ ${#mods[@]} -gt 0 ]] || die "modules_post_process: no modules installed under ${path}"

	dostrip -x "${mods[@]#"${ED%/}"}"
	if use strip; then
		"${KERNEL_STRIP}" --strip-unneeded -- "${mods[@]}" || die "strip failed"
		__h_event modules_strip "${mods[@]#"${ED%/}"}"
	fi
	use modules-sign && die "the harness does not sign modules (USE=modules-sign)"
	for m in "${mods[@]}"; do
		ver=$(LC_ALL=C modinfo -F vermagic -- "${m}") || die "modinfo cannot read ${m}"
		ver=${ver%% *}
		[[ ${ver} == "${KV_FULL}" ]] ||
			die "${m##*/} was built for kernel '${ver}', not '${KV_FULL}'"
	done
	local -a compress=()
	if linux_chkconfig_present MODULE_COMPRESS_XZ; then
		compress=( xz -q )
	elif linux_chkconfig_present MODULE_COMPRESS_GZIP; then
		compress=( gzip )
	elif linux_chkconfig_present MODULE_COMPRESS_ZSTD; then
		compress=( zstd -q --rm )
	fi
	if [[ ${#compress[@]} -gt 0 ]]; then
		"${compress[@]}" -- "${mods[@]}" || die "compressing the modules failed"
	fi
	__H_MODULES_POSTPROC=1
}

linux-mod-r1_src_install() {
	__h_modules_need_setup
	[[ ${#__H_MODULES_INSTALL[@]} -gt 0 ]] ||
		die "linux-mod-r1_src_install was called without running linux-mod-r1_src_compile"
	local mod
	for mod in "${!__H_MODULES_INSTALL[@]}"; do
		linux_moduleinto "${__H_MODULES_INSTALL[${mod}]}"
		linux_domodule "${mod}"
	done
	# shellcheck disable=SC2119
	modules_post_process
	einstalldocs
}

linux-mod-r1_pkg_postinst() {
	__h_modules_need_setup
	__h_event depmod -ae "${KV_FULL}"
	einfo "Updating module dependencies for kernel ${KV_FULL} ... (not on the build host)"
	[[ -n ${__H_MODULES_POSTPROC} ]] ||
		eqawarn "neither linux-mod-r1_src_install nor modules_post_process were used"
}

EXPORT_FUNCTIONS pkg_setup src_compile src_install pkg_postinst
