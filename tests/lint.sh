#!/bin/bash
# Static checks: the kernel's checkpatch.pl --strict on the kernel-side C and
# assembly (loop/, aes/, aes-intel/, aes-arm64/), shellcheck on the project's shell
# scripts, the docs (README.md's first two commands, the second CI's, and the
# relative links of the Markdown files) and the test suites' covers lines
# (tests/covers.sh -c).
# checkpatch.pl is not in Debian's headers packages; it comes out of the
# linux-source deb of the 6.1 series, cached in build/.
# Prints TAP (tests/tap.sh); exits non-zero on a failure.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=$top/build/checkpatch
# shellcheck source=tests/tap.sh
. "$top/tests/tap.sh"

fetch_checkpatch() {
	[ -x "$cache/scripts/checkpatch.pl" ] && return 0
	local tmp deb tarball
	tmp=$(mktemp -d)
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" RETURN
	(cd "$tmp" && apt-get download -q linux-source-6.1 >&2)
	deb=$(ls "$tmp"/linux-source-6.1_*.deb)
	dpkg-deb -x "$deb" "$tmp/root"
	tarball=$(ls "$tmp"/root/usr/src/linux-source-6.1.tar.*)
	mkdir -p "$cache"
	# Only the script and the data files it reads.
	tar -xf "$tarball" -C "$cache" --strip-components=1 --wildcards \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'
}

fetch_checkpatch
files=$(cd "$top" && git ls-files "loop/*.[ch]" "aes/*.[ch]" "aes-intel/*.[chS]" "aes-arm64/*.[chS]")
for f in $files; do
	if out=$(cd "$top" && "$cache/scripts/checkpatch.pl" --strict --no-tree \
		--terse --show-types -f "$f" 2>&1) &&
	   ! grep -q 'WARNING\|ERROR\|CHECK' <<<"$out"; then
		pass "checkpatch-$f"
	else
		fail "checkpatch-$f" "$(grep -c 'WARNING\|ERROR\|CHECK' <<<"$out") findings"
		head -20 <<<"$out" | awk '{ print "#   " $0 }'
	fi
done

if command -v shellcheck >/dev/null; then
	mapfile -t scripts < <(cd "$top" && git ls-files '*.sh' .ci/run boot tools/aesloop-keygen debian/prerm-root-guard ':!*.service')
	if out=$(cd "$top" && shellcheck -x -P SCRIPTDIR "${scripts[@]}" 2>&1); then
		pass shellcheck
	else
		fail shellcheck findings
		head -40 <<<"$out" | awk '{ print "#   " $0 }'
	fi
else
	fail shellcheck "not installed (tests/deps.sh installs it)"
fi

# The docs.  README.md opens with the two commands a newcomer runs, the second the test
# command that CI runs (.ci/run); every relative link in the Markdown files names a file
# that exists.
readme_cmds=$(sed -n '1,2s/^    \([^ ]*\) .*/\1/p' "$top/README.md")
if [ "$readme_cmds" = $'tests/demo.sh\ntests/check.sh' ] && [ -x "$top/tests/demo.sh" ] &&
   [ -x "$top/tests/check.sh" ] && grep -qx 'exec tests/check.sh' "$top/.ci/run"; then
	pass docs-readme-commands
else
	fail docs-readme-commands "README.md's first two lines are not tests/demo.sh and tests/check.sh, or .ci/run runs another command"
fi
broken=()
while IFS= read -r doc; do
	while IFS= read -r link; do
		target=${link%%#*}
		case "$target" in
		'' | *:*) continue ;; # an anchor in the same file; a URL
		esac
		[ -e "$(dirname "$top/$doc")/$target" ] || broken+=("$doc: $link")
	done < <(grep -o '](\([^)]*\))' "$top/$doc" | sed 's/^](//; s/)$//')
done < <(cd "$top" && git ls-files '*.md')
if [ "${#broken[@]}" -eq 0 ]; then
	pass docs-links
else
	fail docs-links "${#broken[@]} links to missing files"
	printf '#   %s\n' "${broken[@]}"
fi

# Every suite names what it covers, and tests/COVERS.md is the index of that.
if out=$("$top/tests/covers.sh" -c 2>&1); then
	pass covers
else
	fail covers "$(wc -l <<<"$out") problems (tests/covers.sh -c)"
	head -20 <<<"$out" | awk '{ print "#   " $0 }'
fi
tap_end
