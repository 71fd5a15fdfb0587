//! Every iced `Code` built with generic operands, encoded, decoded and
//! classified. Checks the classifier against iced's op-code metadata, a
//! source independent of the decoded operand registers: lanes x lane bits is
//! the widest vector operand of the form, the precision matches the memory
//! operand's element type, and a memory operand is read at its full size.

use flopscope_isa::table::{flop_row, Shape};
use flopscope_isa::{classify, decode_one, InsnInfo};
use flopscope_model::Precision;
use iced_x86::OpCodeOperandKind as K;
use iced_x86::{Code, CodeSize, Encoder, EncodingKind, Instruction, MemorySize, OpKind, Register};

fn reg(first: Register, n: u32) -> Register {
    Register::values().nth(first as usize + n as usize).unwrap()
}

/// `code` with register operands numbered by position and, if `memory`,
/// `[rax]` (or `[rax+xmm7*4]` for VSIB) for its r/m operand.
fn build(code: Code, memory: bool, mask: bool) -> Option<Instruction> {
    let op = code.op_code();
    if !op.is_instruction() || !op.mode64() {
        return None;
    }
    let mut insn = Instruction::default();
    insn.set_code(code);
    insn.set_code_size(CodeSize::Code64);
    let set_mem = |insn: &mut Instruction, i: u32, index: Register| {
        insn.set_op_kind(i, OpKind::Memory);
        insn.set_memory_base(Register::RAX);
        insn.set_memory_index(index);
        insn.set_memory_index_scale(if index == Register::None { 1 } else { 4 });
    };
    for i in 0..op.op_count() {
        let n = i + 1;
        let r = match op.op_kind(i) {
            K::xmm_reg | K::xmm_rm | K::xmm_vvvv | K::xmm_is4 | K::xmm_is5 => {
                reg(Register::XMM0, n)
            }
            K::ymm_reg | K::ymm_rm | K::ymm_vvvv | K::ymm_is4 | K::ymm_is5 => {
                reg(Register::YMM0, n)
            }
            K::zmm_reg | K::zmm_rm | K::zmm_vvvv => reg(Register::ZMM0, n),
            K::xmmp3_vvvv => Register::XMM4,
            K::zmmp3_vvvv => Register::ZMM4,
            K::mm_reg | K::mm_rm => reg(Register::MM0, n),
            K::k_reg | K::k_rm | K::k_vvvv => reg(Register::K0, n),
            K::kp1_reg => Register::K2,
            K::tmm_reg | K::tmm_rm | K::tmm_vvvv => reg(Register::TMM0, n),
            K::r32_reg | K::r32_rm | K::r32_vvvv => reg(Register::ECX, n),
            K::r64_reg | K::r64_rm | K::r64_vvvv => reg(Register::RCX, n),
            K::st0 => Register::ST0,
            K::sti_opcode => Register::ST1,
            K::xmm_or_mem if !memory => reg(Register::XMM0, n),
            K::ymm_or_mem if !memory => reg(Register::YMM0, n),
            K::zmm_or_mem if !memory => reg(Register::ZMM0, n),
            K::mm_or_mem if !memory => reg(Register::MM0, n),
            K::k_or_mem if !memory => reg(Register::K0, n),
            K::r32_or_mem if !memory => reg(Register::ECX, n),
            K::r64_or_mem if !memory => reg(Register::RCX, n),
            K::xmm_or_mem
            | K::ymm_or_mem
            | K::zmm_or_mem
            | K::mm_or_mem
            | K::k_or_mem
            | K::r32_or_mem
            | K::r64_or_mem
            | K::mem => {
                set_mem(&mut insn, i, Register::None);
                continue;
            }
            K::mem_vsib32x | K::mem_vsib64x => {
                set_mem(&mut insn, i, Register::XMM7);
                continue;
            }
            K::mem_vsib32y | K::mem_vsib64y => {
                set_mem(&mut insn, i, Register::YMM7);
                continue;
            }
            K::mem_vsib32z | K::mem_vsib64z => {
                set_mem(&mut insn, i, Register::ZMM7);
                continue;
            }
            K::imm8 | K::imm4_m2z => {
                insn.set_op_kind(i, OpKind::Immediate8);
                insn.set_immediate8(if op.op_kind(i) == K::imm8 { 0xF1 } else { 0 });
                continue;
            }
            _ => return None,
        };
        insn.set_op_kind(i, OpKind::Register);
        insn.set_op_register(i, r);
    }
    if mask || op.require_op_mask_register() {
        insn.set_op_mask(Register::K1);
    }
    Some(insn)
}

