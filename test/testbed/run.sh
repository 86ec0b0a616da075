#!/usr/bin/env bash
# The asrpt testbed (issue 6, item 8): the fixed workload of workload.tsv run
# twice on a real Slurm lab from the same start (an empty queue on 4 nodes ×
# 4 GPUs, priority/multifactor with fair-share and age weights) — Slurm
# alone (multifactor + sched/backfill), then Slurm with `asrpt sidecar`
# (dry_run=false, interval 2 s, factor mode: site factors on top of
# multifactor) — with the job
# completion times (JCT = end − submit) of both measured from accounting
# (sacct), and what `asrpt replay` predicts for the same workload (backfill,
# asrpt, asrpt-oracle) on the same cluster. See README.md.
#
# Usage: bash test/testbed/run.sh
# Environment: TESTBED_LAB (default 24.11; factor mode needs 24.11 or
# 26.05), TESTBED_WRITE_MODE (factor, the default, or priority),
# TESTBED_OUT (results directory, default a new /tmp/asrpt-testbed.*),
# TESTBED_RUN_TIMEOUT (seconds one run may take, default 420),
# TESTBED_KEEP_LAB=1 (leave the lab up), TESTBED_WORKLOAD (default
# workload.tsv), TESTBED_RUNS (the runs in order, default "slurm asrpt":
# slurm is Slurm alone, any other word the sidecar with that policy, e.g.
# "asrpt asrpt-preempt" for `make testbed-preempt`), TESTBED_PREEMPT_EXEMPT
# (policy.preempt_exempt of an asrpt-preempt run and the replay's, seconds,
# default 60: the workload's scale), TESTBED_REPLAY_POLICIES (default
# backfill,asrpt,asrpt-oracle).
#
# Exit status: 0 when both runs completed and were measured, whatever the
# comparison shows; 1 on a real failure (a job did not finish or failed,
# the sidecar crashed or exited non-zero, accounting unreadable, the lab or
# the build failed).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LAB=${TESTBED_LAB:-24.11}
MODE=${TESTBED_WRITE_MODE:-factor}
[[ $MODE == factor || $MODE == priority ]] || { echo "TESTBED_WRITE_MODE: want factor or priority, not '$MODE'" >&2; exit 1; }
OUT=${TESTBED_OUT:-$(mktemp -d /tmp/asrpt-testbed.XXXXXX)}
RUN_TIMEOUT=${TESTBED_RUN_TIMEOUT:-420}
WL=${TESTBED_WORKLOAD:-$ROOT/test/testbed/workload.tsv}
[[ $WL == /* ]] || WL=$ROOT/$WL
[[ -f $WL ]] || { echo "TESTBED_WORKLOAD: no file $WL" >&2; exit 1; }
read -r -a RUNS <<<"${TESTBED_RUNS:-slurm asrpt}"
((${#RUNS[@]} >= 1)) || { echo "TESTBED_RUNS: no run" >&2; exit 1; }
EXEMPT=${TESTBED_PREEMPT_EXEMPT:-60}
[[ $EXEMPT =~ ^[0-9]+$ ]] || { echo "TESTBED_PREEMPT_EXEMPT: want whole seconds, not '$EXEMPT'" >&2; exit 1; }
REPLAY_POLICIES=${TESTBED_REPLAY_POLICIES:-backfill,asrpt,asrpt-oracle}
LABSH=(bash "$ROOT/test/slurmlab/lab.sh")
mkdir -p "$OUT"
T0=$(date +%s)

say() { printf '[testbed %s] %s\n' "$(date -u +%T)" "$*" >&2; }
fail() {
	say "FAILED: $*"
	exit 1
}
ex() { "${LABSH[@]}" exec "$LAB" "$@"; }

SIDECAR_PID=
LAB_WAS_UP=0
PRIO_WAS=
cleanup() {
	if [[ -n $SIDECAR_PID ]] && kill -0 "$SIDECAR_PID" 2>/dev/null; then
		kill -TERM "$SIDECAR_PID" 2>/dev/null || true
		wait "$SIDECAR_PID" 2>/dev/null || true
	fi
	if ((!LAB_WAS_UP)) && [[ ${TESTBED_KEEP_LAB:-} != 1 ]]; then
		"${LABSH[@]}" down "$LAB" >>"$OUT/lab-up.log" 2>&1 || say "lab $LAB: down failed"
	elif [[ -n $PRIO_WAS && $PRIO_WAS != fairshare ]]; then
		# The lab stays up: back to the weights it had.
		"${LABSH[@]}" prio "$LAB" "$PRIO_WAS" >>"$OUT/lab-up.log" 2>&1 || say "lab $LAB: prio $PRIO_WAS failed"
	fi
}
trap cleanup EXIT

say "results in $OUT"
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$OUT/asrpt" ./cmd/asrpt) || fail "go build"
ASRPT=$OUT/asrpt

if [[ -f /tmp/slurmlab-$LAB.env ]] && "${LABSH[@]}" status "$LAB" >/dev/null 2>&1; then
	LAB_WAS_UP=1
fi
"${LABSH[@]}" up "$LAB" >"$OUT/lab-up.log" 2>&1 || fail "lab $LAB up (see $OUT/lab-up.log)"
# shellcheck disable=SC1090
. "/tmp/slurmlab/$LAB/env.sh" || fail "no /tmp/slurmlab/$LAB/env.sh"
[[ ${SLURMLAB_VERSION:-} == "$LAB" ]] || fail "no environment for lab $LAB"
if [[ ${SLURMLAB_SCHED:-} != backfill ]]; then
	"${LABSH[@]}" sched "$LAB" backfill >>"$OUT/lab-up.log" 2>&1 || fail "lab $LAB: sched backfill"
fi
# Both runs under the site's policy: multifactor with fair share
# (PriorityWeightFairshare=10000, PriorityWeightAge=1000; alice and bob
# share the account lab), as a site would run it.
PRIO_WAS=$(sed -n 's/^SLURMLAB_PRIO=//p' "/tmp/slurmlab-$LAB.env" 2>/dev/null || true)
PRIO_WAS=${PRIO_WAS:-zero}
if [[ $PRIO_WAS != fairshare ]]; then
	"${LABSH[@]}" prio "$LAB" fairshare >>"$OUT/lab-up.log" 2>&1 || fail "lab $LAB: prio fairshare"
fi

# The checkpointing job of a ckpt:GRACE workload line (ckpt.sh, README.md).
CKPT=/tmp/asrpt-testbed-ckpt.sh
ex sh -c "cat > $CKPT && chmod 755 $CKPT" <"$ROOT/test/testbed/ckpt.sh" || fail "writing $CKPT on the lab"

# quiet waits until no job of alice or bob is pending or running.
quiet() {
	ex scancel -u alice >/dev/null 2>&1 || true
	ex scancel -u bob >/dev/null 2>&1 || true
	for _ in $(seq 60); do
		[[ -z $(ex squeue -h -u alice,bob -o %i 2>/dev/null) ]] && return 0
		sleep 1
	done
	fail "jobs of alice/bob still in the queue after scancel"
}

# submit TAG: submits workload.tsv at its offsets; job ids to $OUT/TAG.ids,
# the number of jobs (an array counts its tasks) to $OUT/TAG.count.
submit() {
	local tag=$1 start now due opts id count=0 item
	local -A last=()
	: >"$OUT/$tag.ids"
	start=$(date +%s.%N)
	while IFS=$'\t' read -r offset user name gpus dur array profile extra; do
		[[ $offset == \#* || -z $offset ]] && continue
		due=$(awk -v s="$start" -v o="$offset" 'BEGIN{printf "%.3f", s+o}')
		now=$(date +%s.%N)
		awk -v d="$due" -v n="$now" 'BEGIN{exit !(d>n)}' && sleep "$(awk -v d="$due" -v n="$now" 'BEGIN{printf "%.3f", d-n}')"
		if ((gpus > SLURMLAB_GPUS_PER_NODE)); then
			opts=(-N $((gpus / SLURMLAB_GPUS_PER_NODE)) "--gres=gpu:$SLURMLAB_GPUS_PER_NODE")
		elif ((gpus == 0)); then
			opts=(-N 1) # CPU-only: its CPUs come from extra
		else
			opts=(-N 1 "--gres=gpu:$gpus")
		fi
		local het=() limit=5 wrap=(--wrap "sleep $dur")
		for item in ${extra//,/ }; do
			case $item in
			ckpt:*) opts+=(--requeue --comment "asrpt:preempt=USR1@${item#ckpt:}" "--export=ALL,WORK=$dur")
				wrap=("$CKPT") limit=10 ;;
			cpus:*) opts+=(-c "${item#cpus:}") ;;
			dep:*) [[ -n ${last[${item#dep:}]:-} ]] || fail "workload: $name depends on ${item#dep:}, not submitted before"
				opts+=("--dependency=afterany:${last[${item#dep:}]}") ;;
			het:*) het=(: -N 1 "--gres=gpu:${item#het:}" -t 5)
				count=$((count + 1)) ;; # accounting lists each component
			*) fail "workload: unknown extra $item" ;;
			esac
		done
		if [[ -n ${profile:-} && $profile != - ]]; then
			opts+=(--comment "asrpt:model=$profile")
		fi
		if [[ -n ${array:-} && $array != - ]]; then
			opts+=("--array=1-$array")
			count=$((count + ${array%%\%*}))
		else
			count=$((count + 1))
		fi
		id=$("${LABSH[@]}" as "$LAB" "$user" sbatch --parsable -D /tmp -o /dev/null -t "$limit" -J "$name" \
			"${opts[@]}" "${het[@]}" "${wrap[@]}") || fail "sbatch ($user $name)"
		echo "${id%%;*}" >>"$OUT/$tag.ids"
		last[$name]=${id%%;*}
	done <"$WL"
	echo "$count" >"$OUT/$tag.count"
}

# wait_done TAG: waits until accounting shows every job of the run ended.
wait_done() {
	local tag=$1 ids deadline states left
	ids=$(paste -sd, "$OUT/$tag.ids")
	deadline=$(($(date +%s) + RUN_TIMEOUT))
	while :; do
		# One line per accounting record; a job Slurm resized has several.
		states=$(ex sacct -X -n -P -j "$ids" -o JobID,State 2>/dev/null) || states=
		left=$(grep -cE '\|(PENDING|RUNNING|REQUEUED|SUSPENDED|CONFIGURING|COMPLETING)' <<<"$states" || true)
		if [[ -n $states ]] && ((left == 0)) &&
			(($(cut -d'|' -f1 <<<"$states" | sort -u | wc -l) == $(cat "$OUT/$tag.count"))); then
			return 0
		fi
		if [[ -n $SIDECAR_PID ]] && ! kill -0 "$SIDECAR_PID" 2>/dev/null; then
			fail "the sidecar died during run $tag (log: $OUT/sidecar.log)"
		fi
		(($(date +%s) < deadline)) || fail "run $tag: $left jobs not finished after ${RUN_TIMEOUT}s"
		sleep 3
	done
}

# measure TAG: accounting of the run to $OUT/TAG.sacct; prints the summary.
measure() {
	local tag=$1 ids
	ids=$(paste -sd, "$OUT/$tag.ids")
	ex env SLURM_TIME_FORMAT=%s sacct -D -X -n -P -j "$ids" -o JobID,User,JobName,AllocTRES,Submit,Start,End,State,NodeList \
		>"$OUT/$tag.sacct" || fail "sacct for run $tag"
	# A job Slurm resized or requeued has several records (RESIZING or
	# REQUEUED, then the final one, whose Submit is the resize or requeue
	# time; -D lists them all): a job's submit and start are its first
	# record's, its end and state its last record's.
	awk -F'|' -v tag="$tag" -v want="$(cat "$OUT/$tag.count")" '
		$5 !~ /^[0-9]+$/ || $6 !~ /^[0-9]+$/ || $7 !~ /^[0-9]+$/ { print "bad times: " $0 > "/dev/stderr"; bad = 1; exit 2 }
		{ id = $1
		  if (!(id in sb) || $5 < sb[id]) sb[id] = $5
		  if (!(id in st) || $6 < st[id]) st[id] = $6
		  if (!(id in en) || $7 >= en[id]) { en[id] = $7; state[id] = $8 }
		  if ($8 == "RESIZING") resized++
		  if ($8 == "REQUEUED") { requeued++; r = $7 - $6; if (minrun == "" || r < minrun) minrun = r } }
		END {
		  if (bad) exit 2
		  for (id in sb) {
		    n++
		    if (state[id] != "COMPLETED") { print "job " id ": " state[id] > "/dev/stderr"; failed++ }
		    sum += en[id] - sb[id]; wait += st[id] - sb[id]
		    if (min == "" || sb[id] < min) min = sb[id]; if (en[id] > max) max = en[id] }
		  if (n != want) { print "accounting has " n " of " want " jobs" > "/dev/stderr"; exit 3 }
		  if (failed) exit 4
		  if (minrun == "") minrun = "-"
		  printf "%s\tjobs=%d\ttotal_jct_s=%d\tavg_jct_s=%.1f\tavg_wait_s=%.1f\tmakespan_s=%d\tresize_records=%d\trequeued_records=%d\tshortest_run_before_requeue_s=%s\n",
		      tag, n, sum, sum / n, wait / n, max - min, resized, requeued, minrun }' "$OUT/$tag.sacct" ||
		fail "run $tag: accounting incomplete, unreadable or jobs not completed (see $OUT/$tag.sacct)"
}

# run_slurm TAG: the workload with Slurm alone.
run_slurm() {
	quiet
	say "run $1: Slurm alone (priority/multifactor with fair share, sched/backfill), $(grep -vc '^#' "$WL") submissions"
	submit "$1"
	wait_done "$1"
	measure "$1" | tee -a "$OUT/summary.tsv"
}

# run_sidecar POLICY: the workload with Slurm and asrpt sidecar running
# POLICY (the run's tag).
run_sidecar() {
	local policy=$1 port rc=0 extra=""
	quiet
	# The sidecar's metrics port: the first free one from 19871.
	port=19871
	while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
		((port < 19971)) || fail "no free port in 19871..19971 for the sidecar's metrics"
		port=$((port + 1))
	done
	[[ $policy == asrpt-preempt ]] && extra="preempt_exempt = \"${EXEMPT}s\""
	cat >"$OUT/asrpt-$policy.toml" <<EOF
# written by test/testbed/run.sh
[slurm]
url = "$SLURMLAB_URL"
token_file = "$SLURMLAB_TOKEN_FILE"
conf_dir = "$SLURMLAB_CONF_DIR"
timeout = "10s"
[sidecar]
interval = "2s"
state_file = "$OUT/state-$policy.json"
dry_run = false
giveback_on_shutdown = true
dispatch_grace = "30s"
# factor: site factors on top of multifactor (head of the order 10000 points,
# as much as the fair-share weight); priority: absolute priorities.
write_mode = "$MODE"
site_factor_max = 10000
[policy]
name = "$policy"
$extra
[predictor]
# Mean of the (user, name) family: the forest needs more history than one run.
name = "mean"
history = "2h"
[metrics]
listen = "127.0.0.1:$port"
[log]
format = "json"
level = "info"
EOF
	# --check warns about the site factor's range against the weights, if need be.
	"$ASRPT" sidecar --config "$OUT/asrpt-$policy.toml" --check >"$OUT/check-$policy.txt" || fail "sidecar --check (see $OUT/check-$policy.txt)"
	grep -h warning "$OUT/check-$policy.txt" >&2 || true
	"$ASRPT" sidecar --config "$OUT/asrpt-$policy.toml" >"$OUT/sidecar-$policy.log" 2>&1 &
	SIDECAR_PID=$!
	sleep 4
	kill -0 "$SIDECAR_PID" 2>/dev/null || fail "the sidecar did not start (log: $OUT/sidecar-$policy.log)"
	say "run $policy: Slurm with asrpt sidecar (pid $SIDECAR_PID, interval 2 s, write mode $MODE)"
	submit "$policy"
	wait_done "$policy"
	curl -s "http://127.0.0.1:$port/metrics" >"$OUT/metrics-$policy.txt" 2>/dev/null || true
	kill -TERM "$SIDECAR_PID"
	wait "$SIDECAR_PID" || rc=$?
	SIDECAR_PID=
	((rc == 0)) || fail "the sidecar exited with status $rc (log: $OUT/sidecar-$policy.log)"
	measure "$policy" | tee -a "$OUT/summary.tsv"
	say "sidecar metrics: $(grep -E '^asrpt_(cycles_total|writes_total|write_requests_total|write_retries_total|write_failures_total|read_errors_total|profiles_total|profile_problems_total|preemptions_total|preemption_signals_total)' "$OUT/metrics-$policy.txt" | tr '\n' ' ')"
}

: >"$OUT/summary.tsv"
for run in "${RUNS[@]}"; do
	if [[ $run == slurm ]]; then
		run_slurm slurm
	else
		run_sidecar "$run"
	fi
done
A=${RUNS[0]} B=${RUNS[${#RUNS[@]}-1]}

# Where the jobs that name a profile ran, in both runs (the sidecar's node
# lists come from Heavy-Edge on that profile), to $OUT/placements.tsv.
profiled=$(awk -F'\t' '!/^#/ && NF >= 7 && $7 != "-" { print $3 }' "$WL" | sort -u | paste -sd'|')
{
	printf 'run\tjob\tname\tnodes\n'
	for tag in "${RUNS[@]}"; do
		awk -F'|' -v tag="$tag" -v re="^($profiled)\$" '$3 ~ re && $8 == "COMPLETED" { printf "%s\t%s\t%s\t%s\n", tag, $1, $3, $9 }' "$OUT/$tag.sacct"
	done
} >"$OUT/placements.tsv"
say "profiled jobs and their nodes ($OUT/placements.tsv):"
column -t -s$'\t' "$OUT/placements.tsv" >&2 || cat "$OUT/placements.tsv" >&2

# Waits and JCTs by kind of job, the first run beside the last, from
# accounting: the jobs asrpt ranks, the CPU-only jobs it keeps at their
# standing, the jobs that wait for a dependency (ranked, never dispatched
# while held back), the heterogeneous jobs (each component carries the same
# value) and the checkpointing jobs that opted in to preemption. A job's
# wait is its first start less its submit, its JCT its last end less its
# submit (a requeued job has several records).
kinds() {
	awk -F'\t' '!/^#/ && NF >= 5 { k = "managed"
	  if ($4 == 0) k = "cpu_only"; else if ($8 ~ /dep:/) k = "dependent"; else if ($8 ~ /het:/) k = "het"; else if ($8 ~ /ckpt:/) k = "ckpt"
	  print $3 "\t" k }' "$WL" | sort -u
}
kinds >"$OUT/kinds.tsv"
{
	printf 'kind\tjobs\t%s_avg_wait_s\t%s_avg_wait_s\t%s_max_wait_s\t%s_max_wait_s\t%s_avg_jct_s\t%s_avg_jct_s\n' "$A" "$B" "$A" "$B" "$A" "$B"
	awk -F'|' 'FNR == 1 { f++ }
		f == 1 { split($0, a, "\t"); kind[a[1]] = a[2]; next }
		{ id = f SUBSEP $1; k[id] = kind[$3]; if (k[id] == "") k[id] = "managed"; r[id] = f
		  if (!(id in sb) || $5 < sb[id]) sb[id] = $5
		  if (!(id in st) || $6 < st[id]) st[id] = $6
		  if ($7 > en[id]) en[id] = $7 }
		END { for (id in sb) { t = r[id]; w = st[id] - sb[id]; j = en[id] - sb[id]
		        n[k[id], t]++; s[k[id], t] += w; c[k[id], t] += j; if (w > m[k[id], t]) m[k[id], t] = w; ks[k[id]] = 1 }
		      for (q in ks) printf "%s\t%d\t%.1f\t%.1f\t%d\t%d\t%.1f\t%.1f\n", q, n[q, 2], s[q, 2] / n[q, 2],
		        s[q, 3] / n[q, 3], m[q, 2], m[q, 3], c[q, 2] / n[q, 2], c[q, 3] / n[q, 3] }' "$OUT/kinds.tsv" "$OUT/$A.sacct" "$OUT/$B.sacct" | sort
} >"$OUT/waits.tsv" || fail "waits by kind"
say "waits by kind ($OUT/waits.tsv):"
column -t -s$'\t' "$OUT/waits.tsv" >&2 || cat "$OUT/waits.tsv" >&2

# --- Replay of the same workload -------------------------------------------
# An array's tasks are jobs of their own, all submitted at once (the replay
# knows no throttle); a heterogeneous job is one job of all its GPUs; the
# replay knows no dependencies, and schedules GPUs only (no CPU-only jobs).
# A checkpointing job (ckpt:GRACE) is in account ckpt in the trace, which
# the replay's opt-in rule names (--preemptible accounts:ckpt, for
# asrpt-preempt); once stopped it is held as Slurm holds a requeued job
# (a begin time about 121 s after the requeue, measured on the labs).
awk -F'\t' 'BEGIN { print "id,submit,user,name,account,gpus,run_time,time_limit" }
	!/^#/ && NF >= 5 && $4 > 0 { k = NF >= 6 && $6 != "-" ? $6 + 0 : 1; acct = "lab"; limit = 300
	  if ($8 ~ /het:/) { h = $8; sub(/.*het:/, "", h); $4 += h + 0 }
	  if ($8 ~ /ckpt:/) { acct = "ckpt"; limit = 600 }
	  for (i = 0; i < k; i++) printf "%d,%s,%s,%s,%s,%d,%s,%d\n", ++n, $1, $2, $3, acct, $4, $5, limit }' "$WL" >"$OUT/workload.csv"
"$ASRPT" replay --trace "$OUT/workload.csv" --nodes "$SLURMLAB_NODES" --gpus-per-node "$SLURMLAB_GPUS_PER_NODE" \
	--policies "$REPLAY_POLICIES" --predictor mean --progress never --out "$OUT/replay.json" \
	--preemptible accounts:ckpt --preempt-exempt "$EXEMPT" --requeue-delay 121 \
	>"$OUT/replay.txt" 2>&1 || fail "asrpt replay (see $OUT/replay.txt)"
cat "$OUT/replay.txt"

quiet
say "done in $(($(date +%s) - T0)) s; summary: $OUT/summary.tsv, replay: $OUT/replay.txt"
