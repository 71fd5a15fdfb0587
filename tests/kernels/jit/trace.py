# A float loop PyPy interprets, then traces and compiles to machine code
# once it is hot (its tracing JIT: guards, a loop header, bridges), in
# region "loop".
#
#   usage: pypy3 trace.py LIBMARKS N
#
# s = s * a + b, N times: one multiply a step, interpreted or compiled, and
# what PyPy's own machinery adds (the interpreted iterations' bookkeeping,
# the tracing), the same whatever N: from one N to another the region's
# multiplies differ by exactly the difference of N.
import ctypes
import sys

marks = ctypes.CDLL(sys.argv[1])
n = int(sys.argv[2])


def recur(n, a, b):
    s = 0.0
    for _ in range(n):
        s = s * a + b
    return s


marks.marks_begin(b"loop")
r = recur(n, 0.5, 1.0)
marks.marks_end(b"loop")
print(r)
