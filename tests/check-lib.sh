# shellcheck shell=bash
# Sourced by tests/check.sh and the other tiers (tests/check-*.sh), from the top of the
# checkout, with $top and $log (the folder for logs and results.txt) set: the result
# bookkeeping they share, and the steps that start them.
: "${top:?}" "${log:?}"
# shellcheck source=tests/tap.sh
. "$top/tests/tap.sh"
mkdir -p "$log"
# Every result of the run, as TAP result lines numbered in order (tests/tap.sh).  The
# output shows the failures and skips, each program's counts and the stages; VERBOSE=1
# every result too.
results=$log/results.txt
# shellcheck disable=SC2034 # read by tests/tap.sh's functions
tap_quiet_passes=1
[ "${VERBOSE:-0}" != 1 ] || tap_quiet_passes=0
: >"$results"
echo "TAP version 13"
# The kernels whose VM results summary() counts, as their releases.
kvers=

# disk_free_mib: the space left where the run writes, in MiB.  disk_free: the same in GiB
# ("12.3G"), printed with each stage and lane item, so that a run that fills the disk says so.
disk_free_mib() { df -P -B1M "$top/build" 2>/dev/null | awk 'NR == 2 { print $4 }'; }
disk_free() { awk -v m="$(disk_free_mib)" 'BEGIN { printf "%.1fG", m / 1024 }'; }

stage() { printf '#\n# === %s (%s free)\n' "$*" "$(disk_free)"; }

# result STATE NAME [WHY]: one result of the run's own (pass, fail or skip).
result() { tap_append "$results" "$@"; }

# record NAME CMD...: runs CMD, a TAP stream whose results are the run's; a
# non-zero exit without a failed result of its own, or a stream that ended
# early, is one more failure.
record() {
	local name=$1 out=$log/$1.log rc problem
	shift
	"$@" 2>&1 | tee "$out" | tap_relay "$results"
	rc=${PIPESTATUS[0]}
	problem=$(tap_plan_problem <"$out")
	echo "# $name: $(tap_counts "$out" | awk '{ printf "%d passed, %d failed, %d skipped", $1, $2, $3 }')"
	if [ "$rc" -ne 0 ] && ! grep -q '^not ok ' "$out"; then
		result fail "$name" "exit status $rc (log: $out)"
	elif [ -n "$problem" ]; then
		result fail "$name-plan" "$problem (log: $out)"
	fi
	return "$rc"
}

# step NAME CMD...: one result for the whole command.
step() {
	local name=$1 out=$log/$1.log
	shift
	if "$@" >"$out" 2>&1; then
		result pass "$name"
	else
		tail -n 30 "$out" | sed 's/^/# /'
		result fail "$name" "$* (log: $out)"
		return 1
	fi
}

# tier_build DEPS...: the start of a tier: its dependencies (the command DEPS..., e.g.
# tests/deps.sh; a failure ends the run), then the userspace with the x86_64 VM tools, and
# the patched losetup.
tier_build() {
	stage "Dependencies"
	step setup-deps "$@" || exit 1
	stage "Build"
	step build-userspace make userspace vm-tools INTELAES=y
	step build-losetup make losetup
}

# built_kernel NAME CMD...: kver set to the release CMD prints (a kernel it builds, with its
# messages in $log/NAME.log and their "built in" line shown); a failed result NAME and
# status 1 when it could not.
built_kernel() {
	local name=$1 out=$log/$1.log
	shift
	if ! kver=$("$@" 2>"$out"); then
		tail -n 30 "$out"
		result fail "$name" "could not build it (log: $out)"
		return 1
	fi
	grep -h 'built in' "$out" || true
}

