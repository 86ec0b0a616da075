#!/usr/bin/env bash
# integration.sh — `make integration`: bring every Slurm lab up (in parallel),
# run the integration tests with every lab's env exported, then bring down the
# labs this run started — also when the tests fail or are interrupted — and
# exit with the tests' status (non-zero as well when a lab failed to start).
#
# Tunables: SLURMLAB_LABS (default "22.05 24.11 26.05"), SLURMLAB_KEEP=1
# (leave the labs up), GOTESTFLAGS (extra flags for go test, e.g. -v or -run X),
# SLURMLAB_SQUAT (default "24.11:7820": while the labs come up, a process of
# this script holds that lab's default REST port, so that the lab has to move
# to free ports as on a host where its own are taken; "" for none).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit
ROOT=$PWD
LABSH=$ROOT/test/slurmlab/lab.sh
read -r -a LABS <<<"${SLURMLAB_LABS:-22.05 24.11 26.05}"
ENV_DIR=${SLURMLAB_ENV_DIR:-/tmp}
LOGS=${SLURMLAB_BASE:-/tmp/slurmlab}/integration-logs
mkdir -p "$LOGS"

say() { printf '[integration %s] %s\n' "$(date +%T)" "$*" >&2; }
t_start=$(date +%s)

started=()
declare -A pid=()
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	# An interrupted start: stop the lab.sh up process groups still running
	# (the daemons they started are stopped by down, by their saved PIDs).
	for v in "${!pid[@]}"; do
		kill -TERM -- "-${pid[$v]}" 2>/dev/null && wait "${pid[$v]}" 2>/dev/null
	done
	[[ -n ${squat_pid:-} ]] && kill "$squat_pid" 2>/dev/null
	if [[ ${SLURMLAB_KEEP:-0} == 1 ]]; then
		say "SLURMLAB_KEEP=1: leaving labs up: ${LABS[*]}"
	elif ((${#started[@]})); then
		local t0; t0=$(date +%s)
		for v in "${started[@]}"; do bash "$LABSH" down "$v" || say "lab $v: down failed"; done
		say "labs down in $(($(date +%s) - t0)) s"
	fi
	say "total $(($(date +%s) - t_start)) s"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A lab that was fully up before this run stays up afterwards.
for v in "${LABS[@]}"; do
	if [[ -f $ENV_DIR/slurmlab-$v.env ]] && bash "$LABSH" status "$v" >/dev/null 2>&1; then
		say "lab $v was already up: it stays up"
	else
		started+=("$v")
	fi
done

# Hold one lab's default port while the labs come up (a lab this run
# starts, on a port nothing else holds): that lab must move.
squat_pid=""
squat=${SLURMLAB_SQUAT-24.11:7820}
if [[ -n $squat && " ${started[*]} " == *" ${squat%%:*} "* ]] && ! (exec 3<>"/dev/tcp/127.0.0.1/${squat#*:}") 2>/dev/null; then
	go build -o "$LOGS/squat" ./test/slurmlab/squat || { say "building the port squatter failed"; exit 1; }
	coproc SQUAT { exec "$LOGS/squat" "${squat#*:}"; }
	squat_pid=$SQUAT_PID
	read -r -t 10 line <&"${SQUAT[0]}" && [[ $line == listening ]] || { say "the port squatter did not start"; exit 1; }
	say "holding port ${squat#*:} while lab ${squat%%:*} comes up: it must move to free ports"
fi

say "bringing up labs: ${LABS[*]} (logs in $LOGS)"
t0=$(date +%s)
for v in "${LABS[@]}"; do
	setsid bash "$LABSH" up "$v" >"$LOGS/up-$v.log" 2>&1 & # own process group
	pid[$v]=$!
done
up_failed=0
for v in "${LABS[@]}"; do
	w=0
	wait "${pid[$v]}" || w=$?
	unset "pid[$v]"
	if ((w == 0)); then
		say "lab $v: $(grep -o 'up in .*' "$LOGS/up-$v.log" | tail -1)"
	else
		up_failed=1
		say "lab $v FAILED to start; last lines of $LOGS/up-$v.log:"
		tail -25 "$LOGS/up-$v.log" >&2
	fi
done
say "labs up in $(($(date +%s) - t0)) s"
if [[ -n $squat_pid ]]; then
	kill "$squat_pid" 2>/dev/null
	wait "$squat_pid" 2>/dev/null
	grep -q "default ports are taken" "$LOGS/up-${squat%%:*}.log" ||
		{ say "lab ${squat%%:*} did not move off the held port ${squat#*:}"; up_failed=1; }
fi

# Export every lab's env under a per-lab prefix (SLURMLAB_24_11_URL, …); the
# Go tests read the env files themselves (package test/slurmlab).
export SLURMLAB_ENV_DIR=$ENV_DIR SLURMLAB_LABS="${LABS[*]}"
for v in "${LABS[@]}"; do
	f=$ENV_DIR/slurmlab-$v.env
	[[ -f $f ]] || continue
	p=SLURMLAB_${v//./_}_
	while IFS= read -r line; do
		[[ $line == SLURMLAB_*=* ]] || continue
		k=${line%%=*}
		export "$p${k#SLURMLAB_}=${line#*=}"
	done <"$f"
done

# Every package with integration-tagged tests, ./test/... first; one go test
# per package, so that packages do not run at the same time on the labs.
pkgs=()
while IFS= read -r d; do pkgs+=("./$d"); done < <(
	git ls-files '*_test.go' | xargs grep -l '^//go:build integration' | xargs -n1 dirname |
		sort -u | awk '/^test/ { print; next } { rest[n++] = $0 } END { for (i = 0; i < n; i++) print rest[i] }')
((${#pkgs[@]})) || { say "no integration tests found"; exit 1; }
t0=$(date +%s)
test_rc=0
# A package's live tests wait on real queues (minutes each): go test's default
# ten-minute limit is too short for the sidecar's, so the limit is 30 minutes
# per package (GOTESTFLAGS may set its own -timeout after it). A package that
# fails or times out may leave jobs behind; they are cancelled before the next
# package runs, so that one failure does not show as others.
# The tests run each lab's part as a parallel subtest; go test runs as many at
# once as -parallel says, GOMAXPROCS by default (2 on two cores), so a third lab
# waited for a free slot: -parallel is the number of labs (the sidecar's live
# tests took 826 s at 2 in CI, 623 s at 3). The subtests mostly wait on
# Slurm, so more labs at once cost little CPU.
par=$((${#LABS[@]} > 2 ? ${#LABS[@]} : 2))
# shellcheck disable=SC2086
for p in "${pkgs[@]}"; do
	say "go test -tags integration -count=1 -timeout 30m -parallel $par ${GOTESTFLAGS:-} $p"
	go test -tags integration -count=1 -timeout 30m -parallel "$par" ${GOTESTFLAGS:-} "$p"
	rc=$?
	if ((rc)); then
		((test_rc)) || test_rc=$rc
		for v in "${LABS[@]}"; do
			left=$(bash "$LABSH" exec "$v" squeue -h -o %A 2>/dev/null | tr '\n' ' ')
			[[ -z ${left// /} ]] && continue
			say "lab $v: cancelling jobs left by $p: $left"
			# shellcheck disable=SC2086
			bash "$LABSH" exec "$v" scancel $left >/dev/null 2>&1 || say "lab $v: scancel failed"
		done
	fi
done
say "tests took $(($(date +%s) - t0)) s (exit status $test_rc)"
((test_rc)) && exit "$test_rc"
((up_failed)) && exit 1
exit 0
