#!/usr/bin/env bash
# How fast flopscope-symbols locates runtime addresses in a big binary with
# full debug info. Target: at most 1 s to load a 50 MB binary and locate
# 50,000 addresses in it.
#
# Without BINARY, generates FILES C files of 1,000 functions each (a loop
# with a static inline helper inlined into it, so DWARF has inlined frames)
# and builds them with gcc -O2 -g into one executable (FILES=75: 52 MB).
# Then runs the locate_speed example (crates/symbols/examples) RUNS times on
# ADDRESSES addresses spread evenly over the executable segment: the first
# call (loading the module), load + all addresses, and all addresses again
# (cached), each as min/median/max. The result, with the machine's metadata
# and this command, goes to benchmarks/results/.
#
# Usage: benchmarks/symbolize-speed.sh [BINARY]
#        FILES=75 ADDRESSES=50000 RUNS=3 JOBS=2 benchmarks/symbolize-speed.sh
set -euo pipefail
cd "$(dirname "$0")/.."

FILES=${FILES:-75}
ADDRESSES=${ADDRESSES:-50000}
RUNS=${RUNS:-3}
JOBS=${JOBS:-$(nproc)}
RESULTS=benchmarks/results
WORK=target/symbolize-speed
mkdir -p "$RESULTS" "$WORK"

binary=${1:-}
if [ -z "$binary" ]; then
    binary=$WORK/big-c
    if [ ! -x "$binary" ]; then
        for k in $(seq 0 $((FILES - 1))); do
            [ -f "$WORK/g$k.c" ] && continue
            for i in $(seq 0 999); do
                printf 'static inline double h_%d_%d(double x)\n{\n    return x * 1.5 + %d.0;\n}\n\n' "$k" "$i" "$i"
                printf 'double f_%d_%d(const double *v, int n)\n{\n    double s = 0;\n' "$k" "$i"
                printf '    for (int j = 0; j < n; j++) {\n        s += h_%d_%d(v[j]);\n' "$k" "$i"
                printf '        if (v[j] > %d)\n            s -= v[j] * 0.5;\n    }\n    return s;\n}\n\n' "$i"
            done >"$WORK/g$k.c"
        done
        echo "symbolize-speed: compiling $FILES files with $JOBS jobs" >&2
        seq 0 $((FILES - 1)) | xargs -P "$JOBS" -I{} sh -c \
            "[ -f $WORK/g{}.o ] || gcc -O2 -g -c $WORK/g{}.c -o $WORK/g{}.o"
        echo 'int main(void) { return 0; }' >"$WORK/main.c"
        gcc -O2 -g "$WORK/main.c" "$WORK"/g*.o -o "$binary"
    fi
fi

cargo build --release -q -p flopscope-symbols --example locate_speed
out=$RESULTS/symbolize-speed-$(date +%Y%m%d-%H%M%S).md
{
    echo "# flopscope-symbols: locate speed"
    echo
    echo "Command: \`ADDRESSES=$ADDRESSES RUNS=$RUNS benchmarks/symbolize-speed.sh ${1:-}\`"
    echo
    echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) threads"
    echo "- $(gcc --version | head -1); $(rustc --version)"
    echo
    echo '```'
    target/release/examples/locate_speed "$binary" "$ADDRESSES" "$RUNS"
    echo '```'
} | tee "$out"
echo "symbolize-speed: written to $out" >&2