# The wall-clock limit of a VM run of SUITE: about eight times what the
# suite took on this project's two-core machine with other guests running
# (tests/README.md has the measured times), and never under 300 s, so that a
# busy machine makes a run slow, not failed.  VM_LIMIT_FACTOR multiplies it
# for slower kernels (the debug kernel's tier).
vm_limit() {
	local limit
	case "$1" in
	t-driver | t-bdev | t-keys | t-mount | t-swap) limit=1200 ;;
	# A system suite boots systemd first (about 80 s under TCG on a busy machine).
	t-boot | t-udev | t-udisks | t-fstab | t-deb) limit=1200 ;;
	# t-root's boots; check.sh gives the FULL=1 first phase (two runs of the image's
	# update-initramfs) a longer limit.
	t-root) limit=2400 ;;
	t-callers | t-abuse | t-crypt | t-multikey | t-reconfig) limit=600 ;;
	*) limit=300 ;;
	esac
	echo $((limit * ${VM_LIMIT_FACTOR:-1}))
}

# The suite a harness command line runs: the name of its t-*.sh argument.
suite_of() {
	local a suite=
	for a in "$@"; do
		case "$a" in
		*/t-*.sh) suite=${a##*/} suite=${suite%.sh} ;;
		esac
	done
	echo "$suite"
}

# run_name ARGS...: the result prefix a harness command line gives (its -n), else its suite.
run_name() {
	local a prev=
	for a in "$@"; do
		[ "$prev" != -n ] || { echo "$a"; return; }
		prev=$a
	done
	suite_of "$@"
}

# A harness run appends its result lines to results.txt itself (status 0, or 1 when one
# failed); any other status is a run that stopped before reporting (kernel, initramfs,
# module or image missing): one more failure, or its suite would vanish from the counts.
harness_results() { # HARNESS ARGS...
	local harness=$1 rc=0
	shift
	"$harness" -q -r "$results" -t "$(vm_limit "$(suite_of "$@")")" "$@" || rc=$?
	[ "$rc" -le 1 ] || result fail "$(run_name "$@")/harness" "$harness exited $rc before reporting"
	return "$rc"
}

vm_results() { harness_results tests/vm/run.sh "$@"; }

# A system suite (tests/system/run.sh) booted in a Debian image; the limit as vm_limit's.
system_results() { harness_results tests/system/run.sh "$@"; }

# loop.ko for kernel KVER, built with that kernel's compiler (kmake.sh), W=1 and
# objtool saying nothing.
build_module() { # KVER NAME [MAKE-VARIABLES...]
	local kver=$1 name=$2
	shift 2
	step "$name" tests/vm/kmake.sh "$kver" module \
		KDIR="$top/build/kernel/$kver/lib/modules/$kver/build" "$@"
}

# The default loop.ko for KVER, and a result for what W=1 and objtool said of it: nothing,
# or a failure.  Status 1 when it did not build.
module_for() { # KVER
	local kver=$1
	build_module "$kver" "build-module-$kver" || return 1
	if grep -Ei 'warning|error' "$log/build-module-$kver.log"; then
		result fail "build-module-$kver-warnings" "see $log/build-module-$kver.log"
	else
		result pass "build-module-$kver-warnings"
	fi
}

# keyscrub_module KVER: keyscrub_ko set to a KEYSCRUB=y loop.ko for KVER, kept in $log
# (built beside the default one, so that no lane rebuilds loop/loop.ko under another), or
# empty and status 1 when it did not build.
keyscrub_module() {
	keyscrub_ko=
	build_module "$1" "build-module-$1-keyscrub" KEYSCRUB=y || return 1
	keyscrub_ko=$log/loop-$1-keyscrub.ko
	cp loop/loop.ko "$keyscrub_ko"
}

# The guest sees the project and build/vm/share, not ../shared: the test vectors go there.
share_vectors() {
	rm -rf build/vm/share/vectors
	mkdir -p build/vm/share
	cp -r "$(tests/host/vectors-dir.sh)" build/vm/share/vectors
}

# share_for KVER: prints a /share of KVER's own for run.sh -s, build/vm/share-KVER, made empty
# but for the vectors (share_vectors first).  The suites leave files there under fixed names
# (t-crypt's and t-multikey's crypt/, which host-aespipe.sh reads after them, t-crash's
# crash.img): two kernels' guests at once must not share one.
share_for() {
	local dir=$top/build/vm/share-$1
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -r "$top/build/vm/share/vectors" "$dir/vectors"
	echo "$dir"
}

