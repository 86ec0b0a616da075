#!/usr/bin/env bash
# make bench: the documented performance runs of the replay and the
# placement, on a generated workload of the project's own generator.
#
#   1. Go benchmarks of the hot paths (Heavy-Edge, plain placement, the
#      virtual single machine, trace reading and generation).
#   2. asrpt replay with A-SRPT (the revised dispatch) on 10k, 100k and 1M
#      jobs on 1,000 nodes × 8 GPUs, with the running-mean predictor (the
#      policy's own cost) and with the online forest (the replay's default):
#      wall time, peak RSS, events per second, and the cost per job to show
#      how it grows (about n log n).
#   3. Every policy on the 100k-job trace: events per second.
#
# BENCH_SIZES and BENCH_POLICY_JOBS override the sizes; BENCH_DIR keeps the
# traces (default: a temporary directory, removed at the end).
set -euo pipefail
cd "$(dirname "$0")/../.."

sizes=${BENCH_SIZES:-"10000 100000 1000000"}
policy_jobs=${BENCH_POLICY_JOBS:-100000}
dir=${BENCH_DIR:-$(mktemp -d)}
[ -n "${BENCH_DIR:-}" ] || trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir"

if ! [ -x /usr/bin/time ]; then
	echo "bench: /usr/bin/time missing; installing the Debian package 'time'" >&2
	apt-get install -y -qq time >/dev/null || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
fi

echo "## Go benchmarks"
go test -run '^$' -bench 'HeavyEdge64on1000x8|PlacePlain' -benchmem -benchtime 2000x ./placement/
go test -run '^$' -bench 'VirtualMachine' -benchmem -benchtime 5x ./policy/
go test -run '^$' -bench 'Replay' -benchmem -benchtime 1x ./sim/

go build -o "$dir/asrpt" ./cmd/asrpt
bin="$dir/asrpt"

echo
for pred in mean forest; do
	echo
	echo "## A-SRPT (revised dispatch) replay, 1,000 nodes x 8 GPUs, predictor $pred"
	printf '| jobs | wall s | peak RSS MiB | events/s | µs per job |\n|---:|---:|---:|---:|---:|\n'
	for n in $sizes; do
		trace="$dir/gen-$n.csv"
		[ -s "$trace" ] || "$bin" gen --jobs "$n" --nodes 1000 --gpus-per-node 8 --seed 1 --out "$trace"
		/usr/bin/time -f '%e %M' -o "$dir/time" "$bin" replay --trace "$trace" --nodes 1000 --gpus-per-node 8 \
			--policies asrpt --predictor "$pred" --parallel 1 --progress never --out "$dir/out.json" >/dev/null
		read -r wall rss <"$dir/time"
		eps=$(sed -n 's/.*"events_per_s": \([0-9.e+]*\).*/\1/p' "$dir/out.json" | head -1)
		awk -v n="$n" -v w="$wall" -v r="$rss" -v e="$eps" \
			'BEGIN { printf "| %d | %.1f | %.0f | %.0f | %.1f |\n", n, w, r/1024, e, w*1e6/n }'
	done
done

echo
echo "## Every policy on $policy_jobs jobs (1,000 x 8 GPUs), one at a time"
trace="$dir/gen-$policy_jobs.csv"
[ -s "$trace" ] || "$bin" gen --jobs "$policy_jobs" --nodes 1000 --gpus-per-node 8 --seed 1 --out "$trace"
/usr/bin/time -f 'all policies: %e s wall, %M KiB peak RSS' "$bin" replay --trace "$trace" --nodes 1000 \
	--gpus-per-node 8 --predictor mean --parallel 1 --progress never
