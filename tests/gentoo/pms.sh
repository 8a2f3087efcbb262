# shellcheck shell=bash
# shellcheck disable=SC2154 # P, PF, ED, WORKDIR...: set by harness.sh, as the package manager would
#
# Stand-ins for the package manager's side of an EAPI 8 ebuild, written from
# the Package Manager Specification (PMS) and the Gentoo devmanual: die and
# nonfatal, use and its relatives, the output and install helpers, emake,
# econf, unpack, eapply, einstalldocs and the default phase functions.  Sourced
# by harness.sh.  Every helper that PMS says dies on failure dies here too,
# unless run under nonfatal.
#
# Events go to ${HARNESS_TRACE}, one a line: a name, then its arguments
# quoted with printf %q (run.sh reads them back with eval).

__h_event() {
	local ev=$1
	shift
	printf '%s%s\n' "${ev}" "$(printf ' %q' "$@")" >>"${HARNESS_TRACE}"
}

# --- dying -------------------------------------------------------------------

# die [-n] [message]: ends the ebuild.  As in Portage, also from a subshell:
# the harness's main shell is told with SIGTERM.  -n (EAPI 6+): under nonfatal,
# return 1 instead.
die() {
	if [[ ${1-} == -n ]]; then
		shift
		[[ -n ${__H_NONFATAL-} ]] && { eerror "${*:-(no message)}"; return 1; }
	fi
	local where=${FUNCNAME[1]:-global scope}
	echo "!!! ERROR: ${CATEGORY}/${PF} failed (${EBUILD_PHASE_FUNC:-${EBUILD_PHASE}} phase):" >&2
	echo "!!!   ${*:-(no error message)}  [in ${where}]" >&2
	__h_event die "${*:-(no error message)}" "${where}"
	if [[ ${BASHPID} != "${HARNESS_PID}" ]]; then
		kill -s TERM "${HARNESS_PID}" 2>/dev/null
	fi
	exit 1
}

# nonfatal CMD...: runs CMD; helpers in it return non-zero instead of dying.
nonfatal() {
	local __H_NONFATAL=1
	"$@"
}

# __h_fail MESSAGE: what a failing helper does (PMS: die, or under nonfatal
# return non-zero).
__h_fail() {
	if [[ -n ${__H_NONFATAL-} ]]; then
		eerror "$*"
		return 1
	fi
	die "$*"
}

# --- USE flags ---------------------------------------------------------------

has() {
	local needle=$1 x
	shift
	for x; do
		[[ ${x} == "${needle}" ]] && return 0
	done
	return 1
}

# __h_in WORD "LIST": WORD is one of the blank-separated words of LIST.
__h_in() {
	[[ " ${2//[$'\t\n']/ } " == *" ${1} "* ]]
}

hasv() {
	has "$@" && echo "$1"
}

