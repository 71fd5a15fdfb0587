#!/usr/bin/env bash
# What counting a statically linked program costs under the native engine,
# against the same program linked dynamically, side by side in one run
# (the runs alternating):
#
#  1. Per dispatcher entry (benchmarks/kernels/dispatch_entries.c, the
#     program timing N munmap calls the dispatcher performs): dynamic;
#     static with `wrfsbase` switching `fs` (where the kernel allows it);
#     static with `arch_prctl` (FLOPSCOPE_NATIVE_NO_FSGSBASE=1). The
#     difference is the `fs` switch (crates/native-runtime/src/hostfs.rs).
#  2. Whole counted runs (engine_time_s) of kernels built both ways, and
#     the blocks each translates (FLOPSCOPE_NATIVE_DEBUG=1): the switch
#     costs nothing in code running from the cache, but a static program's
#     libc start-up and exit run from the cache too (a dynamic program's
#     loader does that work before the take-over, natively).
#
# Usage: benchmarks/static-programs.sh [REPEATS]   (default 9; min and median)
#   FLOPSCOPE=path/to/flopscope to measure a build of your own (default:
#   cargo build --release, target/release/flopscope).
# Writes benchmarks/results/static-programs-<date>.txt
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-9}
if [ -z "${FLOPSCOPE:-}" ]; then
  cargo build --release -q -p flopscope
  FLOPSCOPE=target/release/flopscope
fi
bin=target/bench-kernels; mkdir -p "$bin" benchmarks/results
inc="-I tests/kernels"
for link in dynamic static; do
  flag=$([ $link = static ] && echo -static || true)
  gcc -O2 $flag -o "$bin/entries_$link" benchmarks/kernels/dispatch_entries.c
  gcc -O3 -mavx2 -mfma $flag -o "$bin/matmul_$link" benchmarks/kernels/matmul.c
  gcc -O3 -mavx2 -mfma -fopenmp $flag -o "$bin/omp_triad_$link" benchmarks/kernels/omp_triad.c 2>/dev/null
  gcc -O2 -mavx2 -mfma $flag $inc -o "$bin/triad_$link" tests/kernels/triad.c
  gfortran -O2 $flag -o "$bin/daxpy_$link" tests/kernels/daxpy.f90
done
out=benchmarks/results/static-programs-$(date +%Y%m%d-%H%M%S).txt
python3 - "$reps" "$FLOPSCOPE" "$bin" <<'PY' | tee "$out"
import json, os, subprocess, sys, tempfile, time
reps, fs, b = int(sys.argv[1]), sys.argv[2], sys.argv[3]
tmp = tempfile.mkdtemp()
json_out = os.path.join(tmp, "r.json")

def count(cmd, env):
    p = subprocess.run([fs, "count", "--engine", "native", "--no-native", "--format", "json", "-o", json_out, "--"] + cmd,
                       env=dict(os.environ, **env), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True, text=True)
    return p.stdout, json.load(open(json_out))["engine_time_s"]

def blocks(cmd, env):
    p = subprocess.run([fs, "count", "--engine", "native", "--no-native", "--format", "json", "-o", json_out, "--"] + cmd,
                       env=dict(os.environ, FLOPSCOPE_NATIVE_DEBUG="1", **env), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, check=True, text=True)
    return next(int(l.split()[1]) for l in p.stderr.splitlines() if l.startswith("[fs]") and "blocks translated" in l)

def stats(v):
    v = sorted(v)
    return v[0], v[len(v) // 2]

cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
flags = next((l for l in open("/proc/cpuinfo") if l.startswith("flags")), "")
print(f"# flopscope: statically vs dynamically linked programs under the native engine, {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
print(f"# cpu: {cpu}, {os.cpu_count()} threads, fsgsbase {'yes' if ' fsgsbase' in flags else 'no'}; load average at start: {' '.join(open('/proc/loadavg').read().split()[:3])}")
print(f"# {reps} repeats, alternating; min and median. Command: benchmarks/static-programs.sh {reps}")

print("\n## Nanoseconds per dispatcher entry (200000 munmap calls, timed by the program)")
configs = [("dynamic", "entries_dynamic", {}), ("static, wrfsbase", "entries_static", {}),
           ("static, arch_prctl", "entries_static", {"FLOPSCOPE_NATIVE_NO_FSGSBASE": "1"})]
ns = {c[0]: [] for c in configs}
for _ in range(reps):
    for name, exe, env in configs:
        out, _ = count([f"{b}/{exe}", "200000"], env)
        ns[name].append(float(out.split()[0]))
base = stats(ns["dynamic"])[0]
for name, _, _ in configs:
    lo, med = stats(ns[name])
    print(f"{name:<20} {lo:8.1f} {med:8.1f}   {lo - base:+7.1f} (min - dynamic min)")

print("\n## Counted run, seconds (engine_time_s): dynamic vs static")
print(f"{'program':<24} {'dynamic':<17} {'static':<17} {'static/dynamic':<15} blocks translated (dynamic static)")
for name, cmd, env in [("matmul AVX2 n=256", ["matmul", "256"], {}),
                       ("OpenMP triad 2 thr", ["omp_triad", "2000000", "20"], {"OMP_NUM_THREADS": "2"}),
                       ("test triad", ["triad", "1001", "10"], {}),
                       ("test daxpy", ["daxpy", "1001", "5"], {})]:
    t = {"dynamic": [], "static": []}
    for _ in range(reps):
        for link in t:
            _, s = count([f"{b}/{cmd[0]}_{link}"] + cmd[1:], env)
            t[link].append(s)
    d, s = stats(t["dynamic"]), stats(t["static"])
    n = [blocks([f"{b}/{cmd[0]}_{link}"] + cmd[1:], env) for link in ("dynamic", "static")]
    print(f"{name:<24} {d[0]:.4f} {d[1]:.4f}   {s[0]:.4f} {s[1]:.4f}   {s[0] / d[0]:<15.3f} {n[0]} {n[1]}")
PY
