//! `bench memory`: STREAM copy, scale, add and triad over working-set sizes
//! that fall in each cache level and in DRAM, on all cores.

use crate::buffer::Buffer;
use crate::kernels::{KernelFn, BLOCK};
use crate::progress::Progress;
use crate::spec::{self, KernelSpec, StreamOp};
use crate::team::{self, Plan};
use flopscope_machine::{
    render::human_bytes, BandwidthMeasurement, CacheLevel, Isa, Machine, Spread,
};

/// How `bench memory` counts bytes (stated in its output and the profile).
pub const BYTES_CONVENTION: &str = "bytes the kernel's instructions read and write per element, as STREAM counts them: \
copy and scale 16, add and triad 24; write-allocate reads of regular stores are not counted (non-temporal stores do not cause them); \
GB/s = 1e9 bytes/s over all threads; the working set is all arrays of all threads";

/// What to measure.
#[derive(Debug, Clone)]
pub struct MemoryOptions {
    pub threads: usize,
    pub plan: Plan,
    /// Working-set sizes in bytes; the default sweep when empty.
    pub sizes: Vec<u64>,
    /// Operations at the sizes given (all four when empty).
    pub ops: Vec<StreamOp>,
    /// The vector width; the widest the CPU has when absent.
    pub isa: Option<Isa>,
}

/// One measurement point.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub working_set: u64,
    pub ops: Vec<StreamOp>,
    /// Also run the non-temporal-store variants (sizes beyond the last cache).
    pub nontemporal: bool,
}

/// Bytes of cache level `c` that `threads` threads on distinct cores can use
/// (per-core caches add up, shared ones count once per instance reached).
pub fn capacity(c: &CacheLevel, threads: usize, cores: u32) -> u64 {
    let cores_per_instance = (cores / c.instances.max(1)).max(1) as usize;
    let reached = threads
        .div_ceil(cores_per_instance)
        .clamp(1, c.instances.max(1) as usize);
    c.size_bytes * reached as u64
}

/// The level a working set of `ws` bytes fits in: `L1`, `L2`, `L3` or `DRAM`.
pub fn level_of(ws: u64, threads: usize, machine: &Machine) -> String {
    let mut levels: Vec<&CacheLevel> = machine.caches.iter().collect();
    levels.sort_by_key(|c| c.level);
    levels
        .iter()
        .find(|c| ws <= capacity(c, threads, machine.cores))
        .map_or_else(|| "DRAM".to_string(), |c| c.name())
}

/// Bytes of all cache levels' largest capacity for `threads`.
fn last_level_bytes(machine: &Machine, threads: usize) -> u64 {
    machine
        .caches
        .iter()
        .map(|c| capacity(c, threads, machine.cores))
        .max()
        .unwrap_or(32 << 20)
}

/// Free memory, from `/proc/meminfo` `MemAvailable`.
fn available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    line.split_whitespace()
        .nth(1)?
        .parse::<u64>()
        .ok()
        .map(|kb| kb * 1024)
}

/// The DRAM working set of the default sweep: 8 times the last-level cache,
/// at least 1 GiB, at most a third of the free memory.
pub fn dram_size(machine: &Machine, threads: usize) -> u64 {
    let want = (8 * last_level_bytes(machine, threads)).max(1 << 30);
    match available_bytes() {
        Some(free) => want.min(free / 3).max(64 << 20),
        None => want,
    }
}

/// The default points: all four operations at half of each cache level (or
/// between two levels) and in DRAM; triad alone every factor of 4 from
/// 16 KiB per thread up to DRAM; non-temporal variants beyond the last cache.
pub fn default_points(machine: &Machine, threads: usize) -> Vec<Point> {
    let llc = last_level_bytes(machine, threads);
    let mut levels: Vec<&CacheLevel> = machine.caches.iter().collect();
    levels.sort_by_key(|c| c.level);
    let mut full = Vec::new();
    let mut below = 0u64;
    for c in levels {
        let cap = capacity(c, threads, machine.cores);
        let ws = if cap / 2 > below {
            cap / 2
        } else {
            (below + cap) / 2
        };
        full.push(ws);
        below = cap;
    }
    let dram = dram_size(machine, threads);
    full.push(dram);
    let mut points: Vec<Point> = full
        .iter()
        .map(|&ws| Point {
            working_set: ws,
            ops: StreamOp::ALL.to_vec(),
            nontemporal: ws > llc,
        })
        .collect();
    let mut ws = 16 * 1024 * threads as u64;
    while ws < dram {
        if !full.iter().any(|&f| f.abs_diff(ws) * 4 < f) {
            points.push(Point {
                working_set: ws,
                ops: vec![StreamOp::Triad],
                nontemporal: ws > llc,
            });
        }
        ws *= 4;
    }
    points.sort_by_key(|p| p.working_set);
    points
}

/// The widest ISA with STREAM kernels this CPU runs.
pub fn widest_isa(machine: &Machine) -> Isa {
    Isa::ALL
        .into_iter()
        .rev()
        .find(|isa| {
            StreamOp::ALL
                .iter()
                .all(|op| spec::stream(*op, *isa, false).is_some_and(|k| k.runs_on(&machine.flags)))
        })
        .unwrap_or(Isa::Scalar)
}

/// Per-thread arrays for one point: three of the copy/scale length; add and
/// triad use the first two thirds of each.
struct Arrays {
    a: Buffer,
    b: Buffer,
    c: Buffer,
}

