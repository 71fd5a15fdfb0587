//! Where an instruction is: its module, the machine function holding it,
//! the source function it belongs to (the inlined one, for inlined code) and
//! its source line; looked up once per distinct address.

use flopscope_symbols::{Location, Mapping, Symbolizer};
use std::collections::HashMap;
use std::sync::Arc;

/// A shared, interned name (module, function, file): places are cloned and
/// keyed by name for every instruction, so names must be cheap to copy.
pub type Name = Arc<str>;

/// The source position of an instruction, and the functions around it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Place {
    pub module: Name,
    /// The function the code belongs to in the source: the innermost
    /// inlined function, else the symbol.
    pub function: Name,
    /// The function it was inlined into (the next frame out), if inlined.
    pub inlined_into: Option<Name>,
    /// Every function the instruction belongs to, innermost first: the
    /// source function, those it was inlined into, out to the symbol's.
    pub chain: Arc<[Name]>,
    /// The machine-code function (symbol) holding the instruction, and its
    /// start: the unit whose control flow holds loops.
    pub symbol: Name,
    pub symbol_start: u64,
    pub file: Option<Name>,
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
    names: HashMap<String, Name>,
}

impl<'a> Places<'a> {
    pub fn new(snapshots: &'a [Vec<Mapping>]) -> Places<'a> {
        Places {
            snapshots,
            symbolizer: Symbolizer::new(),
            cache: HashMap::new(),
            names: HashMap::new(),
        }
    }

    /// The one shared copy of `s`.
    fn name(&mut self, s: &str) -> Name {
        if let Some(n) = self.names.get(s) {
            return n.clone();
        }
        let n: Name = Arc::from(s);
        self.names.insert(s.to_string(), n.clone());
        n
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
            .and_then(|maps| maps.iter().find(|m| m.contains(pc)))
            .cloned();
        let Some(map) = map else {
            // Code outside every file mapping (generated code, the vDSO).
            let page = self.name(&format!("[anonymous]+{:#x}", pc & !0xfff));
            return Place {
                module: self.name("[anonymous]"),
                function: page.clone(),
                inlined_into: None,
                chain: Arc::from([page.clone()]),
                symbol: page,
                symbol_start: pc & !0xfff,
                file: None,
                line: None,
                offset: pc,
            };
        };
        let loc: Location = self.symbolizer.locate(&map, pc);
        let module = self.name(&map.path.display().to_string());
        let function = self.name(&loc.source_function());
        let inlined_into = loc.inlined_into().map(|f| self.name(&f));
        let mut chain: Vec<Name> = Vec::with_capacity(loc.frames.len().max(1));
        for f in loc.frames.iter().filter_map(|f| f.function.as_deref()) {
            let n = self.name(f);
            if chain.last() != Some(&n) {
                chain.push(n);
            }
        }
        if chain.is_empty() {
            chain.push(function.clone());
        }
        let innermost = loc.frames.first();
        let file = innermost
            .and_then(|f| f.file.as_deref())
            .map(|f| self.name(f));
        Place {
            module,
            function,
            inlined_into,
            chain: Arc::from(chain),
            symbol: self.name(&loc.symbol.name),
            symbol_start: loc.symbol.start,
            file,
            line: innermost.and_then(|f| f.line).filter(|l| *l != 0),
            offset: pc - map.start + map.file_offset,
        }
    }
}
