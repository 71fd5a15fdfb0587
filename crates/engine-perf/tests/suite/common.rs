use flopscope_engine_perf::{event_set_named, CounterValues, EventSet, Reading};
use std::path::PathBuf;

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
