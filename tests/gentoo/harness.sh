#!/bin/bash
# Runs one ebuild the way an EAPI 8 package manager would, on this Debian
# machine without Portage: sources it at global scope with the harness's
# stand-ins for the eclasses it inherits (tests/gentoo/eclass/, written from
# their documentation) and for the package manager's helpers
# (tests/gentoo/pms.sh, from PMS), works out IUSE_EFFECTIVE, USE and
# REQUIRED_USE, checks the distfiles against the package's Manifest, then runs
# the phases for real: pkg_setup, src_unpack, src_prepare, src_configure,
# src_compile, src_install (into an image directory), pkg_preinst, pkg_postinst.
# src_test is skipped (FEATURES=-test, Portage's default).
#
#   tests/gentoo/harness.sh [options] CATEGORY/PN/PN-PV.ebuild
#     -u "FLAGS"  USE wanted, as in package.use (-flag turns an IUSE default off)
#     -a ARCH     the profile's ARCH (default amd64; implied in USE)
#     -w DIR      work base, emptied: trace, work/, image/, temp/ go there
#     -d DIR      DISTDIR
#     -k DIR      KERNEL_DIR, the kernel build tree (linux-info)
#     -K KVER     KV_FULL, the kernel release the tree builds for
#     -g REPO     the local git repository a live ebuild's EGIT_REPO_URI stands for
#     -p PHASE    last phase to run: none (metadata and REQUIRED_USE only),
#                 setup, unpack, prepare, configure, compile, install, preinst,
#                 postinst (default)
#
# Exit status: 0 done; 1 the ebuild died (message in the trace and on stderr);
# 2 usage or harness error; 3 REQUIRED_USE not satisfied; 4 a distfile is
# missing or does not match the Manifest.
#
# The trace (WORKDIR_BASE/trace) records one event a line: metadata, USE, what
# the eclass stand-ins were given (CONFIG_CHECK, MODULES_MAKEARGS, modlist),
# every emake/econf/eapply/unpack call with its arguments, every installed
# file, every elog line and any die.  tests/gentoo/run.sh checks it.
# (No set -u or set -e: ebuilds and eclasses are written for bash's defaults,
# which is how Portage runs them.)
#
# shellcheck disable=SC2034 # the package manager's variables, read by the ebuild

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
	sed -n '2,/^# (No set -u/p' "$0" | sed -n 's/^# \{0,1\}//p' >&2
	exit 2
}

opt_use='' opt_arch=amd64 opt_work='' opt_dist='' opt_kdir='' opt_kver='' opt_git='' opt_last=postinst
while getopts u:a:w:d:k:K:g:p:h o; do
	case ${o} in
		u) opt_use=${OPTARG} ;;
		a) opt_arch=${OPTARG} ;;
		w) opt_work=${OPTARG} ;;
		d) opt_dist=${OPTARG} ;;
		k) opt_kdir=${OPTARG} ;;
		K) opt_kver=${OPTARG} ;;
		g) opt_git=${OPTARG} ;;
		p) opt_last=${OPTARG} ;;
		*) usage ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 1 && -n ${opt_work} ]] || usage
[[ -f $1 ]] || { echo "harness.sh: $1: no such ebuild" >&2; exit 2; }

EBUILD=$(cd "$(dirname "$1")" && pwd)/${1##*/}
phases_all=(setup unpack prepare configure compile test install preinst postinst)
case " none ${phases_all[*]} " in
	*" ${opt_last} "*) ;;
	*) echo "harness.sh: -p ${opt_last}: not a phase" >&2; exit 2 ;;
esac

