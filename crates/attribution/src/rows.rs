//! Counts keyed by function, source line and loop, and the report rows
//! made of them.

use crate::executed::{ExecInsn, Executed};
use crate::loops::{self, Node};
use crate::place::{self, Name, Place, Places};
use crate::tally::{Sampled, Tally};
use crate::time::Samples;
use flopscope_counter_file::profile::End;
use flopscope_model::started;
use flopscope_model::{
    gflops, intensity, Bytes, Counts, FunctionRow, Inclusive, Intensity, LineRow, LoopRow, Report,
    Seconds, Summary,
};
use flopscope_symbols::Symbolizer;
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::calls::{Calls, FnKey};
/// (module, file, line, function)
pub(crate) type LineKey = (Name, Option<Name>, Option<u32>, Name);

#[derive(Debug, Clone, Default)]
pub(crate) struct FnAcc {
    pub counts: Counts,
    /// The symbol's start when the function is one, else its lowest address.
    pub address: u64,
    pub inlined_into: BTreeSet<Name>,
    /// Lowest source line seen, with its file (the declaration, near enough:
    /// a function's entry code carries its opening line).
    pub first_line: Option<(u32, Name)>,
}

impl FnAcc {
    /// Adds another attribution's accumulator of the same function.
    fn add(&mut self, f: &FnAcc) {
        self.counts.merge(&f.counts);
        self.address = self.address.min(f.address);
        self.inlined_into.extend(f.inlined_into.iter().cloned());
        if self.first_line.is_none() || f.first_line < self.first_line {
            self.first_line = f.first_line.clone().or(self.first_line.take());
        }
    }
}

#[derive(Debug, Clone, Default)]
struct LoopAcc {
    function: String,
    module: String,
    file: Option<String>,
    line: Option<u32>,
    header: u64,
    parent: Option<usize>,
    entries: u64,
    iterations: u64,
    counts: Counts,
    self_counts: Counts,
    /// (module, file offset) of the body's instructions.
    body: BTreeSet<(Name, u64)>,
}

/// One process's (or a merged job's) attribution.
#[derive(Debug, Clone, Default)]
pub struct Attribution {
    functions: BTreeMap<FnKey, FnAcc>,
    lines: BTreeMap<LineKey, Counts>,
    loops: Vec<LoopAcc>,
    /// (module, file offset) of every instruction executed -> its function
    /// and those it was inlined into (innermost first).
    at: HashMap<(Name, u64), Vec<FnKey>>,
    calls: Calls,
}

impl Attribution {
    /// Attributes one process's executed code; `sampled`: the addresses
    /// time samples fell on, when rows get time (see `tally::sampled`);
    /// `symbolizer` one [`Symbolizer::asked_once`], kept for the next
    /// process (they map the same libraries: each loads once).
    pub fn of(
        ex: &Executed,
        sampled: Option<&Sampled>,
        symbolizer: &mut Symbolizer,
    ) -> Attribution {
        let addresses = ex.insns();
        let mut places = Places::new(
            &ex.snapshots,
            ex.jit_names.as_deref(),
            symbolizer,
            addresses,
        );
        let mut out = Attribution::default();
        let mut tally = Tally::default();
        // Each instruction's place, in block order: looked up once here.
        let mut at_of: Vec<u32> = Vec::with_capacity(addresses);
        for b in &ex.blocks {
            // Runs of instructions at one site are added once: a site's
            // maps are keyed by several names, an instruction's counts are
            // a few small maps.
            let mut group: Option<(u32, u64, Counts)> = None;
            for i in &b.insns {
                let at = places.index(b.snapshot, i.pc);
                at_of.push(at);
                let p = places.get(at);
                if sampled.is_some_and(|s| s.contains(&p.offset)) {
                    out.at
                        .entry((p.module.clone(), p.offset))
                        .or_insert_with(|| chain_keys(p));
                }
                match &mut group {
                    Some((g, _, c)) if places.get(*g).same_site(p) => ex.add_counts(c, i),
                    _ => {
                        if let Some((g, pc, c)) = group.take() {
                            tally.add(places.get(g), pc, &c);
                        }
                        let mut c = Counts::default();
                        ex.add_counts(&mut c, i);
                        group = Some((at, i.pc, c));
                    }
                }
            }
            if let Some((g, pc, c)) = group {
                tally.add(places.get(g), pc, &c);
            }
        }
        out.functions = tally.functions.into_values().collect();
        out.lines = tally.lines.into_values().collect();
        out.calls.local = tally.local.into_values().collect();
        out.loops = find_loops(ex, &mut places, sampled, &at_of);
        out.add_calls(ex, &mut places, &at_of);
        out
    }

