#!/usr/bin/env bash
# The native engine, this tree against a baseline revision, side by side on
# general code and on compute kernels:
#   gcc's cc1 compiling stb_truetype.h (`gcc -O2 -c`, libstb-dev);
#   CPython summing 3M square roots;
#   a Numba `@njit` loop of 1e8 square roots (python3-numba: importing
#   numba and compiling with LLVM translate some 250,000 blocks);
#   the scalar FMA matrix product (tests/kernels/matmul.c, -O2 -mavx2
#   -mfma: its inner loop is one basic block with one store), n = 512 x 4;
#   the AVX2 matrix product (benchmarks/kernels/matmul.c, -O3), n = 1024;
#   the example triad (examples/triad.c), in L1 (2,000 x 100,000) and in
#   DRAM (4M x 20);
#   the OpenMP triad, 2 threads, 8M x 40;
#   chained calls (benchmarks/kernels/calls.c, -O2): 8 calls an iteration,
#   each fed by the one before, 50M iterations;
#   system calls (benchmarks/kernels/syscalls.c, -O2): 3M getppid calls;
#   signal masks (benchmarks/kernels/sigmasks.c, -O2): 1M pairs of
#   pthread_sigmask, block and restore;
#   reads beside JIT code (benchmarks/kernels/reads_beside_code.c, -O2):
#   1M one-byte reads after running code from a writable page, each sent
#   through the dispatcher's check of the memory the kernel writes;
#   code rewritten in a loop (benchmarks/kernels/rewrite.c, -O2): 20,000
#   rounds of writing a small function and calling it, each a write fault
#   and a translation, as a JIT compiler reusing a buffer;
#   /bin/true: what a count costs besides the program (start, the C
#   library's and the loader's symbols, the report).
# Each round runs the program alone, then both builds in turn (which goes
# first alternates) with and without attribution; per cell the counted run
# (the report's engine_time_s), the whole `flopscope count` command and its
# peak resident set (the largest of its processes'), min and median over
# the rounds, new/base ratios of the minimums and of the medians (below 1:
# the tree is faster or smaller), and each build's figure over the program
# alone (minimums).
#
# The baseline is exported with `git archive` (no worktree is added) and
# built in release under $CARGO_TARGET_DIR/native-ab/, kept between runs;
# BASE_FLOPSCOPE names a release binary of BASE_REVISION built already
# instead.
#
# Usage: benchmarks/native-ab.sh BASE_REVISION [ROUNDS]     (default 7)
#   environment: BASE_FLOPSCOPE (a built baseline binary), ONLY (a substring:
#   run only the programs whose name holds it, e.g. ONLY=matmul)
# Writes benchmarks/results/native-ab-<date>.txt
set -euo pipefail
cd "$(dirname "$0")/.."
base_rev=$(git rev-parse --verify "${1:?usage: benchmarks/native-ab.sh BASE_REVISION [ROUNDS]}^{commit}")
reps=${2:-7}
scripts/setup.sh libstb-dev
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
cargo build --release -q -p flopscope
work=$target/native-ab; mkdir -p "$work" benchmarks/results
base_fs=${BASE_FLOPSCOPE:-}
if [ -z "$base_fs" ]; then
  src=$work/base-${base_rev:0:12}
  if [ ! -e "$src/Cargo.toml" ]; then
    mkdir -p "$src"
    git archive "$base_rev" | tar -x -C "$src"
  fi
  (cd "$src" && CARGO_TARGET_DIR=$work/base-target cargo build --release -q -p flopscope)
  base_fs=$work/base-target/release/flopscope
fi
printf '#define STB_TRUETYPE_IMPLEMENTATION\n#include <stb/stb_truetype.h>\n' >"$work/stb_truetype.c"
gcc -O2 -mavx2 -mfma -I tests/kernels -o "$work/matmul_o2" tests/kernels/matmul.c
gcc -O3 -mavx2 -mfma -o "$work/matmul_avx2" benchmarks/kernels/matmul.c
gcc -O2 -mavx2 -mfma -o "$work/triad" examples/triad.c
gcc -O3 -mavx2 -mfma -fopenmp -o "$work/omp_triad" benchmarks/kernels/omp_triad.c
gcc -O2 -o "$work/calls" benchmarks/kernels/calls.c
gcc -O2 -o "$work/syscalls" benchmarks/kernels/syscalls.c
gcc -O2 -o "$work/sigmasks" benchmarks/kernels/sigmasks.c
gcc -O2 -o "$work/reads" benchmarks/kernels/reads_beside_code.c
gcc -O2 -o "$work/rewrite" benchmarks/kernels/rewrite.c
rev="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo ' + uncommitted changes in crates/')"
out=benchmarks/results/native-ab-$(date +%Y%m%d-%H%M%S).txt
python3 - "$reps" "$base_fs" "$target/release/flopscope" "$work" \
  "$(git rev-parse --short "$base_rev")" "$rev" "$*" <<'PY' | tee "$out"
import json, os, sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, "benchmarks")
from common import header, hold_pm_qos, spread, wall_peak

