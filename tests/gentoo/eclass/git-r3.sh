# shellcheck shell=bash
# shellcheck disable=SC2154 # P, WORKDIR, HARNESS_GIT_MIRROR: set by harness.sh
#
# Stand-in for git-r3.eclass, from its documentation: a live package
# (PROPERTIES=live) whose src_unpack checks EGIT_REPO_URI out into
# EGIT_CHECKOUT_DIR (default ${WORKDIR}/${P}).  The harness has no network:
# the repository is the local one given to harness.sh with -g, as a user
# would redirect it with EGIT_OVERRIDE_REPO_*.

# shellcheck disable=SC2034 # read by the harness
PROPERTIES="live"

git-r3_src_unpack() {
	[[ -n ${EGIT_REPO_URI-} ]] || die "git-r3: EGIT_REPO_URI is not set"
	[[ -n ${HARNESS_GIT_MIRROR-} ]] ||
		die "git-r3: no local repository stands for ${EGIT_REPO_URI} (harness.sh -g)"
	local dir=${EGIT_CHECKOUT_DIR:-${WORKDIR}/${P}}
	__h_event git-r3 "${EGIT_REPO_URI}" "${HARNESS_GIT_MIRROR}" "${dir}"
	einfo "Cloning ${EGIT_REPO_URI} (from ${HARNESS_GIT_MIRROR}) ..."
	git clone -q --depth 1 "file://${HARNESS_GIT_MIRROR}" "${dir}" ||
		die "git-r3: clone of ${HARNESS_GIT_MIRROR} failed"
}

EXPORT_FUNCTIONS src_unpack
