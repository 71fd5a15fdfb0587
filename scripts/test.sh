#!/usr/bin/env bash
# Sets up and runs the whole test suite (unit, exact-count, CLI tests).
# Tests that need a CPU feature this machine lacks say so as they run
# ("SKIPPED <test>: needs the CPU feature ..."); the list is printed again
# at the end. FLOPSCOPE_HIDE_CPU_FEATURES=avx512f runs the suite as on a
# processor without those features.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
skipped="${CARGO_TARGET_DIR:-target}/tmp/skipped-for-cpu.txt"
rm -f "$skipped"
status=0
cargo test --workspace --no-fail-fast "$@" || status=$?
if [ -s "$skipped" ]; then
  echo "Skipped for a missing CPU feature ($(wc -l <"$skipped") tests; they passed without checking anything):"
  sed 's/^/  /' "$skipped"
fi
exit "$status"
