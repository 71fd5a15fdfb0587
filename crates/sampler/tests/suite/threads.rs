use crate::common::*;

/// Two threads, each in a function of its own until 200 signals came, one
/// ending with pthread_exit (it unwinds through the thread's start: the
/// trampoline must not be there), then 200 short threads.
#[test]
fn both_threads_sampled() {
    let s = scratch();
    let exe = compile(&s.bin, "threads.c", "threads", &["-pthread"]);
    let out = run_until_signals(sampled(&exe, &[], &s.out, &[]), &s.out, 200);
    assert_ok(&out);
    let procs = read(&s.out);
    assert_eq!(procs.len(), 1, "{procs:#?}");
    let p = &procs[0];
    // The main thread, the two workers, the 200 short threads.
    assert_eq!((p.threads, p.thread_failures), (203, 0));
    let maps = p.maps_text.as_deref().expect("a maps file");
    let f = functions(&exe, maps, &["spin_a", "spin_b"]);
    let c = counts_in(p, &f);
    let both = c[0] + c[1];
    assert!(
        both as f64 >= 0.9 * p.total as f64,
        "{c:?} of {}; elsewhere {}",
        p.total,
        elsewhere(p, &f)
    );
    // The threads' shares of the samples are their shares of CPU time (as
    // the threads measured it: on a loaded machine they need not be equal).
    let text = stdout(&out);
    let mut lines = text.lines();
    let cpu: Vec<f64> = lines
        .next()
        .and_then(|l| l.strip_prefix("cpu "))
        .map(|l| l.split(' ').filter_map(|v| v.parse().ok()).collect())
        .expect("the program prints its threads' CPU times");
    let signals = p.effective_signals * both as f64 / p.total as f64;
    assert_share("spin_a", c[0], both, signals, cpu[0] / (cpu[0] + cpu[1]));

    // Each short thread's timer was deleted as it exited: the main
    // thread's is left.
    let timers = lines.next().expect("the program prints its timers");
    if timers != "timers -1" {
        assert_eq!(timers, "timers 1");
    }
}
