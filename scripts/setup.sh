#!/usr/bin/env bash
# Installs what flopscope and its tests need on Debian 12 / Ubuntu: QEMU user
# mode (7.2, dynamically linked: plugin support), compilers (musl-gcc too: a
# test counts statically linked musl programs), OpenMP, MPI,
# Python 3 (the benchmarks, and a test that counts CPython), OpenBLAS (a
# test attributes cblas_dgemm's FLOP to its kernels), dwz (a symbols test
# reads DWARF that dwz compressed, as Debian's debug packages are), headless
# Chromium (a test loads the HTML report in it), numpy (a test counts its
# ufuncs, whose SIMD loops it picks by CPU), Numba, LuaJIT, OpenJDK,
# Node.js, Erlang, SBCL, PyPy and Racket (JIT compilers and VMs whose code
# the native engine must follow), Go
# (static programs whose runtime preempts goroutines with signals).
# Idempotent: installs only what is missing. Needs root or sudo.
# Usage: scripts/setup.sh [PACKAGE...]   (more Debian packages to install
# alike: a benchmark script names the programs it runs)
set -euo pipefail
need=()
for pkg in qemu-user gcc g++ gfortran libgomp1 musl-tools make openmpi-bin libopenmpi-dev python3 libopenblas-dev dwz chromium python3-numpy python3-numba luajit openjdk-17-jdk-headless nodejs golang-go erlang-base sbcl pypy3 racket "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if ((${#need[@]})); then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  echo "setup: installing ${need[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
command -v cargo >/dev/null || { echo "setup: cargo not found: install Rust (https://rustup.rs) first" >&2; exit 1; }
