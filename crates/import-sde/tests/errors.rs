use crate::common::{fixture, text};
use flopscope_import_sde::{import_files, parse_mask_profile, parse_mix, SdeError};

fn parse_error(e: &SdeError) -> (&str, usize, &str, &str) {
    match e {
        SdeError::Parse {
            file,
            line,
            expected,
            found,
        } => (file, *line, expected, found),
        other => panic!("not a parse error: {other}"),
    }
}

#[test]
fn a_truncated_mix_names_file_line_and_the_missing_end() {
    // truncated-mix.txt: hsw-iform.txt cut after line 207, inside the global section.
    let e = import_files(&[fixture("truncated-mix.txt")]).unwrap_err();
    let (file, line, expected, found) = parse_error(&e);
    assert!(file.ends_with("truncated-mix.txt"));
    assert_eq!(line, 207);
    assert_eq!(expected, "`# END_GLOBAL_DYNAMIC_STATS`");
    assert!(found.contains("truncated"), "{found}");
    assert!(
        e.to_string()
            .contains("truncated-mix.txt:207: expected `# END_GLOBAL_DYNAMIC_STATS`"),
        "{e}"
    );
}

#[test]
fn every_truncation_of_a_mix_is_an_error_at_its_last_line() {
    // Cut after each line: only the cuts that keep `# END_GLOBAL_DYNAMIC_STATS`
    // (its last lines) parse; a cut inside the per-function sections names
    // `# END_PER_FUNCTION_STATS`.
    let full = text("hsw-iform.txt");
    let lines: Vec<&str> = full.lines().collect();
    let end = lines
        .iter()
        .position(|l| l.starts_with("# END_GLOBAL_DYNAMIC_STATS"))
        .unwrap()
        + 1;
    for k in 1..=lines.len() {
        let cut = lines[..k].join("\n");
        match parse_mix(&cut, "cut") {
            Ok(_) => assert!(k >= end, "a cut at line {k} parsed"),
            Err(e) => {
                assert!(k < end, "the full global section failed at {k}: {e}");
                let (_, line, _, found) = parse_error(&e);
                assert_eq!(line, cut.lines().count(), "{e}"); // a cut after a blank line ends on the line before
                assert!(found.contains("truncated"), "{e}");
            }
        }
    }
}

#[test]
fn a_truncated_mask_profile_names_the_open_element() {
    // truncated-mask.xml: skx-avx512-mask.xml cut after line 46, inside the
    // `<instruction-details>` opened at line 45.
    let e = parse_mask_profile(&text("truncated-mask.xml"), "truncated-mask.xml").unwrap_err();
    let (_, line, expected, found) = parse_error(&e);
    assert_eq!(line, 46);
    assert_eq!(
        expected,
        "`</instruction-details>` (closing the element of line 45)"
    );
    assert!(found.contains("truncated"), "{found}");
    let full = text("skx-avx512-mask.xml");
    let lines: Vec<&str> = full.lines().collect();
    for k in 1..lines.len() {
        let cut = lines[..k].join("\n");
        let e = parse_mask_profile(&cut, "cut").expect_err("a cut profile parsed");
        assert!(e.line().is_some_and(|l| l <= k), "{e}");
    }
}

#[test]
fn an_empty_file_is_named_at_line_1() {
    let e = import_files(&[fixture("empty.txt")]).unwrap_err();
    let (file, line, expected, found) = parse_error(&e);
    assert!(file.ends_with("empty.txt"));
    assert_eq!((line, found), (1, "an empty file"));
    assert!(expected.contains("sde -omix"), "{expected}");
    let e = parse_mask_profile("  \n", "p.xml").unwrap_err();
    assert_eq!(e.to_string(), "p.xml:1: expected an Intel SDE dynamic mask profile (`sde -odyn_mask_profile FILE`, XML), found an empty file");
}

#[test]
fn a_file_that_is_not_sde_output_says_what_was_expected() {
    let e = import_files(&[fixture("not-sde.txt")]).unwrap_err();
    let (_, line, expected, found) = parse_error(&e);
    assert_eq!(line, 1);
    assert!(expected.contains("Intel SDE instruction mix"), "{expected}");
    assert!(found.contains("no SDE section"), "{found}");
    let e = parse_mask_profile("<html><body>hello</body></html>", "page.html").unwrap_err();
    assert!(e.to_string().contains("no `<thread>` element"), "{e}");
}

#[test]
fn bad_rows_name_their_line() {
    let cases = [
        ("*total  12x", "expected a histogram row `NAME COUNT`"),
        ("*total", "expected a histogram row `NAME COUNT`"),
        (
            "*total  99999999999999999999",
            "expected a histogram row `NAME COUNT`",
        ),
        (
            "*mem-read-99999999999  1",
            "expected a memory access size below 2^32 bytes",
        ),
    ];
    for (row, message) in cases {
        let t = [
            "# Mix output version 10",
            "# EMIT_GLOBAL_DYNAMIC_STATS   EMIT# 1",
            "#",
            row,
            "# END_GLOBAL_DYNAMIC_STATS",
        ]
        .join("\n");
        let e = parse_mix(&t, "m.txt")
            .and_then(|m| flopscope_import_sde::report_from(&m, None))
            .unwrap_err();
        assert_eq!(e.line(), Some(4), "{row}: {e}");
        assert!(
            e.to_string().starts_with(&format!("m.txt:4: {message}")),
            "{e}"
        );
    }
}

