//! Counts keyed by function, source line and loop, and the report rows
//! made of them.

use crate::executed::{ExecInsn, Executed};
use crate::loops::{self, Node};
use crate::place::{Name, Place, Places};
use crate::time::Samples;
use flopscope_counter_file::profile::End;
use flopscope_model::{
    gflops, intensity, Bytes, Counts, FunctionRow, Inclusive, Intensity, LineRow, LoopRow, Report,
    Seconds, Summary,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::calls::{Calls, FnKey};
/// (module, file, line, function)
type LineKey = (Name, Option<Name>, Option<u32>, Name);

#[derive(Debug, Clone, Default)]
struct FnAcc {
    counts: Counts,
    /// The symbol's start when the function is one, else its lowest address.
    address: u64,
    inlined_into: BTreeSet<Name>,
    /// Lowest source line seen, with its file (the declaration, near enough:
    /// a function's entry code carries its opening line).
    first_line: Option<(u32, Name)>,
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
    /// Attributes one process's executed code.
    pub fn of(ex: &Executed) -> Attribution {
        let mut places = Places::new(&ex.snapshots);
        let mut out = Attribution::default();
        for b in &ex.blocks {
            for i in &b.insns {
                let p = places.of(b.snapshot, i.pc).clone();
                out.add_insn(&p, i.pc, &i.counts);
            }
        }
        out.loops = find_loops(ex, &mut places);
        out.add_calls(ex, &mut places);
        out
    }

    /// Function entries and direct calls (see `calls`).
    fn add_calls(&mut self, ex: &Executed, places: &mut Places) {
        for b in &ex.blocks {
            if b.runs == 0 {
                continue;
            }
            let head = places.of(b.snapshot, b.start).clone();
            if b.start == head.symbol_start {
                *self
                    .calls
                    .entries
                    .entry((head.module.clone(), head.function.clone()))
                    .or_default() += b.runs;
            }
            let (End::Call { target, .. }, Some(last)) = (b.end, b.insns.last()) else {
                continue;
            };
            let caller = places.of(b.snapshot, last.pc).clone();
            let callee = places.of(b.snapshot, target).clone();
            let to = (callee.module.clone(), callee.function.clone());
            for f in caller.chain.iter() {
                *self
                    .calls
                    .edges
                    .entry(((caller.module.clone(), f.clone()), to.clone()))
                    .or_default() += b.runs;
            }
        }
    }

    fn add_insn(&mut self, p: &Place, pc: u64, c: &Counts) {
        let chain = || {
            p.chain
                .iter()
                .map(|f| (p.module.clone(), f.clone()))
                .collect()
        };
        self.at
            .entry((p.module.clone(), p.offset))
            .or_insert_with(chain);
        for f in p.chain.iter() {
            self.calls
                .local
                .entry((p.module.clone(), f.clone()))
                .or_default()
                .merge(c);
        }
        let f = self
            .functions
            .entry((p.module.clone(), p.function.clone()))
            .or_insert_with(|| FnAcc {
                address: u64::MAX,
                ..Default::default()
            });
        f.counts.merge(c);
        let start = if p.function == p.symbol {
            p.symbol_start
        } else {
            pc
        };
        f.address = f.address.min(start);
        if let Some(caller) = &p.inlined_into {
            f.inlined_into.insert(caller.clone());
        }
        if let (Some(l), Some(file)) = (p.line, &p.file) {
            if f.first_line.as_ref().is_none_or(|(fl, _)| l < *fl) {
                f.first_line = Some((l, file.clone()));
            }
        }
        self.lines
            .entry((p.module.clone(), p.file.clone(), p.line, p.function.clone()))
            .or_default()
            .merge(c);
    }

    /// Adds another process's attribution (a job's rows cover all of its
    /// processes; loops at one module and header are one loop).
    pub fn merge(&mut self, o: Attribution) {
        for (k, f) in o.functions {
            let e = self.functions.entry(k).or_insert_with(|| FnAcc {
                address: u64::MAX,
                ..Default::default()
            });
            e.counts.merge(&f.counts);
            e.address = e.address.min(f.address);
            e.inlined_into.extend(f.inlined_into);
            if e.first_line.is_none() || f.first_line < e.first_line {
                e.first_line = f.first_line.or(e.first_line.take());
            }
        }
        for (k, c) in o.lines {
            self.lines.entry(k).or_default().merge(&c);
        }
        for (k, f) in o.at {
            self.at.entry(k).or_insert(f);
        }
        self.calls.merge(o.calls);
        let mut index: HashMap<(String, u64), usize> = self
            .loops
            .iter()
            .enumerate()
            .map(|(i, l)| ((l.module.clone(), l.header), i))
            .collect();
        let mut remap = Vec::with_capacity(o.loops.len());
        for l in &o.loops {
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
                        ..l.clone()
                    });
                    index.insert(key, self.loops.len() - 1);
                    self.loops.len() - 1
                }
            };
            remap.push(at);
        }
        for (l, &at) in o.loops.iter().zip(&remap) {
            if self.loops[at].parent.is_none() {
                self.loops[at].parent = l.parent.map(|p| remap[p]);
            }
        }
    }

    /// Writes the rows into `r` (replacing any there), with time from
    /// `samples` where given.
    pub fn fill(&self, r: &mut Report, samples: Option<&Samples>) {
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
        let inclusive = self.calls.clone().inclusive(&local_time);
        let timed = |n: u64, c: &Counts| -> (Option<f64>, Option<u64>, Option<f64>) {
            let Some(s) = samples else {
                return (None, None, None);
            };
            let t = s.time_of(n);
            let g = t.and_then(|t| gflops(c.flop_total(), Seconds(t)));
            (t, Some(n), g)
        };
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
                inclusive: inclusive
                    .get(&(module.clone(), name.clone()))
                    .map(|(c, t)| Inclusive {
                        summary: Summary::from_counts(c),
                        time_s: t.filter(|_| samples.is_some()),
                    }),
            })
            .collect();
        FunctionRow::sort(&mut functions);
        r.functions = functions;
        r.lines = self
            .lines
            .iter()
            .map(|((module, file, line, function), c)| LineRow {
                file: file.as_ref().map(|f| f.to_string()),
                line: *line,
                module: module.to_string(),
                function: function.to_string(),
                summary: Summary::from_counts(c),
            })
            .collect();
        r.loops = self
            .loops
            .iter()
            .map(|l| {
                let per = |x: u64| (l.iterations > 0).then(|| x as f64 / l.iterations as f64);
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
                    bytes_per_iteration: per(l.counts.bytes_read().0 + l.counts.bytes_written().0),
                    self_counts: Summary::from_counts(&l.self_counts),
                    arithmetic_intensity: l1(&l.counts),
                    time_s,
                    samples: samples_n,
                    gflops: g,
                }
            })
            .collect();
    }
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
    insns: &'a [ExecInsn],
}

