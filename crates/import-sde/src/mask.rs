//! The dynamic mask profile parser: `sde -odyn_mask_profile FILE` (XML).
//!
//! Per thread SDE writes a summary table (plain text rows inside
//! `<summarytable>`) and one `<instruction-details>` element per instruction:
//!
//! ```text
//! <thread>
//!     <thread-number> 0 </thread-number>
//!     <summarytable>
//!     mask     cat  vec-length #elements element_s element_t |   icount comp_count %max-comp
//!     masked   mask  512b      8elem     64b       fp        |   862280    5052521     73.24
//!     </summarytable>
//!     <instruction-details>
//!         <disassembly> vfmadd213pd zmm1{k1}, zmm2, zmm3 </disassembly>
//!         <execution-counts> 862280 </execution-counts>
//!         <computation-count> 5052521 </computation-count>
//!     </instruction-details>
//! </thread>
//! ```
//!
//! The columns are those of Intel's "Calculating FLOP using Intel SDE"
//! (shared/seeds/000): mask (masked/unmasked), category (`mask` for
//! computation, data transfer, sparse), vector length, maximal elements,
//! element size, element type (`fp`/`int`), instruction count, computation
//! count (active lanes, FMA counted once) and lane utilisation. The element
//! names are those the public SDE FLOP scripts read. A detail's `<address>`,
//! `<image>` and `<function>` are kept for the fp instructions (they place
//! masked FLOP in functions, see [`FpDetail`]); other elements are skipped,
//! and so is anything outside `<thread>`; a single root element is not
//! required. The location elements follow the layout of public descriptions:
//! no real profile with them has been checked here.

use crate::error::{quote, SdeError};
use crate::iform::{fp_disassembly, DisassembledFma, DisassembledFp};
use flopscope_model::Precision;
use quick_xml::events::Event;
use quick_xml::Reader;

/// One row of a thread's summary table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryRow {
    /// `masked` (true) or `unmasked`.
    pub masked: bool,
    /// `mask` for computation; data-transfer and sparse categories otherwise.
    pub category: String,
    pub vector_bits: u32,
    pub max_elements: u32,
    pub element_bits: u32,
    /// `fp` or `int`.
    pub element_type: String,
    pub icount: u64,
    /// Active lanes over all executions (FMA counted once).
    pub comp_count: u64,
    pub line: usize,
}

impl SummaryRow {
    /// Masked floating-point computation: the rows whose `comp_count` is masked FLOP.
    pub fn is_masked_fp_computation(&self) -> bool {
        self.masked && self.category == "mask" && self.element_type == "fp"
    }
}

/// One FMA instruction of the per-instruction details.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FmaDetail {
    pub form: DisassembledFma,
    pub executions: u64,
    /// Active lanes over all executions.
    pub computations: u64,
    pub line: usize,
}

/// One fp instruction of the per-instruction details, where it is: every
/// FMA and every other masked fp computation ([`DisassembledFp`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FpDetail {
    pub form: DisassembledFp,
    pub executions: u64,
    /// Active lanes over all executions.
    pub computations: u64,
    /// `<address>`, `<image>` and `<function>`, when the detail has them.
    pub address: Option<u64>,
    pub image: Option<String>,
    pub function: Option<String>,
    pub line: usize,
}

/// One `<thread>` of the profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MaskThread {
    pub tid: u64,
    pub line: usize,
    pub rows: Vec<SummaryRow>,
    /// The FMA instructions among the details.
    pub fma: Vec<FmaDetail>,
    /// The FMA and masked fp computation details with their location (a
    /// masked computation without both counts is left out).
    pub fp: Vec<FpDetail>,
}

/// A parsed dynamic mask profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MaskProfile {
    pub name: String,
    pub threads: Vec<MaskThread>,
    pub notes: Vec<String>,
}

/// The precision of a summary row's elements (`64b` fp is double, ...).
pub fn row_precision(row: &SummaryRow) -> Option<Precision> {
    match row.element_bits {
        64 => Some(Precision::Fp64),
        32 => Some(Precision::Fp32),
        16 => Some(Precision::Fp16),
        _ => None,
    }
}

const WHAT_MASK: &str = "an Intel SDE dynamic mask profile (`sde -odyn_mask_profile FILE`, XML)";

/// Byte offset -> 1-based line number.
struct Lines(Vec<usize>);

impl Lines {
    fn new(text: &str) -> Lines {
        Lines(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i)
                .collect(),
        )
    }
    fn at(&self, offset: usize) -> usize {
        self.0.partition_point(|&nl| nl < offset) + 1
    }
}

#[derive(Default)]
struct Detail {
    line: usize,
    disassembly: Option<(String, usize)>,
    executions: Option<(u64, usize)>,
    computations: Option<(u64, usize)>,
    address: Option<u64>,
    image: Option<String>,
    function: Option<String>,
}

