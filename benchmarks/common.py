"""Helpers shared by the benchmark scripts' inline Python (imported with
`sys.path.insert(0, "benchmarks")` from the repository's root).

- `hold_pm_qos()`: a CPU wake-up latency request of 0 for the whole run.
- `wall(cmd, env)`: wall seconds of one command, its output discarded.
- `wall_peak(cmd, env)`: the same and the command's peak resident set.
- `spread(xs)`: (min, median, max); `gm(xs)`: geometric mean.
- `machine()`: lines of machine metadata for a results header.
- `header(title, pm_qos_state)`: a results file's first lines (title and
  date, machine, the wake-up latency request `hold_pm_qos` reported).
"""
import math
import os
import sys
import platform
import signal
import statistics
import struct
import subprocess
import time


def hold_pm_qos():
    """Asks for CPU wake-up latency 0 for as long as the returned file stays
    open (the kernel's PM QoS interface, /dev/cpu_dma_latency; needs root):
    idle CPUs then stay out of deep idle states, and a thread woken on an
    idle vCPU does not wait a scheduler tick. NO_PM_QOS=1 skips it.
    Returns (file or None, a phrase for the header)."""
    if os.environ.get("NO_PM_QOS"):
        return None, "not held (NO_PM_QOS set)"
    try:
        f = open("/dev/cpu_dma_latency", "wb", buffering=0)
        f.write(struct.pack("i", 0))
        return f, "held at 0 us (/dev/cpu_dma_latency)"
    except OSError as e:
        return None, f"not held ({e.strerror}: /dev/cpu_dma_latency needs root)"


def wall(cmd, env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=None):
    """(wall seconds, exit status) of one run of cmd. With a timeout, a run
    still going then is stopped with its whole process group (an MPI
    launcher's ranks included), SIGTERM first so that launchers and
    compiler drivers remove their temporary files, and the status is None."""
    s = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=stderr, start_new_session=timeout is not None)
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        rc = None
    return time.perf_counter() - s, rc


# Runs argv[2:] as its child and writes the child's peak resident set (kB)
# on descriptor argv[1]: a small process of its own, since a child forked from
# the calling script starts with the script's resident set as its peak
# (Linux keeps the peak across fork and exec), which after a large report
# was loaded hid the command's own.
_PEAK = """import os, sys
out = int(sys.argv[1])
pid = os.fork()
if pid == 0:
    os.close(out)
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
os.write(out, str(usage.ru_maxrss).encode())
sys.exit(os.waitstatus_to_exitcode(status))
"""


def wall_peak(cmd, env):
    """(wall seconds, exit status, peak resident MB) of one run of cmd, its
    output discarded. The peak is ru_maxrss of wait4 in a small helper
    process: the largest resident set of the command's process and of the
    descendants it waited for (at least the helper's own, about 10 MB)."""
    r, w = os.pipe()
    s = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", _PEAK, str(w), *cmd], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(w,))
    os.close(w)
    rc = p.wait()
    elapsed = time.perf_counter() - s
    with os.fdopen(r) as f:
        kb = f.read()
    return elapsed, rc, int(kb) / 1024 if kb else float("nan")


def spread(xs):
    """(min, median, max)."""
    return min(xs), statistics.median(xs), max(xs)


def gm(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def machine():
    """CPU model, threads, kernel, load average: lines for a results header."""
    info = {}
    for line in open("/proc/cpuinfo"):
        k, _, v = line.partition(":")
        info.setdefault(k.strip(), v.strip())
    flags = set(info.get("flags", "").split())
    isa = [f for f in ("avx2", "fma", "avx512f") if f in flags]
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    return [
        f"cpu: {info.get('model name', '?')} (family {info.get('cpu family', '?')} model {info.get('model', '?')}), "
        f"{os.cpu_count()} threads, {' '.join(isa)}",
        f"kernel: {platform.system()} {platform.release()}; load average at start: {load}",
    ]


def header(title, pm_qos_state):
    """The first lines of a results file: `# title, date`, the machine, the
    CPU wake-up latency request."""
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return ([f"# {title}, {when}"] + [f"# {line}" for line in machine()]
            + [f"# CPU wake-up latency request: {pm_qos_state}"])
