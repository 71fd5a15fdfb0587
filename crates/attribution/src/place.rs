//! Where an instruction is: its module, the machine function holding it,
//! the source function it belongs to (the inlined one, for inlined code) and
//! its source line; looked up once per distinct address.

use flopscope_symbols::{JitSymbol, Location, Mapping, PerfMap, Symbolizer};
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::sync::Arc;

/// A shared, interned name (module, function, file): places are cloned and
/// keyed by name for every instruction, so names must be cheap to copy.
/// Within one [`Places`] equal names are one allocation, so
/// [`Arc::ptr_eq`] is equality (see [`Place::same_site`], [`id`]).
pub type Name = Arc<str>;

/// The identity of an interned name: equal for equal names of one
/// [`Places`], a cheap hash key where hashing the text per instruction
/// would cost more than the rest of the work.
pub fn id(n: &Name) -> usize {
    Arc::as_ptr(n) as *const u8 as usize
}

/// The module name of code outside every file mapping.
pub use flopscope_model::attribution::ANONYMOUS_MODULE as ANONYMOUS;

/// The source position of instructions, and the functions around them:
/// what neighbouring addresses share (see [`Place`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Site {
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
}

/// Where an instruction is: its [`Site`] (shared with the addresses around
/// it: a site is kept once for them, not copied for each of a process's
/// million addresses) and its own offset.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    pub site: &'a Site,
    /// Where the instruction is in its module's file (its address for code
    /// outside every file): the same in every run, whatever the load
    /// address, so samples of another run find it.
    pub offset: u64,
}

impl std::ops::Deref for Place<'_> {
    type Target = Site;
    fn deref(&self) -> &Site {
        self.site
    }
}

impl Place<'_> {
    /// Whether `o` is at the same source position in the same functions
    /// (only the address differs): both from one [`Places`].
    pub fn same_site(&self, o: Place) -> bool {
        std::ptr::eq(self.site, o.site) || self.site.same(o.site)
    }
}

impl Site {
    /// Whether `o` is the same source position in the same functions: both
    /// from one [`Places`].
    fn same(&self, o: &Site) -> bool {
        let opt = |a: &Option<Name>, b: &Option<Name>| match (a, b) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        Arc::ptr_eq(&self.module, &o.module)
            && Arc::ptr_eq(&self.function, &o.function)
            && Arc::ptr_eq(&self.chain, &o.chain)
            && Arc::ptr_eq(&self.symbol, &o.symbol)
            && self.symbol_start == o.symbol_start
            && self.line == o.line
            && opt(&self.file, &o.file)
            && opt(&self.inlined_into, &o.inlined_into)
    }
}

/// Where the function holding `pc`, code outside every file, starts: its
/// perf map entry's start (`named`), else its page's.
pub fn anonymous_start(named: Option<&JitSymbol>, pc: u64) -> u64 {
    named.map_or(pc & !0xfff, |s| s.start)
}

/// Looks places up, once per (snapshot, address).
pub struct Places<'a> {
    snapshots: &'a [Vec<Mapping>],
    /// The names the program's JIT compiler gave its code (its perf map).
    jit: Option<&'a PerfMap>,
    /// Shared by the processes of a job: each module is loaded once.
    symbolizer: &'a mut Symbolizer,
    sites: Vec<Site>,
    /// Each address looked up: its site (in `sites`) and offset.
    places: Vec<(u32, u64)>,
    cache: FxHashMap<(usize, u64), u32>,
    names: HashMap<String, Name>,
    /// The names the last place used: neighbouring addresses mostly have
    /// the same, found here without hashing the text.
    recent: Vec<Name>,
    /// The last mapping an address was found in, (snapshot, index): code
    /// runs in few mappings, most look-ups hit it.
    last_map: Option<(usize, usize)>,
    /// Module names by (snapshot, mapping index).
    modules: FxHashMap<(usize, usize), Name>,
    /// Where the last place looked up holds for other addresses too.
    span: Option<Span>,
}

/// Addresses whose place is that of an earlier one but for the offset
/// ([`Symbolizer::same_until`]): the rest of a block's instructions, most
/// often, found without asking the symbolizer and naming each again.
struct Span {
    snapshot: usize,
    /// The addresses, `from..until`, all in one mapping.
    from: u64,
    until: u64,
    /// The site of `from`, by number.
    site: u32,
    /// The mapping's start and file offset (0 and 0 outside every file,
    /// where the offset is the address).
    map_start: u64,
    file_offset: u64,
}