fn elements(ws: u64, threads: usize, arrays: usize) -> usize {
    let n = ws as usize / (threads * arrays * 8);
    (n / BLOCK * BLOCK).max(BLOCK)
}

/// Runs `kernels` on shared per-thread arrays sized for `point_ws`: the
/// working set each really had and its GB/s, one figure per repetition.
fn measure_point(
    kernels: &[&KernelSpec],
    point_ws: u64,
    cpus: &[usize],
    plan: Plan,
    on_start: &(dyn Fn(usize) + Sync),
) -> Vec<(u64, Vec<f64>)> {
    let threads = cpus.len();
    let long = elements(point_ws, threads, 2);
    let fns: Vec<(crate::kernels::StreamFn, usize)> = kernels
        .iter()
        .map(|k| {
            let KernelFn::Stream(f) = k.implementation() else {
                panic!("{} is not a STREAM kernel", k.name)
            };
            (
                f,
                elements(
                    point_ws,
                    threads,
                    k.op.expect("stream kernels have an op").arrays(),
                ),
            )
        })
        .collect();
    let timed = team::run_each(
        cpus,
        plan,
        kernels.len(),
        |_| Arrays {
            a: Buffer::new(long, 0, 4.0),
            b: Buffer::new(long, 5, 1.0),
            c: Buffer::new(long, 10, 2.0),
        },
        |arr, w, sweeps| {
            let (f, n) = fns[w];
            for _ in 0..sweeps {
                // SAFETY: each array holds `long >= n` elements, aligned, n a
                // multiple of BLOCK; the CPU has the kernel's ISA (checked by the caller).
                unsafe { f(arr.a.as_mut_ptr(), arr.b.as_ptr(), arr.c.as_ptr(), n) };
            }
        },
        on_start,
    );
    kernels
        .iter()
        .zip(&fns)
        .zip(timed)
        .map(|((k, (_, n)), t)| {
            let bytes = k.bytes as f64 * *n as f64 * threads as f64 * t.count as f64;
            let ws = (n * k.op.expect("stream").arrays() * 8 * threads) as u64;
            (ws, t.seconds.iter().map(|s| bytes / s / 1e9).collect())
        })
        .collect()
}

/// Measures the points (the default sweep when `opts.sizes` is empty).
pub fn bench(
    machine: &Machine,
    opts: &MemoryOptions,
    progress: &mut dyn Progress,
) -> Vec<BandwidthMeasurement> {
    let isa = opts.isa.unwrap_or_else(|| widest_isa(machine));
    let cpus = crate::affinity::pick_cpus(opts.threads);
    let threads = cpus.len();
    let llc = last_level_bytes(machine, threads);
    let points: Vec<Point> = if opts.sizes.is_empty() {
        default_points(machine, threads)
    } else {
        let ops = if opts.ops.is_empty() {
            StreamOp::ALL.to_vec()
        } else {
            opts.ops.clone()
        };
        opts.sizes
            .iter()
            .map(|&ws| Point {
                working_set: ws,
                ops: ops.clone(),
                nontemporal: ws > llc,
            })
            .collect()
    };
    let per_point: Vec<(u64, Vec<&KernelSpec>)> = points
        .iter()
        .map(|p| {
            let mut ks = Vec::new();
            for op in &p.ops {
                for nt in [false, true] {
                    if nt && !p.nontemporal {
                        continue;
                    }
                    if let Some(k) =
                        spec::stream(*op, isa, nt).filter(|k| k.runs_on(&machine.flags))
                    {
                        ks.push(k);
                    }
                }
            }
            (p.working_set, ks)
        })
        .collect();
    progress.add(per_point.iter().map(|(_, ks)| ks.len()).sum());
    let progress = std::sync::Mutex::new(progress);
    let mut out = Vec::new();
    for (ws, ks) in &per_point {
        let on_start = |w: usize| {
            let line = format!(
                "memory: {} over {} on {} threads",
                ks[w].name,
                human_bytes(*ws),
                threads
            );
            progress.lock().unwrap().step(&line);
        };
        for (k, (actual_ws, gbs)) in ks
            .iter()
            .zip(measure_point(ks, *ws, &cpus, opts.plan, &on_start))
        {
            out.push(BandwidthMeasurement {
                kernel: k.op.expect("stream").key().to_string(),
                isa: k.isa,
                level: level_of(actual_ws, threads, machine),
                working_set_bytes: actual_ws,
                threads: threads as u32,
                nontemporal: k.nontemporal,
                gbs: Spread::of(&gbs),
            });
        }
    }
    out
}

/// Parses a size such as `1GiB`, `512MB`, `64K` or `4096` (bytes; K, M, G
/// and their -iB forms are powers of 1024, -B forms powers of 1000).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a size (examples: 64KiB, 16MiB, 1GiB, 4096)"))?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024.0 * 1024.0,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        u => {
            return Err(format!(
                "unknown unit {u:?} in {s:?} (use B, KiB, MiB, GiB, kB, MB or GB)"
            ))
        }
    };
    Ok((v * mult) as u64)
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn sizes_with_units() {
        assert_eq!(parse_bytes("1GiB"), Ok(1 << 30));
        assert_eq!(parse_bytes("1G"), Ok(1 << 30));
        assert_eq!(parse_bytes("512MB"), Ok(512_000_000));
        assert_eq!(parse_bytes("64k"), Ok(65536));
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert!(parse_bytes("1 parsec")
            .unwrap_err()
            .contains("unknown unit"));
        assert!(parse_bytes("lots").is_err());
    }
}
