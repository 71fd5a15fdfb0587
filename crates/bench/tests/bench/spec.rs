use flopscope_bench::kernels::{KernelFn, IMPLEMENTATIONS};
use flopscope_bench::spec::{self, Kind, StreamOp};
use flopscope_machine::Isa;

#[test]
fn every_declaration_has_an_implementation_of_its_kind_and_back() {
    for k in spec::all() {
        match (k.kind, k.implementation()) {
            (Kind::Peak, KernelFn::Peak(_)) | (Kind::Stream, KernelFn::Stream(_)) => {}
            _ => panic!(
                "{}: declared {:?} but implemented as the other kind",
                k.name, k.kind
            ),
        }
    }
    for (name, _) in IMPLEMENTATIONS {
        assert!(
            spec::named(name).is_some(),
            "{name} is implemented but not declared in data/kernels.toml"
        );
    }
    assert_eq!(spec::all().len(), IMPLEMENTATIONS.len());
}

#[test]
fn stream_declarations_follow_the_stream_convention() {
    for k in spec::all().iter().filter(|k| k.kind == Kind::Stream) {
        let op = k.op.unwrap();
        let (flop, bytes) = match op {
            StreamOp::Copy => (0, 16),
            StreamOp::Scale => (1, 16),
            StreamOp::Add => (1, 24),
            StreamOp::Triad => (2, 24),
        };
        assert_eq!((k.flop, k.bytes), (flop, bytes), "{}", k.name);
        assert_eq!(k.bytes, 8 * op.arrays() as u64, "{}", k.name);
    }
    for isa in Isa::ALL {
        for op in StreamOp::ALL {
            assert!(
                spec::stream(op, isa, false).is_some(),
                "no {} {}",
                op.key(),
                isa.key()
            );
        }
    }
}

#[test]
fn fma_peak_declarations_are_twelve_chains_of_full_registers() {
    for k in spec::all().iter().filter(|k| k.is_fma_peak()) {
        let bits = if k.isa == Isa::Scalar {
            k.precision.element_bits()
        } else {
            k.isa.vector_bits()
        };
        let lanes = bits as u64 / k.precision.element_bits() as u64;
        // 2 FLOP per element lane; VDPBF16PS's 4 per fp32 result are 2 per bf16 element too.
        assert_eq!(k.flop, 12 * lanes * 2, "{}", k.name);
        assert_eq!(k.bytes, 0, "{}", k.name);
    }
}

#[test]
fn malformed_declarations_are_rejected() {
    let e = spec::parse("kernel = [{ name = \"x\", kind = \"stream\", isa = \"sse\", precision = \"fp64\", requires = [], flop = 0, bytes = 16, instructions = \"\" }]").unwrap_err();
    assert!(e.contains("`op` is required"), "{e}");
    assert!(spec::parse("kernel = [{ name = \"x\", kind = \"peak\", isa = \"sse\", precision = \"fp64\", requires = [], flop = 0, byts = 16, instructions = \"\" }]").is_err());
}
