# A Numba @njit loop, run after it is compiled and again after it is
# compiled anew, each run in a region of its own.
#
#   usage: python3 recurrence.py LIBMARKS N
#
# recur(n, a, b) computes s = s * a + b n times: a dependent chain, which
# LLVM neither vectorizes nor contracts into FMA (no fastmath): exactly
# n MULSD and n ADDSD. Regions "compiled" and "recompiled": 2n FLOP each,
# n mul and n add (fp64, scalar).
import ctypes
import sys

import numba

marks = ctypes.CDLL(sys.argv[1])
n = int(sys.argv[2])


@numba.njit
def recur(n, a, b):
    s = 0.0
    for _ in range(n):
        s = s * a + b
    return s


recur(10, 0.5, 1.0)  # compiled here, on the first call
marks.marks_begin(b"compiled")
first = recur(n, 0.5, 1.0)
marks.marks_end(b"compiled")

recur.recompile()  # new machine code for the same function
marks.marks_begin(b"recompiled")
second = recur(n, 0.5, 1.0)
marks.marks_end(b"recompiled")
print(first == second)
