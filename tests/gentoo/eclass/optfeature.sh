# shellcheck shell=bash
#
# Stand-in for optfeature.eclass, from its documentation: optfeature DESC
# ATOM... (in pkg_postinst) tells the user, through elog, which packages to
# install for an optional feature, unless one of the atoms is installed
# already (has_version, which is never true in the harness's empty ROOT).

__H_OPTFEATURE_HEADER=

optfeature() {
	[[ $# -ge 2 ]] || die "optfeature: a description and at least one atom are needed"
	local desc=$1 atom
	shift
	__h_event optfeature "${desc}" "$@"
	for atom; do
		has_version "${atom}" && return 0
	done
	if [[ -z ${__H_OPTFEATURE_HEADER} ]]; then
		__H_OPTFEATURE_HEADER=1
		elog "Install additional packages for optional runtime features:"
	fi
	elog "  $* for ${desc}"
}
