#!/usr/bin/env bash
# Cost of counting under the emulate engine, side by side in one run:
# native time, bare qemu-x86_64 (no plugin), and `flopscope count --engine emulate --no-native`
# (QEMU + the counting plugin), on the AVX2 matrix product at n = 512 and 1024.
# Target: flopscope's counting costs at most 15% over bare QEMU.
#
# Usage: benchmarks/emulate-overhead.sh [REPEATS]   (default 3; min and median reported)
# Writes benchmarks/results/emulate-overhead-<date>.txt
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
cargo build --release -q -p flopscope
bin=target/bench-kernels; mkdir -p "$bin" benchmarks/results
cflags="-O3 -mavx2 -mfma"
gcc $cflags -o "$bin/matmul" benchmarks/kernels/matmul.c
fs=target/release/flopscope
qemu=$(command -v qemu-x86_64)

# Wall seconds of one run of "$@", output discarded.
t() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc -l; }
# "min median" of numbers on stdin.
stats() { sort -g | awk '{a[NR]=$1} END {printf "%.3f %.3f", a[1], a[int((NR+1)/2)]}'; }

out=benchmarks/results/emulate-overhead-$(date +%Y%m%d-%H%M%S).txt
{
  echo "# flopscope emulate-engine overhead, $(date -u +%FT%TZ)"
  echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) threads; $($qemu --version | head -1)"
  echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# kernel: benchmarks/kernels/matmul.c, gcc $cflags; $reps repeats, the three runs alternating; seconds (min median)"
  echo "# command: benchmarks/emulate-overhead.sh $reps"
  printf '%-6s %-15s %-15s %-15s %-12s %-10s\n' n native qemu flopscope vs-qemu vs-native
  for n in 512 1024; do
    nat=(); bare=(); cnt=()
    for _ in $(seq "$reps"); do
      nat+=("$(t "$bin/matmul" "$n")")
      bare+=("$(t "$qemu" -cpu max "$bin/matmul" "$n")")
      cnt+=("$(t "$fs" count --engine emulate --no-native -o /dev/null -- "$bin/matmul" "$n")")
    done
    nat=$(printf '%s\n' "${nat[@]}" | stats); bare=$(printf '%s\n' "${bare[@]}" | stats)
    cnt=$(printf '%s\n' "${cnt[@]}" | stats)
    ratio=$(echo "${cnt%% *} / ${bare%% *}" | bc -l)
    slow=$(echo "${cnt%% *} / ${nat%% *}" | bc -l)
    printf '%-6s %-15s %-15s %-15s %-12.3f %-10.1f\n' "$n" "$nat" "$bare" "$cnt" "$ratio" "$slow"
  done
} | tee "$out"
