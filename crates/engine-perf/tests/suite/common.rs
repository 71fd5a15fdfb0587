use flopscope_engine_perf::{event_set_named, CounterValues, EventSet, Reading};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

/// Held by every test that starts a process. After its program ends, a run
/// waits for every child this process has and reaps it
/// (`orphans::wait_all`: flopscope counts one program a process and waits
/// for whatever it left running). Tests sharing this process take turns,
/// or one run would reap another test's child from under it (seen: a run's
/// own `waitpid` failed with ECHILD).
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub fn set(name: &str) -> &'static EventSet {
    event_set_named(name).unwrap_or_else(|| panic!("no event set {name}"))
}

/// Exact readings: the given events with their values, every other core event 0.
pub fn counts(set: &EventSet, given: &[(&str, u64)]) -> CounterValues {
    let mut c = CounterValues::default();
    for (name, v) in given {
        assert!(
            set.event(name).is_some()
                || set
                    .dram
                    .iter()
                    .any(|d| d.events.iter().any(|e| e.name == *name)),
            "{name} is not in {}",
            set.name
        );
        c.add(name, Reading::exact(*v));
    }
    for e in &set.events {
        if !c.readings.contains_key(&e.name) {
            c.add(&e.name, Reading::exact(0));
        }
    }
    c
}
