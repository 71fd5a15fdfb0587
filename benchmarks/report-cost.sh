#!/usr/bin/env bash
# What a user waits for after the program has exited: `flopscope count
# --engine native` reads the executed code back, attributes it to
# functions, loops and lines (symbolizing every executed address) and
# writes the report. Measured side by side against a named baseline
# revision, both builds alternating, on the general-code programs whose
# reports are largest (issue #17: gcc's report is 111 MB, and its
# post-processing took longer than the counted run).
#
# Per program and build: the whole command's wall time, the counted run
# (the report's engine_time_s) and their difference, "after": the start
# before the take-over plus everything after the program's exit (reading
# counters, attribution, writing the report); min/median/max, and the
# report's size and the command's peak memory (maximum resident set).
#
# The programs: gcc -O2 -c stb_truetype.h (three processes), the CPython
# float loop and the Numba @njit loop of benchmarks/general-code.sh, and
# SBCL running a recurrence it compiles into the image of its core file.
#
# Usage: benchmarks/report-cost.sh BASELINE_REV [REPEATS]   (default 5)
#   e.g. benchmarks/report-cost.sh 7392839
# Builds BASELINE_REV in a temporary git worktree (its target directory
# kept under target/baseline-REV for later runs), the working tree as it
# is, and writes benchmarks/results/report-cost-<date>.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: benchmarks/report-cost.sh BASELINE_REV [REPEATS]}
reps=${2:-5}
scripts/setup.sh python3-numba libstb-dev
rev=$(git rev-parse --short "$base")
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p flopscope
new_fs=$target/release/flopscope
base_target=$(pwd)/target/baseline-$rev
if [ ! -x "$base_target/release/flopscope" ]; then
  tree=$(mktemp -d)
  trap 'git worktree remove --force "$tree" 2>/dev/null || true; rm -rf "$tree"' EXIT
  git worktree add -q --detach "$tree" "$rev"
  (cd "$tree" && CARGO_TARGET_DIR=$base_target cargo build --release -q -p flopscope)
fi
base_fs=$base_target/release/flopscope
work=$target/report-cost; mkdir -p "$work" benchmarks/results
printf '#define STB_TRUETYPE_IMPLEMENTATION\n#include <stb/stb_truetype.h>\n' >"$work/stb_truetype.c"
now="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo ' + uncommitted changes in crates/')"
out=benchmarks/results/report-cost-$(date +%Y%m%d-%H%M%S).txt
python3 - "$reps" "$base_fs" "$new_fs" "$work" "$rev" "$now" <<'PY' | tee "$out"
import json, os, resource, subprocess, sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, "benchmarks")
from common import header, hold_pm_qos, spread

reps, base_fs, new_fs, work, rev, now = int(sys.argv[1]), *sys.argv[2:]
py = "/usr/bin/python3"
numba = ("import math, sys\nfrom numba import njit\n@njit\ndef roots(n):\n    s = 0.0\n"
         "    for i in range(n):\n        s += math.sqrt(i * 0.5)\n    return s\nprint(roots(int(sys.argv[1])))")
SUITE = [
    ("gcc -O2 -c stb_truetype", ["gcc", "-O2", "-c", "-o", os.path.join(work, "stb.o"),
                                 os.path.join(work, "stb_truetype.c")]),
    ("CPython 3M sqrt", [py, "-S", "-c", "import math; print(sum(math.sqrt(i * 0.5) for i in range(3000000)))"]),
    ("Numba @njit 1e8 sqrt", [py, "-c", numba, "100000000"]),
    # Code in an image mapped from a file that is not ELF (SBCL's core):
    # named an instruction at a time until ed4b052, a page at a time since.
    ("SBCL 1M-step recurrence", ["sbcl", "--non-interactive", "--no-userinit", "--eval",
                                 "(progn (defun r (n) (let ((s 0d0)) (dotimes (i n) "
                                 "(setf s (+ (* s 0.5d0) 1d0))) s)) (print (r 1000000)))"]),
]
BUILDS = [(f"baseline {rev}", base_fs), ("this tree", new_fs)]
qos, qos_text = hold_pm_qos()
report = os.path.join(work, "r.json")

def one(fs, cmd):
    """(wall, counted run, report MB, peak RSS MB) of one whole command."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    s = time.perf_counter()
    p = subprocess.Popen([fs, "count", "--engine", "native", "-o", report, "--"] + cmd,
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    w = time.perf_counter() - s
    if status != 0:
        sys.exit(f"{fs} on {cmd[0]}: exit status {status}")
    r = json.load(open(report))
    return w, r["engine_time_s"], os.path.getsize(report) / 1e6, usage.ru_maxrss / 1024

for line in header("flopscope report cost after the run (issue #17)", qos_text):
    print(line)
print(f"# {reps} repeats, the two builds alternating per program; wall seconds min median max")
print(f"# after = whole command - counted run (start-up before the take-over, then reading the")
print(f"# counters, attribution, the report's writing); RSS: the command's peak resident set (the")
print(f"# largest of flopscope's and the counted program's processes: ru_maxrss of wait4)")
print(f"# this tree: {now}")
print(f"# Command: benchmarks/report-cost.sh {rev} {reps}")
print()
print(f"{'program':26} {'build':18} {'whole command':>20} {'counted run':>20} {'after':>20} {'report MB':>9} {'RSS MB':>7}")
for name, cmd in SUITE:
    res = {b: [] for b, _ in BUILDS}
    for _ in range(reps):
        for b, fs in BUILDS:
            res[b].append(one(fs, cmd))
    medians = {}
    for b, _ in BUILDS:
        rows = res[b]
        whole = spread([x[0] for x in rows])
        counted = spread([x[1] for x in rows])
        after = spread([x[0] - x[1] for x in rows])
        medians[b] = after[1]
        f = lambda t: " ".join(f"{v:6.2f}" for v in t)
        print(f"{name:26} {b:18} {f(whole):>20} {f(counted):>20} {f(after):>20} "
              f"{rows[-1][2]:9.1f} {max(x[3] for x in rows):7.0f}")
    (b0, _), (b1, _) = BUILDS
    print(f"{'':26} after, median: {medians[b0]:.2f} s -> {medians[b1]:.2f} s ({medians[b1] / medians[b0]:.2f}x)")
PY
