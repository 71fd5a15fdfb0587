#!/usr/bin/env bash
# Cost of counting under the native engine, side by side in one run: the
# program alone, `flopscope count --engine native` and `flopscope count
# --engine emulate` (both --no-native: the count alone), alternating.
#
#  1. The large kernels: the AVX2 and AVX-512 matrix products (n = 1024) and
#     the OpenMP triad (2 threads). Target: native engine <= 1.5x the program
#     alone. The emulate engine cannot run AVX-512 (shown as n/a).
#  2. Every test kernel with the arguments the tests use (most of them run
#     for about a millisecond: start-up dominates). Target: geometric mean of
#     the native engine's ratios <= 3x. These run SMALL_REPEATS times (they
#     are short, and on a small virtual machine a run's time swings by whole
#     scheduler ticks: the 2-thread OpenMP kernel alone takes 1.3 to 20 ms
#     natively); the ratios are of minimums, and the geometric mean of the
#     medians' ratios is printed too.
#  3. No target, for the record: Debian's CPython in a float loop (an
#     interpreter: every bytecode dispatch is an indirect branch).
#
# While it measures, the script holds a CPU wake-up latency request of 0
# (/dev/cpu_dma_latency, the kernel's PM QoS interface; needs root), as
# latency-focused benchmarking does: idle CPUs then stay out of deep idle
# states, for the program alone and for both engines alike. Without it, on
# a virtual machine, a thread woken on an idle vCPU can wait a scheduler
# tick, and the short OpenMP kernel's times swing by several milliseconds.
# The header says whether the request was held; NO_PM_QOS=1 skips it.
#
# Times are wall seconds of whole commands (the flopscope columns include
# the CLI's own start and the report). Usage:
#   benchmarks/native-overhead.sh [REPEATS [SMALL_REPEATS]]   (default 5 20; min and median)
# Writes benchmarks/results/native-overhead-<date>.txt
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
small_reps=${2:-20}
cargo build --release -q -p flopscope
bin=target/bench-kernels; mkdir -p "$bin" benchmarks/results
fs=${CARGO_TARGET_DIR:-target}/release/flopscope
inc="-I tests/kernels -I crates/markers/include"
gcc -O3 -mavx2 -mfma -o "$bin/matmul_avx2" benchmarks/kernels/matmul.c
gcc -O3 -march=x86-64-v4 -mprefer-vector-width=512 -o "$bin/matmul_avx512" benchmarks/kernels/matmul.c
gcc -O3 -mavx2 -mfma -fopenmp -o "$bin/omp_triad" benchmarks/kernels/omp_triad.c
# The test kernels, built as the tests build them.
k() { local name=$1; shift; gcc "$@" $inc -o "$bin/t_$name" "tests/kernels/$name.c" -lm; }
k matmul -O2 -mavx2 -mfma
k triad -O2 -mavx2 -mfma
k triad_vec -O2 -mavx2 -mfma
k sqrtdiv -O2 -mavx2 -mfma -fno-math-errno
k fma -O2 -mavx2 -mfma
k minmax -O2 -mavx2 -mfma
k hadd -O2 -mavx2 -mfma
k dp -O2 -mavx2 -mfma
k x87 -O2 -fno-math-errno
k omp_triad -O2 -fopenmp
k segv -O2 -mavx2 -mfma
k exit3 -O2
gfortran -O2 -o "$bin/t_daxpy" tests/kernels/daxpy.f90
gcc -O2 -march=x86-64-v4 $inc -o "$bin/t_avx512_masked" tests/kernels/native/avx512_masked.c
gcc -O2 -msse2 $inc -o "$bin/t_signals" tests/kernels/native/signals.c

avx512=$(grep -qw avx512f /proc/cpuinfo && echo yes || echo no)
out=benchmarks/results/native-overhead-$(date +%Y%m%d-%H%M%S).txt
python3 - "$reps" "$fs" "$bin" "$avx512" "$small_reps" <<'PY' | tee "$out"
import os, sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, "benchmarks")
from common import gm, hold_pm_qos, wall
reps, fs, b, avx512 = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "yes"
small_reps = int(sys.argv[5])

import json, tempfile
tmp = tempfile.mkdtemp()
pm_qos, pm_qos_state = hold_pm_qos()

def counted(engine, cmd, env):
    """(whole flopscope command, the counted run alone: the report's engine_time_s)."""
    out = os.path.join(tmp, "r.json")
    w, _ = wall([fs, "count", "--engine", engine, "--no-native", "--format", "json", "-o", out, "--"] + cmd, env)
    return w, json.load(open(out))["engine_time_s"]