    /// Whether nothing was attributed (merging into it is moving).
    fn is_empty(&self) -> bool {
        self.functions.is_empty()
            && self.lines.is_empty()
            && self.loops.is_empty()
            && self.at.is_empty()
            && self.calls.local.is_empty()
            && self.calls.edges.is_empty()
            && self.calls.entries.is_empty()
    }

    /// Function entries and direct calls (see `calls`).
    fn add_calls(&mut self, ex: &Executed, places: &mut Places, at_of: &[u32]) {
        let mut first = 0;
        for b in &ex.blocks {
            let at = &at_of[first..first + b.insns.len()];
            first += b.insns.len();
            if b.runs == 0 {
                continue;
            }
            let head = place_at(places, b.snapshot, b.start, &b.insns, at);
            let head = places.get(head);
            if b.start == head.symbol_start && !b.cut {
                *self
                    .calls
                    .entries
                    .entry((head.module.clone(), head.function.clone()))
                    .or_default() += b.runs;
            }
            let (End::Call { target, .. }, Some(&caller)) = (b.end, at.last()) else {
                continue;
            };
            let callee = places.of(b.snapshot, target);
            let to = (callee.module.clone(), callee.function.clone());
            let caller = places.get(caller);
            for f in caller.chain.iter() {
                *self
                    .calls
                    .edges
                    .entry(((caller.module.clone(), f.clone()), to.clone()))
                    .or_default() += b.runs;
            }
        }
    }

    /// Adds another process's attribution (a job's rows cover all of its
    /// processes; loops at one module and header are one loop).
    pub fn merge(&mut self, o: Attribution) {
        if self.is_empty() {
            *self = o;
            return;
        }
        // As `add`, with what only `o` holds moved, not copied: a large
        // image's parts (merged one after the other on one thread) share
        // few functions, lines and loops.
        move_into(&mut self.functions, o.functions, FnAcc::add);
        move_into(&mut self.lines, o.lines, Counts::merge);
        for (k, f) in o.at {
            self.at.entry(k).or_insert(f);
        }
        self.calls.merge(o.calls);
        self.add_loops(o.loops.into_iter().map(Cow::Owned));
    }

    /// The job's attribution: `main`'s and each of `children`'s (still
    /// needed: their own rows are made meanwhile) summed, loops listed in
    /// that order. The largest one is copied whole and the others added to
    /// it: gcc's cc1, added key by key to its driver's few functions, took
    /// 7% of flopscope's time after the run (string keys compared per
    /// function, line and call).
    pub fn job(main: Option<Attribution>, children: &[Option<Attribution>]) -> Attribution {
        let size = |a: &Attribution| a.functions.len() + a.lines.len() + a.at.len();
        let main_size = main.as_ref().map_or(0, size);
        let largest = children
            .iter()
            .enumerate()
            .filter_map(|(i, a)| Some((i, size(a.as_ref()?))))
            .max_by_key(|&(_, s)| s)
            .filter(|&(_, s)| s > main_size);
        let Some((big, _)) = largest else {
            let mut job = main.unwrap_or_default();
            for a in children.iter().flatten() {
                job.add(a);
            }
            return job;
        };
        // Sums do not depend on the order; the loops' list and the first
        // chain kept for a sampled address (`at`, a few entries) do: both
        // are made in the job's order.
        let copied = children[big].as_ref().expect("the largest child's");
        let mut job = Attribution {
            functions: copied.functions.clone(),
            lines: copied.lines.clone(),
            calls: copied.calls.clone(),
            ..Default::default()
        };
        if let Some(m) = main {
            job.merge(m);
        }
        for (i, a) in children.iter().enumerate() {
            match a {
                Some(a) if i == big => {
                    for (k, f) in &a.at {
                        job.at.entry(k.clone()).or_insert_with(|| f.clone());
                    }
                    job.add_loops(a.loops.iter().map(Cow::Borrowed));
                }
                Some(a) => job.add(a),
                None => {}
            }
        }
        job
    }

