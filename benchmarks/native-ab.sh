#!/usr/bin/env bash
# The native engine, this tree against a baseline revision, side by side on
# general code: gcc's cc1 compiling stb_truetype.h (`gcc -O2 -c`, libstb-dev)
# and CPython summing 3M square roots. Each round runs both builds in turn
# (which goes first alternates) with and without attribution; per cell the
# counted run (the report's engine_time_s) and the whole `flopscope count`
# command, min and median over the rounds, and new/base ratios of the
# minimums and of the medians (below 1: the tree is faster).
#
# The baseline is exported with `git archive` (no worktree is added) and
# built in release under $CARGO_TARGET_DIR/native-ab/, kept between runs;
# BASE_FLOPSCOPE names a release binary of BASE_REVISION built already
# instead.
#
# Usage: benchmarks/native-ab.sh BASE_REVISION [ROUNDS]     (default 7)
#   environment: BASE_FLOPSCOPE (a built baseline binary)
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
rev="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo ' + uncommitted changes in crates/')"
out=benchmarks/results/native-ab-$(date +%Y%m%d-%H%M%S).txt
python3 - "$reps" "$base_fs" "$target/release/flopscope" "$work" \
  "$(git rev-parse --short "$base_rev")" "$rev" "$*" <<'PY' | tee "$out"
import json, os, sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, "benchmarks")
from common import header, hold_pm_qos, spread, wall

reps, base, new, work, base_rev, rev, args = int(sys.argv[1]), *sys.argv[2:8]
py = "/usr/bin/python3"
PROGRAMS = [
    ("gcc -O2 -c stb_truetype", ["gcc", "-O2", "-c", "-o", f"{work}/stb_truetype.o", f"{work}/stb_truetype.c"]),
    ("CPython 3M sqrt", [py, "-S", "-c", "import math\ns = 0.0\nfor i in range(3000000): s += math.sqrt(i)"]),
]
MODES = [("--no-attribution", ["--no-attribution"]), ("attribution", [])]
BUILDS = [("base", base), ("new", new)]
report = f"{work}/report.json"

def run(fs, flags, cmd):
    """(whole command's wall seconds, the counted run's engine_time_s)."""
    if os.path.exists(report):
        os.remove(report)
    w, rc = wall([fs, "count", "--engine", "native", *flags, "-o", report, "--", *cmd], dict(os.environ))
    r = json.load(open(report))
    if rc != 0 or not r["complete"] or r["warnings"]:
        sys.exit(f"{fs} on {cmd[0]}: exit {rc}, complete {r['complete']}, warnings {r['warnings']}")
    return w, r["engine_time_s"]

pm_qos, pm_qos_state = hold_pm_qos()
for line in header("flopscope native engine A/B", pm_qos_state):
    print(line)
print(f"# base: flopscope {base_rev}; new: flopscope {rev}; both cargo build --release")
print(f"# {reps} rounds; each round runs every program and mode under both builds in turn, which build goes")
print("# first alternating; seconds min / median. counted: the report's engine_time_s; whole: the command's wall")
print("# time. Ratios new/base of the minimums (of the medians in parentheses).")
print(f"# Command: benchmarks/native-ab.sh {args}\n")
t = {}
for r in range(reps):
    for name, cmd in PROGRAMS:
        for mode, flags in MODES:
            for b, fs in (BUILDS if r % 2 == 0 else BUILDS[::-1]):
                w, c = run(fs, flags, cmd)
                t.setdefault((name, mode, b), {"whole": [], "counted": []})
                t[(name, mode, b)]["whole"].append(w)
                t[(name, mode, b)]["counted"].append(c)
print(f"{'program':<26} {'mode':<17} {'figure':<8} {'base min/median':<16} {'new min/median':<16} new/base")
for name, _ in PROGRAMS:
    for mode, _ in MODES:
        for fig in ("counted", "whole"):
            b, n = spread(t[(name, mode, "base")][fig]), spread(t[(name, mode, "new")][fig])
            print(f"{name:<26} {mode:<17} {fig:<8} {b[0]:6.3f} {b[1]:6.3f}    {n[0]:6.3f} {n[1]:6.3f}    "
                  f"{n[0] / b[0]:.3f} ({n[1] / b[1]:.3f})")
PY
echo "Recorded in $out"
