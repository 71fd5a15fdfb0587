#!/usr/bin/env bash
# Merging many per-rank reports: `flopscope report` over 10,000 synthetic
# rank reports (copies of one real report of the bundled triad, each with its
# own rank and counts scaled by rank), timed end to end, min and median.
#
# Usage: benchmarks/merge-reports.sh [COUNT] [REPEATS]   (default 10000 3)
# Writes benchmarks/results/merge-reports-<date>.txt
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-10000}
reps=${2:-3}
cargo build --release -q -p flopscope
fs=target/release/flopscope
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -mavx2 -mfma -o "$work/triad" examples/triad.c
"$fs" count --engine emulate --no-native -o "$work/base.json" -- "$work/triad" 1000 2 >/dev/null 2>&1
mkdir "$work/ranks"
python3 - "$work/base.json" "$work/ranks" "$count" <<'PY'
import json, sys
base = json.load(open(sys.argv[1]))
for rank in range(int(sys.argv[3])):
    r = dict(base)
    r["mpi"] = {"rank": rank, "size": int(sys.argv[3]), "host": f"node{rank // 64}", "pid": 1000 + rank}
    r["flop"] = {k: v * (1 + rank % 7) for k, v in base["flop"].items()}
    r["native_time_s"] = 0.01 + (rank % 13) * 1e-4
    json.dump(r, open(f"{sys.argv[2]}/report.{rank}.json", "w"))
PY
size=$(du -sh "$work/ranks" | cut -f1)
times=()
for _ in $(seq "$reps"); do
  s=$(date +%s.%N)
  "$fs" report "$work"/ranks/report.*.json --format json -o "$work/merged.json" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  e=$(date +%s.%N)
  times+=("$(echo "$e - $s" | bc -l)")
done
sorted=$(printf '%s\n' "${times[@]}" | sort -g)
min=$(echo "$sorted" | head -1); med=$(echo "$sorted" | sed -n "$(( (reps + 1) / 2 ))p")
out=benchmarks/results/merge-reports-$(date +%Y%m%d-%H%M%S).txt
mkdir -p benchmarks/results
{
  echo "# flopscope report over $count per-rank reports ($size on disk), $(date -u +%FT%TZ)"
  echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) threads; release build"
  echo "# command: benchmarks/merge-reports.sh $count $reps"
  printf 'reports  min_s   median_s\n%-8s %-7.3f %-7.3f\n' "$count" "$min" "$med"
} | tee "$out"