    /// [`Attribution::merge`] of an attribution still needed (a child
    /// process's, whose own rows are made meanwhile).
    pub fn add(&mut self, o: &Attribution) {
        for (k, f) in &o.functions {
            self.functions
                .entry(k.clone())
                .or_insert_with(|| FnAcc {
                    address: u64::MAX,
                    ..Default::default()
                })
                .add(f);
        }
        for (k, c) in &o.lines {
            self.lines.entry(k.clone()).or_default().merge(c);
        }
        for (k, f) in &o.at {
            self.at.entry(k.clone()).or_insert_with(|| f.clone());
        }
        self.calls.add(&o.calls);
        self.add_loops(o.loops.iter().map(Cow::Borrowed));
    }

    /// Adds `loops` (another attribution's, in its order): a loop this one
    /// has (same module and header) sums into it, a new one is appended,
    /// with its parent's new index.
    fn add_loops<'a>(&mut self, loops: impl Iterator<Item = Cow<'a, LoopAcc>>) {
        let mut index: HashMap<(String, u64), usize> = self
            .loops
            .iter()
            .enumerate()
            .map(|(i, l)| ((l.module.clone(), l.header), i))
            .collect();
        let (mut remap, mut parents) = (Vec::new(), Vec::new());
        for l in loops {
            parents.push(l.parent);
            let key = (l.module.clone(), l.header);
            let at = match index.get(&key) {
                Some(&i) => {
                    let e = &mut self.loops[i];
                    e.entries += l.entries;
                    e.iterations += l.iterations;
                    e.counts.merge(&l.counts);
                    e.self_counts.merge(&l.self_counts);
                    e.body.extend(l.body.iter().cloned());
                    i
                }
                None => {
                    self.loops.push(LoopAcc {
                        parent: None,
                        ..l.into_owned()
                    });
                    index.insert(key, self.loops.len() - 1);
                    self.loops.len() - 1
                }
            };
            remap.push(at);
        }
        for (parent, &at) in parents.iter().zip(&remap) {
            if self.loops[at].parent.is_none() {
                self.loops[at].parent = parent.map(|p| remap[p]);
            }
        }
    }

    /// Writes the rows into `r` (replacing any there), with time from
    /// `samples` where given.
    pub fn fill(&self, r: &mut Report, samples: Option<&Samples>) {
        self.rows(samples).put(r);
    }

    /// The report rows, with time from `samples` where given.
    pub fn rows(&self, samples: Option<&Samples>) -> Rows {
        let mut fn_samples: HashMap<&FnKey, u64> = HashMap::new();
        let mut local_time: HashMap<FnKey, f64> = HashMap::new();
        if let Some(s) = samples {
            for (k, n) in &s.at {
                if let Some(chain) = self.at.get(k) {
                    *fn_samples.entry(&chain[0]).or_default() += n;
                    for f in chain {
                        *local_time.entry(f.clone()).or_default() += s.time_of(*n).unwrap_or(0.0);
                    }
                }
            }
        }
        let timed = |n: u64, c: &Counts| -> (Option<f64>, Option<u64>, Option<f64>) {
            let Some(s) = samples else {
                return (None, None, None);
            };
            let t = s.time_of(n);
            let g = t.and_then(|t| gflops(c.flop_total(), Seconds(t)));
            (t, Some(n), g)
        };
        // The three lists apart, lines and loops on threads of their own: a
        // process of a million instructions has some 100,000 rows to
        // summarize (made on one thread, they were most of a large
        // process's wait after the attribution).
        let (functions, lines, loops) = std::thread::scope(|s| {
            let lines = started::start(s, || -> Vec<LineRow> {
                self.lines
                    .iter()
                    .map(|((module, file, line, function), c)| LineRow {
                        file: file.as_ref().map(|f| f.to_string()),
                        line: *line,
                        module: module.to_string(),
                        function: function.to_string(),
                        summary: Summary::from_counts(c),
                    })
                    .collect()
            });
            let loops = started::start(s, || -> Vec<LoopRow> {
                self.loops
                    .iter()
                    .map(|l| {
                        let per =
                            |x: u64| (l.iterations > 0).then(|| x as f64 / l.iterations as f64);
                        let n: u64 = samples
                            .map(|s| l.body.iter().filter_map(|k| s.at.get(k)).sum())
                            .unwrap_or(0);
                        let (time_s, samples_n, g) = timed(n, &l.counts);
                        LoopRow {
                            function: l.function.clone(),
                            module: l.module.clone(),
                            file: l.file.clone(),
                            line: l.line,
                            header: format!("{:#x}", l.header),
                            parent: l.parent,
                            entries: l.entries,
                            iterations: l.iterations,
                            summary: Summary::from_counts(&l.counts),
                            flop_per_iteration: per(l.counts.flop_total().0),
                            bytes_per_iteration: per(
                                l.counts.bytes_read().0 + l.counts.bytes_written().0
                            ),
                            self_counts: Summary::from_counts(&l.self_counts),
                            arithmetic_intensity: l1(&l.counts),
                            time_s,
                            samples: samples_n,
                            gflops: g,
                        }
                    })
                    .collect()
            });
            // Inclusive counts beside the function rows, filled in after.
            let inclusive = started::start(s, || -> BTreeMap<FnKey, Inclusive> {
                self.calls
                    .inclusive(&local_time)
                    .into_iter()
                    .map(|(k, (c, t))| {
                        let summary = Summary::from_counts(&c);
                        let time_s = t.filter(|_| samples.is_some());
                        (k, Inclusive { summary, time_s })
                    })
                    .collect()
            });
            let mut functions: Vec<FunctionRow> = self
                .functions
                .iter()
                .map(|(key, f)| {
                    (
                        key,
                        f,
                        timed(fn_samples.get(key).copied().unwrap_or(0), &f.counts),
                    )
                })
                .map(|((module, name), f, (time_s, n, g))| FunctionRow {
                    name: name.to_string(),
                    module: module.to_string(),
                    address: format!("{:#x}", f.address),
                    file: f.first_line.as_ref().map(|(_, file)| file.to_string()),
                    line: f.first_line.as_ref().map(|(l, _)| *l),
                    inlined_into: f.inlined_into.iter().map(|n| n.to_string()).collect(),
                    summary: Summary::from_counts(&f.counts),
                    arithmetic_intensity: l1(&f.counts),
                    time_s,
                    samples: n,
                    gflops: g,
                    inclusive: None,
                })
                .collect();
            let join = "no panic making rows";
            let mut inclusive = inclusive.join().expect(join);
            for (row, key) in functions.iter_mut().zip(self.functions.keys()) {
                row.inclusive = inclusive.remove(key);
            }
            FunctionRow::sort(&mut functions);
            (
                functions,
                lines.join().expect(join),
                loops.join().expect(join),
            )
        });
        Rows {
            functions,
            loops,
            lines,
        }
    }
}

