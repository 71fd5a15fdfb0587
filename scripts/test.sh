#!/usr/bin/env bash
# Sets up and runs the whole test suite (unit, exact-count, CLI tests).
# Tests that need a CPU feature this machine lacks say so as they run
# ("SKIPPED <test>: needs the CPU feature ..."); the list is printed again
# at the end. FLOPSCOPE_HIDE_CPU_FEATURES=avx512f runs the suite as on a
# processor without those features; on a processor with AVX-512, the
# native engine's and the JIT tests run a second time so (what numpy,
# OpenBLAS and the JITs do where AVX-512 is missing is checked here too).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
skipped="${CARGO_TARGET_DIR:-target}/tmp/skipped-for-cpu.txt"
list_skipped() {
  if [ -s "$skipped" ]; then
    echo "Skipped for a missing CPU feature$1 ($(wc -l <"$skipped") tests; they passed without checking anything):"
    sed 's/^/  /' "$skipped"
  fi
  rm -f "$skipped"
}
rm -f "$skipped"
status=0
cargo test --workspace --no-fail-fast "$@" || status=$?
list_skipped ""
if [ $# -eq 0 ] && [ -z "${FLOPSCOPE_HIDE_CPU_FEATURES:-}" ] && grep -qw avx512f /proc/cpuinfo; then
  echo "Again with AVX-512 hidden (FLOPSCOPE_HIDE_CPU_FEATURES=avx512f): the native engine's and the JIT tests"
  FLOPSCOPE_HIDE_CPU_FEATURES=avx512f cargo test -p flopscope --test tests --no-fail-fast -- native:: jit:: || status=$?
  list_skipped " with AVX-512 hidden"
fi
exit "$status"