# in_iuse FLAG (EAPI 6+): true when FLAG is in IUSE_EFFECTIVE.
in_iuse() {
	[[ $# -eq 1 ]] || die "in_iuse takes one argument"
	__h_in "$1" "${IUSE_EFFECTIVE}"
}

# use [!]FLAG: PMS: only in phase functions, and FLAG must be in
# IUSE_EFFECTIVE (Portage dies otherwise, as here).
use() {
	[[ $# -eq 1 ]] || die "use takes one argument, got: $*"
	[[ ${EBUILD_PHASE} == depend ]] &&
		die "use ${1} at global scope (PMS: use is only allowed in phase functions)"
	local flag=${1#!}
	__h_in "${flag}" "${IUSE_EFFECTIVE}" ||
		die "USE flag '${flag}' is not in IUSE for ${CATEGORY}/${PF}"
	local on=1
	__h_in "${flag}" "${USE}" && on=0
	if [[ $1 == !* ]]; then
		return $((!on))
	fi
	return "${on}"
}

usev() {
	use "$1" && echo "${2:-${1#!}}"
	return 0
}

usex() {
	if use "$1"; then echo "${2-yes}$4"; else echo "${3-no}$5"; fi
}

use_with() {
	local opt=${2:-${1#!}}
	if use "$1"; then echo "--with-${opt}${3+=$3}"; else echo "--without-${opt}"; fi
}

use_enable() {
	local opt=${2:-${1#!}}
	if use "$1"; then echo "--enable-${opt}${3+=$3}"; else echo "--disable-${opt}"; fi
}

# --- output ------------------------------------------------------------------

einfo() { echo " * $*"; __h_event einfo "$*"; }
einfon() { echo -n " * $*"; }
elog() { echo " * $*"; __h_event elog "$*"; }
ewarn() { echo " * WARNING: $*" >&2; __h_event ewarn "$*"; }
eerror() { echo " * ERROR: $*" >&2; __h_event eerror "$*"; }
eqawarn() { echo " * QA Notice: $*" >&2; __h_event eqawarn "$*"; }
ebegin() { echo " * $* ..."; }
eend() { return "${1:-0}"; }
debug-print() { :; }
debug-print-function() { :; }

# --- install helpers ---------------------------------------------------------

INSDESTTREE=/
DOCDESTTREE=

insinto() { INSDESTTREE=${1:-/}; }
docinto() { DOCDESTTREE=${1#/}; }

# __h_install MODE DIR SRC [NAME]: one file into ${ED}DIR, "-" for stdin.
__h_install() {
	local mode=$1 dir=${ED%/}/${2#/} src=$3 name=${4:-${3##*/}}
	dir=${dir%/}
	mkdir -p "${dir}" || return 1
	if [[ ${src} == - ]]; then
		cat >"${dir}/${name}" && chmod "${mode}" "${dir}/${name}" || return 1
	else
		[[ -f ${src} ]] || { eerror "${src}: no such file"; return 1; }
		install -m "${mode}" "${src}" "${dir}/${name}" || return 1
	fi
	__h_event install "${dir#"${D%/}"}/${name}"
}

# __h_install_tree MODE DIR SRC: a directory, recursively (doins -r, dodoc -r).
__h_install_tree() {
	local mode=$1 dir=$2 src=${3%/} parent f rel
	parent=$(dirname "${src}")
	while IFS= read -r -d '' f; do
		rel=${f#"${parent}/"}
		__h_install "${mode}" "${dir}/${rel%/*}" "${f}" || return 1
	done < <(find "${src}" -type f -print0)
}

doins() {
	local recursive='' f
	[[ ${1-} == -r ]] && { recursive=1; shift; }
	[[ $# -gt 0 ]] || die "doins: no files"
	for f; do
		if [[ -d ${f} && -n ${recursive} ]]; then
			__h_install_tree 0644 "${INSDESTTREE}" "${f}" || __h_fail "doins -r ${f} failed" || return
		else
			__h_install 0644 "${INSDESTTREE}" "${f}" || __h_fail "doins ${f} failed" || return
		fi
	done
}

newins() {
	[[ $# -eq 2 ]] || die "newins takes two arguments"
	__h_install 0644 "${INSDESTTREE}" "$1" "$2" || __h_fail "newins $1 $2 failed"
}

dodoc() {
	local recursive='' f dir=/usr/share/doc/${PF}/${DOCDESTTREE}
	[[ ${1-} == -r ]] && { recursive=1; shift; }
	[[ $# -gt 0 ]] || die "dodoc: no files"
	for f; do
		if [[ -d ${f} && -n ${recursive} ]]; then
			__h_install_tree 0644 "${dir}" "${f}" || __h_fail "dodoc -r ${f} failed" || return
		else
			__h_install 0644 "${dir}" "${f}" || __h_fail "dodoc ${f} failed" || return
		fi
	done
}

newdoc() {
	__h_install 0644 "/usr/share/doc/${PF}/${DOCDESTTREE}" "$1" "$2" || __h_fail "newdoc $1 $2 failed"
}

dobin() {
	local f
	for f; do __h_install 0755 /usr/bin "${f}" || __h_fail "dobin ${f} failed" || return; done
}

dosbin() {
	local f
	for f; do __h_install 0755 /usr/sbin "${f}" || __h_fail "dosbin ${f} failed" || return; done
}

newbin() {
	[[ $# -eq 2 ]] || die "newbin takes two arguments"
	__h_install 0755 /usr/bin "$1" "$2" || __h_fail "newbin $1 $2 failed"
}

newsbin() {
	[[ $# -eq 2 ]] || die "newsbin takes two arguments"
	__h_install 0755 /usr/sbin "$1" "$2" || __h_fail "newsbin $1 $2 failed"
}

# doman: the section comes from the name's suffix (PMS).
__h_man_section() {
	local name=${1##*/}
	name=${name%.gz}
	[[ ${name} =~ \.([1-9n])[a-z]*$ ]] || return 1
	echo "${BASH_REMATCH[1]}"
}

doman() {
	local f s
	for f; do
		s=$(__h_man_section "${f}") || __h_fail "doman: ${f}: no section in the name" || return
		__h_install 0644 "/usr/share/man/man${s}" "${f}" || __h_fail "doman ${f} failed" || return
	done
}

newman() {
	[[ $# -eq 2 ]] || die "newman takes two arguments"
	local s
	s=$(__h_man_section "$2") || __h_fail "newman: $2: no section in the name" || return
	__h_install 0644 "/usr/share/man/man${s}" "$1" "$2" || __h_fail "newman $1 $2 failed"
}

# exeinto DIR, doexe FILE..., newexe FILE NAME: executables (mode 0755) into
# DIR (default /).
EXEDESTTREE=/

exeinto() { EXEDESTTREE=${1:-/}; }

doexe() {
	local f
	[[ $# -gt 0 ]] || die "doexe: no files"
	for f; do __h_install 0755 "${EXEDESTTREE}" "${f}" || __h_fail "doexe ${f} failed" || return; done
}

newexe() {
	[[ $# -eq 2 ]] || die "newexe takes two arguments"
	__h_install 0755 "${EXEDESTTREE}" "$1" "$2" || __h_fail "newexe $1 $2 failed"
}

dodir() {
	local d
	for d; do mkdir -p "${ED%/}/${d#/}" || __h_fail "dodir ${d} failed" || return; done
}

# dostrip -x PATH...: the package manager must not strip these (EAPI 7+).
dostrip() {
	__h_event dostrip "$@"
}

# has_version ATOM: true when ATOM is installed in ROOT.  The harness's ROOT
# holds no installed packages (there is no Gentoo package database here).
has_version() {
	__h_event has_version "$@"
	return 1
}

# --- build helpers -----------------------------------------------------------

# emake: make with MAKEOPTS, dies on failure (PMS, EAPI 4+).
emake() {
	__h_event emake "${PWD}" "$@"
	# shellcheck disable=SC2086 # MAKEOPTS and EXTRA_EMAKE are word lists
	${MAKE:-make} ${MAKEOPTS} "$@" ${EXTRA_EMAKE} ||
		__h_fail "emake failed in ${PWD} (make ... ${*: -1})"
}

# econf: ./configure with the options PMS lists for EAPI 8, then the
# ebuild's own (which come last and so win).
# shellcheck disable=SC2120 # ebuilds pass the arguments
econf() {
	local src=${ECONF_SOURCE:-.} help
	[[ -x ${src}/configure ]] || die "econf: no ${src}/configure"
	help=$("${src}/configure" --help 2>/dev/null)
	local -a args=(
		--prefix="${EPREFIX}/usr"
		${CBUILD:+--build="${CBUILD}"}
		--host="${CHOST}"
		${CTARGET:+--target="${CTARGET}"}
		--mandir="${EPREFIX}/usr/share/man"
		--infodir="${EPREFIX}/usr/share/info"
		--datadir="${EPREFIX}/usr/share"
		--datarootdir="${EPREFIX}/usr/share"
		--sysconfdir="${EPREFIX}/etc"
		--localstatedir="${EPREFIX}/var/lib"
		--libdir="${EPREFIX}/usr/${HARNESS_LIBDIR:-lib64}"
	)
	[[ ${help} == *--disable-dependency-tracking* ]] && args+=( --disable-dependency-tracking )
	[[ ${help} == *--disable-silent-rules* ]] && args+=( --disable-silent-rules )
	[[ ${help} == *--docdir* ]] && args+=( --docdir="${EPREFIX}/usr/share/doc/${PF}" )
	[[ ${help} == *--htmldir* ]] && args+=( --htmldir="${EPREFIX}/usr/share/doc/${PF}/html" )
	[[ ${help} == *--with-sysroot* ]] && args+=( --with-sysroot="${ESYSROOT:-/}" )
	[[ ${help} == *--disable-static* || ${help} == *--enable-static* ]] && args+=( --disable-static )
	__h_event econf "${PWD}" "${args[@]}" "$@"
	"${src}/configure" "${args[@]}" "$@" || __h_fail "econf failed"
}

# unpack FILE...: bare names from DISTDIR, ./paths as given; into the
# current directory.
unpack() {
	local f path
	for f; do
		if [[ ${f} == ./* || ${f} == /* ]]; then path=${f}; else path=${DISTDIR}/${f}; fi
		[[ -f ${path} ]] || die "unpack: ${path}: no such file"
		__h_event unpack "${f}"
		case ${f} in
			*.tar) tar -xof "${path}" ;;
			*.tar.gz | *.tgz) tar -xozf "${path}" ;;
			*.tar.bz2 | *.tbz2) tar -xojf "${path}" ;;
			*.tar.xz | *.txz) tar -xoJf "${path}" ;;
			*) die "unpack: ${f}: format not handled by the harness" ;;
		esac || die "unpack: ${f} failed"
	done
}

# eapply [OPTIONS] [--] FILE|DIR...: patch -p1 -f -g0 --no-backup-if-mismatch
# (PMS, EAPI 6+); a directory means its *.diff and *.patch files in order.
eapply() {
	local -a opts=() files=()
	while [[ $# -gt 0 ]]; do
		case $1 in
			--) shift; files+=( "$@" ); break ;;
			-*) opts+=( "$1" ) ;;
			*) files+=( "$1" ) ;;
		esac
		shift
	done
	[[ ${#files[@]} -gt 0 ]] || die "eapply: no patches"
	local f p
	for f in "${files[@]}"; do
		if [[ -d ${f} ]]; then
			for p in "${f}"/*.diff "${f}"/*.patch; do
				[[ -f ${p} ]] && eapply "${opts[@]}" -- "${p}"
			done
			continue
		fi
		[[ -f ${f} ]] || __h_fail "eapply: ${f}: no such patch" || return
		__h_event eapply "${f}"
		einfo "Applying ${f##*/} ..."
		patch -p1 -f -g0 --no-backup-if-mismatch "${opts[@]}" <"${f}" ||
			__h_fail "eapply: ${f##*/} does not apply" || return
	done
}

eapply_user() {
	__h_event eapply_user
}

# einstalldocs (EAPI 6+): DOCS (array or string) or the usual files, then
# HTML_DOCS.
einstalldocs() {
	local d
	if ! declare -p DOCS &>/dev/null; then
		for d in README* ChangeLog AUTHORS NEWS TODO CHANGES THANKS BUGS FAQ CREDITS CHANGELOG; do
			[[ -s ${d} ]] && dodoc "${d}"
		done
	elif [[ $(declare -p DOCS) == "declare -a"* ]]; then
		[[ ${#DOCS[@]} -gt 0 ]] && dodoc -r "${DOCS[@]}"
	else
		# shellcheck disable=SC2086 # a string DOCS is a word list
		[[ -n ${DOCS} ]] && dodoc -r ${DOCS}
	fi
	if declare -p HTML_DOCS &>/dev/null; then
		local DOCDESTTREE=html
		if [[ $(declare -p HTML_DOCS) == "declare -a"* ]]; then
			[[ ${#HTML_DOCS[@]} -gt 0 ]] && dodoc -r "${HTML_DOCS[@]}"
		else
			# shellcheck disable=SC2086
			[[ -n ${HTML_DOCS} ]] && dodoc -r ${HTML_DOCS}
		fi
	fi
	return 0
}

# --- default phase functions (EAPI 8) ---------------------------------------

default_pkg_setup() { :; }
default_pkg_preinst() { :; }
default_pkg_postinst() { :; }

default_src_unpack() {
	# shellcheck disable=SC2086 # A is a word list
	[[ -n ${A} ]] && unpack ${A}
	return 0
}

default_src_prepare() {
	if [[ $(declare -p PATCHES 2>/dev/null) == "declare -a"* ]]; then
		[[ ${#PATCHES[@]} -gt 0 ]] && eapply "${PATCHES[@]}"
	elif [[ -n ${PATCHES-} ]]; then
		# shellcheck disable=SC2086
		eapply ${PATCHES}
	fi
	eapply_user
}

default_src_configure() {
	if [[ -x ${ECONF_SOURCE:-.}/configure ]]; then
		# shellcheck disable=SC2119 # econf with no arguments, as PMS says
		econf
	fi
}

default_src_compile() {
	if [[ -f Makefile || -f GNUmakefile || -f makefile ]]; then
		emake || die "emake failed"
	fi
}

default_src_test() {
	# Only reached with FEATURES=test, which the harness does not set.
	die "default_src_test: the harness does not run test suites"
}

default_src_install() {
	if [[ -f Makefile || -f GNUmakefile || -f makefile ]]; then
		emake DESTDIR="${D}" install
	fi
	einstalldocs
}

# default: the default of the phase being run.
default() {
	"default_${EBUILD_PHASE_FUNC}"
}

# --- inherit and EXPORT_FUNCTIONS ---------------------------------------------

# inherit ECLASS...: sources the harness's stand-in tests/gentoo/eclass/NAME.sh.
# The metadata variables an eclass sets are accumulated apart from the
# ebuild's (PMS "incremental" IUSE, REQUIRED_USE, *DEPEND, PROPERTIES,
# RESTRICT), so that the ebuild's own assignments do not erase them.
inherit() {
	local e f v
	for e; do
		__h_in "${e}" "${INHERITED}" && continue
		f=${HARNESS_ECLASSDIR}/${e}.sh
		[[ -f ${f} ]] || die "inherit ${e}: the harness has no stand-in for this eclass"
		local -A saved=()
		for v in IUSE REQUIRED_USE DEPEND RDEPEND BDEPEND IDEPEND PDEPEND PROPERTIES RESTRICT; do
			if declare -p "${v}" &>/dev/null; then saved[${v}]=${!v}; fi
			unset "${v}"
		done
		local ECLASS=${e}
		INHERITED+=" ${e}"
		__h_event inherit "${e}"
		# shellcheck source=/dev/null
		source "${f}" || die "inherit ${e}: sourcing the stand-in failed"
		for v in IUSE REQUIRED_USE DEPEND RDEPEND BDEPEND IDEPEND PDEPEND PROPERTIES RESTRICT; do
			local acc=E_${v}
			[[ -n ${!v-} ]] && printf -v "${acc}" '%s %s' "${!acc-}" "${!v}"
			unset "${v}"
			if [[ -v saved[${v}] ]]; then printf -v "${v}" '%s' "${saved[${v}]}"; fi
		done
	done
}

# EXPORT_FUNCTIONS PHASE...: PHASE runs ${ECLASS}_PHASE unless the ebuild,
# sourced later, defines its own.
EXPORT_FUNCTIONS() {
	[[ -n ${ECLASS-} ]] || die "EXPORT_FUNCTIONS outside an eclass"
	local phase
	for phase; do
		eval "${phase}() { ${ECLASS}_${phase} \"\$@\"; }"
	done
}
