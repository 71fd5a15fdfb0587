#!/usr/bin/env bash
# How much "% of peak" moves when the same program is counted again (issue
# #18: the same program counted five times must show the same "% of peak"
# within 3%). Each program is counted RUNS times with the default engine
# (`flopscope count -o report.json`, no other option: what a user runs),
# the programs taking turns; the percent is the report's own (GFLOP/s over
# the peak of the precision with the most FLOP, as the table prints it).
# For comparison, each round also times the program alone: the spread of
# its wall time is the part of the movement that is the program's and the
# machine's, not flopscope's.
#
# Programs: the bundled example (examples/triad.c, 1M x 200, as scripts/example.sh runs it), the scalar FMA
# matrix product (tests/kernels/matmul.c -O2 -mavx2 -mfma, n = 512 x 4),
# the AVX2 matrix product (benchmarks/kernels/matmul.c -O3, n = 1024) and
# the OpenMP triad (2 threads, 8M x 40).
#
# Usage: benchmarks/peak-stability.sh [RUNS]     (default 5)
# Writes benchmarks/results/peak-stability-<date>.txt
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
cargo build --release -q -p flopscope
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
work=$target/peak-stability; mkdir -p "$work" benchmarks/results
gcc -O2 -mavx2 -mfma -o "$work/triad" examples/triad.c
gcc -O2 -mavx2 -mfma -I tests/kernels -o "$work/matmul_o2" tests/kernels/matmul.c
gcc -O3 -mavx2 -mfma -o "$work/matmul_avx2" benchmarks/kernels/matmul.c
gcc -O3 -mavx2 -mfma -fopenmp -o "$work/omp_triad" benchmarks/kernels/omp_triad.c
rev="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo ' + uncommitted changes in crates/')"
out=benchmarks/results/peak-stability-$(date +%Y%m%d-%H%M%S).txt
python3 - "$runs" "$target/release/flopscope" "$work" "$rev" <<'PY' | tee "$out"
import json, os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, "benchmarks")
from common import header, hold_pm_qos, spread, wall

runs, fs, work, rev = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
PROGRAMS = [
    ("example triad 1M x 200", [f"{work}/triad", "1000000", "200"]),
    ("matmul -O2 FMA n=512 x4", [f"{work}/matmul_o2", "512", "4"]),
    ("matmul AVX2 -O3 n=1024", [f"{work}/matmul_avx2", "1024"]),
    ("OpenMP triad 2 thr 8M x 40", [f"{work}/omp_triad", "8000000", "40"]),
]
env = dict(os.environ, OMP_NUM_THREADS="2")
report = f"{work}/report.json"

def percent(r):
    """The report's percent of peak, as Report::percent_of_peak computes it."""
    f, p = r["flop"], r["peak"]
    peak = p["gflops_fp32"] if (f.get("fp32") or 0) > (f.get("fp64") or 0) else p["gflops_fp64"]
    return 100.0 * r["gflops"] / peak

pm_qos, pm_qos_state = hold_pm_qos()
for line in header("flopscope: % of peak over repeated counts", pm_qos_state):
    print(line)
print(f"# flopscope {rev}, cargo build --release; {runs} rounds, the programs taking turns; each round counts")
print("# every program (`flopscope count -o report.json -- PROGRAM`) and times it alone.")
print("# spread = (max - min) / median. Target (#18): the counted percent's spread within 3%.")
print(f"# Command: benchmarks/peak-stability.sh {runs}\n")
pct, alone, engines = {}, {}, {}
for _ in range(runs):
    for name, cmd in PROGRAMS:
        if os.path.exists(report):
            os.remove(report)
        _, rc = wall([fs, "count", "-o", report, "--", *cmd], env)
        r = json.load(open(report))
        if rc != 0 or not r["complete"]:
            sys.exit(f"{name}: flopscope exited {rc}, complete {r['complete']}")
        pct.setdefault(name, []).append(percent(r))
        engines[name] = r["engine"]
        alone.setdefault(name, []).append(wall(cmd, env)[0])
print(f"{'program':<28} {'engine':<7} {'% of peak, each count':<44} {'spread':>7}   {'alone: min/median/max s':<26} {'spread':>7}")
met = []
for name, _ in PROGRAMS:
    p, a = spread(pct[name]), spread(alone[name])
    ps, as_ = (p[2] - p[0]) / p[1], (a[2] - a[0]) / a[1]
    met.append((name, ps))
    each = " ".join(f"{x:.3f}" for x in pct[name])
    print(f"{name:<28} {engines[name]:<7} {each:<44} {100 * ps:6.1f}%   "
          f"{a[0]:.3f} {a[1]:.3f} {a[2]:.3f}{'':<9} {100 * as_:6.1f}%")
missed = [f"{n} {100 * s:.1f}%" for n, s in met if s > 0.03]
print(f"\nspread of the counted percent within 3%: {'MISSED: ' + ', '.join(missed) if missed else 'met'}")
PY
echo "Recorded in $out"
