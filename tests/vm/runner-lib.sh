# shellcheck shell=bash
# Sourced by tests/vm/run.sh and tests/system/run.sh: the options both take (-c -M -e -t -r -n
# -v -q -h) with their help lines, the checks of their values, the run's folder, the job file's
# common lines, the console filter and the timed QEMU run.  Each runner keeps its own options,
# defines usage() and sets top before sourcing this; the variables set here are the
# ones tests/vm/report.sh reads.
# shellcheck disable=SC2034,SC2154 # the variables are the runner's: set here, read there

say() { echo "$runner_name: $*" >&2; }
die() { say "$*"; exit 2; }

# The common options' defaults; NAME (for messages) and the runner's default time limit.
runner_defaults() {
	runner_name=$1
	cpu=max
	mem_mib=1024
	timeout_s=$2
	results_file=
	prefix=
	verbosity=1
	guest_env=()
}

# getopts letters of the common options, appended to the runner's own.
runner_optstring='c:M:e:t:r:n:vqh'

# One common option (getopts' OPT and OPTARG); anything else is a usage error.
runner_option() {
	case "$1" in
	c) cpu=$2 ;;
	M) mem_mib=$2 ;;
	e)
		[[ "$2" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "-e needs NAME=VALUE"
		guest_env+=("$2")
		;;
	t) timeout_s=$2 ;;
	r) results_file=$2 ;;
	n) prefix=$2 ;;
	v) verbosity=2 ;;
	q) verbosity=0 ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
}

# The help lines of -e, -t, -r, -v, -q, -h (-c, -M and -n say each runner's defaults).
runner_usage_options() {
	cat <<EOF
  -e NAME=VAL set an environment variable for the guest script (repeatable),
              e.g. -e T_VERBOSE=1 to see the output of passing checks
  -t SECONDS  wall-clock limit for the whole VM run (default $1)
  -r FILE     append the results to FILE, TAP result lines numbered after its last
  -v          show the whole console (boot messages, dmesg) while it runs
  -q          show nothing while it runs, only the results
  -h          this help
EOF
}

# runner_check_options MIN_MIB SCRIPT [ARGS...]: after the options, the values both runners
# take checked (MIN_MIB is the smallest -M), script set (the caller shifts it off).
runner_check_options() {
	[ $# -ge 2 ] || { usage >&2; exit 2; }
	script=$2
	[[ "$timeout_s" =~ ^[0-9]+$ ]] || die "-t needs a number of seconds"
	if ! [[ "$mem_mib" =~ ^[0-9]+$ ]] || [ "$mem_mib" -lt "$1" ]; then
		die "-M needs a number of MiB, at least $1"
	fi
	if [ -n "$results_file" ]; then
		# Resolved now: the path is relative to where the runner was started.
		touch "$results_file" || die "cannot write $results_file"
		results_file=$(realpath "$results_file")
	fi
}

# One folder per run below RUNS (sets id, runs, rundir), LINK pointing at it; only the KEEP
# newest are kept, so the runs folder stays small.
runner_rundir() {
	local old
	runs=$1
	id=$(date +%Y%m%d-%H%M%S)-$$
	rundir="$runs/$id"
	mkdir -p "$rundir"
	ln -sfn "runs/$id" "$2"
	old=("$runs"/*/)
	if [ "${#old[@]}" -gt "$3" ]; then
		rm -rf "${old[@]:0:${#old[@]}-$3}"
	fi
}

# Words quoted for a bash array assignment in the job file.
q_list() { [ $# -eq 0 ] || printf '%q ' "$@"; }

# The job's lines both guests read (the script, its arguments, -e's variables); ARGS are the
# script's arguments.
runner_job_lines() {
	printf 'AESLOOP_SCRIPT=%q\n' "$g_script"
	printf 'AESLOOP_ARGS=(%s)\n' "$(q_list "$@")"
	printf 'AESLOOP_ENV=(%s)\n' "$(q_list "${guest_env[@]}")"
}

# What a person sees while the guest runs: the script's output and the results; the boot
# and the dmesg dump only with -v.  Lines matching the glob show_also (if set) are shown too.
show() {
	local line on=0
	while IFS= read -r line; do
		line=${line%$'\r'}
		if [ "$verbosity" -ge 2 ]; then
			printf '%s\n' "$line"
			continue
		fi
		[ "$verbosity" -ge 1 ] || continue
		case "$line" in
		*@@AESLOOP-BEGIN\ *) on=1; printf -- '--- guest: %s\n' "${line#*@@AESLOOP-BEGIN }" ;;
		*@@AESLOOP-EXIT\ *) on=0; printf -- '--- guest script exit status %s\n' "${line#*@@AESLOOP-EXIT }" ;;
		*@@AESLOOP-RESULT\ *) printf '%s\n' "${line#*@@AESLOOP-RESULT }" ;;
		*@@AESLOOP-*) ;;
		*)
			# shellcheck disable=SC2053 # show_also is a glob
			if [ "$on" = 1 ] || { [ -n "${show_also:-}" ] && [[ "$line" == $show_also ]]; }; then
				printf '%s\n' "$line"
			fi
			;;
		esac
	done
}

# Runs "${qemu[@]}" under the time limit with stdin from STDIN and descriptor 3 on CHANNEL_OUT,
# the console into $console and through show (sets qemu_rc); --foreground keeps QEMU in this
# process group, so Ctrl-C reaches it.
runner_boot() {
	local status
	set +e
	timeout --foreground -k 10 "$timeout_s" "${qemu[@]}" <"$1" 2>&1 3>"$2" |
		tee "$console" | show
	status=("${PIPESTATUS[@]}")
	set -e
	qemu_rc=${status[0]}
}

# The run's wall-clock time since T0 (date +%s%N) in elapsed (ms) and elapsed_s (seconds).
runner_elapsed() {
	local t1
	t1=$(date +%s%N)
	elapsed=$(((t1 - $1) / 1000000))
	elapsed_s="$((elapsed / 1000)).$(printf '%03d' $((elapsed % 1000)))"
}
