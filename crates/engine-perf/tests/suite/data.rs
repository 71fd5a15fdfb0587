use crate::common::set;
use flopscope_engine_perf::eventset::{load_event_sets, DRAM_FILES, SET_FILES};
use flopscope_engine_perf::{
    describe, evaluate, event_set_for, event_sets, CounterValues, CpuId, PerfError, Reading,
};
use std::collections::BTreeSet;

#[test]
fn every_data_file_parses_and_is_embedded() {
    let sets = load_event_sets().expect("every embedded file parses");
    assert_eq!(sets.len(), SET_FILES.len());
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("events");
    let on_disk = |d: &std::path::Path| -> BTreeSet<String> {
        std::fs::read_dir(d)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".toml"))
            .collect()
    };
    let embedded: BTreeSet<String> = SET_FILES.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(
        on_disk(&dir),
        embedded,
        "events/*.toml and SET_FILES differ"
    );
    let embedded: BTreeSet<String> = DRAM_FILES.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(
        on_disk(&dir.join("dram")),
        embedded,
        "events/dram/*.toml and DRAM_FILES differ"
    );
    // Every DRAM source is used by some set.
    for (file, _) in DRAM_FILES {
        let name = file.trim_end_matches(".toml");
        assert!(
            sets.iter().any(|s| s.dram.iter().any(|d| d.name == name)),
            "{name} is used by no set"
        );
    }
}

#[test]
fn every_formula_evaluates() {
    for set in event_sets() {
        for value in [0u64, 1, 1000] {
            let mut c = CounterValues::default();
            for e in set
                .events
                .iter()
                .chain(set.dram.iter().flat_map(|d| d.events.iter()))
            {
                c.add(&e.name, Reading::exact(value));
            }
            for d in std::iter::once(None).chain(set.dram.iter().map(|d| Some(d.name.clone()))) {
                c.dram_source = d;
                let ev = evaluate(set, &c);
                assert!(ev.unknown.is_empty(), "{}: {:?}", set.name, ev.unknown);
                for (k, m) in ev.flop.iter().chain(&ev.info).chain(&ev.dram) {
                    assert!(m.value.is_some(), "{}: {k} did not evaluate", set.name);
                    assert!(!m.estimated, "{}: {k}", set.name);
                }
                if set.no_flop.is_none() {
                    let total = ev
                        .total
                        .count()
                        .unwrap_or_else(|| panic!("{}: no total", set.name));
                    assert_eq!(total == 0, value == 0, "{}", set.name);
                }
            }
        }
    }
}

#[test]
fn describe_lists_every_event_formula_and_caveat() {
    for set in event_sets() {
        let text = describe(set);
        for e in &set.events {
            assert!(text.contains(&e.name), "{}: {}", set.name, e.name);
        }
        for f in set.flop.iter().chain(&set.info) {
            assert!(text.contains(&f.to_string()), "{}: {f}", set.name);
        }
        for c in set.caveats.iter().chain(&set.verify) {
            assert!(text.contains(c.as_str()), "{}: {c}", set.name);
        }
    }
    let zen2 = describe(set("zen2"));
    assert!(zen2.contains("total = FpRetSseAvxOps.ALL"));
    assert!(
        zen2.contains("absent (the events cannot tell): fp64, fp32, fp16, bf16, x87"),
        "{zen2}"
    );
    assert!(describe(set("skx")).contains("fp64 = fp64.scalar + fp64.128 + fp64.256 + fp64.512"));
}

fn cpu(vendor: &str, family: u32, model: u32) -> CpuId {
    CpuId {
        vendor: vendor.into(),
        family,
        model,
        stepping: 0,
        model_name: None,
    }
}

