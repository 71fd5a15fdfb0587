//! Classification remembered by instruction form (`Classifier::
//! classify_cached`): the same as classifying afresh, for every instruction
//! of the C library this test runs with and for forms that differ only in
//! what the key keeps (an imm8, a broadcast, a mask, a REP prefix).

use flopscope_isa::Classifier;
use iced_x86::{Decoder, DecoderOptions, Instruction};

/// Decodes `bytes` at `ip` one instruction after another (a linear sweep:
/// data among the code decodes as something, which is fine here) and
/// checks each remembered classification against a fresh one.
fn check_all(c: &mut Classifier, fresh: &mut Classifier, bytes: &[u8], ip: u64) -> usize {
    let mut d = Decoder::with_ip(64, bytes, ip, DecoderOptions::NONE);
    let mut n = 0;
    while d.can_decode() {
        let pos = d.position();
        let insn = d.decode();
        if insn.is_invalid() {
            continue;
        }
        let enc = &bytes[pos..pos + insn.len()];
        assert_eq!(
            c.classify_cached(&insn),
            fresh.classify(&insn),
            "{insn} ({enc:02x?})"
        );
        n += 1;
    }
    n
}

#[test]
fn every_instruction_of_the_c_library_classifies_as_afresh() {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let (lo, hi) = maps
        .lines()
        .filter(|l| l.contains("libc.so") && l.split_whitespace().nth(1) == Some("r-xp"))
        .find_map(|l| {
            let (lo, hi) = l.split_whitespace().next()?.split_once('-')?;
            Some((
                u64::from_str_radix(lo, 16).ok()?,
                u64::from_str_radix(hi, 16).ok()?,
            ))
        })
        .expect("the C library's code in /proc/self/maps");
    // SAFETY: the C library's code, mapped readable for the whole test.
    let code = unsafe { std::slice::from_raw_parts(lo as *const u8, (hi - lo) as usize) };
    let (mut c, mut fresh) = (Classifier::new(), Classifier::new());
    // Twice: the second pass finds every encoding remembered.
    let first = check_all(&mut c, &mut fresh, code, lo);
    let second = check_all(&mut c, &mut fresh, code, lo);
    assert_eq!(first, second);
    assert!(first > 100_000, "only {first} instructions decoded");
}

#[test]
fn encodings_that_differ_where_the_key_looks_classify_apart() {
    let cases: &[&[u8]] = &[
        // dpps xmm0, xmm1, 0xff / 0x31: 4 lanes multiplied or 1
        &[0x66, 0x0f, 0x3a, 0x40, 0xc1, 0xff],
        &[0x66, 0x0f, 0x3a, 0x40, 0xc1, 0x31],
        // vaddpd zmm0, zmm1, [rax+8] / [rax+8]{1to8} / [rax+16]{k1}
        &[0x62, 0xf1, 0xf5, 0x48, 0x58, 0x40, 0x01],
        &[0x62, 0xf1, 0xf5, 0x58, 0x58, 0x40, 0x01],
        &[0x62, 0xf1, 0xf5, 0x49, 0x58, 0x40, 0x02],
        // mov rax, [rbp-8] / [rbp-16]: one form
        &[0x48, 0x8b, 0x45, 0xf8],
        &[0x48, 0x8b, 0x45, 0xf0],
        // movsb / rep movsb
        &[0xa4],
        &[0xf3, 0xa4],
    ];
    let (mut c, mut fresh) = (Classifier::new(), Classifier::new());
    for round in 0..2 {
        for bytes in cases {
            let n = check_all(&mut c, &mut fresh, bytes, 0x1000);
            assert_eq!(n, 1, "round {round}: {bytes:02x?} is one instruction");
        }
    }
    let mut dpps = |imm| {
        let i: Instruction =
            flopscope_isa::decode_one(&[0x66, 0x0f, 0x3a, 0x40, 0xc1, imm], 0).unwrap();
        c.classify_cached(&i).fp.map(|f| f.flop.total())
    };
    assert_ne!(dpps(0xff), dpps(0x31), "DPPS's imm8 is part of the form");
}