/// The executed blocks cut where another block starts: code that falls into
/// a loop's header without a branch (the first iteration of a rotated loop
/// runs in the block that enters it) counts for the header's node.
fn segments(ex: &Executed) -> Vec<Segment<'_>> {
    let starts: BTreeSet<(usize, u64)> = ex.blocks.iter().map(|b| (b.snapshot, b.start)).collect();
    let mut out = Vec::new();
    for b in &ex.blocks {
        let mut from = 0;
        let mut seg_start = b.start;
        for (k, i) in b.insns.iter().enumerate() {
            if k > from && i.pc != seg_start && starts.contains(&(b.snapshot, i.pc)) {
                out.push(Segment {
                    snapshot: b.snapshot,
                    start: seg_start,
                    end: End::Fall { next: i.pc },
                    runs: b.runs,
                    taken: 0,
                    insns: &b.insns[from..k],
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
            insns: &b.insns[from..],
        });
    }
    out
}

/// Loops of every machine function of the process.
fn find_loops(ex: &Executed, places: &mut Places) -> Vec<LoopAcc> {
    let segs = segments(ex);
    // (module, symbol start) -> node start -> (node, segments)
    type Group = BTreeMap<u64, (Node, Vec<usize>)>;
    let mut groups: BTreeMap<(Name, u64), Group> = BTreeMap::new();
    for (si, b) in segs.iter().enumerate() {
        let p = places.of(b.snapshot, b.start);
        let g = groups
            .entry((p.module.clone(), p.symbol_start))
            .or_default();
        let e = g.entry(b.start).or_insert_with(|| {
            (
                Node {
                    start: b.start,
                    end: b.end,
                    runs: 0,
                    taken: 0,
                },
                Vec::new(),
            )
        });
        e.0.runs += b.runs;
        e.0.taken += b.taken;
        e.1.push(si);
    }
    let mut out = Vec::new();
    for ((module, entry), group) in groups {
        let (nodes, blocks): (Vec<Node>, Vec<Vec<usize>>) = group.into_values().unzip();
        let found = loops::find(&nodes, entry);
        let base = out.len();
        for l in &found {
            let counts_of = |nodes_in: &mut dyn Iterator<Item = usize>| {
                let mut c = Counts::default();
                for n in nodes_in {
                    for &si in &blocks[n] {
                        for i in segs[si].insns {
                            c.merge(&i.counts);
                        }
                    }
                }
                c
            };
            let nested: BTreeSet<usize> = found
                .iter()
                .filter(|o| *o != l && l.body.contains(&o.header))
                .flat_map(|o| o.body.iter().copied())
                .collect();
            let counts = counts_of(&mut l.body.iter().copied());
            let self_counts = counts_of(&mut l.body.difference(&nested).copied());
            let header_block = &segs[blocks[l.header][0]];
            let head = places.of(header_block.snapshot, header_block.start).clone();
            // The loop's line: the first line of its body in the header's
            // function and file (gcc's rotated loops test at the bottom, so
            // the header's own first line is often the body's).
            let mut line = head.line;
            let mut body = BTreeSet::new();
            for &n in &l.body {
                for &si in &blocks[n] {
                    let b = &segs[si];
                    for i in b.insns {
                        let p = places.of(b.snapshot, i.pc);
                        body.insert((p.module.clone(), p.offset));
                        if p.function == head.function && p.file == head.file {
                            if let Some(pl) = p.line {
                                line = Some(line.map_or(pl, |x: u32| x.min(pl)));
                            }
                        }
                    }
                }
            }
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