reps, base, new, work, base_rev, rev, args = int(sys.argv[1]), *sys.argv[2:8]
py = "/usr/bin/python3"
PROGRAMS = [
    ("gcc -O2 -c stb_truetype", ["gcc", "-O2", "-c", "-o", f"{work}/stb_truetype.o", f"{work}/stb_truetype.c"]),
    ("CPython 3M sqrt", [py, "-S", "-c", "import math\ns = 0.0\nfor i in range(3000000): s += math.sqrt(i)"]),
    ("Numba @njit 1e8 sqrt", [py, "-c", "import math, sys\nfrom numba import njit\n@njit\ndef roots(n):\n"
                              "    s = 0.0\n    for i in range(n):\n        s += math.sqrt(i * 0.5)\n    return s\n"
                              "print(roots(100000000))"]),
    ("matmul -O2 FMA n=512 x4", [f"{work}/matmul_o2", "512", "4"]),
    ("matmul AVX2 -O3 n=1024", [f"{work}/matmul_avx2", "1024"]),
    ("triad L1 2000 x 100000", [f"{work}/triad", "2000", "100000"]),
    ("triad DRAM 4M x 20", [f"{work}/triad", "4000000", "20"]),
    ("OpenMP triad 2 thr 8M x 40", [f"{work}/omp_triad", "8000000", "40"]),
    ("chained calls 8 x 50M", [f"{work}/calls", "50000000"]),
    ("system calls 3M getppid", [f"{work}/syscalls", "3000000"]),
    ("signal masks 1M pairs", [f"{work}/sigmasks", "1000000"]),
    ("reads beside JIT code 1M", [f"{work}/reads", "1000000"]),
    ("code rewritten 20k times", [f"{work}/rewrite", "20000"]),
    ("/bin/true: a count's fixed cost", ["/bin/true"]),
]
PROGRAMS = [p for p in PROGRAMS if os.environ.get("ONLY", "") in p[0]]
os.environ.setdefault("OMP_NUM_THREADS", "2")
MODES = [("--no-attribution", ["--no-attribution"]), ("attribution", [])]
BUILDS = [("base", base), ("new", new)]
report = f"{work}/report.json"

def run(fs, flags, cmd):
    """(whole command's wall seconds, the counted run's engine_time_s, peak MB)."""
    if os.path.exists(report):
        os.remove(report)
    w, rc, peak = wall_peak([fs, "count", "--engine", "native", *flags, "-o", report, "--", *cmd], dict(os.environ))
    r = json.load(open(report))
    if rc != 0 or not r["complete"] or r["warnings"]:
        sys.exit(f"{fs} on {cmd[0]}: exit {rc}, complete {r['complete']}, warnings {r['warnings']}")
    return w, r["engine_time_s"], peak

pm_qos, pm_qos_state = hold_pm_qos()
for line in header("flopscope native engine A/B", pm_qos_state):
    print(line)
print(f"# base: flopscope {base_rev}; new: flopscope {rev}; both cargo build --release")
print(f"# {reps} rounds; each round runs every program alone, then every mode under both builds in turn, which")
print("# build goes first alternating; seconds min / median. counted: the report's engine_time_s; whole: the")
print("# command's wall time. Ratios new/base of the minimums (of the medians in parentheses); base/alone and")
print("# new/alone: minimum over the program's minimum alone. peak MB: the largest resident set among the")
print("# command's processes (ru_maxrss of wait4; with attribution, often flopscope's own, after the run).")
print(f"# Command: benchmarks/native-ab.sh {args}\n")
t = {}
alone = {}
for r in range(reps):
    for name, cmd in PROGRAMS:
        w, _, peak = wall_peak(cmd, dict(os.environ))
        alone.setdefault(name, {"wall": [], "peak MB": []})
        alone[name]["wall"].append(w)
        alone[name]["peak MB"].append(peak)
        for mode, flags in MODES:
            for b, fs in (BUILDS if r % 2 == 0 else BUILDS[::-1]):
                w, c, peak = run(fs, flags, cmd)
                t.setdefault((name, mode, b), {"whole": [], "counted": [], "peak MB": []})
                t[(name, mode, b)]["whole"].append(w)
                t[(name, mode, b)]["counted"].append(c)
                t[(name, mode, b)]["peak MB"].append(peak)
print(f"{'program':<26} {'mode':<17} {'figure':<8} {'base min/median':<16} {'new min/median':<16} "
      f"{'new/base':<16} {'base/alone':<11} new/alone")
for name, _ in PROGRAMS:
    for fig in ("wall", "peak MB"):
        a = spread(alone[name][fig])
        print(f"{name:<26} {'alone':<17} {fig:<8} {'':<16} {a[0]:6.3f} {a[1]:6.3f}")
    for mode, _ in MODES:
        for fig in ("counted", "whole", "peak MB"):
            a = spread(alone[name]["peak MB" if fig == "peak MB" else "wall"])
            b, n = spread(t[(name, mode, "base")][fig]), spread(t[(name, mode, "new")][fig])
            print(f"{name:<26} {mode:<17} {fig:<8} {b[0]:6.3f} {b[1]:6.3f}    {n[0]:6.3f} {n[1]:6.3f}    "
                  f"{n[0] / b[0]:.3f} ({n[1] / b[1]:.3f})   {b[0] / a[0]:<11.3f} {n[0] / a[0]:.3f}")
PY
echo "Recorded in $out"