/// Parses the text of a dynamic mask profile. `name` is used in messages.
pub fn parse_mask_profile(text: &str, name: &str) -> Result<MaskProfile, SdeError> {
    if text.trim().is_empty() {
        return Err(SdeError::parse(name, 1, WHAT_MASK, "an empty file"));
    }
    let lines = Lines::new(text);
    let mut reader = Reader::from_str(text);
    reader.config_mut().trim_text(false);

    let mut profile = MaskProfile {
        name: name.to_string(),
        ..MaskProfile::default()
    };
    let mut stack: Vec<(String, usize)> = Vec::new();
    let mut thread: Option<(MaskThread, bool)> = None; // (thread, saw <thread-number>)
    let mut detail: Option<Detail> = None;
    let mut text_buf = String::new();
    let mut text_line = 0usize;
    let mut outside_content = 0usize;

    loop {
        let start = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
        let line = lines.at(start.min(text.len()));
        let event = reader.read_event().map_err(|e| {
            let at = usize::try_from(reader.error_position())
                .unwrap_or(usize::MAX)
                .min(text.len());
            SdeError::parse(
                name,
                lines.at(at),
                "well-formed XML",
                format!("an XML error: {e}"),
            )
        })?;
        match event {
            Event::Start(e) => {
                let tag = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                open_element(
                    &tag,
                    line,
                    &mut thread,
                    &mut detail,
                    &mut outside_content,
                    name,
                )?;
                stack.push((tag, line));
                text_buf.clear();
                text_line = line;
            }
            Event::Empty(e) => {
                let tag = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                open_element(
                    &tag,
                    line,
                    &mut thread,
                    &mut detail,
                    &mut outside_content,
                    name,
                )?;
                close_element(
                    &tag,
                    line,
                    "",
                    line,
                    &mut thread,
                    &mut detail,
                    &mut profile,
                    name,
                )?;
            }
            Event::End(e) => {
                let tag = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                match stack.pop() {
                    Some((open, _)) if open == tag => {}
                    Some((open, open_line)) => {
                        return Err(SdeError::parse(
                            name,
                            line,
                            format!("`</{open}>` (closing the element of line {open_line})"),
                            format!("`</{tag}>`"),
                        ))
                    }
                    None => {
                        return Err(SdeError::parse(
                            name,
                            line,
                            "an opening tag",
                            format!("`</{tag}>`"),
                        ))
                    }
                }
                close_element(
                    &tag,
                    line,
                    &text_buf,
                    text_line,
                    &mut thread,
                    &mut detail,
                    &mut profile,
                    name,
                )?;
                text_buf.clear();
            }
            Event::Text(t) => {
                let piece = t.unescape().map_err(|e| {
                    SdeError::parse(
                        name,
                        line,
                        "text with valid XML entities",
                        format!("an XML error: {e}"),
                    )
                })?;
                if text_buf.is_empty() {
                    text_line = line;
                }
                text_buf.push_str(&piece);
            }
            Event::CData(t) => {
                if text_buf.is_empty() {
                    text_line = line;
                }
                text_buf.push_str(&String::from_utf8_lossy(&t));
            }
            Event::Eof => break,
            _ => {} // declaration, comments, processing instructions, doctype
        }
    }

    if let Some((tag, open_line)) = stack.last() {
        return Err(SdeError::parse(
            name,
            text.lines().count().max(1),
            format!("`</{tag}>` (closing the element of line {open_line})"),
            "the end of the file (the file is truncated: SDE completes it when the program exits)",
        ));
    }
    if profile.threads.is_empty() {
        let first = text.lines().next().unwrap_or("");
        return Err(SdeError::parse(
            name,
            1,
            WHAT_MASK,
            format!("{} and no `<thread>` element in the file", quote(first)),
        ));
    }
    if outside_content > 0 {
        profile.notes.push(format!(
            "{outside_content} summary tables or instruction details outside any `<thread>` element were not read"
        ));
    }
    profile.threads.sort_by_key(|t| t.tid);
    for pair in profile.threads.windows(2) {
        if pair[0].tid == pair[1].tid {
            return Err(SdeError::parse(
                name,
                pair[1].line,
                format!(
                    "one `<thread>` per thread number (thread {} is also at line {})",
                    pair[0].tid, pair[0].line
                ),
                format!("a second `<thread>` numbered {}", pair[1].tid),
            ));
        }
    }
    Ok(profile)
}

