//! Names for PLT stubs (`scale@plt`), as objdump shows them: a call into a
//! shared library goes through one, and naming it lets a call graph follow
//! the call to the function it reaches. `object` reads the sections and the
//! dynamic relocations; which GOT slot a stub jumps through is read from the
//! stub's `jmp qword ptr [rip+disp]` (no crate synthesizes these names).

use object::{Object, ObjectSection, ObjectSymbol, ObjectSymbolTable, RelocationTarget};
use std::collections::HashMap;

/// (start, size, name) of every PLT stub whose GOT slot a dynamic
/// relocation names, in the file's address space.
pub(crate) fn stubs(file: &object::File<'_>) -> Vec<(u64, u64, String)> {
    let mut slot_names: HashMap<u64, String> = HashMap::new();
    if let (Some(relocs), Some(table)) = (file.dynamic_relocations(), file.dynamic_symbol_table()) {
        for (got, r) in relocs {
            if let RelocationTarget::Symbol(i) = r.target() {
                if let Some(name) = table.symbol_by_index(i).ok().and_then(|s| s.name().ok()) {
                    if !name.is_empty() {
                        slot_names.insert(got, name.to_string());
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    if slot_names.is_empty() {
        return out;
    }
    for (section, stride) in [(".plt", 16u64), (".plt.sec", 16), (".plt.got", 8)] {
        let Some(s) = file.section_by_name(section) else {
            continue;
        };
        let Ok(data) = s.data() else { continue };
        let base = s.address();
        let mut at = 0u64;
        while at + stride <= data.len() as u64 {
            let entry = &data[at as usize..(at + stride) as usize];
            // endbr64 and a bnd prefix may come first.
            if let Some(k) = entry.windows(2).position(|w| w == [0xff, 0x25]) {
                if let Some(d) = entry.get(k + 2..k + 6) {
                    let disp = i32::from_le_bytes(d.try_into().expect("4 bytes"));
                    let next = base + at + k as u64 + 6;
                    let got = next.wrapping_add(disp as i64 as u64);
                    if let Some(name) = slot_names.get(&got) {
                        out.push((base + at, stride, format!("{name}@plt")));
                    }
                }
            }
            at += stride;
        }
    }
    out
}
