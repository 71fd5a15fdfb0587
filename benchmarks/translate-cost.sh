#!/usr/bin/env bash
# What the native engine's translator costs per block, against a named
# baseline, side by side in one run: the translate_cost example of
# crates/native-runtime (the first block of every function libc exports,
# translated into a code cache in a process of its own) built from BASELINE
# (a git revision, checked out in a worktree under target/) and from the
# working tree, the two runs alternating.
#
# The first block includes building the decoder's tables, paid once per
# counted process; the others are the per-block cost, paid once per block a
# program executes (a C kernel runs about 300 before main returns, Python
# 35,000). Machine noise is large here: compare minimums.
#
# Usage: benchmarks/translate-cost.sh BASELINE [REPEATS]   (default 20)
#   e.g. benchmarks/translate-cost.sh 64e2b61
# Writes benchmarks/results/translate-cost-<date>.txt
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: benchmarks/translate-cost.sh BASELINE [REPEATS] (BASELINE: a git revision, e.g. HEAD~3)}
reps=${2:-20}
rev=$(git rev-parse --short "$base^{commit}") || {
  echo "translate-cost: '$base' is not a git revision of this repository: name a commit, tag or branch" >&2
  exit 2
}
wt=target/translate-cost-baseline
if [ ! -d "$wt" ]; then git worktree add -q --detach "$wt" "$rev"; else git -C "$wt" checkout -q --force --detach "$rev"; fi
# Both builds measured by the working tree's example (the same harness; the
# translator is what differs). Revisions before the example existed have
# none; before 2026-11-27 it also translated libc's exported data, and
# crashed once the translator looked up the thread's state for code in
# writable pages.
mkdir -p "$wt/crates/native-runtime/examples"
cp crates/native-runtime/examples/translate_cost.rs "$wt/crates/native-runtime/examples/"
build() { (cd "$1" && cargo build -q --release --example translate_cost -p flopscope-native-runtime --target-dir "$2"); }
build "$wt" "$PWD/target/translate-cost-base-build"
build . target
bins=(target/translate-cost-base-build/release/examples/translate_cost target/release/examples/translate_cost)
names=("baseline $rev" "working tree $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo +changes)")
syms=$(mktemp)
trap 'rm -f "$syms"; if [ -n "${out:-}" ] && [ ! -s "$out" ]; then rm -f "$out"; fi' EXIT
nm -D --defined-only "$(ldd "${bins[1]}" | awk '/libc.so/ {print $3}')" | awk '{print $3}' >"$syms"
mkdir -p benchmarks/results
out=benchmarks/results/translate-cost-$(date +%Y%m%d-%H%M%S).txt
python3 - "$reps" "$syms" "${bins[@]}" "${names[@]}" <<'PY' | tee "$out"
import os, re, subprocess, sys, time
reps, syms = int(sys.argv[1]), sys.argv[2]
bins, names = sys.argv[3:5], sys.argv[5:7]
runs = {b: ([], []) for b in bins}
for _ in range(reps):
    for b in bins:  # alternating
        o = subprocess.run([b], stdin=open(syms), capture_output=True, text=True, check=True).stdout
        m = re.search(r"(\d+) blocks translated; first ([\d.]+) ms, the others (\d+) ns", o)
        runs[b][0].append(float(m.group(2)))
        runs[b][1].append(int(m.group(3)))
        blocks = m.group(1)
load = " ".join(open("/proc/loadavg").read().split()[:3])
print(f"# flopscope translator cost, {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}; load average at start: {load}")
print(f"# {blocks} blocks (libc's exported functions), {reps} runs each, alternating; min and median")
print(f"{'build':<34} {'first block (ms)':<20} {'each other block (ns)':<22}")
for b, n in zip(bins, names):
    f, o = sorted(runs[b][0]), sorted(runs[b][1])
    print(f"{n:<34} {f[0]:.3f} {f[len(f) // 2]:.3f}          {o[0]} {o[len(o) // 2]}")
PY
