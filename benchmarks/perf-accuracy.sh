#!/usr/bin/env bash
# Accuracy of the perf engine (hardware counters) against the emulate engine (exact
# counts) on the test kernels: builds tests/kernels/*.c with gcc -O2 -mavx2 -mfma,
# counts each with both engines and prints the perf/emulate FLOP ratio per kernel,
# for the event set the perf engine picks on this CPU (1.000 = exact agreement).
#
# Usage: benchmarks/perf-accuracy.sh [--dry-run]
#   --dry-run  build the kernels and print the commands, count nothing
#   env: FLOPSCOPE (binary; default: cargo build --release), N (default 4096),
#        REPS (default 200), MATMUL_N and MATMUL_REPS (default 96 and 10)
# Writes benchmarks/results/perf-accuracy-<date>.txt. On a machine without hardware
# counters (a VM without a virtual PMU) it says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
dry=false; [ "${1:-}" = --dry-run ] && dry=true
N=${N:-4096}; REPS=${REPS:-200}; MATMUL_N=${MATMUL_N:-96}; MATMUL_REPS=${MATMUL_REPS:-10}
cflags="-O2 -mavx2 -mfma -fno-math-errno"
devices=/sys/bus/event_source/devices

has_cpu_pmu() {
  local d
  for d in "$devices"/cpu "$devices"/cpu_core "$devices"/armv8_* "$devices"/armv9_*; do
    [ -d "$d/format" ] && return 0
  done
  return 1
}

if ! $dry && ! has_cpu_pmu; then
  echo "perf-accuracy: this machine has no hardware performance counters: $devices lists only $(ls "$devices" 2>/dev/null | xargs echo)."
  why=$(dmesg 2>/dev/null | grep -m1 -i 'PMU not available' | sed 's/^\[[^]]*\] //' || true)
  [ -n "$why" ] && echo "perf-accuracy: the kernel log says: $why"
  echo "perf-accuracy: nothing to compare. Run this on bare metal, or in a VM with a virtual PMU (QEMU/KVM: -cpu host,pmu=on)."
  exit 0
fi

fs=${FLOPSCOPE:-}
if [ -z "$fs" ]; then cargo build --release -q -p flopscope; fs=target/release/flopscope; fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# A field of a JSON report: jget FILE 'python expression on r'
jget() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); v=($2); print('' if v is None else v)" "$1"; }

set_name=unknown
if ! $dry; then
  if ! "$fs" count --engine perf --format json -o "$work/probe.json" -- true 2>"$work/probe.err"; then
    if grep -q -e 'no hardware performance counters' -e 'perf_event_paranoid' -e 'no event set' -e 'cannot count FLOP' "$work/probe.err"; then
      sed 's/^/perf-accuracy: /' "$work/probe.err"
      echo "perf-accuracy: nothing to compare on this machine."
      exit 0
    fi
    cat "$work/probe.err" >&2
    exit 1
  fi
  set_name=$(jget "$work/probe.json" "next((w.split('\`')[1] for w in r['warnings'] if w.startswith('counted with hardware event set')), 'unknown')")
fi

# The arguments of a kernel from its header's `usage:` line (N, REPS placeholders).
kernel_args() {
  local src=$1 name words w out=()
  name=$(basename "$src" .c)
  words=$(sed -n 's/.*usage: *[^ ]* *//p' "$src" | head -1)
  for w in $words; do
    case $w in
      N) if [ "$name" = matmul ]; then out+=("$MATMUL_N"); else out+=("$N"); fi ;;
      REPS) if [ "$name" = matmul ]; then out+=("$MATMUL_REPS"); else out+=("$REPS"); fi ;;
      '('* | build:*) break ;;
      *) return 1 ;;
    esac
  done
  echo "${out[*]:-}"
}

out=benchmarks/results/perf-accuracy-$(date +%Y%m%d-%H%M%S).txt
$dry && out=/dev/null
mkdir -p benchmarks/results
{
  echo "# flopscope perf engine vs emulate engine, $(date -u +%FT%TZ)"
  echo "# cpu: $(grep -m1 -e 'model name' -e 'CPU part' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) threads; event set: $set_name"
  echo "# kernels: tests/kernels/*.c, gcc $cflags; N=$N REPS=$REPS MATMUL_N=$MATMUL_N MATMUL_REPS=$MATMUL_REPS"
  echo "# command: benchmarks/perf-accuracy.sh"
  printf '%-12s %-10s %-10s %14s %14s %10s %10s %10s  %s\n' kernel args set emulate_flop perf_flop perf/emu fp64 fp32 note
  for src in tests/kernels/*.c; do
    name=$(basename "$src" .c)
    extra=""; grep -q '#pragma omp' "$src" && extra="-fopenmp"
    if ! gcc $cflags $extra -Itests/kernels -o "$work/$name" "$src" -lm 2>"$work/$name.build"; then
      printf '%-12s %-10s %-10s %14s %14s %10s %10s %10s  %s\n' "$name" - "$set_name" - - - - - "does not build with $cflags"
      continue
    fi
    if ! args=$(kernel_args "$src"); then
      printf '%-12s %-10s %-10s %14s %14s %10s %10s %10s  %s\n' "$name" - "$set_name" - - - - - "usage line not understood"
      continue
    fi
    # shellcheck disable=SC2086 # args are words
    perf_cmd=("$fs" count --engine perf --format json -o "$work/$name.perf.json" -- "$work/$name" $args)
    # shellcheck disable=SC2086
    emu_cmd=("$fs" count --engine emulate --no-native --format json -o "$work/$name.emu.json" -- "$work/$name" $args)
    if $dry; then
      echo "$name: ${perf_cmd[*]}"
      echo "$name: ${emu_cmd[*]}"
      continue
    fi
    "${perf_cmd[@]}" >/dev/null 2>"$work/$name.perf.err" || true
    "${emu_cmd[@]}" >/dev/null 2>"$work/$name.emu.err" || true
    if [ ! -s "$work/$name.perf.json" ] || [ ! -s "$work/$name.emu.json" ]; then
      printf '%-12s %-10s %-10s %14s %14s %10s %10s %10s  %s\n' "$name" "${args// /,}" "$set_name" - - - - - "no report: $(head -c 120 "$work/$name.perf.err" "$work/$name.emu.err" | tr '\n' ' ')"
      continue
    fi
    ratio() { # ratio KEY: perf/emulate of flop[KEY], or - when either is absent or emulate is 0
      python3 - "$work/$name.perf.json" "$work/$name.emu.json" "$1" <<'PY'
import json, sys
p, e = (json.load(open(f))["flop"].get(sys.argv[3]) for f in sys.argv[1:3])
print("-" if p is None or not e else f"{p / e:.3f}")
PY
    }
    ef=$(jget "$work/$name.emu.json" "r['flop']['total']")
    pf=$(jget "$work/$name.perf.json" "r['flop']['total']")
    note=$(jget "$work/$name.perf.json" "'multiplexed' if any(w.startswith('estimated:') for w in r['warnings']) else ('incomplete' if not r['complete'] else '')")
    printf '%-12s %-10s %-10s %14s %14s %10s %10s %10s  %s\n' "$name" "${args// /,}" "$set_name" "$ef" "$pf" "$(ratio total)" "$(ratio fp64)" "$(ratio fp32)" "$note"
  done
} | tee "$out"
