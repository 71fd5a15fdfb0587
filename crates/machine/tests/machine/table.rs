use crate::{machine, AVX2, AVX512};
use flopscope_machine::uarch::{table, Table};
use flopscope_machine::{Isa, Uarch, Vendor};
use flopscope_model::Precision;

fn lookup(
    vendor: Vendor,
    family: u32,
    model: u32,
    stepping: u32,
    brand: &str,
    flags: &[&str],
) -> Uarch {
    let m = machine(vendor, family, model, stepping, brand, flags, 1);
    table().lookup(&m.cpu_key()).expect("an entry")
}

/// FLOP/cycle of fp64 that `u`'s pipes give at `isa`'s width: each pipe does
/// one FMA (2 FLOP) per lane per cycle, a vector wider than the pipe takes
/// one pipe-cycle per half; without FMA, one add or one multiply per pipe.
fn from_units(u: &Uarch, isa: Isa) -> u32 {
    let lanes = isa.vector_bits().min(u.fma_width_bits) / 64;
    if u.fma_units == 0 {
        return (u.add_units + u.mul_units) * lanes;
    }
    let units = if isa == Isa::Avx512 {
        u.fma512_units.unwrap_or(u.fma_units)
    } else {
        u.fma_units
    };
    2 * units * lanes
}

#[test]
fn the_embedded_table_parses_and_names_are_unique() {
    let names = table().names();
    assert!(names.len() > 25, "{names:?}");
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "duplicate names");
    for n in [
        "Sandy Bridge",
        "Haswell",
        "Skylake-SP",
        "Ice Lake-SP",
        "Sapphire Rapids",
        "Granite Rapids",
        "Zen 1",
        "Zen 2",
        "Zen 3",
        "Zen 4",
        "Zen 5",
    ] {
        assert!(names.contains(&n), "{n} missing");
    }
}

#[test]
fn flop_per_cycle_agrees_with_units_and_width() {
    for u in table().all_with_variants() {
        for (isa, f) in &u.flop_per_cycle {
            assert_eq!(
                f.fp64,
                from_units(&u, *isa),
                "{} {} fp64",
                u.name,
                isa.key()
            );
            let fp32 = if *isa == Isa::Scalar {
                f.fp64
            } else {
                2 * f.fp64
            };
            assert_eq!(f.fp32, fp32, "{} {} fp32", u.name, isa.key());
            // fp16 FMA at the FMA rate; VDPBF16PS too, except where a note
            // says it takes 2 cycles (Sapphire Rapids: 32 FLOP/cycle, measured).
            let slow_bf16 = u
                .notes
                .iter()
                .any(|n| n.starts_with("VDPBF16PS: one every 2 cycles"));
            let bf16 = if slow_bf16 { f.fp32 / 2 } else { 2 * f.fp32 };
            if let Some(b) = f.bf16 {
                assert_eq!(b, bf16, "{} {} bf16", u.name, isa.key());
            }
            if let Some(h) = f.fp16 {
                assert_eq!(h, 2 * f.fp32, "{} {} fp16", u.name, isa.key());
            }
            if f.fp16.is_some() || f.bf16.is_some() {
                assert_eq!(*isa, Isa::Avx512, "{}: fp16/bf16 only with AVX-512", u.name);
            }
        }
        // A wider vector never does fewer FLOP per cycle.
        let v: Vec<u32> = u.flop_per_cycle.values().map(|f| f.fp64).collect();
        assert!(v.windows(2).all(|w| w[0] <= w[1]), "{}: {v:?}", u.name);
    }
}

#[test]
fn genoa_is_zen4_with_half_rate_avx512() {
    let u = lookup(
        Vendor::Amd,
        0x19,
        0x11,
        1,
        "AMD EPYC 9654 96-Core Processor",
        AVX512,
    );
    assert_eq!(u.name, "Zen 4");
    assert_eq!(u.flop_per_cycle(Isa::Avx512, Precision::Fp64), Some(16));
    assert_eq!(u.flop_per_cycle(Isa::Avx, Precision::Fp64), Some(16));
    assert_eq!(u.flop_per_cycle(Isa::Avx512, Precision::Bf16), Some(64));
    assert!(u.notes.iter().any(|n| n.contains("two 256-bit halves")));
}

