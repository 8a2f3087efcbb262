# shellcheck shell=bash disable=SC2034 # its variables are for the scripts that source it
# Sourced by kernel.sh (which sets $top and defines say and die): private apt states for
# Debian's arm64 packages, one per suite, under build/apt/SUITE-arm64, so that arm64 kernels
# can be downloaded on this amd64 host without adding an architecture to the host's dpkg or
# touching its sources.  These states hold arm64 lists only: the kbuild helpers that go with
# an arm64 kernel's headers must run on this host, so they come from the amd64 lists (the
# host's for bookworm, apt-trixie.sh's for trixie-backports), which is how Debian
# cross-builds modules.
# arm64_apt SUITE (bookworm or trixie-backports) sets arm64_apt_opts (options for apt-get
# and apt-cache) and arm64_lists (the lists directory); arm64_refresh fetches that suite's
# lists when missing, and again once a day (the archive drops superseded kernels).

: "${top:?set by the script that sources this file}"
# shellcheck source=tests/vm/apt-state.sh
. "$top/tests/vm/apt-state.sh"
arm64_suite=
arm64_state=
arm64_lists=
arm64_apt_opts=()

arm64_apt() {
	arm64_suite=$1
	arm64_state="$top/build/apt/$arm64_suite-arm64"
	arm64_lists="$arm64_state/state/lists"
	apt_state_opts "$arm64_state" arm64
	arm64_apt_opts=("${apt_opts[@]}")
}

arm64_refresh() {
	: "${arm64_suite:?arm64_apt SUITE first}"
	local deb="deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" sources
	case "$arm64_suite" in
	# The suites the host's own sources have, so that the kernel and its amd64 kbuild
	# helpers come from the same upload.
	bookworm)
		sources=("$deb http://deb.debian.org/debian bookworm main"
			"$deb http://deb.debian.org/debian bookworm-updates main"
			"$deb http://deb.debian.org/debian-security bookworm-security main")
		;;
	trixie-backports) sources=("$deb http://deb.debian.org/debian trixie-backports main") ;;
	*) die "no arm64 apt state known for $arm64_suite" ;;
	esac
	apt_state_refresh "$arm64_state" arm64 '*_Packages*' "$arm64_suite arm64" "${sources[@]}"
}
