# shellcheck shell=bash
# shellcheck disable=SC2154 # EPREFIX, ESYSROOT: set by harness.sh
#
# Stand-in for systemd.eclass, from its documentation: the folders of
# systemd's files come from systemd.pc (pkg-config), or a fallback when
# systemd is not installed, without ${D} and with ${EPREFIX}; systemd_dounit
# and systemd_newunit install into the unit folder.  Only what aesloop's
# ebuilds use.

inherit toolchain-funcs

# shellcheck disable=SC2034 # accumulated by inherit
BDEPEND="virtual/pkgconfig"

# __h_systemd_dir VARIABLE FALLBACK
__h_systemd_dir() {
	local d
	if $(tc-getPKG_CONFIG) --exists systemd; then
		d=$($(tc-getPKG_CONFIG) --variable="$1" systemd) || die "pkg-config --variable=$1 systemd failed"
		d=${d#"${ESYSROOT}"}
	else
		d=$2
	fi
	__h_event systemd_dir "$1" "${d}"
	echo "${EPREFIX}${d}"
}

systemd_get_systemunitdir() { __h_systemd_dir systemdsystemunitdir /lib/systemd/system; }
systemd_get_systemgeneratordir() { __h_systemd_dir systemdsystemgeneratordir /lib/systemd/system-generators; }

systemd_dounit() {
	(
		insinto "$(systemd_get_systemunitdir)"
		doins "$@"
	)
}

systemd_newunit() {
	(
		insinto "$(systemd_get_systemunitdir)"
		newins "$@"
	)
}
