# shellcheck shell=bash
# Sourced by the host tests' shell scripts: their result lines, as tests/host/run.sh and
# tests/check.sh count them ("PASS name", "FAIL name: why", "SKIP name: why"), and the count
# of failures that the script's exit status reports (results_status).  RESULT_PREFIX, when
# set, goes before each name (a script that check.sh runs without run.sh's prefixing).
failures=0
pass() { echo "PASS ${RESULT_PREFIX-}$1"; }
fail() {
	echo "FAIL ${RESULT_PREFIX-}$1: $2"
	failures=$((failures + 1))
}
skip() { echo "SKIP ${RESULT_PREFIX-}$1: $2"; }
# The script's last command: status 1 when anything failed.
results_status() { [ "$failures" -eq 0 ]; }
