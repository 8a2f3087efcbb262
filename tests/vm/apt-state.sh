# shellcheck shell=bash
# Sourced by apt-trixie.sh and apt-arm64.sh (for scripts that set $top and define say and
# die): a private apt state in a folder of build/apt, with sources of its own and one
# architecture's lists, so that Debian packages the host's sources lack can be downloaded
# without touching the host's apt or dpkg.

: "${top:?set by the script that sources this file}"

# apt_state_opts STATE ARCH: apt_opts set to the apt-get and apt-cache options of the state
# in folder STATE, for ARCH's packages only.
apt_state_opts() {
	apt_opts=(
		-o "Dir::State=$1/state" -o "Dir::State::status=$1/state/status"
		-o "Dir::Cache=$1/cache" -o "Dir::Etc::SourceList=$1/sources.list"
		-o "Dir::Etc::SourceParts=/dev/null" -o "Dir::Etc::Preferences=/dev/null"
		-o "Dir::Etc::PreferencesParts=/dev/null" -o "APT::Architecture=$2"
		-o "APT::Architectures=$2"
	)
}

# apt_state_refresh STATE ARCH GLOB WHAT SOURCE-LINE...: fetches the lists of the state in
# folder STATE from the sources.list lines given, unless a list named GLOB is less than a
# day old (the archive drops superseded kernels, so old lists end in failed downloads).
apt_state_refresh() {
	local state=$1 arch=$2 glob=$3 what=$4
	shift 4
	if [ -n "$(find "$state/state/lists" -maxdepth 1 -name "$glob" -mmin -1440 2>/dev/null)" ]; then
		return 0
	fi
	mkdir -p "$state/state/lists/partial" "$state/cache/archives/partial"
	: >"$state/state/status"
	printf '%s\n' "$@" >"$state/sources.list"
	apt_state_opts "$state" "$arch"
	say "fetching the $what package lists into ${state#"$top"/}"
	apt-get "${apt_opts[@]}" -q update >&2 || die "apt-get update of $what failed"
}
