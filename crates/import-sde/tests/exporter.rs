use flopscope_import_sde::{parse_mix, report_from};
use flopscope_model::sde_mix::sde_mix;
use flopscope_model::{Counts, FlopOp, FpKey, OpClass, Precision, Report, Summary};

#[allow(clippy::too_many_arguments)]
fn add(
    c: &mut Counts,
    p: Precision,
    width_bits: u32,
    lanes: u32,
    op: OpClass,
    masked: bool,
    count: u64,
    flop: u64,
) {
    let booked = if op == OpClass::Fma {
        FlopOp::Fma
    } else {
        FlopOp::Add
    };
    let key = FpKey {
        precision: p,
        width_bits,
        lanes,
        op,
        masked,
    };
    c.add_fp(key, count, flop, booked);
}

#[test]
fn what_the_model_writes_as_an_sde_mix_reads_back_to_the_same_totals() {
    // FMA of every width and precision, masked AVX-512 rows (which the writer
    // folds into one-element counters), x87 (which SDE's counters leave out),
    // and access sizes above 64 bytes.
    let mut c = Counts {
        instructions: 98_765,
        ..Default::default()
    };
    use OpClass::*;
    use Precision::*;
    add(&mut c, Fp64, 256, 4, Fma, false, 1000, 8000);
    add(&mut c, Fp64, 128, 2, Fma, false, 7, 28);
    add(&mut c, Fp64, 64, 1, Fma, false, 5, 10);
    add(&mut c, Fp64, 512, 8, Fma, false, 3, 48);
    add(&mut c, Fp64, 512, 8, Fma, true, 9, 74);
    add(&mut c, Fp64, 64, 1, Add, false, 11, 11);
    add(&mut c, Fp32, 256, 8, Fma, false, 17, 272);
    add(&mut c, Fp32, 128, 4, Fma, false, 6, 48);
    add(&mut c, Fp32, 32, 1, Fma, false, 2, 4);
    add(&mut c, Fp32, 512, 16, Fma, false, 1, 32);
    add(&mut c, Fp32, 512, 16, Add, true, 3, 19);
    add(&mut c, X87, 80, 1, Add, false, 21, 21);
    c.mem_read.insert(8, 1234);
    c.mem_read.insert(64, 99);
    c.mem_read.insert(512, 2);
    c.mem_write.insert(16, 77);
    c.mem_write.insert(2688, 1);
    let mut original = Report::new("emulate", vec!["./app".into()]);
    original.summary = Summary::from_counts(&c);

    let text = sde_mix(&original);
    let imported = report_from(
        &parse_mix(&text, "exported.txt").unwrap_or_else(|e| panic!("{e}\n{text}")),
        None,
    )
    .unwrap();
    let (a, b) = (&original.summary, &imported.summary);
    assert_eq!(b.flop.fp64, a.flop.fp64, "{text}");
    assert_eq!(b.flop.fp32, a.flop.fp32, "{text}");
    assert_eq!(
        b.flop.total,
        a.flop.total - 21,
        "everything but x87\n{text}"
    );
    assert_eq!(b.bytes, a.bytes);
    assert_eq!(b.mem_accesses, a.mem_accesses);
    assert_eq!(b.instructions, a.instructions);
}
