#!/usr/bin/env bash
# What attribution (functions, loops, lines) costs, side by side in one run:
# `flopscope count --engine native` with attribution (the default) and with
# --no-attribution, alternating.
#
#  1. The counted run alone (the report's engine_time_s): the native
#     engine's extra per-block work (the not-taken counters of conditional
#     branches) and the code table it writes at exit. Target: <= 1.05x over
#     the existing native-overhead kernels and CPython (geometric mean, and
#     each kernel listed).
#  2. The whole command on a program built from a generated C file of many
#     functions with full debug info (about 50 MB), every function called:
#     the difference is the time to read the code table and symbolize every
#     executed address. Target: <= 1 s.
#
# Usage: benchmarks/attribution-cost.sh [REPEATS]   (default 7; min and median)
# Writes benchmarks/results/attribution-cost-<date>.txt
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-7}
cargo build --release -q -p flopscope
bin=target/bench-kernels; mkdir -p "$bin" benchmarks/results
fs=target/release/flopscope
inc="-I tests/kernels -I crates/markers/include"
gcc -O3 -mavx2 -mfma -o "$bin/matmul_avx2" benchmarks/kernels/matmul.c
gcc -O3 -mavx2 -mfma -fopenmp -o "$bin/omp_triad" benchmarks/kernels/omp_triad.c
k() { local name=$1; shift; gcc "$@" $inc -o "$bin/t_$name" "tests/kernels/$name.c" -lm; }
k matmul -O2 -mavx2 -mfma
k triad -O2 -mavx2 -mfma
k sqrtdiv -O2 -mavx2 -mfma -fno-math-errno
k minmax -O2 -mavx2 -mfma
k omp_triad -O2 -fopenmp
gfortran -O2 -o "$bin/t_daxpy" tests/kernels/daxpy.f90
# The big program: 4000 functions, each with a loop and locals, -O0 -g3.
big_c=target/bench-kernels/big.c
python3 - "$big_c" <<'PY'
import sys
n = 4000
with open(sys.argv[1], "w") as f:
    f.write("#include <stdio.h>\n")
    for i in range(n):
        f.write(f"struct s{i} {{ double a{i}, b{i}; int c{i}[8]; }};\n")
        f.write(f"double f{i}(double x) {{ struct s{i} v = {{ x, x * 0.5, {{0}} }};\n"
                f"  for (int k = 0; k < 4; k++) v.a{i} = v.a{i} * 1.0001 + v.b{i};\n"
                f"  return v.a{i} + v.c{i}[{i % 8}]; }}\n")
    f.write("int main(void) { double s = 0.0;\n")
    for i in range(n):
        f.write(f"  s += f{i}(s * 1e-9 + {i});\n")
    f.write('  printf("%g\\n", s); return 0; }\n')
PY
gcc -O0 -g3 -o "$bin/big" "$big_c"
out=benchmarks/results/attribution-cost-$(date +%Y%m%d-%H%M%S).txt
python3 - "$reps" "$fs" "$bin" <<'PY' | tee "$out"
import json, math, os, subprocess, sys, tempfile, time
reps, fs, b = int(sys.argv[1]), sys.argv[2], sys.argv[3]
tmp = tempfile.mkdtemp()

def run(cmd, env, attribution):
    out = os.path.join(tmp, "r.json")
    extra = [] if attribution else ["--no-attribution"]
    s = time.perf_counter()
    subprocess.run([fs, "count", "--engine", "native", "--no-native", *extra, "--format", "json", "-o", out, "--"] + cmd,
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    whole = time.perf_counter() - s
    r = json.load(open(out))
    return whole, r["engine_time_s"], len(r["functions"])

def row(name, cmd, env=None):
    env = dict(os.environ, **(env or {}))
    runs = {k: [] for k in ("on_run", "off_run", "on_cmd", "off_cmd")}
    functions = 0
    for _ in range(reps):  # alternating
        w, t, functions = run(cmd, env, True)
        runs["on_cmd"].append(w); runs["on_run"].append(t)
        w, t, _ = run(cmd, env, False)
        runs["off_cmd"].append(w); runs["off_run"].append(t)
    st = {k: (min(v), sorted(v)[len(v) // 2]) for k, v in runs.items()}
    ratio = st["on_run"][0] / st["off_run"][0]
    print(f"{name:<22} {st['off_run'][0]:.4f} {st['off_run'][1]:.4f}   {st['on_run'][0]:.4f} {st['on_run'][1]:.4f}   "
          f"{ratio:<7.3f} {st['off_cmd'][0]:.4f} {st['on_cmd'][0]:.4f}   {st['on_cmd'][0] - st['off_cmd'][0]:+.4f}   {functions}",
          flush=True)
    return ratio, st["on_cmd"][0] - st["off_cmd"][0]

cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"# flopscope attribution cost (native engine), {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
print(f"# cpu: {cpu}, {os.cpu_count()} threads; load average at start: {' '.join(open('/proc/loadavg').read().split()[:3])}")
print(f"# {reps} repeats, with and without --no-attribution alternating; seconds (min median).")
print("# run: the counted run alone (engine_time_s); x: min with / min without; cmd: whole command, min;")
print(f"# cmd+: what attribution adds to the whole command (code table read, symbolization). Command: benchmarks/attribution-cost.sh {reps}")
head = f"{'program':<22} {'run without':<15} {'run with':<15} {'x':<7} {'cmd w/o':<6} {'cmd with':<8} {'cmd+':<8} functions"
print("\n## Counting cost (target: x <= 1.05)")
print(head)
ratios = []
ratios.append(row("matmul AVX2 n=512", [f"{b}/matmul_avx2", "512"])[0])
ratios.append(row("OpenMP triad 2 thr", [f"{b}/omp_triad", "2000000", "20"], {"OMP_NUM_THREADS": "2"})[0])
for n, a in [("matmul", ["17", "2"]), ("triad", ["1001", "10"]), ("sqrtdiv", ["1001", "3"]),
             ("minmax", ["1000"]), ("omp_triad", ["1000", "4"]), ("daxpy", ["1001", "5"])]:
    ratios.append(row(f"test {n}", [f"{b}/t_{n}"] + a, {"OMP_NUM_THREADS": "2"})[0])
py = "import math; print(sum(math.sqrt(i * 0.5) for i in range(1000000)))"
ratios.append(row("CPython 1M sqrt", ["/usr/bin/python3", "-S", "-c", py], {"PYTHONHASHSEED": "0"})[0])
gm = math.exp(sum(map(math.log, ratios)) / len(ratios))
print(f"\ngeometric mean of x over {len(ratios)} programs: {gm:.3f}")
size = os.path.getsize(f"{b}/big") / 1e6
print(f"\n## Symbolization (target: cmd+ <= 1 s): a {size:.1f} MB binary with full debug info, 4000 functions called")
print(head)
row("big (-O0 -g3)", [f"{b}/big"])
PY
