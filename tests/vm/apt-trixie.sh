# shellcheck shell=bash disable=SC2034 # its variables are for the scripts that source it
# Sourced by kernel.sh and debug-kernel.sh (which set $top and define say and die): a private
# apt state for Debian trixie-backports under build/apt/trixie-backports, so that its kernel
# packages can be downloaded on a bookworm host without touching the host's sources or
# installing anything.  Defines trixie_apt_opts (options for apt-get and apt-cache),
# trixie_lists (the lists directory) and trixie_refresh (fetch the lists when missing, and
# again once a day: the archive drops superseded kernels, so old lists end in failed downloads).

: "${top:?set by the script that sources this file}"
# shellcheck source=tests/vm/apt-state.sh
. "$top/tests/vm/apt-state.sh"
trixie_state="$top/build/apt/trixie-backports"
trixie_lists="$trixie_state/state/lists"
apt_state_opts "$trixie_state" amd64
trixie_apt_opts=("${apt_opts[@]}")

trixie_refresh() {
	apt_state_refresh "$trixie_state" amd64 '*_Packages' trixie-backports \
		"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie-backports main"
}