#[test]
fn turin_is_zen5_with_full_width_avx512() {
    let u = lookup(
        Vendor::Amd,
        0x1a,
        0x02,
        0,
        "AMD EPYC 9755 128-Core Processor",
        AVX512,
    );
    assert_eq!(u.name, "Zen 5");
    assert_eq!(u.flop_per_cycle(Isa::Avx512, Precision::Fp64), Some(32));
    assert_eq!(u.flop_per_cycle(Isa::Avx512, Precision::Fp32), Some(64));
    let strix = lookup(Vendor::Amd, 0x1a, 0x24, 0, "AMD Ryzen AI 9 HX 370", AVX512);
    assert_eq!(strix.name, "Zen 5 (256-bit datapath)");
    assert_eq!(strix.flop_per_cycle(Isa::Avx512, Precision::Fp64), Some(16));
}

#[test]
fn older_cores_by_family_and_model() {
    assert_eq!(
        lookup(Vendor::Amd, 0x17, 0x01, 2, "AMD EPYC 7601", AVX2).name,
        "Zen 1"
    );
    assert_eq!(
        lookup(Vendor::Amd, 0x17, 0x31, 0, "AMD EPYC 7742", AVX2).name,
        "Zen 2"
    );
    assert_eq!(
        lookup(Vendor::Amd, 0x19, 0x01, 1, "AMD EPYC 7763", AVX2).name,
        "Zen 3"
    );
    let snb = lookup(
        Vendor::Intel,
        6,
        0x2a,
        7,
        "Intel(R) Xeon(R) CPU E3-1275 V2",
        &["sse2", "avx"],
    );
    assert_eq!(snb.name, "Sandy Bridge");
    assert_eq!(snb.flop_per_cycle(Isa::Avx, Precision::Fp32), Some(16));
    assert_eq!(
        lookup(
            Vendor::Intel,
            6,
            0x3f,
            2,
            "Intel(R) Xeon(R) CPU E5-2680 v3",
            AVX2
        )
        .name,
        "Haswell"
    );
    assert_eq!(
        lookup(
            Vendor::Intel,
            6,
            0x8f,
            8,
            "Intel(R) Xeon(R) Platinum 8480+",
            AVX512
        )
        .name,
        "Sapphire Rapids"
    );
    assert_eq!(
        lookup(Vendor::Intel, 6, 0xad, 1, "Intel(R) Xeon(R) 6972P", AVX512).name,
        "Granite Rapids"
    );
}

/// Under a hypervisor, a model number whose cores never have the CPU's
/// AVX-512 extensions gives way to the vendor's first generation that has
/// them (seen: a KVM guest on a Sapphire Rapids-class host reporting Rocket
/// Lake's model 0xa7 with AVX512-FP16, BF16 and AMX; `flopscope bench flops`
/// measured 28 fp64 FLOP/cycle at 512 bits there, Rocket Lake's ceiling is
/// 16). On bare metal the model number is trusted.
#[test]
fn a_hypervisors_model_number_gives_way_to_the_isa_it_contradicts() {
    let mut flags = AVX512.to_vec();
    flags.extend(["avx512_fp16", "avx512_bf16", "amx_tile"]);
    let brand = "Intel(R) Xeon(R) Processor";
    let mut m = machine(Vendor::Intel, 6, 0xa7, 1, brand, &flags, 2);
    assert_eq!(table().lookup(&m.cpu_key()).unwrap().name, "Rocket Lake");
    m.hypervisor = true;
    let u = table().lookup(&m.cpu_key()).unwrap();
    assert_eq!(u.name, "Sapphire Rapids");
    let aside = u.instead_of.expect("the entry set aside");
    assert_eq!(
        (aside.name.as_str(), aside.lacks),
        (
            "Rocket Lake",
            vec!["avx512_fp16".to_string(), "avx512_bf16".into()]
        )
    );
    // Skylake-SP's model and stepping with AVX512_BF16: Cooper Lake.
    let mut flags = AVX512.to_vec();
    flags.push("avx512_bf16");
    let mut m = machine(Vendor::Intel, 6, 0x55, 4, brand, &flags, 2);
    m.hypervisor = true;
    let u = table().lookup(&m.cpu_key()).unwrap();
    assert_eq!(
        (u.name.as_str(), u.instead_of.unwrap().name.as_str()),
        ("Cooper Lake", "Skylake-SP")
    );
    // Zen 3's model with AVX-512: Zen 4, the first AMD entry with it.
    let mut m = machine(Vendor::Amd, 0x19, 0x01, 1, "AMD EPYC", AVX512, 2);
    m.hypervisor = true;
    let u = table().lookup(&m.cpu_key()).unwrap();
    assert_eq!(
        (u.name.as_str(), u.instead_of.unwrap().name.as_str()),
        ("Zen 4", "Zen 3")
    );
    // Flags within the model's own: nothing set aside.
    let mut m = machine(Vendor::Intel, 6, 0xa7, 1, brand, AVX512, 2);
    m.hypervisor = true;
    let u = table().lookup(&m.cpu_key()).unwrap();
    assert_eq!((u.name.as_str(), u.instead_of), ("Rocket Lake", None));
}