# --- names from the path: CATEGORY/PN/PN-PV[-rN].ebuild -------------------------
pkgdir=$(dirname "${EBUILD}")
PN=${pkgdir##*/}
CATEGORY=$(basename "$(dirname "${pkgdir}")")
PF=${EBUILD##*/}
PF=${PF%.ebuild}
[[ ${PF} == "${PN}"-* ]] || { echo "harness.sh: ${EBUILD##*/} is not named ${PN}-VERSION.ebuild" >&2; exit 2; }
PVR=${PF#"${PN}"-}
if [[ ${PVR} =~ ^(.*)-(r[0-9]+)$ ]]; then
	PV=${BASH_REMATCH[1]}
	PR=${BASH_REMATCH[2]}
else
	PV=${PVR}
	PR=r0
fi
P=${PN}-${PV}

# --- the build environment ----------------------------------------------------
mkdir -p "${opt_work}" || exit 2
WORKBASE=$(cd "${opt_work}" && pwd)
rm -rf "${WORKBASE:?}"/{work,image,temp,empty,trace}
mkdir -p "${WORKBASE}"/{work,image,temp/home,empty}
HARNESS_TRACE=${WORKBASE}/trace
: >"${HARNESS_TRACE}"
HARNESS_PID=$$
HARNESS_ECLASSDIR=${here}/eclass
HARNESS_GIT_MIRROR=${opt_git}
export HARNESS_TRACE

WORKDIR=${WORKBASE}/work
T=${WORKBASE}/temp
D=${WORKBASE}/image
EPREFIX=
ED=${D}
ROOT=
EROOT=
BROOT=
SYSROOT=
ESYSROOT=
FILESDIR=${pkgdir}/files
DISTDIR=${opt_dist:-${WORKBASE}/distfiles}
S=${WORKDIR}/${P}
MERGE_TYPE=source
REPLACING_VERSIONS=
ARCH=${opt_arch}
HOME=${T}/home
TMPDIR=${T}
# What a stock make.conf gives, and Debian's triplet as CHOST so that the
# CHOST-prefixed tools the eclasses look for exist here.
CHOST=$(gcc -dumpmachine)
CBUILD=${CHOST}
CFLAGS="-O2 -pipe"
CXXFLAGS=${CFLAGS}
LDFLAGS="-Wl,-O1 -Wl,--as-needed"
MAKEOPTS="-j$(nproc)"
export HOME TMPDIR CHOST CBUILD CFLAGS CXXFLAGS LDFLAGS MAKEOPTS
unset CC CXX CPP LD AR NM RANLIB STRIP OBJCOPY OBJDUMP READELF PKG_CONFIG KERNEL_CC
[[ -n ${opt_kdir} ]] && KERNEL_DIR=${opt_kdir}
[[ -n ${opt_kver} ]] && KV_FULL=${opt_kver}
INHERITED=
E_IUSE='' E_REQUIRED_USE='' E_PROPERTIES='' E_RESTRICT='' E_DEPEND='' E_RDEPEND='' E_BDEPEND=''

# shellcheck source=pms.sh
source "${here}/pms.sh"

trap 'exit 1' TERM

# --- global scope -----------------------------------------------------------------
EBUILD_PHASE=depend
EBUILD_PHASE_FUNC=
__h_event ebuild "${CATEGORY}/${PF}" "${EBUILD}"
shopt -s failglob # PMS, EAPI 6+: failglob in global scope
# shellcheck source=/dev/null
source "${EBUILD}" || die "sourcing the ebuild failed"
shopt -u failglob

[[ ${EAPI-} == 8 ]] || die "EAPI=${EAPI-} (unset): these stand-ins are for EAPI 8"
for v in DESCRIPTION SLOT LICENSE; do
	[[ -n ${!v-} ]] || die "${v} is not set"
done

# IUSE_EFFECTIVE: the ebuild's IUSE and the eclasses', and the profile's
# implicit flags (ARCH values, elibc/kernel, test).
iuse_all=" ${IUSE-} ${E_IUSE} "
IUSE_EFFECTIVE=
use_defaults=
for f in ${iuse_all}; do
	case ${f} in
		+*) IUSE_EFFECTIVE+=" ${f#+}"; use_defaults+=" ${f#+}" ;;
		-*) IUSE_EFFECTIVE+=" ${f#-}" ;;
		*) IUSE_EFFECTIVE+=" ${f}" ;;
	esac
done
implicit="alpha amd64 arm arm64 hppa loong m68k mips ppc ppc64 riscv s390 sparc x86 kernel_linux elibc_glibc elibc_musl test"
IUSE_EFFECTIVE+=" ${implicit}"

