# shellcheck shell=bash
# Sourced by kernel.sh and debug-kernel.sh (which set $top and define say and die): a private
# apt state for Debian trixie-backports under build/apt/trixie-backports, so that its kernel
# packages can be downloaded on a bookworm host without touching the host's sources or
# installing anything.  Defines trixie_apt_opts (options for apt-get and apt-cache),
# trixie_lists (the lists directory) and trixie_refresh (fetch the lists when missing, and
# again once a day: the archive drops superseded kernels, so old lists end in failed downloads).

: "${top:?set by the script that sources this file}"
trixie_state="$top/build/apt/trixie-backports"
trixie_lists="$trixie_state/state/lists"
trixie_apt_opts=(
	-o "Dir::State=$trixie_state/state" -o "Dir::State::status=$trixie_state/state/status"
	-o "Dir::Cache=$trixie_state/cache" -o "Dir::Etc::SourceList=$trixie_state/sources.list"
	-o "Dir::Etc::SourceParts=/dev/null" -o "Dir::Etc::Preferences=/dev/null"
	-o "Dir::Etc::PreferencesParts=/dev/null" -o "APT::Architecture=amd64"
	-o "APT::Architectures=amd64"
)

trixie_refresh() {
	if [ -n "$(find "$trixie_lists" -maxdepth 1 -name '*_Packages' -mmin -1440 2>/dev/null)" ]; then
		return 0
	fi
	mkdir -p "$trixie_lists/partial" "$trixie_state/cache/archives/partial"
	: >"$trixie_state/state/status"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie-backports main" \
		>"$trixie_state/sources.list"
	say "fetching the trixie-backports package lists into ${trixie_state#"$top"/}"
	apt-get "${trixie_apt_opts[@]}" -q update >&2 || die "apt-get update of trixie-backports failed"
}