#[test]
fn cpus_map_to_their_family() {
    let cases = [
        (cpu("GenuineIntel", 6, 0x2a), "snb"),
        (cpu("GenuineIntel", 6, 0x3e), "snb"),
        (cpu("GenuineIntel", 6, 0x3f), "hsw"),
        (cpu("GenuineIntel", 6, 0x4f), "bdw"),
        (cpu("GenuineIntel", 6, 0x9e), "skl"),
        (cpu("GenuineIntel", 6, 0x55), "skx"),
        (cpu("GenuineIntel", 6, 0x8c), "icl"),
        (cpu("GenuineIntel", 6, 0x6a), "icx"),
        (cpu("GenuineIntel", 6, 0x8f), "spr"),
        (cpu("GenuineIntel", 6, 0xcf), "spr"),
        (cpu("GenuineIntel", 6, 0xad), "gnr"),
        (cpu("GenuineIntel", 6, 0x97), "adl"),
        (cpu("GenuineIntel", 6, 0xb7), "adl"),
        (cpu("GenuineIntel", 6, 0xaa), "mtl"),
        (cpu("GenuineIntel", 6, 0xbd), "lnl"),
        (cpu("GenuineIntel", 6, 0xc6), "lnl"),
        (cpu("GenuineIntel", 6, 0xaf), "srf"),
        (cpu("GenuineIntel", 6, 0x57), "knl"),
        (cpu("AuthenticAMD", 0x17, 0x01), "zen1"),
        (cpu("HygonGenuine", 0x18, 0x00), "zen1"),
        (cpu("AuthenticAMD", 0x17, 0x31), "zen2"),
        (cpu("AuthenticAMD", 0x19, 0x01), "zen2"),
        (cpu("AuthenticAMD", 0x19, 0x21), "zen2"),
        (cpu("AuthenticAMD", 0x19, 0x11), "zen4"),
        (cpu("AuthenticAMD", 0x19, 0x61), "zen4"),
        (cpu("AuthenticAMD", 0x1a, 0x02), "zen5"),
        (cpu("ARM", 8, 0xd40), "neoverse-v1"),
        (cpu("ARM", 8, 0xd4f), "neoverse-v2"),
        (cpu("Fujitsu", 8, 0x001), "a64fx"),
    ];
    for (c, want) in cases {
        assert_eq!(
            event_set_for(&c)
                .map(|s| s.name.as_str())
                .unwrap_or_else(|e| panic!("{c}: {e}")),
            want,
            "{c}"
        );
    }
    for c in [cpu("GenuineIntel", 6, 0xbe), cpu("ARM", 8, 0xd0c)] {
        let e = event_set_for(&c).unwrap_err();
        assert!(matches!(e, PerfError::NoFlopEvents { .. }), "{c}: {e}");
        assert!(e.to_string().contains("emulate"), "{e}");
    }
    let e = event_set_for(&cpu("GenuineIntel", 6, 0x1a)).unwrap_err();
    let PerfError::UnknownCpu { ref known, .. } = e else {
        panic!("{e}")
    };
    assert!(known.iter().any(|k| k == "skx"));
    let msg = e.to_string();
    assert!(
        msg.contains("--arch") && msg.contains("model 0x1a") && msg.contains("zen4"),
        "{msg}"
    );
}

#[test]
fn no_cpu_matches_two_sets() {
    for vendor in [
        "GenuineIntel",
        "AuthenticAMD",
        "HygonGenuine",
        "ARM",
        "Fujitsu",
    ] {
        for family in [6, 8, 0x17, 0x18, 0x19, 0x1a] {
            for model in 0..0x1000 {
                let c = cpu(vendor, family, model);
                let hits: Vec<&str> = event_sets()
                    .iter()
                    .filter(|s| s.matches(&c))
                    .map(|s| s.name.as_str())
                    .collect();
                assert!(hits.len() <= 1, "{c} matches {hits:?}");
            }
        }
    }
}

#[test]
fn names_and_aliases_resolve() {
    assert_eq!(set("zen3").name, "zen2");
    assert_eq!(set("CascadeLake").name, "skx");
    assert_eq!(set("grace").name, "neoverse-v2");
    // As the peak's table spells them: spaces, dashes and underscores aside.
    assert_eq!(set("Zen 4").name, "zen4");
    assert_eq!(set("Sandy Bridge").name, "snb");
    assert_eq!(set("ICE_LAKE-SP").name, "icx");
    assert_eq!(set("Neoverse N1").name, "neoverse-n1");
    let e = flopscope_engine_perf::event_set_by_name("pentium4").unwrap_err();
    assert!(
        matches!(e, PerfError::UnknownArch { .. }) && e.to_string().contains("zen5"),
        "{e}"
    );
}

/// The caveats the issue lists are in the sets they apply to (and so in `warnings`).
#[test]
fn known_caveats_are_declared() {
    let has = |name: &str, needle: &str| {
        let s = set(name);
        assert!(
            s.caveats
                .iter()
                .chain(&s.verify)
                .any(|c| c.to_lowercase().contains(&needle.to_lowercase())),
            "{name} lacks a caveat about `{needle}`"
        )
    };
    has("snb", "overcounted");
    has("hsw", "AVX_INSTS");
    has("hsw", "FMA once");
    has("knl", "FMA is one uop");
    for s in [
        "bdw", "skl", "skx", "icl", "icx", "spr", "gnr", "adl", "mtl", "lnl",
    ] {
        has(s, "FMA and DPP counted twice");
    }
    for s in ["skx", "icl", "icx", "spr", "gnr", "knl"] {
        has(s, "masks");
    }
    for s in ["zen1", "zen2", "zen4", "zen5"] {
        has(s, "merge event");
    }
    for s in ["zen2", "zen4"] {
        has(s, "cannot split single from double");
    }
    for s in ["mtl", "lnl", "srf"] {
        has(s, "scalar SINGLE, not double");
    }
    has("zen5", "#767");
    has("zen5", "LIKWID adds the operation bits");
    for s in ["neoverse-v1", "neoverse-v2", "a64fx"] {
        has(s, "speculatively");
    }
}

#[test]
fn the_paranoid_error_names_the_level_and_the_sysctl() {
    let e = PerfError::Paranoid {
        level: Some(3),
        errno: std::io::Error::from_raw_os_error(libc::EACCES),
    };
    let msg = e.to_string();
    assert!(msg.contains("perf_event_paranoid is 3"), "{msg}");
    assert!(
        msg.contains("sudo sysctl kernel.perf_event_paranoid=2")
            && msg.contains("--engine emulate"),
        "{msg}"
    );
}
