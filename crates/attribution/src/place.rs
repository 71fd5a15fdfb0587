//! Where an instruction is: its module, the machine function holding it,
//! the source function it belongs to (the inlined one, for inlined code) and
//! its source line; looked up once per distinct address.

use flopscope_symbols::{Location, Mapping, Symbolizer};
use std::collections::HashMap;

/// The source position of an instruction, and the functions around it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Place {
    pub module: String,
    /// The function the code belongs to in the source: the innermost
    /// inlined function, else the symbol.
    pub function: String,
    /// The function it was inlined into (the next frame out), if inlined.
    pub inlined_into: Option<String>,
    /// Every function the instruction belongs to, innermost first: the
    /// source function, those it was inlined into, out to the symbol's.
    pub chain: Vec<String>,
    /// The machine-code function (symbol) holding the instruction, and its
    /// start: the unit whose control flow holds loops.
    pub symbol: String,
    pub symbol_start: u64,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// Where the instruction is in its module's file (its address for code
    /// outside every file): the same in every run, whatever the load
    /// address, so samples of another run find it.
    pub offset: u64,
}

/// Looks places up, caching per (snapshot, address).
pub struct Places<'a> {
    snapshots: &'a [Vec<Mapping>],
    symbolizer: Symbolizer,
    cache: HashMap<(usize, u64), Place>,
}

impl<'a> Places<'a> {
    pub fn new(snapshots: &'a [Vec<Mapping>]) -> Places<'a> {
        Places {
            snapshots,
            symbolizer: Symbolizer::new(),
            cache: HashMap::new(),
        }
    }

    /// The place of `pc` under the mappings of `snapshot`.
    pub fn of(&mut self, snapshot: usize, pc: u64) -> &Place {
        let key = (snapshot, pc);
        if !self.cache.contains_key(&key) {
            let place = self.look_up(snapshot, pc);
            self.cache.insert(key, place);
        }
        &self.cache[&key]
    }

    fn look_up(&mut self, snapshot: usize, pc: u64) -> Place {
        let map = self
            .snapshots
            .get(snapshot)
            .and_then(|maps| maps.iter().find(|m| m.contains(pc)));
        let Some(map) = map else {
            // Code outside every file mapping (generated code, the vDSO).
            return Place {
                module: "[anonymous]".into(),
                function: format!("[anonymous]+{:#x}", pc & !0xfff),
                inlined_into: None,
                chain: vec![format!("[anonymous]+{:#x}", pc & !0xfff)],
                symbol: format!("[anonymous]+{:#x}", pc & !0xfff),
                symbol_start: pc & !0xfff,
                file: None,
                line: None,
                offset: pc,
            };
        };
        let loc: Location = self.symbolizer.locate(map, pc);
        let module = map.path.display().to_string();
        let innermost = loc.frames.first();
        let function = loc.source_function();
        let inlined_into = loc.inlined_into();
        let mut chain: Vec<String> = loc
            .frames
            .iter()
            .filter_map(|f| f.function.clone())
            .collect();
        if chain.is_empty() {
            chain.push(function.clone());
        }
        chain.dedup();
        Place {
            module,
            function,
            inlined_into,
            chain,
            symbol: loc.symbol.name.clone(),
            symbol_start: loc.symbol.start,
            file: innermost.and_then(|f| f.file.clone()),
            line: innermost.and_then(|f| f.line).filter(|l| *l != 0),
            offset: pc - map.start + map.file_offset,
        }
    }
}