def row(name, cmd, emulate=True, env=None, reps=reps):
    env = dict(os.environ, **(env or {}))
    runs = {k: [] for k in ("program", "native", "native_cmd", "emulate", "emulate_cmd")}
    for _ in range(reps):  # the commands alternate
        runs["program"].append(wall(cmd, env)[0])
        w, t = counted("native", cmd, env)
        runs["native_cmd"].append(w)
        runs["native"].append(t)
        if emulate:
            w, t = counted("emulate", cmd, env)
            runs["emulate_cmd"].append(w)
            runs["emulate"].append(t)
    st = {k: (min(v), sorted(v)[len(v) // 2]) for k, v in runs.items() if v}
    p = st["program"][0]
    cell = lambda k: f"{st[k][0]:.4f} {st[k][1]:.4f}" if k in st else "n/a (AVX-512)"
    x = lambda k: f"{st[k][0] / p:.2f}" if k in st else "-"
    print(f"{name:<24} {cell('program'):<16} {cell('native'):<16} {cell('emulate'):<16} {x('native'):<9} {x('emulate'):<9} "
          f"{x('native_cmd'):<10} {x('emulate_cmd'):<10}", flush=True)
    return st["native"][0] / p, st["native_cmd"][0] / p, st["native"][1] / st["program"][1]

head = (f"{'kernel':<24} {'program':<16} {'native-engine':<16} {'emulate-engine':<16} {'native-x':<9} {'emulate-x':<9} "
        f"{'cmd-nat-x':<10} {'cmd-emu-x':<10}")
load = open("/proc/loadavg").read().split()[:3]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"# flopscope native-engine overhead, {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
print(f"# cpu: {cpu}, {os.cpu_count()} threads; load average at start: {' '.join(load)}")
print(f"# CPU wake-up latency request: {pm_qos_state}")
print(f"# {reps} repeats ({small_reps} for the test kernels), the three commands alternating; seconds (min median).")
print("# program: the program alone;")
print("# native-engine, emulate-engine: the counted run alone (the report's engine_time_s: start of the program under")
print("# the engine to its exit). Ratios: minimum over the program's minimum; cmd-*-x: the whole `flopscope count`")
print("# command (CLI start, counter file, report) over the program. Command: benchmarks/native-overhead.sh", reps, small_reps)
print("\n## Large kernels (target: native engine <= 1.5x)")
print(head)
row("matmul AVX2 n=1024", [f"{b}/matmul_avx2", "1024"])
if avx512:
    row("matmul AVX-512 n=1024", [f"{b}/matmul_avx512", "1024"], emulate=False)
row("OpenMP triad 2 threads", [f"{b}/omp_triad", "8000000", "40"], env={"OMP_NUM_THREADS": "2"})
print("\n## Test kernels, the tests' arguments (target: geometric mean of native-x <= 3)")
print(head)
tests = [
    ("matmul", ["17", "2"], {}), ("triad", ["1001", "10"], {}), ("triad_vec", ["1000", "10"], {}),
    ("sqrtdiv", ["1001", "3"], {}), ("fma", ["1000"], {}), ("minmax", ["1000"], {}), ("hadd", ["1000"], {}),
    ("dp", ["1000"], {}), ("x87", ["1000"], {}), ("omp_triad", ["1000", "4"], {"OMP_NUM_THREADS": "2"}),
    ("daxpy", ["1001", "5"], {}), ("segv", ["1000"], {}), ("exit3", [], {}), ("signals", ["50", "10"], {}),
]
ratios = [row(n, [f"{b}/t_{n}"] + a, env=e, reps=small_reps) for n, a, e in tests]
if avx512:
    ratios.append(row("avx512_masked", [f"{b}/t_avx512_masked", "1003", "3"], emulate=False, reps=small_reps))
print(f"\ngeometric mean over {len(ratios)} test kernels: native-x {gm([r[0] for r in ratios]):.2f}, "
      f"cmd-nat-x {gm([r[1] for r in ratios]):.2f}; of the medians' ratios: {gm([r[2] for r in ratios]):.2f}")
print("\n## An interpreter (no target): CPython's loop dispatches every bytecode through an indirect branch")
print(head)
py = "import math; print(sum(math.sqrt(i * 0.5) for i in range(3000000)))"
row("CPython 3M sqrt", ["/usr/bin/python3", "-S", "-c", py], env={"PYTHONHASHSEED": "0"})
PY