/// A report's `functions`, `loops` and `lines` rows (of a process or a job).
pub struct Rows {
    pub functions: Vec<FunctionRow>,
    pub loops: Vec<LoopRow>,
    pub lines: Vec<LineRow>,
}

impl Rows {
    /// Puts the rows in `r`, replacing any there.
    pub fn put(self, r: &mut Report) {
        r.functions = self.functions;
        r.loops = self.loops;
        r.lines = self.lines;
    }
}

/// An instruction's functions, innermost first, as keys.
fn chain_keys(p: Place) -> Vec<FnKey> {
    p.chain
        .iter()
        .map(|f| (p.module.clone(), f.clone()))
        .collect()
}

fn l1(c: &Counts) -> Intensity {
    Intensity {
        l1: intensity(
            c.flop_total(),
            Bytes(c.bytes_read().0 + c.bytes_written().0),
        ),
        dram: None,
    }
}

/// A block, or the part of one from another block's start on: a node of
/// the control-flow graph with the instructions it ran.
struct Segment<'a> {
    snapshot: usize,
    start: u64,
    end: End,
    runs: u64,
    taken: u64,
    split_known: bool,
    insns: &'a [ExecInsn],
    /// The number of its first instruction among all of the process's, in
    /// block order (the order of `Attribution::of`'s places).
    first: usize,
}