# USE: IUSE defaults, then what was asked (unknown flags are dropped, as
# Portage does), then ARCH and the profile's elibc/kernel flags.
USE=
for f in ${use_defaults} ${opt_use}; do
	if [[ ${f} == -* ]]; then
		USE=" ${USE} "
		USE=${USE// "${f#-}" / }
	elif __h_in "${f}" "${IUSE_EFFECTIVE}"; then
		__h_in "${f}" "${USE}" || USE+=" ${f}"
	else
		__h_event use_dropped "${f}"
	fi
done
USE+=" ${ARCH} kernel_linux elibc_glibc"
read -ra words <<<"${USE}"
USE=${words[*]}
read -ra words <<<"${IUSE_EFFECTIVE}"
IUSE_EFFECTIVE=${words[*]}

__h_event meta IUSE "${IUSE-}"
__h_event meta IUSE_EFFECTIVE "${IUSE_EFFECTIVE}"
__h_event meta USE "${USE}"
__h_event meta REQUIRED_USE "${REQUIRED_USE-} ${E_REQUIRED_USE}"
__h_event meta SRC_URI "${SRC_URI-}"
__h_event meta KEYWORDS "${KEYWORDS-}"
__h_event meta RESTRICT "${RESTRICT-} ${E_RESTRICT}"
__h_event meta PROPERTIES "${PROPERTIES-} ${E_PROPERTIES}"
__h_event meta LICENSE "${LICENSE}"
__h_event meta SLOT "${SLOT}"
__h_event meta CONFIG_CHECK "${CONFIG_CHECK-}"
__h_event meta DEPEND "${DEPEND-} ${E_DEPEND}"
__h_event meta RDEPEND "${RDEPEND-} ${E_RDEPEND}"
__h_event meta BDEPEND "${BDEPEND-} ${E_BDEPEND}"
__h_event meta INHERITED "${INHERITED}"

# --- REQUIRED_USE and SRC_URI: PMS dependency-specification syntax -----------------

# __h_flag_on [!]FLAG: FLAG (negated with !) against USE; FLAG must be in
# IUSE_EFFECTIVE.
__h_flag_on() {
	local flag=${1#!} on=1
	__h_in "${flag}" "${IUSE_EFFECTIVE}" || {
		echo "harness.sh: '${flag}' is used in a dependency string but is not in IUSE" >&2
		__h_event die "flag '${flag}' in a dependency string is not in IUSE" global
		exit 1
	}
	__h_in "${flag}" "${USE}" && on=0
	[[ $1 == !* ]] && on=$((!on))
	return "${on}"
}

# REQUIRED_USE: __h_ru_item parses one item at __h_pos and sets __h_val (1
# satisfied, 0 not); __h_ru_group parses "( ... )" into __h_vals.
__h_tok=()
__h_pos=0
__h_ru_group() {
	[[ ${__h_tok[__h_pos]-} == '(' ]] || { echo "REQUIRED_USE: '(' expected at token ${__h_pos}" >&2; exit 2; }
	((__h_pos++))
	local -a vals=()
	while [[ ${__h_tok[__h_pos]-} != ')' ]]; do
		[[ ${__h_pos} -lt ${#__h_tok[@]} ]] || { echo "REQUIRED_USE: unbalanced parentheses" >&2; exit 2; }
		__h_ru_item
		vals+=("${__h_val}")
	done
	((__h_pos++))
	__h_vals=("${vals[@]}")
}
__h_ru_item() {
	local t=${__h_tok[__h_pos]} n=0 v
	local -a vals
	case ${t} in
		'||' | '^^' | '??')
			((__h_pos++))
			__h_ru_group
			vals=("${__h_vals[@]}")
			for v in "${vals[@]}"; do ((n += v)); done
			case ${t} in
				'||') __h_val=$((n >= 1)) ;;
				'^^') __h_val=$((n == 1)) ;;
				'??') __h_val=$((n <= 1)) ;;
			esac
			;;
		'(')
			__h_ru_group
			__h_val=1
			for v in "${__h_vals[@]}"; do ((v)) || __h_val=0; done
			;;
		*'?')
			((__h_pos++))
			local cond=0
			__h_flag_on "${t%'?'}" && cond=1
			__h_ru_group
			__h_val=1
			if ((cond)); then
				for v in "${__h_vals[@]}"; do ((v)) || __h_val=0; done
			fi
			;;
		*)
			((__h_pos++))
			__h_val=0
			__h_flag_on "${t}" && __h_val=1
			;;
	esac
}

