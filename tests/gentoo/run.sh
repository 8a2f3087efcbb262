#!/bin/bash
# The Gentoo overlay's checks (ebuild/, doc/admin-guide.md "Gentoo"), printed as TAP
# (tests/tap.sh); exits 1 when a check failed.
#
#   tests/gentoo/run.sh                  everything
#   AESLOOP_RELEASE=1 tests/gentoo/run.sh
#                                        also fail (not skip) when a committed
#                                        Manifest is not that of "make dist"
#   AESLOOP_GENTOO_MUTANTS=0 tests/gentoo/run.sh
#                                        skip 4. below (CI's choice, for its
#                                        time; make check-full runs them)
#
#  1. static: the overlay's layout; bash -n and shellcheck on every ebuild;
#     the live ebuild is the release one; metadata.xml valid against
#     ../shared/gentoo/metadata.dtd and describing exactly the local flags.
#  2. the tarball and the Manifests: "make dist" gives the same bytes twice
#     (the second time under another umask and time zone), holds HEAD without
#     ebuild/, owner 0 and one time; each committed Manifest has a well-formed
#     DIST line for each distfile of SRC_URI and nothing else; "make manifest"
#     into a copy of the overlay writes the tarball's true size, BLAKE2B and
#     SHA512; the committed Manifests are compared with that copy.
#     app-crypt/aesloop-losetup's util-linux DIST line is that of Debian's
#     orig tarball of the same release (upstream's tarball, taken unchanged).
#  3. tests/gentoo/harness.sh runs the ebuilds' phases, with the copy's
#     Manifests, against Debian's 6.1 kernel tree (tests/vm/kernel.sh):
#     sys-fs/aesloop for several USE sets, with a real kbuild of loop.ko;
#     REQUIRED_USE; CONFIG_CHECK and a built-in loop driver refused at
#     pkg_setup; depmod's choice of our loop.ko over the kernel's; the live
#     ebuild; app-crypt/aesloop-losetup with a real build of util-linux
#     (UL_PV of its ebuild) whose four programs are run; sys-fs/aesloop-boot
#     with and without USE=dracut: its files, paths, modes and placeholders,
#     and its generator run on a test fstab.
#  4. the harness against broken copies of the ebuilds (flag logic removed,
#     a flag not in IUSE, CONFIG_CHECK gone, swapon left out, the patch
#     dropped, the dracut module always installed...): each must be caught.
#
# Work files: build/gentoo/.  Needs: xmllint (libxml2-utils), shellcheck,
# git, kmod, pkg-config; the util-linux tarball that "make losetup-2.41"
# fetches (Debian's orig tarball of the release the ebuild's UL_PV names).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
work=$top/build/gentoo
harness=$top/tests/gentoo/harness.sh
overlay=$top/ebuild
version=$(make -s --no-print-directory -C "$top" version)
tarball=$top/build/dist/aesloop-${version}.tar.gz
# app-crypt/aesloop-losetup's util-linux release (UL_PV), and Debian's orig
# tarball of it where patches/build-losetup.sh fetches that series.
losetup_ebuild=
for e in "${overlay}"/app-crypt/aesloop-losetup/aesloop-losetup-"${version}"*.ebuild; do
	[[ -f ${e} ]] && losetup_ebuild=${e}
done
ul_pv=$(sed -n 's/^UL_PV=//p' "${losetup_ebuild:-/dev/null}" | head -n 1)
ul_tarball=
# shellcheck source=patches/series.sh
if [[ -n ${ul_pv} ]] && . "${top}/patches/series.sh" && ul_series "${ul_pv%.*}"; then
	ul_tarball=${top}/${ul_build_name}/${ul_work_name}/dl/util-linux_${ul_pv}.orig.tar.xz
fi
dtd=${AESLOOP_GENTOO_DTD:-$top/../shared/gentoo/metadata.dtd}
TAP_PREFIX=gentoo/
# shellcheck source=tests/tap.sh
. "$top/tests/tap.sh"

rm -rf "${work}"
mkdir -p "${work}"

