#!/usr/bin/env bash
# Sets up, builds flopscope, and counts the bundled example (a triad).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release -p flopscope
mkdir -p target/example
gcc -O2 -mavx2 -mfma -o target/example/triad examples/triad.c
exec target/release/flopscope count -- target/example/triad 1000000 200