# Two lanes of work at once: each TCG guest runs on one host thread (tests/vm/run.sh), so two
# guests use two cores.  lanes ITEM...: runs each ITEM (a name the caller's run_item knows;
# item_minutes gives its time alone, in tenths of a minute) in lane a or b, the longest first,
# each in the lane with less work so far.  Each ITEM has results of its own ($log/lanes/ITEM.txt)
# and its output goes to $log/lanes/ITEM.log and to its lane's log ($log/lane-a.log,
# lane-b.log); when both lanes are done, the items join the run's results in the order given
# (so numbering does not depend on the lanes or on timing), each after its output (result
# lines left out: they follow, numbered anew).  Whatever two items share must be safe to use at
# once (see tests/check.sh).
lanes_dir=$log/lanes
lanes() {
	local item w load_a=0 load_b=0 a=() b=()
	rm -rf "$lanes_dir"
	mkdir -p "$lanes_dir"
	while read -r w item; do
		if [ "$load_a" -le "$load_b" ]; then
			a+=("$item") load_a=$((load_a + w))
		else
			b+=("$item") load_b=$((load_b + w))
		fi
	done < <(for item; do echo "$(item_minutes "$item") $item"; done | sort -s -k1,1nr)
	printf '# lane a, about %d.%d minutes alone: %s\n' $((load_a / 10)) $((load_a % 10)) "${a[*]}"
	printf '# lane b, about %d.%d minutes alone: %s\n' $((load_b / 10)) $((load_b % 10)) "${b[*]}"
	# fd 3: the run's own output, for a line as each item ends.
	exec 3>&1
	run_lane a "${a[@]}" >"$log/lane-a.log" 2>&1 &
	run_lane b "${b[@]}" >"$log/lane-b.log" 2>&1 &
	wait
	exec 3>&-
	for item; do
		awk '/^(not )?ok [0-9]+ / { next } /^#/ { print; next } { print "# " $0 }' \
			"$lanes_dir/$item.log"
		tap_relay "$results" <"$lanes_dir/$item.txt"
	done
}

# run_lane NAME ITEM...: one lane's items, one after the other.
run_lane() {
	local name=$1 item t0 took results
	shift
	for item; do
		t0=$SECONDS
		results=$lanes_dir/$item.txt
		: >"$results"
		run_item "$item" 3>&- 2>&1 | tee "$lanes_dir/$item.log"
		took=$((SECONDS - t0))
		took=$(printf '%d min %02d s' $((took / 60)) $((took % 60)))
		echo "# $item: $took in lane $name" | tee -a "$lanes_dir/$item.log"
		echo "# lane $name: $item done ($took, $(disk_free) free)" >&3
	done
}

# The end of each console whose guest did not finish (report.sh names its files), here at the
# end of the run where a reader of a long log looks first.
console_tails() {
	local dir
	grep '^not ok .*guest did not reach the end' "$results" |
		sed -n 's/.*; its files: \([^ ]*\).*/\1/p' |
		while read -r dir; do
			[ -f "$top/$dir/console.log" ] || continue
			echo "# --- the last lines of $dir/console.log:"
			tail -n 25 "$top/$dir/console.log" | tr -d '\r' |
				sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/^/#     /'
		done
}

# The plan, the counts per kernel, the failures, and the last line: "N passed,
# N failed, N skipped".  Its status is 0 only when nothing failed.
summary() {
	local pass fail skip kver pass_k fail_k skip_k
	echo "1..$(wc -l <"$results")"
	read -r pass fail skip < <(tap_counts "$results")
	stage "Per kernel"
	# A system image's encrypted-root boots are named SUITE-root-VARIANT/...
	for kver in $kvers; do
		read -r pass_k fail_k skip_k < <(tap_counts "$results" "$kver")
		echo "# $kver: $pass_k passed, $fail_k failed, $skip_k skipped in the VM"
	done
	if [ "$fail" -gt 0 ]; then
		stage "Failures"
		grep '^not ok ' "$results" | sed 's/^/# /'
		console_tails
	fi
	echo
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ]
}