# result NAME REASON...: passed without reasons, else failed with them.
result() {
	local name=$1
	shift
	if [[ $# -eq 0 ]]; then
		pass "${name}"
	else
		local IFS=';'
		fail "${name}" "$*"
	fi
}

# trace_events TRACE EVENT: the arguments of each EVENT line of a harness
# trace, still %q-quoted (read them with eval "a=( LINE )").
trace_events() {
	awk -v n="$2" '$1 == n { sub(/^[^ ]+ ?/, ""); print }' "$1"
}

# trace_arg TRACE EVENT [INDEX]: one argument (default the first) of the
# first EVENT line.
trace_arg() {
	local line
	line=$(trace_events "$1" "$2" | head -n 1)
	local -a a=()
	eval "a=( ${line} )"
	echo "${a[${3:-0}]-}"
}

# in_words WORD "LIST"
in_words() {
	[[ " ${2//[$'\t\n']/ } " == *" $1 "* ]]
}

mapfile -t ebuilds < <(cd "${overlay}" && find . -mindepth 3 -maxdepth 3 -name '*.ebuild' | sed 's|^\./||' | sort)
mapfile -t packages < <(printf '%s\n' "${ebuilds[@]}" | sed 's|/[^/]*$||' | sort -u)

# --- 1. static checks --------------------------------------------------------------

why=()
[[ $(cat "${overlay}/profiles/repo_name" 2>/dev/null) == aesloop ]] ||
	why+=("profiles/repo_name is not 'aesloop'")
grep -Eq '^masters *= *gentoo$' "${overlay}/metadata/layout.conf" 2>/dev/null ||
	why+=("metadata/layout.conf has no 'masters = gentoo'")
for p in "${packages[@]}"; do
	[[ -f ${overlay}/${p}/metadata.xml ]] || why+=("${p}: no metadata.xml")
done
[[ ${#ebuilds[@]} -gt 0 ]] || why+=("no ebuilds under ebuild/")
result overlay-layout "${why[@]}"

for e in "${ebuilds[@]}"; do
	name=${e%.ebuild}
	name=${name%/*/*}/${name##*/}
	if out=$(bash -n "${overlay}/${e}" 2>&1); then
		pass "bash-n/${name}"
	else
		fail "bash-n/${name}" "$(head -n 1 <<<"${out}")"
	fi
	# SC2034: DESCRIPTION, IUSE...: read by the package manager.
	# SC2154: P, WORKDIR, KV_FULL...: set by the package manager and eclasses.
	if out=$(shellcheck -s bash -e SC2034,SC2154 "${overlay}/${e}" 2>&1); then
		pass "shellcheck/${name}"
	else
		fail "shellcheck/${name}" "$(grep -m 3 -o 'SC[0-9]*.*' <<<"${out}" | paste -sd' ' -)"
	fi
done

live=${overlay}/sys-fs/aesloop/aesloop-9999.ebuild
rel=${overlay}/sys-fs/aesloop/aesloop-${version}.ebuild
if [[ ! -f ${live} || ! -f ${rel} ]]; then
	fail live-ebuild-in-sync "aesloop-9999.ebuild or aesloop-${version}.ebuild is missing"
elif cmp -s "${live}" "${rel}"; then
	pass live-ebuild-in-sync
else
	fail live-ebuild-in-sync "aesloop-9999.ebuild differs from aesloop-${version}.ebuild (the version is chosen inside by PV)"
fi

# metadata.xml against the DTD; the DOCTYPE's address resolves to the same
# file through a catalog, so that xmllint needs no network.
if [[ ! -f ${dtd} ]]; then
	for p in "${packages[@]}"; do
		skip "metadata-xml/${p}" "no DTD at ${dtd} (../shared/gentoo/metadata.dtd)"
	done
else
	cat >"${work}/catalog.xml" <<-EOF
		<?xml version="1.0"?>
		<catalog xmlns="urn:oasis:names:tc:entity:xmlns:xml:catalog">
		  <system systemId="https://www.gentoo.org/dtd/metadata.dtd" uri="file://$(realpath "${dtd}")"/>
		  <system systemId="http://www.gentoo.org/dtd/metadata.dtd" uri="file://$(realpath "${dtd}")"/>
		</catalog>
	EOF
	for p in "${packages[@]}"; do
		if out=$(XML_CATALOG_FILES=${work}/catalog.xml xmllint --noout --nonet \
			--dtdvalid "${dtd}" "${overlay}/${p}/metadata.xml" 2>&1) && [[ -z ${out} ]]; then
			pass "metadata-xml/${p}"
		else
			fail "metadata-xml/${p}" "$(head -n 2 <<<"${out}" | paste -sd' ' -)"
		fi
	done
fi

mkdir -p "${work}/meta"

# Local flags: every flag of the ebuilds' IUSE (less the global USE_EXPAND
# cpu_flags_*) has a <flag>, and every <flag> is in some ebuild's IUSE.
for p in "${packages[@]}"; do
	iuse=
	why=()
	for e in "${overlay}/${p}"/*.ebuild; do
		w=${work}/meta/${e##*/}
		if "${harness}" -p none -w "${w}" "${e}" >"${w}.log" 2>&1 || [[ -s ${w}/trace ]]; then
			iuse+=" $(trace_events "${w}/trace" meta | awk '$1 == "IUSE"' | head -n 1 |
				{ read -r _ v; eval "echo ${v}"; })"
		else
			why+=("${e##*/}: the harness could not read its metadata")
		fi
	done
	described=$(xmllint --xpath '//use/flag/@name' "${overlay}/${p}/metadata.xml" 2>/dev/null |
		sed -n 's/.*name="\([^"]*\)".*/\1/p' | sort -u)
	for f in ${iuse}; do
		f=${f#[+-]}
		[[ ${f} == cpu_flags_* ]] && continue
		in_words "${f}" "${described}" || why+=("local flag '${f}' has no <flag> in metadata.xml")
	done
	flags=
	for f in ${iuse}; do flags+=" ${f#[+-]}"; done
	for f in ${described}; do
		in_words "${f}" "${flags}" || why+=("<flag name=\"${f}\"> is in no ebuild's IUSE")
	done
	result "metadata-flags/${p}" "${why[@]}"
done

# --- 2. the tarball and the Manifests ------------------------------------------------

have_dist=
if ! git -C "${top}" rev-parse --verify -q HEAD >/dev/null; then
	skip dist-reproducible "not a git checkout"
elif ! make -s dist >"${work}/dist1.log" 2>&1 || [[ ! -f ${tarball} ]]; then
	fail dist-reproducible "make dist failed: $(tail -n 2 "${work}/dist1.log" | paste -sd' ' -)"
else
	cp "${tarball}" "${work}/dist1.tar.gz"
	if ! (umask 077 && TZ=Pacific/Kiritimati make -s dist) >"${work}/dist2.log" 2>&1; then
		fail dist-reproducible "make dist failed the second time"
	elif cmp -s "${tarball}" "${work}/dist1.tar.gz"; then
		pass dist-reproducible
		have_dist=1
	else
		fail dist-reproducible "two runs of make dist gave different bytes"
		have_dist=1
	fi
fi

if [[ -n ${have_dist} ]]; then
	why=()
	listing=$(tar -tvzf "${tarball}" --utc 2>&1) || why+=("tar cannot list it")
	prefix=aesloop-${version}/
	stamps=()
	while read -r mode owner _ day time path; do
		[[ ${path} == "${prefix}"* ]] || { why+=("${path} is outside ${prefix}"); break; }
		[[ ${path} == "${prefix}ebuild/"* ]] && { why+=("it holds ${path}: ebuild/ must stay out"); break; }
		[[ ${owner} == 0/0 ]] || { why+=("${path} is owned by ${owner}, not 0/0"); break; }
		[[ ${mode} == -rw-r--r-- || ${mode} == -rwxr-xr-x || ${mode} == drwxr-xr-x ]] ||
			{ why+=("${path} has mode ${mode}"); break; }
		stamps+=("${day} ${time}")
	done <<<"${listing}"
	[[ $(printf '%s\n' "${stamps[@]}" | sort -u | wc -l) -eq 1 ]] || why+=("files have more than one time")
	for f in Makefile loop/Kbuild patches/util-linux/series-2.38 patches/util-linux/series-2.41 \
		lib/keysetup.c README.md tools/aesloop-losetup.8 \
		boot/aesloop-functions boot/systemd/aesloop-fstab-generator boot/dracut/90aesloop/module-setup.sh; do
		grep -q " ${prefix}${f}\$" <<<"${listing}" || why+=("${f} is missing")
	done
	# gzip -n: no name, time 0 (bytes 4-7), FLG without FNAME (byte 3).
	read -r flg m0 m1 m2 m3 < <(od -An -tu1 -j3 -N5 "${tarball}")
	[[ $((flg & 8)) -eq 0 && ${m0}${m1}${m2}${m3} == 0000 ]] || why+=("the gzip header has a name or a time")
	diff <(git -C "${top}" ls-tree -r --name-only HEAD | grep -v '^ebuild/' | sort) \
		<(tar -tzf "${tarball}" | grep -v '/$' | sed "s|^${prefix}||" | sort) >/dev/null ||
		why+=("its files are not those of HEAD less ebuild/")
	result dist-contents "${why[@]}"
fi

# The committed Manifests: DIST lines only, well formed, one per distfile of
# the package's release ebuilds (what harness.sh -p none makes of SRC_URI).
for p in "${packages[@]}"; do
	why=()
	m=${overlay}/${p}/Manifest
	want=
	for e in "${overlay}/${p}"/*.ebuild; do
		w=${work}/meta/${e##*/}
		want+=" $(trace_events "${w}/trace" meta | awk '$1 == "A"' | { read -r _ v; eval "echo ${v:-}"; })"
	done
	if [[ ! -f ${m} ]]; then
		[[ -z ${want// /} ]] || why+=("no Manifest, but SRC_URI names ${want}")
	else
		have=
		while read -r line; do
			if [[ ${line} =~ ^DIST\ ([^ ]+)\ ([0-9]+)\ BLAKE2B\ ([0-9a-f]{128})\ SHA512\ ([0-9a-f]{128})$ ]]; then
				have+=" ${BASH_REMATCH[1]}"
			else
				why+=("not a DIST line of the form 'DIST file size BLAKE2B b2 SHA512 sha': ${line:0:60}")
			fi
		done <"${m}"
		for f in ${want}; do in_words "${f}" "${have}" || why+=("no DIST line for ${f}"); done
		for f in ${have}; do in_words "${f}" "${want}" || why+=("DIST ${f} is in no SRC_URI"); done
	fi
	result "manifest-format/${p}" "${why[@]}"
done

# util-linux's DIST line: Debian's orig tarball of UL_PV is upstream's release
# tarball taken unchanged, so its size and hashes are those of the file at
# kernel.org as long as the two are byte-identical, which cannot be checked
# from here (kernel.org is out of reach).
if [[ -z ${ul_pv} ]]; then
	fail manifest-util-linux "no UL_PV= in app-crypt/aesloop-losetup's ebuild"
elif [[ ! -f ${ul_tarball} ]]; then
	skip manifest-util-linux "no ${ul_tarball#"${top}"/} (make losetup-${ul_pv%.*} fetches it)"
else
	m=${overlay}/app-crypt/aesloop-losetup/Manifest
	line=$(grep "^DIST util-linux-${ul_pv//./\\.}\.tar\.xz " "${m}")
	expect="DIST util-linux-${ul_pv}.tar.xz $(stat -c %s "${ul_tarball}") BLAKE2B $(b2sum "${ul_tarball}" | cut -d' ' -f1) SHA512 $(sha512sum "${ul_tarball}" | cut -d' ' -f1)"
	if [[ ${line} == "${expect}" ]]; then
		pass manifest-util-linux
	else
		fail manifest-util-linux "the Manifest's line for util-linux-${ul_pv}.tar.xz is not the size, BLAKE2B and SHA512 of Debian's util-linux_${ul_pv}.orig.tar.xz (${line:0:60}...)"
	fi
fi

# make manifest into a copy of the overlay: the harness runs against that
# copy, so the phases below fetch (and verify) exactly what make dist made.
test_overlay=${work}/overlay
rm -rf "${test_overlay}"
cp -r "${overlay}" "${test_overlay}"
have_manifest=
if [[ -n ${have_dist} ]]; then
	why=()
	if ! make -s manifest OVERLAY="${test_overlay}" >"${work}/manifest.log" 2>&1; then
		why+=("make manifest failed: $(tail -n 1 "${work}/manifest.log")")
	else
		size=$(stat -c %s "${tarball}")
		b2=$(b2sum "${tarball}" | cut -d' ' -f1)
		sha=$(sha512sum "${tarball}" | cut -d' ' -f1)
		expect="DIST ${tarball##*/} ${size} BLAKE2B ${b2} SHA512 ${sha}"
		for p in "${packages[@]}"; do
			new=${test_overlay}/${p}/Manifest
			old=${overlay}/${p}/Manifest
			grep -qxF "${expect}" "${new}" 2>/dev/null ||
				why+=("${p}: its Manifest lacks the tarball's true DIST line")
			[[ $(grep -c " ${tarball##*/} " "${new}") -eq 1 ]] ||
				why+=("${p}: not exactly one DIST line for ${tarball##*/}")
			diff <(grep -v "^DIST ${tarball##*/} " "${old}" 2>/dev/null) \
				<(grep -v "^DIST ${tarball##*/} " "${new}") >/dev/null ||
				why+=("${p}: make manifest changed other DIST lines")
		done
		have_manifest=1
	fi
	result manifest-regenerated "${why[@]}"

	stale=()
	for p in "${packages[@]}"; do
		cmp -s "${overlay}/${p}/Manifest" "${test_overlay}/${p}/Manifest" || stale+=("${p}")
	done
	if [[ ${#stale[@]} -eq 0 ]]; then
		pass manifest-current
	elif [[ -n ${AESLOOP_RELEASE-} ]]; then
		fail manifest-current "the committed Manifest of ${stale[*]} is not that of make dist (run make manifest, commit ebuild/)"
	else
		skip manifest-current "the committed Manifest of ${stale[*]} is for an older tree; make manifest rewrites it (needed only when publishing a tarball; the phases below use a fresh one)"
	fi
fi

# --- 3. the phases ---------------------------------------------------------------------

distdir=${work}/distfiles
mkdir -p "${distdir}"
[[ -n ${have_dist} ]] && ln -sf "${tarball}" "${distdir}/${tarball##*/}"
[[ -f ${ul_tarball} ]] && ln -sf "${ul_tarball}" "${distdir}/util-linux-${ul_pv}.tar.xz"

kver=
if [[ -z ${have_manifest} ]]; then
	skip phases "no tarball and Manifest from make dist (see dist-reproducible)"
elif ! kver=$(tests/vm/kernel.sh 6.1 2>"${work}/kernel.log"); then
	fail phases "tests/vm/kernel.sh 6.1 could not fetch the Debian 6.1 kernel: $(tail -n 1 "${work}/kernel.log")"
	kver=
fi
kroot=${top}/build/kernel/${kver}
kdir=${kroot}/lib/modules/${kver}/build

# run_harness NAME EBUILD [harness options]: runs it with its log in
# build/gentoo/NAME.log; the status is returned.
run_harness() {
	local name=$1 ebuild=$2
	shift 2
	"${harness}" -w "${work}/${name}" -d "${distdir}" "$@" "${ebuild}" >"${work}/${name}.log" 2>&1
}

# die_reason WORK: what the ebuild died of, if it did.
die_reason() {
	trace_arg "$1/trace" die 0
}

# check_module WORK USE PF: what is wrong with a harness run of sys-fs/aesloop
# (nothing printed when all is right).
check_module() {
	local w=$1 use=$2 pf=$3 t=$1/trace
	local -a why=() makeargs=() args=() extra=()
	local line a

	[[ -s ${t} ]] || { echo "no trace"; return; }
	# A death is reported with the first build error, and the make arguments
	# are still checked if src_compile got that far.
	local died
	died=$(die_reason "${w}")
	if [[ -n ${died} ]]; then
		a=$(grep -m 1 -E 'No rule to make target|error:|\*\*\*' "${w}.log" 2>/dev/null)
		why+=("the ebuild died: ${died}${a:+ [${a:0:240}]}")
	fi

	# CONFIG_CHECK: set at global scope, seen by linux-mod-r1_pkg_setup.
	a=$(trace_events "${t}" meta | awk '$1 == "CONFIG_CHECK"' | { read -r _ v; eval "echo ${v:-}"; })
	[[ -n ${a} ]] || why+=("CONFIG_CHECK is not set at global scope")
	a=$(trace_arg "${t}" modules_config_check)
	if [[ -z ${a} ]]; then
		why+=("CONFIG_CHECK was empty when linux-mod-r1_pkg_setup ran")
	else
		in_words BLOCK "${a}" || why+=("CONFIG_CHECK (${a}) does not ask for BLOCK")
	fi

	# src_compile: one emake, the eclass's MODULES_MAKEARGS first, then only
	# KDIR, INTELAES=y or INTELAES=n, ARM64AES=y or ARM64AES=n and KEYSCRUB=y
	# as USE says, and the "module" target.  INTELAES=n and ARM64AES=n
	# without the flags: loop/Kbuild builds the AES-NI code by default on
	# amd64 and the ARMv8 Crypto Extensions code on arm64, and a flag that is
	# off must leave it out.
	line=$(trace_events "${t}" modules_makeargs | head -n 1)
	eval "makeargs=( ${line} )"
	if [[ $(trace_events "${t}" emake | wc -l) -ne 1 ]]; then
		why+=("src_compile ran emake $(trace_events "${t}" emake | wc -l) times, not once")
	else
		line=$(trace_events "${t}" emake)
		eval "args=( ${line} )"
		[[ ${args[0]} == "${w}/work/${pf}" ]] || why+=("emake ran in ${args[0]}, not in S")
		args=("${args[@]:1}")
		[[ "${args[*]:0:${#makeargs[@]}}" == "${makeargs[*]}" ]] ||
			why+=("emake was not given MODULES_MAKEARGS first")
		extra=("${args[@]:${#makeargs[@]}}")
		local want_intel='' want_scrub='' have_intel='' have_nointel='' have_scrub='' have_kdir='' have_target=''
		local want_arm='' have_arm='' have_noarm=''
		{ in_words aes-ni "${use}" || in_words cpu_flags_x86_aes "${use}"; } && want_intel=1
		in_words cpu_flags_arm_aes "${use}" && want_arm=1
		in_words keyscrub "${use}" && want_scrub=1
		for a in "${extra[@]}"; do
			case ${a} in
				INTELAES=y) have_intel=1 ;;
				INTELAES=n) have_nointel=1 ;;
				ARM64AES=y) have_arm=1 ;;
				ARM64AES=n) have_noarm=1 ;;
				KEYSCRUB=y) have_scrub=1 ;;
				KDIR=*) [[ ${a#KDIR=} == "${kdir}" ]] && have_kdir=1 ||
					why+=("KDIR=${a#KDIR=} is not the kernel build tree") ;;
				module) have_target=1 ;;
				*) why+=("unexpected make argument '${a}'") ;;
			esac
		done
		[[ -n ${want_intel} && -z ${have_intel} ]] &&
			why+=("INTELAES=y not passed although USE has aes-ni or cpu_flags_x86_aes")
		[[ -z ${want_intel} && -n ${have_intel} ]] &&
			why+=("INTELAES=y passed although USE has neither aes-ni nor cpu_flags_x86_aes")
		[[ -z ${want_intel} && -z ${have_nointel} ]] &&
			why+=("INTELAES=n not passed although USE has neither aes-ni nor cpu_flags_x86_aes")
		[[ -n ${want_intel} && -n ${have_nointel} ]] &&
			why+=("INTELAES=n passed although USE has aes-ni or cpu_flags_x86_aes")
		[[ -n ${want_arm} && -z ${have_arm} ]] &&
			why+=("ARM64AES=y not passed although USE has cpu_flags_arm_aes")
		[[ -z ${want_arm} && -n ${have_arm} ]] &&
			why+=("ARM64AES=y passed although USE lacks cpu_flags_arm_aes")
		[[ -z ${want_arm} && -z ${have_noarm} ]] &&
			why+=("ARM64AES=n not passed although USE lacks cpu_flags_arm_aes")
		[[ -n ${want_scrub} && -z ${have_scrub} ]] && why+=("KEYSCRUB=y not passed although USE has keyscrub")
		[[ -z ${want_scrub} && -n ${have_scrub} ]] && why+=("KEYSCRUB=y passed although USE lacks keyscrub")
		[[ -n ${have_kdir} ]] || why+=("KDIR=<the kernel build tree> not passed")
		[[ -n ${have_target} ]] || why+=("the 'module' target was not made")
	fi
	if [[ -n ${died} ]] || ! grep -q '^phase_done pkg_postinst' "${t}"; then
		[[ -n ${died} ]] || why+=("the phases did not all run")
		printf '%s\n' "${why[@]}"
		return
	fi
	[[ -f ${w}/work/${pf}/loop/loop.ko ]] || why+=("kbuild made no loop/loop.ko")
	# The switches reached kbuild: where loop/Kbuild turns VAR=y into a
	# compiler flag (ccflags-$(VAR) += FLAG), loop_main.o was compiled with
	# FLAG exactly when VAR=y was on the eclass's make command line.
	local var flag cmdfile=${w}/work/${pf}/loop/.loop_main.o.cmd
	for var in INTELAES ARM64AES KEYSCRUB; do
		flag=$(sed -n "s/^ccflags-\$(${var}) *+= *\([^ ]*\).*/\1/p" "${w}/work/${pf}/loop/Kbuild" 2>/dev/null | head -n 1)
		[[ -n ${flag} && -f ${cmdfile} ]] || continue
		if in_words "${var}=y" "${extra[*]}"; then
			grep -qF -- "${flag}" "${cmdfile}" || why+=("${var}=y was passed but kbuild did not compile with ${flag}")
		else
			grep -qF -- "${flag}" "${cmdfile}" && why+=("kbuild compiled with ${flag} although ${var}=y was not passed")
		fi
	done

	# src_install: where linux-mod-r1 puts modules and docs, and nothing else.
	local want_files
	want_files=$(printf '%s\n' /lib/depmod.d/aesloop.conf "/lib/modules/${kver}/updates/loop.ko" \
		"/usr/share/doc/${pf}/README.md" | sort)
	local have_files
	have_files=$(trace_events "${t}" image | while read -r a; do eval "echo ${a}"; done | sort)
	[[ ${have_files} == "${want_files}" ]] ||
		why+=("installed files are [$(echo "${have_files}" | paste -sd' ' -)], not [$(echo "${want_files}" | paste -sd' ' -)] (loop.ko must be in updates/)")
	local ko=${w}/image/lib/modules/${kver}/updates/loop.ko
	if [[ -f ${ko} ]]; then
		a=$(modinfo -F vermagic "${ko}" 2>/dev/null)
		[[ ${a} == "${kver} "* ]] || why+=("loop.ko's vermagic is '${a}'")
	fi
	grep -qx 'override loop \* updates' "${w}/image/lib/depmod.d/aesloop.conf" 2>/dev/null ||
		why+=("lib/depmod.d/aesloop.conf has no 'override loop * updates'")

	# pkg_postinst: depmod, and how to switch and check the AES path.
	grep -q '^depmod ' "${t}" || why+=("pkg_postinst did not run the eclass's depmod")
	local msgs
	msgs=$(trace_events "${t}" elog | while read -r a; do eval "echo ${a}"; done)
	for a in /sys/module/loop/parameters/aes_impl 'dmesg' 'modprobe -r loop && modprobe loop'; do
		[[ ${msgs} == *"${a}"* ]] || why+=("the pkg_postinst message does not mention '${a}'")
	done
	printf '%s\n' "${why[@]}"
}

# use_name "FLAGS": aes-ni,keyscrub (or -) for test names.
use_name() {
	local n
	n=$(echo "$1" | tr -s ' ' ',' | sed 's/^,//;s/,$//')
	echo "${n:--}"
}

if [[ -n ${kver} ]]; then
	eb=${test_overlay}/sys-fs/aesloop/aesloop-${version}.ebuild
	first=
	for use in "aes-ni cpu_flags_x86_aes keyscrub" "" "aes-ni" "cpu_flags_x86_aes" "keyscrub"; do
		name=aesloop-${version}[$(use_name "${use}")]
		w=aesloop-$(use_name "${use}" | tr ',' '.')
		run_harness "${w}" "${eb}" -k "${kdir}" -K "${kver}" -u "${use}"
		mapfile -t why < <(check_module "${work}/${w}" "${use}" "aesloop-${version}")
		[[ ${#why[@]} -eq 1 && -z ${why[0]} ]] && why=()
		result "${name}" "${why[@]}"
		[[ -z ${first} && ${#why[@]} -eq 0 ]] && first=${work}/${w}
	done

	# depmod (Debian's kmod, in a scratch root holding the kernel's own
	# loop.ko and ours): ours with depmod's default search order; ours too
	# under a site "search built-in updates" thanks to the package's
	# depmod.d file; the kernel's without that file (so the file is what
	# makes the difference).
	if [[ -z ${first} ]]; then
		skip aesloop-precedence "no good run of the ebuild to take loop.ko from"
	else
		why=()
		r=${work}/root
		m=${r}/lib/modules/${kver}
		stock=${kroot}/lib/modules/${kver}/kernel/drivers/block/loop.ko
		mkdir -p "${m}/kernel/drivers/block" "${r}"/conf-{default,site,site+ours}
		cp "${stock}" "${m}/kernel/drivers/block/"
		cp "${kroot}/lib/modules/${kver}"/modules.{order,builtin,builtin.modinfo} "${m}/"
		cp -r "${first}/image/lib/modules/${kver}/updates" "${m}/"
		echo 'search built-in updates' >"${r}/conf-site/search.conf"
		cp "${r}/conf-site/search.conf" "${first}/image/lib/depmod.d/aesloop.conf" "${r}/conf-site+ours/"
		for c in default:updates site+ours:updates site:kernel; do
			depmod -b "${r}" -C "${r}/conf-${c%%:*}" "${kver}" 2>>"${work}/depmod.log" ||
				{ why+=("depmod failed (${c%%:*})"); continue; }
			got=$(modinfo -b "${r}" -k "${kver}" -F filename loop 2>>"${work}/depmod.log")
			[[ ${got#"${m}/"} == "${c#*:}/"* ]] ||
				why+=("with the ${c%%:*} depmod configuration modprobe would load ${got#"${m}/"}")
		done
		result aesloop-precedence "${why[@]}"
	fi

	# REQUIRED_USE: aes-ni and cpu_flags_x86_aes only on x86 and amd64,
	# cpu_flags_arm_aes only on arm64.
	why=()
	for c in amd64:aes-ni:0 x86:aes-ni:0 x86:cpu_flags_x86_aes:0 arm64:aes-ni:3 \
		arm64:cpu_flags_x86_aes:3 arm64:keyscrub:0 arm64:cpu_flags_arm_aes:0 \
		amd64:cpu_flags_arm_aes:3; do
		IFS=: read -r arch flag want <<<"${c}"
		run_harness "ru-${arch}-${flag}" "${eb}" -p none -a "${arch}" -u "${flag}"
		got=$?
		[[ ${got} == "${want}" ]] || why+=("ARCH=${arch} USE=${flag}: harness status ${got}, not ${want}")
	done
	result aesloop-required-use "${why[@]}"

	# pkg_setup against kernel trees that must be refused: no CONFIG_BLOCK
	# (CONFIG_CHECK, with the ebuild's ERROR_BLOCK), or loop built in.
	for c in no-block:'s/^CONFIG_BLOCK=y$/# CONFIG_BLOCK is not set/':'CONFIG_BLOCK' \
		builtin-loop:'s/^CONFIG_BLK_DEV_LOOP=m$/CONFIG_BLK_DEV_LOOP=y/':'BLK_DEV_LOOP=y'; do
		IFS=: read -r n expr want <<<"${c}"
		fk=${work}/kernel-${n}
		mkdir -p "${fk}"
		sed "${expr}" "${kdir}/.config" >"${fk}/.config"
		ln -sf "${kdir}/Module.symvers" "${fk}/Module.symvers"
		if cmp -s "${kdir}/.config" "${fk}/.config"; then
			fail "aesloop-refuses-${n}" "could not make the test .config (${expr})"
			continue
		fi
		run_harness "setup-${n}" "${eb}" -p setup -k "${fk}" -K "${kver}"
		got=$?
		reason=$(die_reason "${work}/setup-${n}")
		if [[ ${got} -eq 1 && ${reason} == *"${want}"* ]]; then
			pass "aesloop-refuses-${n}"
		else
			fail "aesloop-refuses-${n}" "pkg_setup status ${got}, died of '${reason}', expected a death naming ${want}"
		fi
	done

	# The live ebuild, from this repository's HEAD.
	use="aes-ni keyscrub"
	run_harness aesloop-9999 "${test_overlay}/sys-fs/aesloop/aesloop-9999.ebuild" \
		-k "${kdir}" -K "${kver}" -u "${use}" -g "${top}"
	mapfile -t why < <(check_module "${work}/aesloop-9999" "${use}" aesloop-9999)
	[[ ${#why[@]} -eq 1 && -z ${why[0]} ]] && why=()
	result "aesloop-9999[$(use_name "${use}")]" "${why[@]}"

	# --- 4. broken copies of the ebuild that the harness must catch ------------------
	# NAME%USE%sed program%what the failure must say
	while IFS='%' read -r n use expr want; do
		[[ -z ${n} ]] && continue
		if [[ ${AESLOOP_GENTOO_MUTANTS:-1} == 0 ]]; then
			skip "harness-catches/${n}" "AESLOOP_GENTOO_MUTANTS=0 (make check-full runs it)"
			continue
		fi
		mo=${work}/mutant-${n}
		rm -rf "${mo}"
		cp -r "${test_overlay}" "${mo}"
		me=${mo}/sys-fs/aesloop/aesloop-${version}.ebuild
		sed -i "${expr}" "${me}"
		if cmp -s "${me}" "${eb}" || ! bash -n "${me}" 2>/dev/null; then
			fail "harness-catches/${n}" "the mutation (${expr}) did not apply, or broke the syntax"
			continue
		fi
		run_harness "mutant-${n}-run" "${me}" -k "${kdir}" -K "${kver}" -u "${use}"
		got=$?
		reason=$(check_module "${work}/mutant-${n}-run" "${use}" "aesloop-${version}" | paste -sd';' -)
		if [[ ${reason} =~ ${want} ]]; then
			pass "harness-catches/${n}"
		else
			fail "harness-catches/${n}" "expected a failure matching /${want}/, got status ${got}: ${reason:-nothing}"
		fi
	done <<-'EOF'
		flag-logic-removed%aes-ni keyscrub%/if use aes-ni || use cpu_flags_x86_aes; then/,/^\tfi$/d; /if use keyscrub; then/,/^\tfi$/d%INTELAES=y not passed.*KEYSCRUB=y not passed
		intelaes-always%keyscrub%s/if use aes-ni || use cpu_flags_x86_aes; then/if true; then/%INTELAES=y passed although
		intelaes-default-kept%keyscrub%/if use aes-ni || use cpu_flags_x86_aes; then/,/^\tfi$/{/^\telse$/,/INTELAES=n/d}%INTELAES=n not passed.*kbuild compiled with -DAESLOOP_INTELAES although
		arm64aes-default-kept%keyscrub%/if use cpu_flags_arm_aes; then/,/^\tfi$/{/^\telse$/,/ARM64AES=n/d}%ARM64AES=n not passed
		cpu-flag-not-in-iuse%cpu_flags_x86_aes%s/^IUSE="aes-ni cpu_flags_arm_aes cpu_flags_x86_aes keyscrub"/IUSE="aes-ni cpu_flags_arm_aes keyscrub"/; /cpu_flags_x86_aes? (/d%cpu_flags_x86_aes' is not in IUSE
		undeclared-flag%keyscrub%s/if use keyscrub; then/if use key-scrub; then/%key-scrub' is not in IUSE
		use-at-global-scope%keyscrub%/^RESTRICT=/a use keyscrub \&\& RESTRICT+=" strip"%global scope
		config-check-removed%keyscrub%/^CONFIG_CHECK=/d%CONFIG_CHECK is not set at global scope
		installed-in-extra%keyscrub%s/loop=updates::loop:module/loop=extra::loop:module/%loop.ko must be in updates
	EOF
fi

# --- app-crypt/aesloop-losetup: a real build of util-linux UL_PV with the patch ---------

# phases_ran WORK LAST: the run got through LAST (postinst: all the phases).
phases_ran() {
	grep -q "^phase_done [a-z]*_$2 " "$1/trace" 2>/dev/null
}

# check_losetup WORK [LAST]: what is wrong with a harness run of
# app-crypt/aesloop-losetup asked to run up to LAST (default postinst).
check_losetup() {
	local w=$1 last=${2:-postinst} t=$1/trace
	local -a why=()
	local died a f line files want p out
	[[ -s ${t} ]] || { echo "no trace"; return; }
	died=$(die_reason "${w}")
	[[ -n ${died} ]] && why+=("the ebuild died: ${died}")
	for f in "util-linux-${ul_pv}.tar.xz" "${tarball##*/}"; do
		grep -q "^fetch_verified ${f//./\\.} " "${t}" || why+=("${f} was not verified against the Manifest")
	done
	# Every patch of UL_PV's quilt series, in its order, and no other, from
	# the release tarball.
	a=$(trace_events "${t}" eapply | while read -r line; do eval "echo ${line}"; done)
	applied=$(sed -n "s|^${w}/work/aesloop-${version}/patches/util-linux/||p" <<<"${a}" | paste -sd' ' -)
	series=$(grep -v '^#' "${top}/patches/util-linux/series-${ul_pv%.*}" | paste -sd' ' -)
	[[ -n ${series} && ${applied} == "${series}" ]] ||
		why+=("the patches applied were [${a//$'\n'/ }], not series-${ul_pv%.*}'s [${series}] from aesloop's tarball")
	if [[ ${last} != prepare ]]; then
		line=$(trace_events "${t}" econf)
		for a in --disable-all-programs --enable-losetup --enable-mount --enable-swapon --disable-shared; do
			in_words "${a}" "${line}" || why+=("econf was not given ${a}")
		done
	fi
	if ! phases_ran "${w}" "${last}"; then
		[[ -n ${died} ]] || why+=("the phases did not all run (to ${last})")
		printf '%s\n' "${why[@]}"
		return
	fi
	[[ ${last} == postinst ]] || { printf '%s\n' "${why[@]}"; return; }

	# The four programs under names of their own, one page and three .so pages; aesloop's
	# tools and their pages where make install-tools puts them.
	files=$(trace_events "${t}" image | while read -r a; do eval "echo ${a}"; done | sort | paste -sd' ' -)
	want="/usr/bin/aesloop-keygen /usr/bin/aesloop-mount /usr/bin/aesloop-pipe"
	want+=" /usr/sbin/aesloop-losetup /usr/sbin/aesloop-reencrypt /usr/sbin/aesloop-swapoff /usr/sbin/aesloop-swapon"
	want+=" /usr/share/man/man1/aesloop-keygen.1 /usr/share/man/man1/aesloop-pipe.1"
	want+=" /usr/share/man/man8/aesloop-losetup.8 /usr/share/man/man8/aesloop-mount.8"
	want+=" /usr/share/man/man8/aesloop-reencrypt.8"
	want+=" /usr/share/man/man8/aesloop-swapoff.8 /usr/share/man/man8/aesloop-swapon.8"
	[[ ${files} == "${want}" ]] || why+=("installed files are [${files}], not [${want}]")
	for f in ${files}; do
		[[ ${f##*/} == aesloop-* ]] || why+=("${f} could collide with sys-apps/util-linux")
	done
	for p in mount swapon swapoff; do
		f=${w}/image/usr/share/man/man8/aesloop-${p}.8
		[[ ! -f ${f} || $(cat "${f}") == '.so man8/aesloop-losetup.8' ]] ||
			why+=("aesloop-${p}.8 is not '.so man8/aesloop-losetup.8'")
	done
	for f in man8/aesloop-losetup.8 man8/aesloop-reencrypt.8 man1/aesloop-pipe.1 man1/aesloop-keygen.1; do
		cmp -s "${w}/image/usr/share/man/${f}" "${top}/tools/${f#*/}" ||
			why+=("${f#*/} is not tools/${f#*/}")
	done
	# The tools run, and know their version.
	local -a bins=()
	out=$("${w}/image/usr/bin/aesloop-keygen" --version 2>&1)
	[[ ${out} == *"${version}"* ]] || why+=("aesloop-keygen --version says '${out:0:120}', not ${version}")
	for f in /usr/bin/aesloop-pipe /usr/sbin/aesloop-reencrypt; do
		out=$("${w}/image${f}" --help 2>&1)
		[[ ${out} == *"usage: ${f##*/}"* ]] || why+=("${f##*/} --help says '${out:0:120}'")
		[[ ! -x ${w}/image${f} ]] || bins+=("${w}/image${f}")
	done
	# Each program runs, and is util-linux UL_PV's.
	for f in /usr/sbin/aesloop-losetup /usr/bin/aesloop-mount /usr/sbin/aesloop-swapon /usr/sbin/aesloop-swapoff; do
		[[ -x ${w}/image${f} ]] || continue
		bins+=("${w}/image${f}")
		out=$("${w}/image${f}" --version 2>&1)
		[[ ${out} == "${f##*/} from util-linux ${ul_pv}"*", with aesloop ${version}" ]] ||
			why+=("${f##*/} --version says '${out:0:120}', not util-linux ${ul_pv} with aesloop ${version}")
	done
	out=$("${w}/image/usr/sbin/aesloop-losetup" --help 2>&1)
	[[ ${out} == *"-e, --encryption"* ]] || why+=("aesloop-losetup --help has no '-e, --encryption'")
	if [[ ${#bins[@]} -gt 0 ]]; then
		a=$(ldd "${bins[@]}" | awk '/=>|ld-linux/ {print $1}' |
			grep -v -e '^linux-vdso' -e 'ld-linux' -e '^libc\.so' -e '^libcrypto\.so' | sort -u | paste -sd' ' -)
		[[ -z ${a} ]] || why+=("they need more than glibc and libcrypto: ${a}")
	fi
	# The notes: the four programs, fstab and swap, the boot package, gpg.
	out=$(trace_events "${t}" elog | while read -r a; do eval "echo ${a}"; done)
	for a in aesloop-losetup aesloop-mount aesloop-swapon aesloop-swapoff aesloop-reencrypt /etc/fstab swap \
		sys-fs/aesloop-boot "util-linux ${ul_pv}"; do
		[[ ${out} == *"${a}"* ]] || why+=("the pkg_postinst message does not mention '${a}'")
	done
	grep -q '^optfeature .* app-crypt/gnupg' "${t}" || why+=("no optfeature for app-crypt/gnupg (gpgkey=)")
	printf '%s\n' "${why[@]}"
}

# run_mutants CATEGORY/PN EBUILD CHECK USE BASELINE <<<'NAME%LAST%sed program%what the failure must say'...:
# for each line, a copy of EBUILD (in a copy of its package, so that its
# Manifest holds) changed by the sed program, run up to LAST with USE and
# judged by CHECK WORK LAST USE: the failure must match.  Skipped unless
# BASELINE (the unchanged ebuild passed): a failure then proves nothing.
run_mutants() {
	local pkg=$1 ebuild=$2 check=$3 use=$4 baseline=$5 n last expr want mo me got reason
	while IFS='%' read -r n last expr want; do
		[[ -z ${n} ]] && continue
		if [[ ${AESLOOP_GENTOO_MUTANTS:-1} == 0 ]]; then
			skip "harness-catches/${n}" "AESLOOP_GENTOO_MUTANTS=0 (make check-full runs it)"
			continue
		fi
		if [[ -z ${baseline} ]]; then
			skip "harness-catches/${n}" "the unchanged ${pkg} ebuild fails already"
			continue
		fi
		mo=${work}/mutant-${n}
		rm -rf "${mo}"
		mkdir -p "${mo}/${pkg%/*}"
		cp -r "${test_overlay}/${pkg}" "${mo}/${pkg%/*}/"
		me=${mo}/${pkg}/${ebuild##*/}
		sed -i "${expr}" "${me}"
		if cmp -s "${me}" "${ebuild}" || ! bash -n "${me}" 2>/dev/null; then
			fail "harness-catches/${n}" "the mutation (${expr}) did not apply, or broke the syntax"
			continue
		fi
		run_harness "mutant-${n}-run" "${me}" -p "${last}" -u "${use}"
		got=$?
		reason=$("${check}" "${work}/mutant-${n}-run" "${last}" "${use}" | paste -sd';' -)
		if [[ ${reason} =~ ${want} ]]; then
			pass "harness-catches/${n}"
		else
			fail "harness-catches/${n}" "expected a failure matching /${want}/, got status ${got}: ${reason:-nothing}"
		fi
	done
}

pf=aesloop-losetup
[[ -n ${losetup_ebuild} ]] && pf=${losetup_ebuild##*/} && pf=${pf%.ebuild}
if [[ -z ${have_manifest} ]]; then
	skip "${pf}" "no tarball and Manifest from make dist"
elif [[ -z ${losetup_ebuild} || -z ${ul_pv} ]]; then
	fail "${pf}" "no app-crypt/aesloop-losetup ebuild of version ${version} with a UL_PV="
elif [[ ! -f ${ul_tarball} ]]; then
	skip "${pf}" "no ${ul_tarball#"${top}"/} (make losetup-${ul_pv%.*} fetches it)"
else
	eb=${test_overlay}/app-crypt/aesloop-losetup/${losetup_ebuild##*/}
	run_harness "${pf}" "${eb}"
	got=$?
	mapfile -t why < <(check_losetup "${work}/${pf}")
	[[ ${#why[@]} -eq 1 && -z ${why[0]} ]] && why=()
	[[ ${got} -eq 0 ]] || why=("harness status ${got} (log: build/gentoo/${pf}.log)" "${why[@]}")
	result "${pf}" "${why[@]}"
	baseline=
	[[ ${#why[@]} -eq 0 ]] && baseline=1

	run_mutants app-crypt/aesloop-losetup "${eb}" check_losetup "" "${baseline}" <<-'EOF_MUTANTS'
		patch-dropped%prepare%/2.41\/mount-pass-fd-context.patch/d%the patches applied were .*not series-2.41
		swapon-not-configured%configure%/--enable-swapon/d%econf was not given --enable-swapon
		swapoff-not-installed%postinst%/newsbin swapoff aesloop-swapoff/d%installed files are .*not .*aesloop-swapoff
		keygen-version-left%postinst%s/version=\${PV}/version=@VERSION@/%aesloop-keygen --version says .*not
	EOF_MUTANTS
fi

# --- sys-fs/aesloop-boot: the boot integration, installed into the image ----------------

# The generator folder as systemd.eclass finds it: systemd's pkg-config file,
# else its fallback.
if pkg-config --exists systemd 2>/dev/null; then
	generator_dir=$(pkg-config --variable=systemdsystemgeneratordir systemd)
else
	generator_dir=/lib/systemd/system-generators
fi
# Where app-crypt/aesloop-losetup installs aesloop-losetup (checked above).
boot_losetup=/usr/sbin/aesloop-losetup
boot_libdir=/usr/lib/aesloop

# boot_source FILE: the file of boot/ an installed file of aesloop-boot is made of.
boot_source() {
	case $1 in
		"${boot_libdir}"/*) echo "boot/${1##*/}" ;;
		*/aesloop-fstab-generator) echo boot/systemd/aesloop-fstab-generator ;;
		/usr/lib/dracut/modules.d/90aesloop/*) echo "boot/dracut/90aesloop/${1##*/}" ;;
	esac
}

# check_boot WORK [LAST [USE]]: what is wrong with a harness run of
# sys-fs/aesloop-boot asked to run up to LAST (default postinst).
check_boot() {
	local w=$1 last=${2:-postinst} t=$1/trace
	local -a why=()
	local died a f src use deps files want mode out dracut=''
	[[ -s ${t} ]] || { echo "no trace"; return; }
	died=$(die_reason "${w}")
	[[ -n ${died} ]] && why+=("the ebuild died: ${died}")
	use=$(trace_events "${t}" meta | awk '$1 == "USE"' | { read -r _ v; eval "echo ${v:-}"; })
	in_words dracut "${use}" && dracut=1
	# What it needs at run time: the programs, the module, systemd, and dracut
	# for the dracut module.
	deps=$(trace_events "${t}" meta | awk '$1 == "RDEPEND_ACTIVE"' | { read -r _ v; eval "echo ${v:-}"; })
	for a in app-crypt/aesloop-losetup sys-fs/aesloop sys-apps/systemd; do
		in_words "${a}" "${deps}" || why+=("RDEPEND lacks ${a}")
	done
	if [[ -n ${dracut} ]]; then
		in_words sys-kernel/dracut "${deps}" || why+=("RDEPEND lacks sys-kernel/dracut with USE=dracut")
	else
		in_words sys-kernel/dracut "${deps}" && why+=("RDEPEND has sys-kernel/dracut without USE=dracut")
	fi
	if [[ ${last} == none ]]; then
		printf '%s\n' "${why[@]}"
		return
	fi
	grep -q "^fetch_verified ${tarball##*/} " "${t}" || why+=("${tarball##*/} was not verified against the Manifest")
	if ! phases_ran "${w}" "${last}"; then
		[[ -n ${died} ]] || why+=("the phases did not all run (to ${last})")
		printf '%s\n' "${why[@]}"
		return
	fi

	# The files, where systemd, dracut and the boot scripts look for them.
	files=$(trace_events "${t}" image | while read -r a; do eval "echo ${a}"; done | sort)
	local -a wanted=("${boot_libdir}"/{aesloop-fstab-setup,aesloop-functions,aesloop-root-config,aesloop-root-setup}
		"${generator_dir}/aesloop-fstab-generator")
	[[ -n ${dracut} ]] && wanted+=(/usr/lib/dracut/modules.d/90aesloop/{aesloop-root.service,module-setup.sh})
	want=$(printf '%s\n' "${wanted[@]}" | sort)
	[[ ${files} == "${want}" ]] ||
		why+=("installed files are [$(echo "${files}" | paste -sd' ' -)], not [$(echo "${want}" | paste -sd' ' -)] (generator folder from systemd's pkg-config: ${generator_dir})")
	for f in ${files}; do
		# Each is its boot/ file with make install-boot's placeholders filled
		# in: the helpers' folder and the patched losetup's path.
		src=$(boot_source "${f}")
		if [[ -z ${src} ]]; then
			why+=("${f} is no file of boot/")
			continue
		fi
		grep -q '@[A-Z]*@' "${w}/image${f}" &&
			why+=("${f} still has a placeholder: $(grep -o -m 1 '@[A-Z]*@' "${w}/image${f}")")
		sed -e "s|@LIBDIR@|${boot_libdir}|g" -e "s|@LOSETUP@|${boot_losetup}|g" "${src}" |
			cmp -s - "${w}/image${f}" ||
			why+=("${f} is not ${src} with ${boot_libdir} and ${boot_losetup} filled in")
		mode=0755
		[[ ${f} == */aesloop-functions || ${f} == *.service ]] && mode=0644
		a=$(stat -c %a "${w}/image${f}")
		[[ 0${a} == "${mode}" ]] || why+=("${f} has mode ${a}, not ${mode#0}")
	done

	# The installed generator, run on a test fstab: its units run the
	# installed aesloop-fstab-setup.
	local gen=${w}/image${generator_dir}/aesloop-fstab-generator units=${w}/units
	if [[ -x ${gen} ]]; then
		rm -rf "${units}"
		mkdir -p "${units}"
		printf '%s\n' 'PARTLABEL=data /mnt/data ext4 loop=/dev/loop5,encryption=AES128 0 2' \
			'PARTUUID=0a1b-02 none swap sw,loop=/dev/loop6,encryption=AES128,phash=random 0 0' >"${w}/fstab"
		if ! out=$(SYSTEMD_FSTAB=${w}/fstab AESLOOP_FUNCTIONS=${w}/image${boot_libdir}/aesloop-functions \
			"${gen}" "${units}" "${units}" "${units}" 2>&1); then
			why+=("the installed generator failed: ${out:0:120}")
		else
			for a in aesloop-loop5.service aesloop-loop6.service dev-loop6.swap; do
				[[ -f ${units}/${a} ]] || why+=("the installed generator made no ${a}")
			done
			a=$(sed -n 's/^ExecStart=\([^ ]*\) start \/dev\/loop5$/\1/p' "${units}/aesloop-loop5.service" 2>/dev/null)
			if [[ -z ${a} ]]; then
				why+=("aesloop-loop5.service has no ExecStart=... start /dev/loop5")
			elif [[ ! -x ${w}/image${a} ]]; then
				why+=("aesloop-loop5.service runs ${a}, which the package does not install")
			fi
		fi
	fi

	# The notes: fstab lines, swap, the root with dracut.
	out=$(trace_events "${t}" elog | while read -r a; do eval "echo ${a}"; done)
	for a in /etc/fstab swap 'systemctl daemon-reload' ${dracut:+'dracut --force'}; do
		[[ ${out} == *"${a}"* ]] || why+=("the pkg_postinst message does not mention '${a}'")
	done
	[[ -z ${dracut} && ${out} == *'dracut --force'* ]] &&
		why+=("the pkg_postinst message tells to run dracut without USE=dracut")
	grep -q '^optfeature .* app-crypt/gnupg' "${t}" || why+=("no optfeature for app-crypt/gnupg (gpgkey=)")
	printf '%s\n' "${why[@]}"
}

boot_ebuild=${test_overlay}/sys-fs/aesloop-boot/aesloop-boot-${version}.ebuild
if [[ -z ${have_manifest} ]]; then
	skip "aesloop-boot-${version}" "no tarball and Manifest from make dist"
elif [[ ! -f ${boot_ebuild} ]]; then
	fail "aesloop-boot-${version}" "no sys-fs/aesloop-boot/aesloop-boot-${version}.ebuild"
else
	baseline=1
	for use in "" "-dracut"; do
		name=aesloop-boot-${version}[${use:-dracut}]
		w=boot${use}
		run_harness "${w}" "${boot_ebuild}" -u "${use}"
		got=$?
		mapfile -t why < <(check_boot "${work}/${w}")
		[[ ${#why[@]} -eq 1 && -z ${why[0]} ]] && why=()
		[[ ${got} -eq 0 ]] || why=("harness status ${got} (log: build/gentoo/${w}.log)" "${why[@]}")
		result "${name}" "${why[@]}"
		[[ ${#why[@]} -eq 0 ]] || baseline=
	done

	# NAME%LAST%sed program%what the failure must say; all with USE=-dracut
	# but dracut-rdepend-missing.
	run_mutants sys-fs/aesloop-boot "${boot_ebuild}" check_boot -dracut "${baseline}" <<-'EOF_MUTANTS'
		dracut-module-always%postinst%s/^\tif use dracut; then/\tif true; then/%installed files are .*90aesloop
		generator-dir-fixed%postinst%s|exeinto "$(systemd_get_systemgeneratordir)"|exeinto /etc/systemd/system-generators|%installed files are .*/etc/systemd/system-generators
		losetup-placeholder-left%postinst%/-e "s|@LOSETUP@|/d%still has a placeholder: @LOSETUP@
		losetup-path-wrong%postinst%s|^AESLOOP_LOSETUP=.*|AESLOOP_LOSETUP=/sbin/aesloop-losetup|%aesloop-fstab-setup is not boot/aesloop-fstab-setup with
		libdir-wrong%postinst%s|^AESLOOP_LIBDIR=.*|AESLOOP_LIBDIR=/usr/libexec/aesloop|%installed files are .*libexec
		systemd-rdepend-missing%none%/^\tsys-apps\/systemd$/d%RDEPEND lacks sys-apps/systemd
	EOF_MUTANTS
	run_mutants sys-fs/aesloop-boot "${boot_ebuild}" check_boot dracut "${baseline}" <<-'EOF_MUTANTS'
		dracut-rdepend-missing%none%/dracut? ( sys-kernel\/dracut )/d%RDEPEND lacks sys-kernel/dracut
	EOF_MUTANTS
fi

tap_end
