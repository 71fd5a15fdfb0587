#!/usr/bin/env bash
# Sets up and runs the whole test suite (unit, exact-count, CLI tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec cargo test --workspace --no-fail-fast "$@"