#[test]
fn misplaced_markers_are_errors() {
    let nested = [
        "# EMIT_DYNAMIC_STATS FOR TID 0 EMIT# 1",
        "*total 1",
        "# EMIT_GLOBAL_DYNAMIC_STATS",
        "*total 1",
        "# END_GLOBAL_DYNAMIC_STATS",
    ];
    let e = parse_mix(&nested.join("\n"), "m").unwrap_err();
    assert_eq!(
        e.to_string(),
        "m:3: expected `# END_DYNAMIC_STATS`, found a new section `# EMIT_GLOBAL_DYNAMIC_STATS`"
    );
    let bad_tid = ["# EMIT_DYNAMIC_STATS FOR TID zero", "# END_DYNAMIC_STATS"];
    let e = parse_mix(&bad_tid.join("\n"), "m").unwrap_err();
    assert_eq!(e.line(), Some(1));
    assert!(e.to_string().contains("FOR TID <number>"), "{e}");
    let stray = ["# Mix output version 10", "# END_DYNAMIC_STATS"];
    assert_eq!(
        parse_mix(&stray.join("\n"), "m").unwrap_err().line(),
        Some(2)
    );
}

#[test]
fn malformed_mask_profiles_name_their_line() {
    let mismatched = "<thread>\n  <thread-number> 0 </thread-numbr>\n</thread>\n";
    let e = parse_mask_profile(mismatched, "p").unwrap_err();
    assert_eq!(e.line(), Some(2), "{e}");
    let no_number = "<thread>\n  <summarytable>\n  </summarytable>\n</thread>\n";
    let e = parse_mask_profile(no_number, "p").unwrap_err();
    assert_eq!(
        e.to_string(),
        "p:1: expected a `<thread-number>` in this `<thread>`, found a thread without one"
    );
    let no_count = "<thread>\n<thread-number> 0 </thread-number>\n<instruction-details>\n<disassembly> vfmadd231pd zmm0{k1}, zmm1, zmm2 </disassembly>\n<computation-count> 3 </computation-count>\n</instruction-details>\n</thread>\n";
    let e = parse_mask_profile(no_count, "p").unwrap_err();
    assert_eq!(e.line(), Some(6), "{e}");
    assert!(e.to_string().contains("<execution-counts>"), "{e}");
    let bad_row = "<thread>\n<thread-number> 0 </thread-number>\n<summarytable>\nmasked mask 512b 8elem 64b fp\n</summarytable>\n</thread>\n";
    assert_eq!(
        parse_mask_profile(bad_row, "p").unwrap_err().line(),
        Some(4)
    );
    let twice = "<thread><thread-number>0</thread-number></thread>\n<thread><thread-number>0</thread-number></thread>\n";
    assert_eq!(parse_mask_profile(twice, "p").unwrap_err().line(), Some(2));
}

#[test]
fn input_set_errors_name_the_file() {
    let missing = fixture("no-such-file.txt");
    let e = import_files(std::slice::from_ref(&missing)).unwrap_err();
    assert!(matches!(e, SdeError::Read { .. }));
    assert!(
        e.to_string()
            .contains("no-such-file.txt: cannot read the file"),
        "{e}"
    );
    let e = import_files(&[fixture("hsw-iform.txt"), fixture("hsw-iform.txt")]).unwrap_err();
    assert!(e.to_string().contains("given twice"), "{e}");
    let e = import_files(&[]).unwrap_err();
    assert!(e.to_string().contains("no input files"), "{e}");
}

#[test]
fn another_section_inside_an_open_one_names_the_missing_end() {
    let t = [
        "# EMIT_DYNAMIC_STATS FOR TID 0  OS-TID 9 EMIT# 1",
        "*total  5",
        "# EMIT_TOP_BLOCK_STATS FOR TID 0 OS-TID 9 EMIT# 1",
        "BLOCK:     0   PC: 0000000000401a20   ICOUNT:     26010",
    ]
    .join("\n");
    let e = parse_mix(&t, "m").unwrap_err();
    assert_eq!(e.to_string(), "m:3: expected `# END_DYNAMIC_STATS`, found `# EMIT_TOP_BLOCK_STATS FOR TID 0 OS-TID 9 EMIT# 1`");
}

#[test]
fn a_profile_without_masked_rows_for_a_masked_mix_is_flagged() {
    // hsw-iform's profile would have no masked rows; give the AVX-512 mix a profile without any.
    let mix = crate::common::mix("skx-avx512-iform.txt");
    let profile = parse_mask_profile(
        "<thread>\n<thread-number> 0 </thread-number>\n</thread>\n",
        "p.xml",
    )
    .unwrap();
    let r = flopscope_import_sde::report_from(&mix, Some(&profile)).unwrap();
    let w = r.warnings.join("\n");
    assert!(
        w.contains("1350 masked FP instructions ran") && w.contains("no masked fp computation row"),
        "{w}"
    );
}
