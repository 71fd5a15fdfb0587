use crate::common::{fixture, set};
use flopscope_engine_perf::{plan, Num, PerfError, Scope};

#[test]
fn skylake_x_uses_the_kernels_named_cas_events_on_each_socket() {
    let p = plan(set("skx"), &fixture("sysfs-skx"), true).unwrap();
    assert_eq!(p.dram_source.as_deref(), Some("intel-imc-snbep"));
    let core: Vec<_> = p
        .opens
        .iter()
        .filter(|o| o.scope == Scope::Thread)
        .collect();
    assert_eq!(core.len(), 9); // 8 FP_ARITH + instructions
    let d256 = core
        .iter()
        .find(|o| o.event == "FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE")
        .unwrap();
    assert_eq!(
        (
            d256.type_,
            d256.raw.config,
            d256.cpu,
            d256.zero_when_not_run
        ),
        (4, 0x10c7, -1, false)
    );
    let ins = core.iter().find(|o| o.event == "INSTRUCTIONS").unwrap();
    assert_eq!((ins.type_, ins.raw.config), (0, 1)); // PERF_TYPE_HARDWARE, instructions
                                                     // 2 iMC channels x 2 sockets x read and write.
    let rd: Vec<_> = p
        .opens
        .iter()
        .filter(|o| o.event == "UNC_M_CAS_COUNT.RD")
        .collect();
    assert_eq!(rd.len(), 4);
    assert!(rd
        .iter()
        .all(|o| o.raw.config == 0x0304 && o.origin == "sysfs events/cas_count_read"));
    assert_eq!(
        rd.iter()
            .map(|o| (o.pmu.as_str(), o.type_, o.cpu))
            .collect::<Vec<_>>(),
        [
            ("uncore_imc_0", 13, 0),
            ("uncore_imc_0", 13, 28),
            ("uncore_imc_1", 14, 0),
            ("uncore_imc_1", 14, 28)
        ]
    );
    assert_eq!(
        rd[0].scale,
        Some(Num::Exact(64)),
        "6.103515625e-5 MiB is 64 bytes"
    );
    let no_dram = plan(set("skx"), &fixture("sysfs-skx"), false).unwrap();
    assert!(
        no_dram.dram_source.is_none() && no_dram.opens.iter().all(|o| o.scope == Scope::Thread)
    );
}

#[test]
fn hybrid_pmus_get_their_own_type_and_count_zero_where_the_program_never_ran() {
    let p = plan(set("mtl"), &fixture("sysfs-adl"), true).unwrap();
    let flops = p
        .opens
        .iter()
        .find(|o| o.event == "FP_FLOPS_RETIRED.FP64")
        .unwrap();
    assert_eq!(
        (
            flops.pmu.as_str(),
            flops.type_,
            flops.raw.config,
            flops.zero_when_not_run
        ),
        ("cpu_atom", 10, 0x01c8, true)
    );
    let arith = p
        .opens
        .iter()
        .find(|o| o.event == "FP_ARITH_INST_RETIRED.SCALAR_DOUBLE")
        .unwrap();
    assert_eq!(
        (arith.pmu.as_str(), arith.type_, arith.raw.config),
        ("cpu_core", 4, 0x01c7)
    );
    // Generic events name the hybrid PMU in config bits 32-63.
    let atom = p
        .opens
        .iter()
        .find(|o| o.event == "INSTRUCTIONS.ATOM")
        .unwrap();
    assert_eq!((atom.type_, atom.raw.config), (0, (10 << 32) | 1));
    // DRAM from the free-running counters' named events.
    assert_eq!(
        p.dram_source.as_deref(),
        Some("intel-imc-client-free-running")
    );
    let rd = p
        .opens
        .iter()
        .find(|o| o.event == "UNC_IMC.DATA_READ")
        .unwrap();
    assert_eq!((rd.raw.config, rd.cpu), (0x20ff, 0));
}

#[test]
fn hybrid_set_on_a_machine_without_e_cores() {
    // The same family with E-cores off exposes one `cpu` PMU: P-core events go there,
    // E-core events count 0.
    let p = plan(set("adl"), &fixture("sysfs-skl"), true).unwrap();
    assert!(p
        .opens
        .iter()
        .filter(|o| o.scope == Scope::Thread)
        .all(|o| o.pmu == "cpu"));
    assert_eq!(p.absent, vec!["INSTRUCTIONS.ATOM"]);
    // Client DRAM from the table: `uncore_imc` has no named events in this fixture.
    assert_eq!(p.dram_source.as_deref(), Some("intel-imc-client"));
    let wr = p
        .opens
        .iter()
        .find(|o| o.event == "UNC_IMC.DATA_WRITES")
        .unwrap();
    assert_eq!(
        (wr.raw.config, wr.origin.as_str(), wr.scale),
        (0x02, "table", Some(Num::Exact(64)))
    );
}

#[test]
fn amd_split_event_fields_in_a_real_layout() {
    let p = plan(set("zen2"), &fixture("sysfs-zen2"), true).unwrap();
    let ch7: Vec<_> = p
        .opens
        .iter()
        .filter(|o| o.event == "DRAM_CHANNEL_DATA_CONTROLLER_7")
        .collect();
    assert_eq!(
        ch7.iter()
            .map(|o| (o.raw.config, o.cpu))
            .collect::<Vec<_>>(),
        [(0x1_0000_38c7, 0), (0x1_0000_38c7, 64)]
    );
    let p = plan(set("zen4"), &fixture("sysfs-zen4"), true).unwrap();
    let wr: Vec<_> = p
        .opens
        .iter()
        .filter(|o| o.event == "UMC_CAS_CMD.WR")
        .collect();
    assert_eq!(wr.len(), 3, "one per UMC channel");
    assert!(wr.iter().all(|o| o.raw.config == 0x20a));
}

#[test]
fn a_set_that_does_not_fit_the_machine_is_refused() {
    let e = plan(set("neoverse-v2"), &fixture("sysfs-skx"), true).unwrap_err();
    let PerfError::MissingPmu { ref present, .. } = e else {
        panic!("{e}")
    };
    assert!(present.contains(&"cpu".to_string()));
    assert!(e.to_string().contains("--arch"), "{e}");
    // An AMD umask on an Intel layout still fits; an event field too wide does not.
    let e = plan(set("zen1"), &fixture("sysfs-arm"), true).unwrap_err();
    assert!(matches!(e, PerfError::MissingPmu { .. }), "{e}");
    // No DRAM PMU: a note, not an error.
    let p = plan(set("skx"), &fixture("sysfs-skl"), true).unwrap();
    assert!(p.dram_source.is_none());
    assert!(
        p.notes.iter().any(|n| n.contains("uncore_imc_*")),
        "{:?}",
        p.notes
    );
}

#[test]
fn the_machine_section_of_events_says_why_nothing_opens_here() {
    let text =
        flopscope_engine_perf::describe_on_machine(set("zen4"), std::path::Path::new("/sys"));
    if flopscope_engine_perf::probe_hardware_counter().is_err() {
        assert!(
            text.contains("no hardware performance counters") || text.contains("refused"),
            "{text}"
        );
    } else {
        assert!(text.contains("pmu "), "{text}");
    }
}
