# shellcheck shell=bash
# Sourced last by tests/vm/run.sh and tests/system/run.sh, when QEMU has exited: reads the
# result channel, checks the guest's kernel log, prints the report and ends with the run's
# status (0: nothing failed).  Uses the runner's variables: top, rundir, channel, console,
# prefix, g_script (and the script's arguments as "$@"), qemu_rc, timeout_s, elapsed_s,
# results_file, verbosity, kver, cpu, and dmesg_expect if set.
# Channel markers (tests/vm/init.sh, tests/system/guest.sh and the image's shutdown hook):
# RESULT STATE NAME [MESSAGE], BEGIN, EXIT RC, DMESG-BEGIN ... DMESG-END, END, RESET.
: "${top:?}" "${rundir:?}" "${channel:?}" "${console:?}" "${prefix:?}" "${g_script:?}"
: "${qemu_rc:?}" "${timeout_s:?}" "${elapsed_s:?}" "${verbosity:?}" "${kver:?}" "${cpu:?}"
: "${results_file?}"

# Read the result channel. Markers are whole lines there; only the \r of the tty is removed.
names=()
states=()
messages=()
add() {
	names+=("$prefix/$2")
	states+=("$1")
	messages+=("${3:-}")
}
began=0
exit_rc=
dmesg_done=0
reached_end=0
in_dmesg=0
: >"$rundir/dmesg.txt"
if [ -f "$channel" ]; then
	while IFS= read -r line; do
		line=${line%$'\r'}
		if [ "$in_dmesg" = 1 ]; then
			if [ "$line" = "@@AESLOOP-DMESG-END" ]; then
				in_dmesg=0
				dmesg_done=1
			else
				printf '%s\n' "$line" >>"$rundir/dmesg.txt"
			fi
			continue
		fi
		case "$line" in
		"@@AESLOOP-RESULT "*)
			read -r state name message <<<"${line#@@AESLOOP-RESULT }"
			case "$state" in
			PASS | FAIL | SKIP) add "$state" "$name" "$message" ;;
			*) add FAIL "${name:-unnamed}" "malformed result line: $line" ;;
			esac
			;;
		"@@AESLOOP-BEGIN "*) began=1 ;;
		"@@AESLOOP-EXIT "*) exit_rc=${line#@@AESLOOP-EXIT } ;;
		"@@AESLOOP-DMESG-BEGIN") in_dmesg=1 ;;
		"@@AESLOOP-END") reached_end=1 ;;
		# t_hard_reset: the script ends in a planned reset, after its log.
		"@@AESLOOP-RESET "*) exit_rc=0 reached_end=1 ;;
		esac
	done <"$channel"
fi

if [ "$began" = 1 ] && [ "$exit_rc" = 0 ]; then
	add PASS script-exit
elif [ "$began" = 1 ] && [ -n "$exit_rc" ]; then
	add FAIL script-exit "$g_script${*:+ $*} exited with status $exit_rc"
elif [ "$began" = 1 ]; then
	add FAIL script-exit "$g_script did not finish"
else
	add FAIL script-exit "$g_script was not run"
fi

# Kernel log lines that mean a kernel bug, whatever the tests reported.
bad_re='Oops|BUG:|kernel BUG|WARNING:|Call Trace|general protection|Kernel panic|UBSAN:|KASAN:|KFENCE:|soft lockup|hard LOCKUP|blocked for more than|rcu: INFO|list_(add|del) corruption|kmemleak: leak in loop'
# Not a bug: the memory-pressure notice of an allocation that may fail ("page
# allocation failure", with its stack), which 7.x's swap code prints when a
# guest swaps with no memory left (t-swap) - unless loop.ko's frames are in
# it.  Those blocks are left out of the check; dmesg.txt keeps them.
checked="$rundir/dmesg-checked.txt"
awk '
	/page allocation failure: / { held = $0 "\n"; inblock = 1; next }
	inblock { held = held $0 "\n"; if ($0 ~ /<\/TASK>/) { inblock = 0; if (held ~ /\[loop\]/) printf "%s", held; held = "" } next }
	{ print }
	END { if (inblock) printf "%s", held }
' "$rundir/dmesg.txt" >"$checked"
details=()
if [ "$dmesg_done" = 1 ] && [ "$reached_end" = 1 ]; then
	if grep -Eq "$bad_re" "$checked"; then
		first=$(grep -Em1 "$bad_re" "$checked")
		add FAIL guest-dmesg "kernel log: $first"
		mapfile -t details < <(grep -En -B2 -A25 "$bad_re" "$checked" | head -n 60)
	else
		add PASS guest-dmesg
	fi
else
	if [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ]; then
		why="timed out after ${timeout_s}s"
	else
		why="QEMU exited with status $qemu_rc before the guest finished"
	fi
	first=$(grep -Em1 "$bad_re" "$console" || true)
	add FAIL guest-dmesg "guest did not reach the end: $why${first:+; console: $first}; its files: ${rundir#"$top"/}"
	# The console's tail, without the terminal escapes of the firmware.
	mapfile -t details < <(tail -n 40 "$console" | tr -d '\r' | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g')
fi

# The runner's -k NAME=REGEX: lines that the kernel log of the whole run (the shutdown
# included, which no guest script sees) must have.
# shellcheck disable=SC2154 # set by tests/system/run.sh only
for e in ${dmesg_expect[@]+"${dmesg_expect[@]}"}; do
	if [ "$dmesg_done" = 1 ] && grep -Eq -- "${e#*=}" "$rundir/dmesg.txt"; then
		add PASS "${e%%=*}"
	else
		add FAIL "${e%%=*}" "the kernel log has no line matching /${e#*=}/"
	fi
done

# Report: the run's own TAP stream in results.txt, printed; with -r FILE, the results are
# appended to FILE instead, numbered after its last (tests/tap.sh), and those lines printed.
# shellcheck source=tests/tap.sh
. "$top/tests/tap.sh"
npass=0 nfail=0 nskip=0
tap_states=()
: >"$rundir/results.txt"
for i in "${!names[@]}"; do
	case "${states[i]}" in
	PASS) npass=$((npass + 1)) state=pass ;;
	FAIL) nfail=$((nfail + 1)) state=fail ;;
	*) nskip=$((nskip + 1)) state=skip ;;
	esac
	tap_states+=("$state")
	tap_result "$state" "${names[i]}" "${messages[i]}" >>"$rundir/results.txt"
done
tap_end >>"$rundir/results.txt" || true
if [ "${#details[@]}" -gt 0 ] && [ "$verbosity" -ge 0 ]; then
	echo "# --- guest-dmesg failure (full logs in ${rundir#"$top"/}):"
	printf '#     %s\n' "${details[@]}"
fi
echo "# --- results ($prefix, $kver, cpu $cpu):"
if [ -n "$results_file" ]; then
	for i in "${!names[@]}"; do
		tap_append "$results_file" "${tap_states[i]}" "${names[i]}" "${messages[i]}"
	done
else
	cat "$rundir/results.txt"
fi
echo "# --- $npass passed, $nfail failed, $nskip skipped; VM run ${elapsed_s}s; log ${console#"$top"/}"
[ "$nfail" -eq 0 ]