/// The executed blocks cut where another block starts: code that falls into
/// a loop's header without a branch (the first iteration of a rotated loop
/// runs in the block that enters it) counts for the header's node; and
/// where a jump the engine translated on through leads (a loop entered by
/// a jump to its test has the test as a node of its own).
fn segments(ex: &Executed) -> Vec<Segment<'_>> {
    // Block starts, and where followed jumps lead (a block that falls into
    // such a place is cut there too: it is a node of its own).
    let jumped_to = ex.blocks.iter().flat_map(|b| {
        b.jumped
            .iter()
            .map(|&j| (b.snapshot, b.insns[j as usize].pc))
    });
    let starts: FxHashSet<(usize, u64)> = ex
        .blocks
        .iter()
        .map(|b| (b.snapshot, b.start))
        .chain(jumped_to)
        .collect();
    let mut out = Vec::new();
    let mut base = 0;
    for b in &ex.blocks {
        let mut from = 0;
        let mut seg_start = b.start;
        for (k, i) in b.insns.iter().enumerate() {
            // A followed jump's edge counts as a fall-through's: once a run
            // of the part before it.
            if k > from && i.pc != seg_start && starts.contains(&(b.snapshot, i.pc)) {
                out.push(Segment {
                    snapshot: b.snapshot,
                    start: seg_start,
                    end: End::Fall { next: i.pc },
                    runs: b.runs,
                    taken: 0,
                    split_known: true,
                    insns: &b.insns[from..k],
                    first: base + from,
                });
                from = k;
                seg_start = i.pc;
            }
        }
        out.push(Segment {
            snapshot: b.snapshot,
            start: seg_start,
            end: b.end,
            runs: b.runs,
            taken: b.taken,
            split_known: b.split_known,
            insns: &b.insns[from..],
            first: base + from,
        });
        base += b.insns.len();
    }
    out
}

/// The number of the place of `start` (where instructions `insns`, whose
/// places are `at`, begin): their first's, else looked up.
fn place_at(
    places: &mut Places,
    snapshot: usize,
    start: u64,
    insns: &[ExecInsn],
    at: &[u32],
) -> u32 {
    match (insns.first(), at.first()) {
        (Some(i), Some(&at)) if i.pc == start => at,
        _ => places.index(snapshot, start),
    }
}

/// Each entry of `from` moved into `to` where `to` has none at its key,
/// else added to `to`'s with `add`.
pub(crate) fn move_into<K: Ord, V>(
    to: &mut BTreeMap<K, V>,
    from: BTreeMap<K, V>,
    add: impl Fn(&mut V, &V),
) {
    for (k, v) in from {
        match to.entry(k) {
            Entry::Vacant(e) => {
                e.insert(v);
            }
            Entry::Occupied(mut e) => add(e.get_mut(), &v),
        }
    }
}

