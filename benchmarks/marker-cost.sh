#!/usr/bin/env bash
# What a region marker pair costs in a program run WITHOUT flopscope (the
# markers' promise: a few nanoseconds at most), side by side in one run:
#   - C, include/flopscope.h: a loop of N iterations of
#     FLOPSCOPE_REGION_BEGIN("pair"); body; FLOPSCOPE_REGION_END("pair");
#     against the same source built with -DNO_MARKERS (gcc -O2), for an empty
#     body and a one-add body (benchmarks/kernels/marker_cost.c);
#   - Rust, the flopscope-markers crate: the same loop with the Region guard
#     and with region(..., closure), against the bare loop
#     (crates/markers/examples/marker_cost.rs, cargo --release).
# Each program times its loop alone (CLOCK_MONOTONIC / Instant); runs of the
# marked and the bare loop alternate. A pair costs (marked - bare) / N, from
# the min and from the median of RUNS runs.
# Also shown, for reference: the markers in flopscope's native timed run
# (FLOPSCOPE_REGION_TIMES set: each marker reads the clock), on N/100 iterations.
#
# Usage: benchmarks/marker-cost.sh [N] [RUNS]     (default 100000000 and 7)
# Writes benchmarks/results/marker-cost-<date>.txt
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100000000}
runs=${2:-7}
n_timed=$((n / 100))
cflags="-O2"
bin=target/bench-kernels
mkdir -p "$bin" benchmarks/results
gcc $cflags -I crates/markers/include -o "$bin/marker_cost" benchmarks/kernels/marker_cost.c
gcc $cflags -I crates/markers/include -DNO_MARKERS -o "$bin/marker_cost_bare" benchmarks/kernels/marker_cost.c
cargo build --release -q -p flopscope-markers --example marker_cost
rust=target/release/examples/marker_cost
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# min and median (ns per iteration) of RUNS timings; each timing is the
# program's own loop time in ns for ITERS iterations. Runs of the two
# commands alternate: pair ITERS "marked command" "bare command" prints
# "marked_min marked_med bare_min bare_med".
pair() {
  local iters=$1 marked=$2 bare=$3 m=() b=()
  for _ in $(seq "$runs"); do
    m+=("$($marked)")
    b+=("$($bare)")
  done
  stat() { printf '%s\n' "$@" | sort -g | awk -v n="$iters" '{a[NR]=$1} END {printf "%.3f %.3f", a[1]/n, a[int((NR+1)/2)]/n}'; }
  echo "$(stat "${m[@]}") $(stat "${b[@]}")"
}

# One table row: label and "marked_min marked_med bare_min bare_med".
row() {
  local label=$1
  read -r mmin mmed bmin bmed <<<"$2"
  awk -v l="$label" -v mmin="$mmin" -v mmed="$mmed" -v bmin="$bmin" -v bmed="$bmed" 'BEGIN {
    printf "%-44s %7.3f %7.3f   %7.3f %7.3f   %8.3f %8.3f   %8.3f\n", l, bmin, bmed, mmin, mmed, mmin - bmin, mmed - bmed, (mmed - bmed) / 2 }'
}

out=benchmarks/results/marker-cost-$(date +%Y%m%d-%H%M%S).txt
virt=$(systemd-detect-virt 2>/dev/null || true)
[ -z "$virt" ] && grep -qw hypervisor /proc/cpuinfo && virt="a hypervisor (cpuinfo flag)"
{
  echo "# flopscope marker cost, programs run without flopscope, $(date -u +%FT%TZ)"
  echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) threads," \
    "$(grep -m1 'cpu MHz' /proc/cpuinfo | cut -d: -f2 | xargs) MHz now; virtualisation: ${virt:-none}; kernel $(uname -r)"
  echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine shows as noise)"
  echo "# C: $(gcc --version | head -1), $cflags; Rust: $(rustc --version), cargo --release"
  echo "# N = $n iterations ($n_timed for the timed rows), $runs runs each, marked and bare alternating"
  echo "# ns per iteration (min median) of the bare and the marked loop; a pair = marked - bare, per marker = median pair / 2"
  echo "# command: benchmarks/marker-cost.sh $n $runs"
  printf '%-44s %15s   %15s   %17s   %8s\n' "variant" "bare min  med" "marked min  med" "pair min   med" "marker"
  row "C flopscope.h, empty body" "$(pair "$n" "$bin/marker_cost $n 0" "$bin/marker_cost_bare $n 0")"
  row "C flopscope.h, one-add body" "$(pair "$n" "$bin/marker_cost $n 1" "$bin/marker_cost_bare $n 1")"
  row "Rust Region::begin guard" "$(pair "$n" "$rust $n guard" "$rust $n bare")"
  row "Rust region(name, closure)" "$(pair "$n" "$rust $n closure" "$rust $n bare")"
  export FLOPSCOPE_REGION_TIMES=$work/c-times
  row "C flopscope.h, timed (REGION_TIMES set)" "$(pair "$n_timed" "$bin/marker_cost $n_timed 0" "$bin/marker_cost_bare $n_timed 0")"
  export FLOPSCOPE_REGION_TIMES=$work/rust-times
  row "Rust Region::begin guard, timed" "$(pair "$n_timed" "$rust $n_timed guard" "$rust $n_timed bare")"
  # What the timed runs recorded for the (empty) region: pid, entries, max ns, sum ns, name.
  per_entry() { awk '{x = $3 / $2; if (NR == 1 || x < m) m = x} END {printf "%.1f", m}' "$1"; }
  echo "# an empty region as timed by the markers (min over runs of region ns / entries):" \
    "C $(per_entry "$work/c-times") ns, Rust $(per_entry "$work/rust-times") ns per entry"
} | tee "$out"
echo "wrote $out"