/// Builds, encodes, decodes and classifies; `None` when iced cannot encode
/// the generic operands (fixed registers, implicit operands, ...) or the
/// bytes decode as another form.
fn run(code: Code, memory: bool, mask: bool) -> Option<(Instruction, InsnInfo)> {
    let insn = build(code, memory, mask)?;
    let mut encoder = Encoder::new(64);
    encoder.encode(&insn, 0x1000).ok()?;
    let bytes = encoder.take_buffer();
    let decoded = decode_one(&bytes, 0x1000)?;
    (decoded.code() == code).then_some(())?;
    Some((decoded, classify(&decoded)))
}

fn widest_vector_operand(code: Code) -> u32 {
    let op = code.op_code();
    (0..op.op_count())
        .map(
            |i| match format!("{:?}", op.op_kind(i)).split('_').next().unwrap() {
                "mm" => 64,
                "xmm" | "xmmp3" => 128,
                "ymm" => 256,
                "zmm" | "zmmp3" => 512,
                _ => 0,
            },
        )
        .max()
        .unwrap_or(0)
}

/// The precision a vector memory operand's element type implies, when it
/// implies one (x87 computes in 80 bits whatever it loads).
fn precision_of(m: MemorySize) -> Option<Precision> {
    match m.element_type() {
        MemorySize::Float16 | MemorySize::Packed32_Float16 => Some(Precision::Fp16),
        MemorySize::BFloat16 | MemorySize::Packed32_BFloat16 => Some(Precision::Bf16),
        MemorySize::Float32 => Some(Precision::Fp32),
        MemorySize::Float64 => Some(Precision::Fp64),
        _ => None,
    }
}

fn flop_codes() -> impl Iterator<Item = Code> {
    Code::values()
        .filter(|c| c.encoding() != EncodingKind::MVEX && flop_row(c.mnemonic()).is_some())
}

#[test]
fn every_flop_code_classifies_with_iced_widths_and_precisions() {
    let mut unbuilt = Vec::new();
    for code in flop_codes() {
        let row = flop_row(code.mnemonic()).unwrap();
        let runs: Vec<_> = [false, true]
            .into_iter()
            .filter_map(|memory| run(code, memory, false))
            .collect();
        if runs.is_empty() {
            unbuilt.push(code);
        }
        for (insn, info) in runs {
            let fp = info.fp.unwrap_or_else(|| panic!("{insn}: not classified"));
            assert_eq!(fp.key.precision, row.precision, "{insn}");
            assert_eq!(fp.key.width_bits, fp.key.lanes * row.lane_bits(), "{insn}");
            match row.shape {
                Shape::Packed => {
                    assert_eq!(fp.key.width_bits, widest_vector_operand(code), "{insn}")
                }
                Shape::Scalar => assert_eq!(fp.key.lanes, 1, "{insn}"),
            }
            let op = code.op_code();
            if row.precision == Precision::X87 {
                assert!(
                    code.cpuid_features()
                        .iter()
                        .any(|f| format!("{f:?}").starts_with("FPU")),
                    "{insn}"
                );
            } else if let Some(p) = precision_of(op.memory_size()) {
                assert_eq!(
                    p,
                    fp.key.precision,
                    "{insn}: memory element type {:?}",
                    op.memory_size()
                );
            }
            if insn.op_kinds().any(|k| k == OpKind::Memory) {
                assert_eq!(info.mem.reads, [insn.memory_size().size() as u32], "{insn}");
                assert!(info.mem.writes.is_empty(), "{insn}");
            }
        }
    }
    assert!(
        unbuilt.is_empty(),
        "FLOP codes the sweep could not build: {unbuilt:?}"
    );
}

#[test]
fn masked_flop_codes_book_flop_per_active_lane() {
    let mut seen = 0;
    for code in flop_codes().filter(|c| c.op_code().can_use_op_mask_register()) {
        let Some((insn, info)) = run(code, false, true) else {
            continue;
        };
        let fp = info.fp.unwrap();
        assert!(fp.key.masked, "{insn}");
        assert_eq!(
            fp.flop_per_lane.total() * fp.key.lanes,
            fp.flop.total(),
            "{insn}"
        );
        seen += 1;
    }
    assert!(seen > 300, "only {seen} masked FLOP forms built");
}

#[test]
fn every_code_classifies_without_zero_sized_accesses() {
    let mut built = 0;
    for code in Code::values().filter(|c| c.encoding() != EncodingKind::MVEX) {
        for memory in [false, true] {
            let Some((insn, info)) = run(code, memory, false) else {
                continue;
            };
            built += 1;
            assert_eq!(
                info.fp.is_some(),
                flop_row(insn.mnemonic()).is_some(),
                "{insn}"
            );
            let mut sizes = info.mem.reads.iter().chain(info.mem.writes.iter());
            assert!(sizes.all(|s| s > 0), "{insn}: {:?}", info.mem);
        }
    }
    assert!(built > 3000, "only {built} forms built");
}