/// Loops of every machine function of the process.
fn find_loops(
    ex: &Executed,
    places: &mut Places,
    sampled: Option<&Sampled>,
    at_of: &[u32],
) -> Vec<LoopAcc> {
    let segs = segments(ex);
    // (module, symbol start) -> node start -> (node, segments)
    type Group = BTreeMap<u64, (Node, Vec<usize>)>;
    // Keyed by the module's identity (one `Places`), ordered by its name.
    let mut by_id: FxHashMap<(usize, u64), (Name, Group)> = FxHashMap::default();
    let places_of = |b: &Segment| &at_of[b.first..b.first + b.insns.len()];
    for (si, b) in segs.iter().enumerate() {
        let p = place_at(places, b.snapshot, b.start, b.insns, places_of(b));
        let p = places.get(p);
        let (_, g) = by_id
            .entry((place::id(&p.module), p.symbol_start))
            .or_insert_with(|| (p.module.clone(), Group::new()));
        let e = g.entry(b.start).or_insert_with(|| {
            (
                Node {
                    start: b.start,
                    end: b.end,
                    runs: 0,
                    taken: 0,
                    split_known: true,
                },
                Vec::new(),
            )
        });
        e.0.runs += b.runs;
        e.0.taken += b.taken;
        e.0.split_known &= b.split_known;
        e.1.push(si);
    }
    let mut groups: Vec<((Name, u64), Group)> = by_id
        .into_iter()
        .map(|((_, entry), (module, g))| ((module, entry), g))
        .collect();
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    // Each segment's instructions' counts, summed once when a loop holds
    // it (loops nest: a segment counts for every loop around it).
    let mut seg_counts: Vec<Option<Counts>> = vec![None; segs.len()];
    let mut out = Vec::new();
    for ((module, entry), group) in groups {
        let (nodes, blocks): (Vec<Node>, Vec<Vec<usize>>) = group.into_values().unzip();
        let found = loops::find(&nodes, entry);
        let base = out.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); found.len()];
        for (o, l) in found.iter().enumerate() {
            if let Some(p) = l.parent {
                children[p].push(o);
            }
        }
        for (li, l) in found.iter().enumerate() {
            let mut counts_of = |nodes_in: &mut dyn Iterator<Item = usize>| {
                let mut c = Counts::default();
                for n in nodes_in {
                    for &si in &blocks[n] {
                        let sc = seg_counts[si].get_or_insert_with(|| {
                            let mut sc = Counts::default();
                            for i in segs[si].insns {
                                ex.add_counts(&mut sc, i);
                            }
                            sc
                        });
                        c.merge(sc);
                    }
                }
                c
            };
            // The nodes of the loops nested in `l`: its children's (natural
            // loops with different headers are disjoint or nested, so a
            // deeper loop lies inside a child).
            let nested: BTreeSet<usize> = children[li]
                .iter()
                .flat_map(|&o| found[o].body.iter().copied())
                .collect();
            let counts = counts_of(&mut l.body.iter().copied());
            let self_counts = counts_of(&mut l.body.difference(&nested).copied());
            let header_block = &segs[blocks[l.header][0]];
            let head = place_at(
                places,
                header_block.snapshot,
                header_block.start,
                header_block.insns,
                places_of(header_block),
            );
            // The loop's line: the first line of its body in the header's
            // function and file (gcc's rotated loops test at the bottom, so
            // the header's own first line is often the body's).
            let mut line = places.get(head).line;
            let mut body = BTreeSet::new();
            for &n in &l.body {
                for &si in &blocks[n] {
                    let b = &segs[si];
                    for &at in places_of(b) {
                        let (p, head) = (places.get(at), places.get(head));
                        if sampled.is_some_and(|s| s.contains(&p.offset)) {
                            body.insert((p.module.clone(), p.offset));
                        }
                        if p.function == head.function && p.file == head.file {
                            if let Some(pl) = p.line {
                                line = Some(line.map_or(pl, |x: u32| x.min(pl)));
                            }
                        }
                    }
                }
            }
            let head = places.get(head);
            out.push(LoopAcc {
                function: head.function.to_string(),
                module: module.to_string(),
                file: head.file.as_ref().map(|f| f.to_string()),
                line,
                header: nodes[l.header].start,
                parent: l.parent.map(|p| base + p),
                entries: l.entries,
                iterations: l.iterations,
                counts,
                self_counts,
                body,
            });
        }
    }
    out
}
