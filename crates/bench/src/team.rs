//! Running kernels on pinned threads in lockstep and timing them.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// A spinning barrier: the pinned threads leave it within nanoseconds of
/// each other, where a blocking barrier (futex wake-ups, an interrupt per
/// thread under a hypervisor) would let them start a timed repetition tens
/// of microseconds apart. It yields after a while, so that more threads than
/// CPUs still make progress.
struct SpinBarrier {
    n: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    fn new(n: usize) -> SpinBarrier {
        SpinBarrier {
            n,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::AcqRel);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            if spins < 1 << 20 {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// How long and how often to measure.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Timed repetitions.
    pub reps: usize,
    /// Seconds one repetition should last.
    pub rep_seconds: f64,
}

impl Default for Plan {
    fn default() -> Plan {
        Plan {
            reps: 5,
            rep_seconds: 0.05,
        }
    }
}

/// What one measurement took: the work count of one repetition and the wall
/// time of each repetition (from a common start to the last thread's end).
#[derive(Debug, Clone, Default)]
pub struct Timed {
    pub count: u64,
    pub seconds: Vec<f64>,
}

/// Runs `works` measurements on one thread per CPU of `cpus`, each thread
/// pinned and with its own `init(thread index)` state (allocated and first
/// touched on its own CPU), kept across the measurements.
///
/// Measurement `w` runs `work(state, w, count)` on every thread at once. Its
/// count is calibrated (growing from 1, which also warms up caches and
/// clocks) until a repetition lasts 20 ms, then scaled to `plan.rep_seconds`;
/// then `plan.reps` repetitions are timed. `on_start(w)` is called (on the
/// first thread) as measurement `w` begins.
pub fn run_each<S, I, W, P>(
    cpus: &[usize],
    plan: Plan,
    works: usize,
    init: I,
    work: W,
    on_start: P,
) -> Vec<Timed>
where
    I: Fn(usize) -> S + Sync,
    W: Fn(&mut S, usize, u64) + Sync,
    P: Fn(usize) + Sync,
{
    let barrier = SpinBarrier::new(cpus.len().max(1));
    let next = AtomicU64::new(1);
    let done = AtomicBool::new(false);
    let results = Mutex::new(vec![Timed::default(); works]);
    std::thread::scope(|scope| {
        for (tid, cpu) in cpus.iter().copied().enumerate() {
            let (barrier, next, done, results) = (&barrier, &next, &done, &results);
            let (init, work, on_start) = (&init, &work, &on_start);
            scope.spawn(move || {
                crate::affinity::pin_current_thread(cpu);
                let mut state = init(tid);
                let lead = tid == 0;
                for w in 0..works {
                    if lead {
                        on_start(w);
                        next.store(1, Ordering::SeqCst);
                        done.store(false, Ordering::SeqCst);
                    }
                    barrier.wait();
                    // Calibrate.
                    loop {
                        let count = next.load(Ordering::SeqCst);
                        barrier.wait();
                        let t = Instant::now();
                        work(&mut state, w, count);
                        barrier.wait();
                        if lead {
                            let dt = t.elapsed().as_secs_f64();
                            if dt >= 0.02 || count >= 1 << 40 {
                                let scaled =
                                    (count as f64 * plan.rep_seconds / dt.max(1e-9)).ceil() as u64;
                                next.store(scaled.max(1), Ordering::SeqCst);
                                done.store(true, Ordering::SeqCst);
                            } else {
                                let factor = if dt < 0.002 { 8 } else { 2 };
                                next.store(count * factor, Ordering::SeqCst);
                            }
                        }
                        barrier.wait();
                        if done.load(Ordering::SeqCst) {
                            break;
                        }
                    }
                    let count = next.load(Ordering::SeqCst);
                    let mut seconds = Vec::with_capacity(plan.reps);
                    for _ in 0..plan.reps {
                        barrier.wait();
                        let t = Instant::now();
                        work(&mut state, w, count);
                        barrier.wait();
                        seconds.push(t.elapsed().as_secs_f64());
                    }
                    if lead {
                        results.lock().unwrap()[w] = Timed { count, seconds };
                    }
                    // Everyone has read `next` before the lead resets it.
                    barrier.wait();
                }
            });
        }
    });
    results.into_inner().unwrap()
}

/// One measurement: [`run_each`] with a single work.
pub fn run<S, I, W>(cpus: &[usize], plan: Plan, init: I, work: W) -> Timed
where
    I: Fn(usize) -> S + Sync,
    W: Fn(&mut S, u64) + Sync,
{
    run_each(cpus, plan, 1, init, |s, _, c| work(s, c), |_| {})
        .pop()
        .unwrap_or_default()
}