#[test]
fn skylake_sp_steppings_and_brand_variants() {
    let gold6 = lookup(
        Vendor::Intel,
        6,
        0x55,
        4,
        "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz",
        AVX512,
    );
    assert_eq!(
        (
            gold6.name.as_str(),
            gold6.flop_per_cycle(Isa::Avx512, Precision::Fp64)
        ),
        ("Skylake-SP", Some(32))
    );
    let silver = lookup(
        Vendor::Intel,
        6,
        0x55,
        4,
        "Intel(R) Xeon(R) Silver 4114 CPU @ 2.20GHz",
        AVX512,
    );
    assert_eq!(
        silver.flop_per_cycle(Isa::Avx512, Precision::Fp64),
        Some(16)
    );
    assert_eq!(silver.fma512_units, Some(1));
    let gold5122 = lookup(
        Vendor::Intel,
        6,
        0x55,
        4,
        "Intel(R) Xeon(R) Gold 5122 CPU @ 3.60GHz",
        AVX512,
    );
    assert_eq!(
        gold5122.flop_per_cycle(Isa::Avx512, Precision::Fp64),
        Some(32)
    );
    let clx = lookup(
        Vendor::Intel,
        6,
        0x55,
        7,
        "Intel(R) Xeon(R) Platinum 8280 CPU",
        AVX512,
    );
    assert_eq!(clx.name, "Cascade Lake");
    assert_eq!(
        lookup(
            Vendor::Intel,
            6,
            0x55,
            11,
            "Intel(R) Xeon(R) Platinum 8380H",
            AVX512
        )
        .name,
        "Cooper Lake"
    );
}

#[test]
fn unknown_cores_fall_back_to_generic_entries_by_flags() {
    let u = lookup(Vendor::Amd, 0x1b, 0x00, 0, "AMD future", AVX512);
    assert!(u.generic);
    assert_eq!(u.name, "generic AVX-512");
    assert_eq!(
        lookup(Vendor::Other, 7, 1, 0, "", AVX2).name,
        "generic AVX2 with FMA"
    );
    assert_eq!(
        lookup(Vendor::Other, 7, 1, 0, "", &["sse2"]).name,
        "generic SSE2"
    );
}

#[test]
fn entries_are_found_by_name_and_unknown_names_list_the_known_ones() {
    assert_eq!(table().named("zen 4").unwrap().name, "Zen 4");
    let e = table().named("Zen 9").unwrap_err().to_string();
    assert!(e.contains("Zen 9") && e.contains("\"Zen 5\""), "{e}");
}

#[test]
fn malformed_tables_are_rejected_with_the_entry_named() {
    let missing_models = "[[uarch]]\nname = \"X\"\nvendor = \"intel\"\nfamily = 6\nfma_units = 2\nfma_width_bits = 256\nnotes = []\nflop_per_cycle.scalar = { fp64 = 4, fp32 = 4 }\n[[generic]]\nname = \"g\"\nrequires = [\"sse2\"]\nfma_units = 0\nfma_width_bits = 128\nnotes = []\nflop_per_cycle.scalar = { fp64 = 2, fp32 = 2 }\n";
    let e = Table::parse(missing_models).unwrap_err().to_string();
    assert!(
        e.contains("X: a [[uarch]] entry needs vendor, family and models"),
        "{e}"
    );
    let typo = missing_models.replace("fp32 = 4", "fp23 = 4");
    assert!(Table::parse(&typo)
        .unwrap_err()
        .to_string()
        .contains("fp23"));
}
