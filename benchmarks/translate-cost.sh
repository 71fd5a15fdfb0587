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
# 35,000). Machine noise is large here: compare minimums, or the median of
# the rounds' ratios (each round runs both builds back to back). Where valgrind is
# installed, each build is also run once under callgrind, which counts the
# instructions executed while translating: the same on every run, so a
# change of a few percent shows there when the times cannot show it.
#
# Usage: benchmarks/translate-cost.sh BASELINE [REPEATS]   (default 20)
#   e.g. benchmarks/translate-cost.sh 64e2b61
#   LIBRARY=/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1 benchmarks/translate-cost.sh HEAD
#     translates the first block of that library's functions instead
#     (preloaded; compiled C++: longer blocks than libc's hand-written ones)
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
library=${LIBRARY:-$(ldd "${bins[1]}" | awk '/libc.so/ {print $3}')}
if [ ! -f "$library" ]; then
  echo "translate-cost: LIBRARY=$library is not a file: name a shared library, e.g. /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1" >&2
  exit 2
fi
nm -D --defined-only "$library" | awk '$2 == "T" || $2 == "i" || $2 == "W" {print $3}' >"$syms"
preload=$([ -n "${LIBRARY:-}" ] && echo "$library" || true)
mkdir -p benchmarks/results
out=benchmarks/results/translate-cost-$(date +%Y%m%d-%H%M%S).txt
python3 - "$reps" "$syms" "$library" "$preload" "${bins[@]}" "${names[@]}" <<'PY' | tee "$out"
import os, re, shutil, subprocess, sys, time
reps, syms, library, preload = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
bins, names = sys.argv[5:7], sys.argv[7:9]
env = dict(os.environ, LD_PRELOAD=preload) if preload else None
runs = {b: ([], []) for b in bins}
for _ in range(reps):
    for b in bins:  # alternating
        o = subprocess.run([b], stdin=open(syms), capture_output=True, text=True, check=True, env=env).stdout
        m = re.search(r"(\d+) blocks translated; first ([\d.]+) ms, the others (\d+) ns", o)
        runs[b][0].append(float(m.group(2)))
        runs[b][1].append(int(m.group(3)))
        blocks = m.group(1)
load = " ".join(open("/proc/loadavg").read().split()[:3])
print(f"# flopscope translator cost, {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}; load average at start: {load}")
print(f"# {blocks} blocks (the exported functions of {os.path.basename(library)}), {reps} runs each, alternating; min and median")
print(f"{'build':<34} {'first block (ms)':<20} {'each other block (ns)':<22}")
for b, n in zip(bins, names):
    f, o = sorted(runs[b][0]), sorted(runs[b][1])
    print(f"{n:<34} {f[0]:.3f} {f[len(f) // 2]:.3f}          {o[0]} {o[len(o) // 2]}")
# Each round's two runs side by side: the host's drift cancels in their ratio.
pairs = sorted(w / b for b, w in zip(runs[bins[0]][1], runs[bins[1]][1]))
print(f"each other block, working tree / baseline: median of the {len(pairs)} rounds' ratios "
      f"{pairs[len(pairs) // 2]:.3f} (quartiles {pairs[len(pairs) // 4]:.3f} and {pairs[3 * len(pairs) // 4]:.3f})")
if shutil.which("valgrind"):
    print("# instructions executed translating (callgrind, inside lookup_or_translate), per block")
    per = []
    for b, n in zip(bins, names):
        cg = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                             "--toggle-collect=*lookup_or_translate*", b],
                            stdin=open(syms), capture_output=True, text=True, check=True, env=env)
        ir = int(re.search(r"Collected : (\d+)", cg.stderr).group(1))
        k = int(re.search(r"(\d+) blocks translated", cg.stdout).group(1))
        per.append(ir / k)
        print(f"{n:<34} {ir / k:,.0f}")
    print(f"working tree / baseline: {per[1] / per[0]:.3f}")
else:
    print("# (valgrind not installed: no instruction counts)")
PY
