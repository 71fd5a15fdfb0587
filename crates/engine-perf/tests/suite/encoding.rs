use crate::common::fixture;
use flopscope_engine_perf::eventset::{Encoding, Event};
use flopscope_engine_perf::sysfs::{
    find_pmus, parse_terms, ConfigWord, FieldLayout, PmuFormat, SysfsPmu,
};
use flopscope_engine_perf::{event_sets, EventSet};
use std::path::PathBuf;

fn layout(s: &str) -> FieldLayout {
    FieldLayout::parse(s).unwrap()
}

fn format(fields: &[(&str, &str)]) -> PmuFormat {
    PmuFormat {
        fields: fields
            .iter()
            .map(|(n, l)| (n.to_string(), layout(l)))
            .collect(),
    }
}

#[test]
fn format_strings_parse() {
    assert_eq!(
        layout("config:0-7\n"),
        FieldLayout {
            word: ConfigWord::Config,
            ranges: vec![(0, 7)]
        }
    );
    assert_eq!(layout("config:0-7,32-35").ranges, vec![(0, 7), (32, 35)]);
    assert_eq!(layout("config1:0-31").word, ConfigWord::Config1);
    assert_eq!(
        layout("config:21"),
        FieldLayout {
            word: ConfigWord::Config,
            ranges: vec![(21, 21)]
        }
    );
    assert_eq!(layout("config:0-7,32-35,59-60").width(), 14);
    for bad in [
        "0-7",
        "config:7-0",
        "config:0-64",
        "config3:0-7",
        "config:a-b",
    ] {
        assert!(FieldLayout::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn split_fields_take_the_low_bits_first() {
    let amd = format(&[("event", "config:0-7,32-35"), ("umask", "config:8-15")]);
    // AMD's merge event PMCx0FFF: 0xff in bits 0-7, 0xf in bits 32-35.
    assert_eq!(
        amd.encode(&parse_terms("event=0x0fff").unwrap())
            .unwrap()
            .config,
        0xF_0000_00FF
    );
    assert_eq!(
        amd.encode(&parse_terms("event=0x03,umask=0xff").unwrap())
            .unwrap()
            .config,
        0xFF03
    );
    // The F17h data fabric: 14 bits in three pieces; 0x1c7 -> 0xc7 | 1 << 32, 0x3fff -> all three full.
    let df = format(&[
        ("event", "config:0-7,32-35,59-60"),
        ("umask", "config:8-15"),
    ]);
    assert_eq!(
        df.encode(&parse_terms("event=0x1c7,umask=0x38").unwrap())
            .unwrap()
            .config,
        0x1_0000_38C7
    );
    assert_eq!(
        df.encode(&parse_terms("event=0x3fff").unwrap())
            .unwrap()
            .config,
        (0x3 << 59) | (0xF << 32) | 0xFF
    );
    // Fields in config1, single bits, and a bare term meaning 1.
    let f = format(&[
        ("event", "config:0-7"),
        ("edge", "config:18"),
        ("filter", "config1:0-31"),
    ]);
    let raw = f
        .encode(&parse_terms("event=0x3c,edge,filter=0xdead").unwrap())
        .unwrap();
    assert_eq!((raw.config, raw.config1, raw.config2), (0x4003c, 0xdead, 0));
    // Intel values from the reference: config = umask << 8 | event.
    let intel = format(&[
        ("event", "config:0-7"),
        ("umask", "config:8-15"),
        ("inv", "config:23"),
        ("cmask", "config:24-31"),
    ]);
    for (terms, want) in [
        ("event=0xc7,umask=0x10", 0x10C7),
        ("event=0x10,umask=0x80", 0x8010),
        ("event=0xc6,umask=0x07", 0x07C6),
        ("event=0xcf,umask=0x10", 0x10CF),
        ("event=0xc8,umask=0x03", 0x03C8),
    ] {
        assert_eq!(
            intel.encode(&parse_terms(terms).unwrap()).unwrap().config,
            want,
            "{terms}"
        );
    }
}

#[test]
fn encoding_errors_name_the_field() {
    let f = format(&[("event", "config:0-7"), ("rdwrmask", "config:8-9")]);
    let e = f.encode(&parse_terms("event=0x100").unwrap()).unwrap_err();
    assert!(e.contains("event=0x100") && e.contains("8 bits"), "{e}");
    let e = f.encode(&parse_terms("rdwrmask=4").unwrap()).unwrap_err();
    assert!(e.contains("2 bits"), "{e}");
    let e = f.encode(&parse_terms("umask=1").unwrap()).unwrap_err();
    assert!(
        e.contains("no `umask` field") && e.contains("event, rdwrmask"),
        "{e}"
    );
    assert!(parse_terms("event=zz").is_err());
}

/// The fixture trees to look for an event's PMU in, by the set's vendor.
fn fixtures_for(set: &EventSet) -> Vec<PathBuf> {
    let names: &[&str] = match set.cpus[0].vendor.as_str() {
        "GenuineIntel" => &["sysfs-skx", "sysfs-adl", "sysfs-skl"],
        "AuthenticAMD" | "HygonGenuine" => &["sysfs-zen2", "sysfs-zen4"],
        _ => &["sysfs-arm"],
    };
    names.iter().map(|n| crate::common::fixture(n)).collect()
}

fn check_event(set: &EventSet, e: &Event, checked: &mut usize) {
    let Encoding::Fields(terms) = &e.encoding else {
        assert!(
            e.raw.is_none(),
            "{}: {} has a raw code but no fields",
            set.name,
            e.name
        );
        return;
    };
    let raw = e
        .raw
        .unwrap_or_else(|| panic!("{}: {} has no reference encoding", set.name, e.name));
    let root = fixtures_for(set)
        .into_iter()
        .find(|r| !find_pmus(r, &e.pmu).is_empty())
        .unwrap_or_else(|| panic!("{}: no fixture has PMU {:?}", set.name, e.pmu));
    for name in find_pmus(&root, &e.pmu) {
        let pmu = SysfsPmu::load(&root, &name).unwrap();
        let got = pmu
            .format
            .encode(terms)
            .unwrap_or_else(|why| panic!("{}: {} on {name}: {why}", set.name, e.name));
        assert_eq!(
            got.config,
            raw,
            "{}: {} on {name} ({})",
            set.name,
            e.name,
            root.display()
        );
        assert_eq!((got.config1, got.config2), (0, 0));
        *checked += 1;
    }
}

#[test]
fn every_event_encodes_to_the_reference_value() {
    let mut checked = 0;
    for set in event_sets() {
        for e in &set.events {
            check_event(set, e, &mut checked);
        }
        for d in &set.dram {
            for e in &d.events {
                check_event(set, e, &mut checked);
            }
        }
    }
    assert!(checked > 150, "only {checked} encodings checked");
}

#[test]
fn sysfs_reader_reads_type_format_cpumask_and_named_events() {
    let root = fixture("sysfs-skx");
    let imc = SysfsPmu::load(&root, "uncore_imc_1").unwrap();
    assert_eq!(imc.type_, 14);
    assert_eq!(imc.cpumask, Some(vec![0, 28]));
    assert_eq!(imc.format.fields["thresh"], layout("config:24-31"));
    let cas = imc.named_event("cas_count_read").unwrap();
    assert_eq!(
        cas.terms,
        vec![("event".to_string(), 4), ("umask".to_string(), 3)]
    );
    assert_eq!(cas.bytes_per_count(), Some(64.0));
    assert!(imc.named_event("nope").is_none());
    assert_eq!(
        find_pmus(&root, &["uncore_imc_*".to_string()]),
        vec!["uncore_imc_0", "uncore_imc_1"]
    );
    // `*` stands for digits only: the free-running counters are not iMC channels.
    assert!(find_pmus(&fixture("sysfs-adl"), &["uncore_imc_*".to_string()]).is_empty());
    let atom = SysfsPmu::load(&fixture("sysfs-adl"), "cpu_atom").unwrap();
    assert_eq!(
        (atom.type_, atom.cpus.as_deref()),
        (10, Some(&[16, 17, 18, 19, 20, 21, 22, 23][..]))
    );
    assert!(SysfsPmu::load(&root, "cpu_core").is_err());
}