impl<'a> Places<'a> {
    /// Places under `snapshots`, for about `addresses` addresses;
    /// `symbolizer` should answer each address once
    /// ([`Symbolizer::asked_once`]): this keeps the answers.
    pub fn new(
        snapshots: &'a [Vec<Mapping>],
        jit: Option<&'a PerfMap>,
        symbolizer: &'a mut Symbolizer,
        addresses: usize,
    ) -> Places<'a> {
        Places {
            snapshots,
            jit,
            symbolizer,
            sites: Vec::new(),
            places: Vec::with_capacity(addresses),
            cache: FxHashMap::default(),
            names: HashMap::new(),
            recent: Vec::new(),
            last_map: None,
            modules: FxHashMap::default(),
            span: None,
        }
    }

    /// The one shared copy of `s`.
    fn name(&mut self, s: &str) -> Name {
        let n = match self.recent.iter().find(|n| &***n == s) {
            Some(n) => n.clone(),
            None => match self.names.get(s) {
                Some(n) => n.clone(),
                None => {
                    let n: Name = Arc::from(s);
                    self.names.insert(s.to_string(), n.clone());
                    n
                }
            },
        };
        self.recent.push(n.clone());
        n
    }

    /// The place of `pc` under the mappings of `snapshot`.
    pub fn of(&mut self, snapshot: usize, pc: u64) -> Place<'_> {
        let i = self.index(snapshot, pc);
        self.get(i)
    }

    /// The number of the place of `pc` under the mappings of `snapshot`
    /// (for [`Places::get`]): held where several places are needed at once.
    ///
    /// An address in the last look-up's span is placed without hashing
    /// (most instructions of code without line tables: a compiler's, an
    /// interpreter's, LLVM's), even if it was placed before: it then has
    /// two numbers for one place. Only looked-up addresses are kept by
    /// address, so that each is asked of the symbolizer once.
    pub fn index(&mut self, snapshot: usize, pc: u64) -> u32 {
        let i = u32::try_from(self.places.len()).expect("fewer than 2^32 executed addresses");
        if let Some(s) = &self.span {
            if s.snapshot == snapshot && (s.from..s.until).contains(&pc) {
                let offset = pc - s.map_start + s.file_offset;
                self.places.push((s.site, offset));
                return i;
            }
        }
        let key = (snapshot, pc);
        if let Some(&i) = self.cache.get(&key) {
            return i;
        }
        let (site, offset, span) = self.look_up(snapshot, pc);
        let at = u32::try_from(self.sites.len()).expect("fewer than 2^32 sites");
        self.sites.push(site);
        self.places.push((at, offset));
        self.span = span.map(|(until, map_start, file_offset)| Span {
            snapshot,
            from: pc,
            until,
            site: at,
            map_start,
            file_offset,
        });
        self.cache.insert(key, i);
        i
    }

    /// The place numbered `i` by [`Places::index`].
    pub fn get(&self, i: u32) -> Place<'_> {
        let (site, offset) = self.places[i as usize];
        Place {
            site: &self.sites[site as usize],
            offset,
        }
    }

    /// The mapping holding `pc` in `snapshot`, by index.
    fn mapping(&mut self, snapshot: usize, pc: u64) -> Option<usize> {
        let maps = self.snapshots.get(snapshot)?;
        if let Some((s, i)) = self.last_map {
            if s == snapshot && maps[i].contains(pc) {
                return Some(i);
            }
        }
        let i = maps.iter().position(|m| m.contains(pc))?;
        self.last_map = Some((snapshot, i));
        Some(i)
    }

    /// `chain`, as the previous place's copy when equal: neighbouring
    /// addresses mostly share their chain, and `same_site` compares chains
    /// by address.
    fn shared_chain(&self, chain: Vec<Name>) -> Arc<[Name]> {
        match self.sites.last() {
            Some(prev)
                if prev.chain.len() == chain.len()
                    && prev
                        .chain
                        .iter()
                        .zip(&chain)
                        .all(|(a, b)| Arc::ptr_eq(a, b)) =>
            {
                prev.chain.clone()
            }
            _ => Arc::from(chain),
        }
    }

    /// The site and offset of `pc`, and how far on the answer holds (see
    /// [`Span`]): (until, mapping start, file offset).
    fn look_up(&mut self, snapshot: usize, pc: u64) -> (Site, u64, Option<(u64, u64, u64)>) {
        // Keep the previous place's names (the last few) as candidates.
        if self.recent.len() > 16 {
            self.recent.drain(..self.recent.len() - 16);
        }
        let found = self.mapping(snapshot, pc);
        let Some(at) = found else {
            // Code outside every file mapping (generated code, the vDSO):
            // named by the program's perf map, else by page.
            let named = self.jit.and_then(|j| j.lookup(pc));
            let start = anonymous_start(named, pc);
            let (function, until) = match named {
                Some(s) => (self.name(&s.name), s.end),
                None => (
                    self.name(&format!("{ANONYMOUS}+{start:#x}")),
                    (pc | 0xfff) + 1,
                ),
            };
            let until = until.min(self.jit.map_or(u64::MAX, |j| j.next_start(pc)));
            let site = Site {
                module: self.name(ANONYMOUS),
                function: function.clone(),
                inlined_into: None,
                chain: self.shared_chain(vec![function.clone()]),
                symbol: function,
                symbol_start: start,
                file: None,
                line: None,
            };
            return (site, pc, Some((until, 0, 0)));
        };
        let snapshots = self.snapshots;
        let map = &snapshots[snapshot][at];
        let loc: Location = self.symbolizer.locate(map, pc);
        let span = loc.frames.is_empty().then(|| {
            let until = self.symbolizer.same_until(map, pc);
            (until, map.start, map.file_offset)
        });
        let offset = pc - map.start + map.file_offset;
        let module = match self.modules.get(&(snapshot, at)) {
            Some(m) => m.clone(),
            None => {
                let m = self.name(&map.path.to_string_lossy());
                self.modules.insert((snapshot, at), m.clone());
                m
            }
        };
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
        let chain = self.shared_chain(chain);
        let innermost = loc.frames.first();
        let file = innermost
            .and_then(|f| f.file.as_deref())
            .map(|f| self.name(f));
        let site = Site {
            module,
            function,
            inlined_into,
            chain,
            symbol: self.name(&loc.symbol.name),
            symbol_start: loc.symbol.start,
            file,
            line: innermost.and_then(|f| f.line).filter(|l| *l != 0),
        };
        (site, offset, span)
    }
}
