//! Fixed inputs of the chart tests: a machine with every kind of roof and a
//! report with regions on both sides of the ridge.

#![allow(dead_code)]

use flopscope_model::{
    BandwidthCeiling, Ceilings, ComputeCeiling, Counts, ExitStatus, FlopOp, FpKey, FpTally,
    OpClass, Precision, Region, Report, Seconds, Summary,
};

pub fn ceilings() -> Ceilings {
    let c = |name: &str, precision: &str, width_bits, gflops, measured| ComputeCeiling {
        name: name.into(),
        precision: precision.into(),
        width_bits,
        gflops,
        measured,
    };
    let b = |level: &str, gbytes_per_s, measured| BandwidthCeiling {
        level: level.into(),
        gbytes_per_s,
        measured,
    };
    Ceilings {
        source: "machine.json (flopscope bench)".into(),
        machine: "Test CPU 8 cores @ 3.0 GHz".into(),
        compute: vec![
            c("fp32 AVX2 FMA", "fp32", 256, 768.0, false),
            c("fp64 AVX2 FMA", "fp64", 256, 384.0, false),
            c("fp64 AVX2 FMA", "fp64", 256, 301.0, true),
            c("fp64 scalar", "fp64", 64, 48.0, false),
        ],
        bandwidth: vec![
            b("L1", 1500.0, true),
            b("L2", 600.0, true),
            b("L3", 200.0, false),
            b("DRAM", 25.0, true),
        ],
    }
}

/// FLOP, bytes read and written, native seconds of a summary.
fn summary(precision: Precision, flop: u64, read: u64, written: u64) -> Summary {
    let mut c = Counts {
        instructions: flop,
        ..Default::default()
    };
    let k = FpKey {
        precision,
        width_bits: 256,
        lanes: 256 / precision.element_bits(),
        op: OpClass::Fma,
        masked: false,
    };
    let per = 2 * u64::from(k.lanes);
    c.fp_instructions.insert(
        k,
        FpTally {
            count: flop / per,
            flop,
        },
    );
    c.flop.insert((precision, FlopOp::Fma), flop);
    c.mem_read.insert(8, read / 8);
    c.mem_write.insert(8, written / 8);
    Summary::from_counts(&c)
}

fn region(name: &str, s: Summary, time: f64) -> Region {
    Region {
        name: name.into(),
        entries: 10,
        summary: s,
        native_time_s: Some(time),
        gflops: None,
        ..Default::default()
    }
}

/// A report with four regions: stream-like (memory bound), a blocked
/// kernel (compute bound), an fp32 kernel and one without native time.
pub fn report() -> Report {
    let mut r = Report::new(
        "emulate",
        vec!["./solver".into(), "--size".into(), "4096".into()],
    );
    r.tool_version = "0.1.0".into();
    r.exit_status = ExitStatus::Code(0);
    r.complete = true;
    let triad = summary(
        Precision::Fp64,
        2_000_000_000,
        16_000_000_000,
        8_000_000_000,
    );
    let dgemm = summary(
        Precision::Fp64,
        80_000_000_000,
        4_000_000_000,
        1_000_000_000,
    );
    let sgemm = summary(
        Precision::Fp32,
        60_000_000_000,
        2_000_000_000,
        1_000_000_000,
    );
    let setup = summary(Precision::Fp64, 1_000_000, 8_000_000, 8_000_000);
    r.regions = vec![
        region("triad", triad, 1.25),
        region("dgemm", dgemm, 0.5),
        region("sgemm", sgemm, 0.25),
        Region {
            native_time_s: None,
            ..region("setup", setup, 0.0)
        },
    ];
    r.summary = flopscope_model::merge::sum_summaries(
        r.regions.iter().map(|g| (g.name.as_str(), &g.summary)),
    )
    .unwrap();
    r.set_native_time(Some(Seconds(2.5)));
    r.arithmetic_intensity.dram = Some(12.0);
    r
}