fn open_element(
    tag: &str,
    line: usize,
    thread: &mut Option<(MaskThread, bool)>,
    detail: &mut Option<Detail>,
    outside_content: &mut usize,
    name: &str,
) -> Result<(), SdeError> {
    match tag {
        "thread" => {
            if let Some((t, _)) = thread {
                return Err(SdeError::parse(
                    name,
                    line,
                    format!("`</thread>` (closing the thread of line {})", t.line),
                    "a nested `<thread>`",
                ));
            }
            *thread = Some((
                MaskThread {
                    line,
                    ..MaskThread::default()
                },
                false,
            ));
        }
        "instruction-details" => {
            if thread.is_none() {
                *outside_content += 1;
            } else if detail.is_some() {
                return Err(SdeError::parse(
                    name,
                    line,
                    "`</instruction-details>`",
                    "a nested `<instruction-details>`",
                ));
            } else {
                *detail = Some(Detail {
                    line,
                    ..Detail::default()
                });
            }
        }
        "summarytable" if thread.is_none() => *outside_content += 1,
        _ => {}
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn close_element(
    tag: &str,
    line: usize,
    text: &str,
    text_line: usize,
    thread: &mut Option<(MaskThread, bool)>,
    detail: &mut Option<Detail>,
    profile: &mut MaskProfile,
    name: &str,
) -> Result<(), SdeError> {
    let number = |what: &str| -> Result<u64, SdeError> {
        text.trim().parse::<u64>().map_err(|_| {
            SdeError::parse(
                name,
                text_line,
                format!("a decimal count in `<{what}>`"),
                quote(text.trim()),
            )
        })
    };
    match tag {
        "thread" => {
            if let Some((t, saw_number)) = thread.take() {
                if !saw_number {
                    return Err(SdeError::parse(
                        name,
                        t.line,
                        "a `<thread-number>` in this `<thread>`",
                        "a thread without one",
                    ));
                }
                profile.threads.push(t);
            }
        }
        "thread-number" => {
            if let Some((t, saw)) = thread {
                t.tid = number(tag)?;
                *saw = true;
            }
        }
        "summarytable" => {
            if let Some((t, _)) = thread {
                for (i, row) in text.split('\n').enumerate() {
                    if let Some(row) = summary_row(row, text_line + i, name)? {
                        t.rows.push(row);
                    }
                }
            }
        }
        "disassembly" | "execution-counts" | "computation-count" => {
            if let Some(d) = detail {
                match tag {
                    "disassembly" => d.disassembly = Some((text.trim().to_string(), text_line)),
                    "execution-counts" => d.executions = Some((number(tag)?, text_line)),
                    _ => d.computations = Some((number(tag)?, text_line)),
                }
            }
        }
        // Where the instruction is: only used to place it in a function, so a
        // value that does not read leaves it unplaced rather than failing.
        "address" | "image" | "function" => {
            if let Some(d) = detail {
                let value = text.trim();
                match tag {
                    "address" => d.address = hex(value),
                    "image" => d.image = (!value.is_empty()).then(|| value.to_string()),
                    _ => d.function = (!value.is_empty()).then(|| value.to_string()),
                }
            }
        }
        "instruction-details" => {
            let (Some(d), Some((t, _))) = (detail.take(), thread.as_mut()) else {
                return Ok(());
            };
            let Some((text, _)) = &d.disassembly else {
                return Ok(());
            };
            let Some(form) = fp_disassembly(text) else {
                return Ok(());
            };
            let (executions, computations) = match (d.executions, d.computations) {
                (Some((e, _)), Some((c, _))) => (e, c),
                // The FMA arithmetic needs both counts: a detail without them is bad input.
                (e, _) if form.fma => {
                    let what = if e.is_none() {
                        "execution-counts"
                    } else {
                        "computation-count"
                    };
                    return Err(SdeError::parse(
                        name,
                        line,
                        format!("a `<{what}>` in the details of `{text}` (line {})", d.line),
                        "`</instruction-details>`",
                    ));
                }
                _ => return Ok(()),
            };
            if form.fma {
                t.fma.push(FmaDetail {
                    form: form.as_fma(),
                    executions,
                    computations,
                    line: d.line,
                });
            }
            t.fp.push(FpDetail {
                form,
                executions,
                computations,
                address: d.address,
                image: d.image,
                function: d.function,
                line: d.line,
            });
        }
        _ => {}
    }
    Ok(())
}

/// `0x0000000000401a20` (or without `0x`).
fn hex(text: &str) -> Option<u64> {
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    u64::from_str_radix(digits, 16).ok()
}

/// One line of a summary table: a data row (first word `masked` or
/// `unmasked`), or `None` for headers, rules and blank lines.
fn summary_row(text: &str, line: usize, name: &str) -> Result<Option<SummaryRow>, SdeError> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let masked = match words.first() {
        Some(&"masked") => true,
        Some(&"unmasked") => false,
        _ => return Ok(None),
    };
    let expected = "a summary row `masked|unmasked CAT <bits>b <n>elem <bits>b fp|int | ICOUNT COMP_COUNT [%]`";
    let bad = || SdeError::parse(name, line, expected, quote(text.trim()));
    let (left, right) = text.split_once('|').ok_or_else(bad)?;
    let left: Vec<&str> = left.split_whitespace().collect();
    let right: Vec<&str> = right.split_whitespace().collect();
    let [_, category, vec_len, elements, element_size, element_type] = left.as_slice() else {
        return Err(bad());
    };
    let suffixed = |word: &str, suffix: &str| {
        word.strip_suffix(suffix)
            .and_then(|n| n.parse::<u32>().ok())
    };
    let (Some(vector_bits), Some(max_elements), Some(element_bits)) = (
        suffixed(vec_len, "b"),
        suffixed(elements, "elem"),
        suffixed(element_size, "b"),
    ) else {
        return Err(bad());
    };
    let (Some(icount), Some(comp_count)) = (
        right.first().and_then(|w| w.parse::<u64>().ok()),
        right.get(1).and_then(|w| w.parse::<u64>().ok()),
    ) else {
        return Err(bad());
    };
    Ok(Some(SummaryRow {
        masked,
        category: category.to_string(),
        vector_bits,
        max_elements,
        element_bits,
        element_type: element_type.to_string(),
        icount,
        comp_count,
        line,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"<?xml version="1.0"?>
<dynamic-mask-profile>
<thread>
    <thread-number> 2 </thread-number>
    <summarytable>
    mask     cat  vec-length #elements element_s element_t |   icount comp_count %max-comp
    masked   mask  512b      8elem     64b       fp        |       10         50     62.50
    </summarytable>
    <instruction-details>
        <disassembly> vfmadd213pd zmm1{k1}, zmm2, zmm3 </disassembly>
        <execution-counts> 10 </execution-counts>
        <computation-count> 50 </computation-count>
    </instruction-details>
</thread>
</dynamic-mask-profile>
"#;

    #[test]
    fn reads_rows_and_fma_details_with_lines() {
        let p = parse_mask_profile(SMALL, "p").unwrap();
        let t = &p.threads[0];
        assert_eq!(t.tid, 2);
        assert_eq!(t.rows.len(), 1);
        assert_eq!(
            (t.rows[0].line, t.rows[0].comp_count, t.rows[0].element_bits),
            (7, 50, 64)
        );
        assert!(t.rows[0].is_masked_fp_computation());
        assert_eq!(
            (t.fma[0].executions, t.fma[0].computations, t.fma[0].line),
            (10, 50, 9)
        );
        assert!(t.fma[0].form.masked);
    }

    #[test]
    fn fp_details_keep_where_they_are() {
        let text = SMALL.replace(
            "<disassembly> vfmadd213pd",
            "<address> 0x0000000000401a20 </address>\n<image> /a.out </image>\n<function> k </function>\n<disassembly> vfmadd213pd",
        )
        .replace(
            "</thread>",
            "<instruction-details><address> 0x401a26 </address><disassembly> vaddpd zmm0{k2}, zmm1, zmm2 </disassembly>\
             <execution-counts> 4 </execution-counts><computation-count> 9 </computation-count></instruction-details>\
             <instruction-details><disassembly> vaddpd zmm0, zmm1, zmm2 </disassembly>\
             <execution-counts> 4 </execution-counts><computation-count> 32 </computation-count></instruction-details>\n</thread>",
        );
        let p = parse_mask_profile(&text, "p").unwrap();
        let fp = &p.threads[0].fp;
        // The FMA and the masked vaddpd; the unmasked vaddpd is not needed.
        assert_eq!(fp.len(), 2);
        assert_eq!(
            (
                fp[0].address,
                fp[0].image.as_deref(),
                fp[0].function.as_deref(),
                fp[0].form.fma
            ),
            (Some(0x401a20), Some("/a.out"), Some("k"), true)
        );
        assert_eq!(
            (
                fp[1].address,
                fp[1].function.as_deref(),
                fp[1].executions,
                fp[1].computations,
                fp[1].form.fma
            ),
            (Some(0x401a26), None, 4, 9, false)
        );
        assert_eq!(p.threads[0].fma.len(), 1);
    }

    #[test]
    fn truncated_profile_names_the_open_element() {
        let cut = &SMALL[..SMALL.find("<execution-counts>").unwrap()];
        let e = parse_mask_profile(cut, "p").unwrap_err();
        assert!(
            e.to_string().contains("expected `</instruction-details>`"),
            "{e}"
        );
        assert!(e.to_string().contains("truncated"), "{e}");
    }

    #[test]
    fn bad_row_is_an_error_at_its_line() {
        let text = SMALL.replace("|       10         50", "|       ten        50");
        let e = parse_mask_profile(&text, "p").unwrap_err();
        assert_eq!(e.line(), Some(7), "{e}");
    }
}
