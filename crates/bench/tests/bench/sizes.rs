use flopscope_bench::memory::{capacity, default_points, level_of};
use flopscope_machine::{CacheLevel, Machine};

/// A 2-core Zen 4 guest as this project's machines report it.
fn genoa_guest() -> Machine {
    let mut m = Machine::from_sources(None, None, std::path::Path::new("/nonexistent"));
    (m.cores, m.threads, m.sockets) = (2, 2, 1);
    let c = |level, size_bytes, instances, cpus_per_instance| CacheLevel {
        level,
        kind: if level == 1 {
            "data".into()
        } else {
            "unified".into()
        },
        size_bytes,
        instances,
        cpus_per_instance,
    };
    m.caches = vec![
        c(1, 32 << 10, 2, 1),
        c(2, 1 << 20, 2, 1),
        c(3, 32 << 20, 1, 2),
    ];
    m
}

#[test]
fn private_caches_add_up_and_shared_ones_do_not() {
    let m = genoa_guest();
    assert_eq!(capacity(&m.caches[0], 2, 2), 64 << 10);
    assert_eq!(capacity(&m.caches[0], 1, 2), 32 << 10);
    assert_eq!(capacity(&m.caches[2], 2, 2), 32 << 20);
    // Eight cores per L3 (one CCX), 16 threads reach two instances.
    let ccx = CacheLevel {
        level: 3,
        kind: "unified".into(),
        size_bytes: 32 << 20,
        instances: 12,
        cpus_per_instance: 16,
    };
    assert_eq!(capacity(&ccx, 16, 96), 64 << 20);
}

#[test]
fn levels_of_working_sets() {
    let m = genoa_guest();
    assert_eq!(level_of(48 << 10, 2, &m), "L1");
    assert_eq!(level_of(48 << 10, 1, &m), "L2");
    assert_eq!(level_of(1 << 20, 2, &m), "L2");
    assert_eq!(level_of(16 << 20, 2, &m), "L3");
    assert_eq!(level_of(1 << 30, 2, &m), "DRAM");
}

#[test]
fn the_default_sweep_has_every_level_and_dram() {
    let m = genoa_guest();
    let pts = default_points(&m, 2);
    let levels: Vec<String> = pts
        .iter()
        .filter(|p| p.ops.len() == 4)
        .map(|p| level_of(p.working_set, 2, &m))
        .collect();
    assert_eq!(levels, ["L1", "L2", "L3", "DRAM"]);
    assert!(pts.windows(2).all(|w| w[0].working_set < w[1].working_set));
    assert!(pts
        .iter()
        .all(|p| p.nontemporal == (p.working_set > 32 << 20)));
    assert!(pts.len() >= 8, "{pts:?}");
}
