#!/bin/bash
# The index from behaviour to the suites that check it, made from the "covers:" line each suite
# has as its second line ("# covers: A, B, C" in a script, "// covers: A, B, C" in a C program):
# every tests/vm/t-*.sh, tests/system/t-*.sh, tests/host/t-*.sh and tests/host/test_*.c, and the
# packaging checks tests/packaging/*.sh.
#   tests/covers.sh      prints the index (a Markdown table: behaviour, suites)
#   tests/covers.sh -w   writes it into tests/COVERS.md
#   tests/covers.sh -c   checks: every suite has a covers line, no two behaviours differ only
#                        in case or spacing, and tests/COVERS.md is the index as it is now
#                        (tests/lint.sh runs this); exits 1 on a problem, naming it
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
index_file=tests/COVERS.md

suites() { printf '%s\n' tests/vm/t-*.sh tests/system/t-*.sh tests/host/t-*.sh tests/host/test_*.c tests/packaging/*.sh; }

# covers_of FILE: its behaviours, one a line.
covers_of() {
	sed -n '2s,^\(#\|//\) covers: ,,p' "$1" | tr ',' '\n' | sed 's/^ *//;s/ *$//' | grep . || true
}

# Behaviour TAB file, for every suite's every behaviour.
pairs() {
	local f b
	while read -r f; do
		while read -r b; do
			printf '%s\t%s\n' "$b" "$f"
		done < <(covers_of "$f")
	done < <(suites)
}

index() {
	echo "# What the test suites cover"
	echo
	echo "Made by \`tests/covers.sh -w\` from the \`covers:\` line of each suite (its second"
	echo "line); \`tests/lint.sh\` checks that it is current.  Edit the suites, not this file."
	echo
	echo "| behaviour | suites |"
	echo "| --- | --- |"
	pairs | LC_ALL=C sort -f -t "$(printf '\t')" -k1,1 -k2,2 | awk -F'\t' '
		$1 != b { if (NR > 1) print "| " b " | " s " |"; b = $1; s = $2; next }
		{ s = s ", " $2 }
		END { if (NR) print "| " b " | " s " |" }'
}

check() {
	local f problems=0 dup
	while read -r f; do
		if [ -z "$(covers_of "$f")" ]; then
			echo "$f: no covers line (line 2: # covers: ... or // covers: ...)"
			problems=1
		fi
	done < <(suites)
	# One name for one behaviour: the vocabulary stays consistent.
	dup=$(pairs | cut -f1 | sort -u | awk '{ k = tolower($0); gsub(/[^a-z0-9]/, "", k); if (k in seen) print seen[k] " ~ " $0; seen[k] = $0 }')
	if [ -n "$dup" ]; then
		printf 'behaviours named two ways: %s\n' "$dup"
		problems=1
	fi
	if ! index | cmp -s - "$index_file"; then
		echo "$index_file is not current: run tests/covers.sh -w"
		problems=1
	fi
	return "$problems"
}

case "${1-}" in
'') index ;;
-w) index >"$index_file" ;;
-c) check ;;
*) sed -n '2,/^set /s/^# \{0,1\}//p' "$0" | sed '$d' >&2; exit 2 ;;
esac
