# shellcheck shell=bash
# type_at_prompts SCREEN LINE...: prints LINE number k (to a pipe into script(1), which
# types it on the terminal) once SCREEN, where script's output goes, shows the k-th
# "Password: " or "Retype password: " prompt; it waits up to 20 s for each.  Not
# before: the programs turn echo off with TCSAFLUSH before their first prompt, which
# drops what was typed ahead (a fixed sleep lost that race on a busy machine).
# SCREEN must be emptied before the pipeline starts.
type_at_prompts() {
	local screen=$1 k=0 line i
	shift
	for line in "$@"; do
		k=$((k + 1))
		for ((i = 0; i < 200; i++)); do
			[ "$(grep -o 'assword: ' "$screen" | wc -l)" -ge "$k" ] && break
			sleep 0.1
		done
		printf '%s\n' "$line"
	done
}
