# shellcheck shell=bash
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
arm64_suite=
arm64_state=
arm64_lists=
arm64_apt_opts=()

arm64_apt() {
	arm64_suite=$1
	arm64_state="$top/build/apt/$arm64_suite-arm64"
	arm64_lists="$arm64_state/state/lists"
	arm64_apt_opts=(
		-o "Dir::State=$arm64_state/state" -o "Dir::State::status=$arm64_state/state/status"
		-o "Dir::Cache=$arm64_state/cache" -o "Dir::Etc::SourceList=$arm64_state/sources.list"
		-o "Dir::Etc::SourceParts=/dev/null" -o "Dir::Etc::Preferences=/dev/null"
		-o "Dir::Etc::PreferencesParts=/dev/null" -o "APT::Architecture=arm64"
		-o "APT::Architectures=arm64"
	)
}

arm64_refresh() {
	: "${arm64_suite:?arm64_apt SUITE first}"
	if [ -n "$(find "$arm64_lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null)" ]; then
		return 0
	fi
	mkdir -p "$arm64_lists/partial" "$arm64_state/cache/archives/partial"
	: >"$arm64_state/state/status"
	local deb="deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
	case "$arm64_suite" in
	# The suites the host's own sources have, so that the kernel and its amd64 kbuild
	# helpers come from the same upload.
	bookworm)
		printf '%s\n' "$deb http://deb.debian.org/debian bookworm main" \
			"$deb http://deb.debian.org/debian bookworm-updates main" \
			"$deb http://deb.debian.org/debian-security bookworm-security main"
		;;
	trixie-backports) echo "$deb http://deb.debian.org/debian trixie-backports main" ;;
	*) die "no arm64 apt state known for $arm64_suite" ;;
	esac >"$arm64_state/sources.list"
	say "fetching the $arm64_suite arm64 package lists into ${arm64_state#"$top"/}"
	apt-get "${arm64_apt_opts[@]}" -q update >&2 || die "apt-get update of $arm64_suite (arm64) failed"
}
