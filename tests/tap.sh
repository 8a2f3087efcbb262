# shellcheck shell=bash
# The one result format of aesloop's tests, sourced by every shell script that
# reports results: TAP version 13 as the kernel's kselftest prints it (the C
# tests print the same through tests/host/testutil.h).
#
#   TAP version 13
#   ok 1 NAME
#   not ok 2 NAME # WHY
#   ok 3 NAME # SKIP WHY
#   1..3
#
# Everything else a test says is a "# " comment line.  A NAME has no spaces
# (a space in one is turned into "_"), so that the summaries can split lines,
# and a result is one line (line breaks in NAME or WHY become spaces).
# tap_relay joins the streams of several programs into one, numbered anew, as
# kselftest's runner does; tests/check.sh's last line, after the plan, stays
# "N passed, N failed, N skipped".

tap_count=0
tap_failures=0
TAP_PREFIX=${TAP_PREFIX-}

# tap_line N STATE NAME [WHY]: the result line for STATE pass, fail or skip.
tap_line() {
	local n=$1 state=$2 name=${3//[[:space:]]/_} why=${4-}
	why=${why//$'\n'/ }
	case "$state" in
	pass) echo "ok $n $name" ;;
	fail) echo "not ok $n $name # ${why:-failed}" ;;
	skip) echo "ok $n $name # SKIP ${why:-no reason given}" ;;
	*) echo "not ok $n $name # unknown result state '$state'" ;;
	esac
}

# tap_result STATE NAME [WHY]: the next result of this stream, TAP_PREFIX
# before its name; the stream's header before the first.
tap_result() {
	[ "$tap_count" -gt 0 ] || echo "TAP version 13"
	tap_count=$((tap_count + 1))
	[ "$1" != fail ] || tap_failures=$((tap_failures + 1))
	tap_line "$tap_count" "$1" "$TAP_PREFIX$2" "${3-}"
}

pass() { tap_result pass "$1"; }
fail() { tap_result fail "$1" "${2-}"; }
skip() { tap_result skip "$1" "${2-}"; }

# tap_end: the stream's plan; the script's last command, its status 1 when a
# result failed.
tap_end() {
	echo "1..$tap_count"
	[ "$tap_failures" -eq 0 ]
}

# tap_quiet_passes=1 (a shell variable, not exported: the programs a run
# starts print every result as before): tap_append and tap_relay print
# failures and skips only, and keep every result in their FILE.  For
# tests/check.sh, whose thousands of passes would bury its failures.
tap_quiet_passes=${tap_quiet_passes:-0}

# tap_append FILE STATE NAME [WHY]: one result appended to FILE, a file of
# result lines only (tests/check.sh's results.txt), numbered after its last;
# the line is printed too (not a pass with tap_quiet_passes=1).
tap_append() {
	local file=$1 n
	shift
	n=$(($(wc -l <"$file") + 1))
	if [ "$tap_quiet_passes" = 1 ] && [ "$1" = pass ]; then
		tap_line "$n" "$@" >>"$file"
		return
	fi
	tap_line "$n" "$@" | tee -a "$file"
}

# tap_relay FILE [PREFIX]: the TAP stream on stdin, its result lines numbered
# after FILE's last, PREFIX before their names, printed (not the passes with
# tap_quiet_passes=1) and appended to FILE;
# its other lines (headers, plans and whatever else the program printed)
# printed as comments, or left out when TAP_RELAY_COMMENTS=0.  A line that looks like a result but is not one (no
# number) stays a comment.
tap_relay() {
	local file=$1 prefix=${2-}
	awk -v file="$file" -v prefix="$prefix" -v n="$(wc -l <"$file")" \
		-v comments="${TAP_RELAY_COMMENTS:-1}" -v quiet="$tap_quiet_passes" '
		/^(not )?ok [0-9]+ / {
			not = ($1 == "not")
			rest = $0
			sub(/^(not )?ok [0-9]+ /, "", rest)
			line = (not ? "not ok " : "ok ") (++n) " " prefix rest
			if (!quiet || not || rest ~ / # SKIP( |$)/)
				print line
			print line >>file
			fflush()
			fflush(file)
			next
		}
		comments { print "# " $0; fflush() }
	'
}

# tap_plan_problem: what is wrong with the end of the TAP stream on stdin (no
# plan, as when its program stopped early; a plan that does not match its
# results), or nothing.
tap_plan_problem() {
	awk '
		/^(not )?ok [0-9]+ / { count++ }
		/^1\.\.[0-9]+$/ { plan = substr($0, 4) }
		END {
			if (plan == "")
				print "no plan: it stopped before its end"
			else if (plan != count)
				printf "plan 1..%s, %d results\n", plan, count
		}
	'
}

# tap_counts FILE [SUITE]: "PASSED FAILED SKIPPED" of the result lines in
# FILE; with SUITE, only those named SUITE/... or SUITE-root-VARIANT/... (a
# system image's encrypted-root boots), SUITE taken literally (a kernel's
# release has dots and pluses).
tap_counts() {
	TAP_SUITE=${2-} awk '
		BEGIN { suite = ENVIRON["TAP_SUITE"] }
		/^(not )?ok [0-9]+ / {
			name = ($1 == "not") ? $4 : $3
			if (suite != "" && index(name, suite "/") != 1 &&
			    !(index(name, suite "-root-") == 1 && name ~ /^[^\/]*-root-[a-z]+\//))
				next
			if ($1 == "not")
				f++
			else if ($0 ~ / # SKIP( |$)/)
				s++
			else
				p++
		}
		END { printf "%d %d %d\n", p, f, s }
	' "$1"
}