# shellcheck disable=SC2206 # split on white space, as PMS does
__h_tok=( ${REQUIRED_USE-} ${E_REQUIRED_USE} )
__h_pos=0
ru_ok=1
while [[ ${__h_pos} -lt ${#__h_tok[@]} ]]; do
	__h_ru_item
	((__h_val)) || ru_ok=0
done
if ((!ru_ok)); then
	echo "harness.sh: REQUIRED_USE not satisfied: ${REQUIRED_USE-} (USE: ${USE})" >&2
	__h_event required_use_unsatisfied "${REQUIRED_USE-}" "${USE}"
	exit 3
fi
__h_event required_use_ok

# __h_use_reduce "SPEC" WHAT: the tokens of SPEC (SRC_URI or a dependency
# string) in force for this USE, into the array __h_active: flag? ( ) groups
# honoured (a flag not in IUSE is an error, as for Portage), the group
# syntax itself and || dropped (|| ( ) groups are kept whole), the rest as it
# stands ("uri -> name" renames stay three tokens).
__h_use_reduce() {
	local -a tok
	local t skip=0 depth=0 i=0
	local -A closes=()
	__h_active=()
	# shellcheck disable=SC2206 # split on white space, as PMS does
	tok=( $1 )
	while [[ ${i} -lt ${#tok[@]} ]]; do
		t=${tok[i]}
		case ${t} in
			*'?')
				i=$((i + 1))
				[[ ${tok[i]-} == '(' ]] || die "$2: '(' expected after ${t}"
				depth=$((depth + 1))
				if ((skip == 0)) && ! __h_flag_on "${t%'?'}"; then
					skip=${depth}
					closes[${depth}]=1
				fi
				;;
			'(') depth=$((depth + 1)) ;;
			')')
				[[ -n ${closes[${depth}]-} ]] && { skip=0; unset "closes[${depth}]"; }
				depth=$((depth - 1))
				;;
			'||') ;;
			*) ((skip == 0)) && __h_active+=("${t}") ;;
		esac
		i=$((i + 1))
	done
}

# A: the distfiles SRC_URI names for this USE ("uri -> name" renames).
A=
__h_use_reduce "${SRC_URI-}" SRC_URI
i=0
while [[ ${i} -lt ${#__h_active[@]} ]]; do
	name=${__h_active[i]##*/}
	if [[ ${__h_active[i + 1]-} == '->' ]]; then
		name=${__h_active[i + 2]}
		i=$((i + 2))
	fi
	A+=" ${name}"
	i=$((i + 1))
done
A=${A# }
__h_event meta A "${A}"

# The dependencies in force for this USE, blank-separated.
for v in DEPEND RDEPEND BDEPEND; do
	acc=E_${v}
	__h_use_reduce "${!v-} ${!acc}" "${v}"
	__h_event meta "${v}_ACTIVE" "${__h_active[*]}"
done

[[ ${opt_last} == none ]] && exit 0

# --- fetch: each distfile must be in DISTDIR and match the Manifest ----------------
manifest=${pkgdir}/Manifest
for f in ${A}; do
	if [[ ! -f ${DISTDIR}/${f} ]]; then
		echo "harness.sh: ${f} is not in DISTDIR ${DISTDIR}" >&2
		__h_event fetch_failed "${f}" "not in DISTDIR"
		exit 4
	fi
	line=$(grep -E "^DIST ${f//./\\.} " "${manifest}" 2>/dev/null)
	if [[ -z ${line} ]]; then
		echo "harness.sh: ${manifest}: no DIST line for ${f}" >&2
		__h_event fetch_failed "${f}" "no DIST line"
		exit 4
	fi
	read -r _ _ size rest <<<"${line}"
	declare -A sums=()
	# shellcheck disable=SC2086 # "NAME HASH NAME HASH..."
	set -- ${rest}
	while [[ $# -ge 2 ]]; do
		sums[$1]=$2
		shift 2
	done
	have_size=$(stat -L -c %s "${DISTDIR}/${f}")
	have_b2=$(b2sum "${DISTDIR}/${f}" | cut -d' ' -f1)
	have_sha=$(sha512sum "${DISTDIR}/${f}" | cut -d' ' -f1)
	if [[ ${size} != "${have_size}" || ${sums[BLAKE2B]-} != "${have_b2}" ||
		${sums[SHA512]-} != "${have_sha}" ]]; then
		echo "harness.sh: ${f} does not match its Manifest entry (size ${have_size}, Manifest says ${size})" >&2
		__h_event fetch_failed "${f}" "Manifest mismatch"
		exit 4
	fi
	unset sums
	__h_event fetch_verified "${f}" "${size}"
done

# --- the phases ----------------------------------------------------------------------
for phase in "${phases_all[@]}"; do
	case ${phase} in
		setup | preinst | postinst) func=pkg_${phase} ;;
		*) func=src_${phase} ;;
	esac
	EBUILD_PHASE=${phase}
	EBUILD_PHASE_FUNC=${func}
	if [[ ${phase} == test ]]; then
		__h_event phase_skipped "${func}" "FEATURES=-test"
		[[ ${opt_last} == test ]] && break
		continue
	fi
	case ${phase} in
		setup | preinst | postinst) cd "${WORKBASE}/empty" || exit 2 ;;
		unpack) cd "${WORKDIR}" || exit 2 ;;
		*)
			if [[ -d ${S} ]]; then
				cd "${S}" || exit 2
			elif [[ -z ${A} ]]; then
				cd "${WORKDIR}" || exit 2
			else
				die "S=${S} does not exist after src_unpack"
			fi
			;;
	esac
	__h_event phase "${func}"
	echo ">>> ${CATEGORY}/${PF}: ${func}"
	if declare -F "${func}" >/dev/null; then
		"${func}"
	else
		"default_${func}"
	fi
	__h_event phase_done "${func}" "$?"
	[[ ${phase} == "${opt_last}" ]] && break
done

if [[ -d ${D} ]]; then
	while IFS= read -r -d '' f; do
		__h_event image "${f#"${D}"}"
	done < <(find "${D}" \( -type f -o -type l \) -print0 | sort -z)
fi
exit 0
