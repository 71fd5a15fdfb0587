use crate::common::*;

/// work3 does three times work1's work, alternating, until 250 signals came
/// (the test waits for them: the kernel checks CPU timers on its tick, 250
/// times a second of CPU time on a 250 Hz kernel, fewer when the machine is
/// loaded); at least 200 are asked for.
#[test]
fn three_to_one() {
    let s = scratch();
    let exe = compile(&s.bin, "ratio.c", "ratio", &[]);
    let out = run_until_signals(sampled(&exe, &["until-usr1"], &s.out, &[]), &s.out, 250);
    assert_ok(&out);
    let procs = read(&s.out);
    assert_eq!(procs.len(), 1, "{procs:#?}");
    let p = &procs[0];
    assert!(p.exited && !p.handler_replaced && p.dropped == 0);
    assert_eq!(p.interval_s, 1e-3);
    assert!(p.signals >= 200, "only {} signals", p.signals);

    let maps = p.maps_text.as_deref().expect("a maps file");
    let f = functions(&exe, maps, &["work3", "work1"]);
    let c = counts_in(p, &f);
    let both = c[0] + c[1];
    // Nearly all the time is in the two functions.
    assert!(
        both as f64 >= 0.9 * p.total as f64,
        "{c:?} of {}; elsewhere {}",
        p.total,
        elsewhere(p, &f)
    );
    let signals = p.effective_signals * both as f64 / p.total as f64;
    assert_share("work3", c[0], both, signals, 0.75);
    assert_adds_up(p);
}

/// Counts are in intervals: they add up to the process's CPU time, but for
/// the loader's work before the constructor and the time since the last
/// signal (a signal reports the intervals before it).
fn assert_adds_up(p: &flopscope_sampler::ProcessSamples) {
    let cpu = p.cpu_time_s.expect("exited, so the CPU time is known");
    let sampled = (p.total + p.dropped) as f64 * p.interval_s;
    let per_signal = sampled / p.signals as f64;
    assert!(
        sampled <= cpu + 0.002 && sampled >= cpu - 0.01 - 0.02 * cpu - 4.0 * per_signal,
        "sampled {sampled:.3} s in {} signals, CPU time {cpu:.3} s",
        p.signals
    );
}

/// The rate asked for sets the interval; counts still add up to CPU time.
#[test]
fn other_rate() {
    let s = scratch();
    let exe = compile(&s.bin, "ratio.c", "ratio", &[]);
    let hz = [(flopscope_sampler::HZ_ENV, "100")];
    let out = run(sampled(&exe, &["0.5"], &s.out, &hz));
    assert_ok(&out);
    let p = &read(&s.out)[0];
    assert_eq!(p.interval_s, 1e-2);
    assert_adds_up(p);
}

/// A file with room for 10 records: 10 signals kept, the rest counted as
/// dropped, kept and dropped adding up to the CPU time.
#[test]
fn full_file_counts_drops() {
    let s = scratch();
    let exe = compile(&s.bin, "ratio.c", "ratio", &[]);
    let room = [(flopscope_sampler::CAPACITY_ENV, "10")];
    let out = run(sampled(&exe, &["0.3"], &s.out, &room));
    assert_ok(&out);
    let p = &read(&s.out)[0];
    assert_eq!(p.signals, 10);
    assert!(p.dropped > 0);
    assert_adds_up(p);
}
