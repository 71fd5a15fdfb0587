# numpy's ufuncs, each in a region of its own, on arrays of N elements
# (N odd: a vector loop leaves a remainder). numpy picks its loops for the
# processor it runs on (AVX-512 with masked remainders where there is
# AVX-512, AVX2 or SSE2 elsewhere, a scalar loop for strided arrays); one
# FLOP per element whichever it picks:
#   add      float64 a + b             N adds
#   mul32    float32 a * b             N multiplies
#   sqrt     float64 sqrt of the first 1,000 elements: 1,000 square roots
#            (numpy's sqrt loop computes pairs of lanes: over an odd count
#            its last SQRTPD computes one lane beyond, so an even count)
#   div32    float32 a / b             N divisions
#   max      float64 maximum(a, b)     N min/max operations
#   strided  float64 a[::3] + b[::3]   ceil(N / 3) adds
#
#   usage: python3 numpy_ufuncs.py LIBMARKS N     (kernels/jit/marks.c)
#   stdout: the first results
import ctypes
import sys

import numpy as np

marks = ctypes.CDLL(sys.argv[1])
n = int(sys.argv[2])
a = np.arange(1, n + 1, dtype=np.float64)
b = np.full(n, 0.5)
c = np.empty(n)
a32 = a.astype(np.float32)
b32 = b.astype(np.float32)
c32 = np.empty(n, dtype=np.float32)


def region(name, f):
    marks.marks_begin(name.encode())
    f()
    marks.marks_end(name.encode())


region("add", lambda: np.add(a, b, out=c))
first = [c[0]]
region("mul32", lambda: np.multiply(a32, b32, out=c32))
first.append(c32[0])
region("sqrt", lambda: np.sqrt(a[:1000], out=c[:1000]))
first.append(c[3])
region("div32", lambda: np.divide(a32, b32, out=c32))
first.append(c32[0])
region("max", lambda: np.maximum(a, b, out=c))
first.append(c[0])
region("strided", lambda: np.add(a[::3], b[::3], out=c[::3]))
first.append(c[3])
print(" ".join(repr(float(x)) for x in first))
