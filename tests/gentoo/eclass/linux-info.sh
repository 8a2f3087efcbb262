# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # KV_* and the harness's variables: set and read at run time
#
# Stand-in for linux-info.eclass, from its documentation:
#  - KERNEL_DIR (default /usr/src/linux) is the kernel tree, KBUILD_OUTPUT the
#    tree it was built in (default: the same); get_version sets KV_DIR,
#    KV_OUT_DIR and, unless KV_FULL is already set, KV_FULL, then
#    KV_MAJOR, KV_MINOR, KV_PATCH and KV_EXTRA;
#  - linux_chkconfig_present/_module/_builtin/_string read the tree's .config;
#  - CONFIG_CHECK is a list of options: OPT must be set (=y or =m), !OPT must
#    not be, a leading ~ makes the check a warning only; ERROR_OPT (WARNING_OPT
#    for ~ checks) is the message when it fails; a failed fatal check dies.
#    linux-info_pkg_setup evaluates it.

get_version() {
	KV_DIR=${KERNEL_DIR:-/usr/src/linux}
	KV_OUT_DIR=${KBUILD_OUTPUT:-${KV_DIR}}
	if [[ ! -d ${KV_DIR} ]]; then
		eerror "Unable to find kernel sources at ${KV_DIR}"
		return 1
	fi
	if [[ -z ${KV_FULL-} ]]; then
		[[ -r ${KV_OUT_DIR}/include/config/kernel.release ]] || {
			eerror "${KV_OUT_DIR}: no include/config/kernel.release"
			return 1
		}
		KV_FULL=$(<"${KV_OUT_DIR}/include/config/kernel.release")
	fi
	[[ ${KV_FULL} =~ ^([0-9]+)\.([0-9]+)(\.([0-9]+))?(.*)$ ]] || {
		eerror "Cannot parse the kernel version '${KV_FULL}'"
		return 1
	}
	KV_MAJOR=${BASH_REMATCH[1]}
	KV_MINOR=${BASH_REMATCH[2]}
	KV_PATCH=${BASH_REMATCH[4]:-0}
	KV_EXTRA=${BASH_REMATCH[5]}
	__h_event get_version "${KV_FULL}" "${KV_DIR}" "${KV_OUT_DIR}"
	return 0
}

linux_config_exists() {
	[[ -s ${KV_OUT_DIR}/.config ]]
}

require_configured_kernel() {
	linux_config_exists || die "The kernel in ${KV_OUT_DIR} is not configured (no .config)"
}

# __h_config_value OPT: the value of CONFIG_OPT in .config, or nothing.
__h_config_value() {
	sed -n "s/^CONFIG_${1}=//p" "${KV_OUT_DIR}/.config" | tail -n 1
}

linux_chkconfig_present() {
	[[ $(__h_config_value "$1") == [ym] ]]
}

linux_chkconfig_module() {
	[[ $(__h_config_value "$1") == m ]]
}

linux_chkconfig_builtin() {
	[[ $(__h_config_value "$1") == y ]]
}

linux_chkconfig_string() {
	__h_config_value "$1"
}

check_extra_config() {
	__h_event check_extra_config "${CONFIG_CHECK-}"
	[[ -n ${CHECKCONFIG_DONOTHING-} ]] && return 0
	require_configured_kernel
	local item opt fatal negate set msgvar msg
	local -a errors=() warnings=()
	for item in ${CONFIG_CHECK-}; do
		fatal=1 negate=
		[[ ${item} == '~'* ]] && { fatal=; item=${item#'~'}; }
		[[ ${item} == '!'* ]] && { negate=1; item=${item#'!'}; }
		opt=${item}
		set=
		linux_chkconfig_present "${opt}" && set=1
		if [[ -n ${negate} && -z ${set} ]] || [[ -z ${negate} && -n ${set} ]]; then
			continue
		fi
		if [[ -n ${fatal} ]]; then msgvar=ERROR_${opt}; else msgvar=WARNING_${opt}; fi
		[[ -z ${!msgvar-} ]] && msgvar=ERROR_${opt}
		if [[ -n ${!msgvar-} ]]; then
			msg=${!msgvar}
		elif [[ -n ${negate} ]]; then
			msg="CONFIG_${opt}: is set when it should not be"
		else
			msg="CONFIG_${opt}: is not set when it should be"
		fi
		if [[ -n ${fatal} ]]; then errors+=( "${msg}" ); else warnings+=( "${msg}" ); fi
	done
	for msg in "${warnings[@]}"; do ewarn "${msg}"; done
	if [[ ${#errors[@]} -gt 0 ]]; then
		eerror "The kernel configuration in ${KV_OUT_DIR} lacks what ${CATEGORY}/${PN} needs:"
		for msg in "${errors[@]}"; do eerror "  ${msg}"; done
		die "Please check to make sure these options are set correctly: ${errors[*]}"
	fi
}

linux-info_pkg_setup() {
	get_version || die "Unable to get the kernel version from ${KERNEL_DIR:-/usr/src/linux}"
	[[ -n ${CONFIG_CHECK-} ]] && check_extra_config
	return 0
}

EXPORT_FUNCTIONS pkg_setup
