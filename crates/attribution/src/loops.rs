//! Natural loops of the executed control flow.
//!
//! Nodes are the executed blocks of one machine function (blocks translated
//! more than once, at one address, are one node); edges are the blocks'
//! local successors (a call's is its return site). A back edge `u -> h` is
//! one whose target dominates its source; the loop of header `h` is `h` with
//! every node that reaches a back edge's source without passing through `h`
//! (loops sharing a header are one loop). Dominators: the iterative
//! algorithm of Cooper, Harvey and Kennedy ("A Simple, Fast Dominance
//! Algorithm", 2001), over a root that leads to the function's entries.
//!
//! Counts: iterations = executions of the header; entries = iterations
//! minus the back edges' executions. A back edge's executions are its
//! source's when the source ends in a jump or falls through, the taken
//! count (or runs minus taken) when it ends in a conditional branch. Where
//! an engine counted neither side of a back edge's branch (the native
//! engine counts the not-taken side of backward branches only, and a
//! rotated loop's latch may be a forward branch whose fall-through goes
//! back), entries are the executions of the edges into the header from
//! outside the loop, when those are all known and the header is not
//! entered from outside the function's control flow.

use flopscope_counter_file::profile::End;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One node: a block start within a function.
#[derive(Debug, Clone)]
pub struct Node {
    pub start: u64,
    pub end: End,
    pub runs: u64,
    pub taken: u64,
    /// Whether `taken` is known (see `ExecBlock::split_known`).
    pub split_known: bool,
}

/// A natural loop over the nodes of one function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loop {
    /// Index of the header in the function's nodes.
    pub header: usize,
    /// Indexes of the nodes of the body (the header included).
    pub body: BTreeSet<usize>,
    pub iterations: u64,
    pub entries: u64,
    /// Index of the enclosing loop in the returned list.
    pub parent: Option<usize>,
}

/// Whether the executions of `u`'s edges are known.
fn edges_known(u: &Node) -> bool {
    match u.end {
        End::Cond { taken, next } if taken != next => u.split_known,
        _ => true,
    }
}

/// Executions of the edge `u -> v` (`v` one of `u`'s successors).
fn edge_count(u: &Node, v: u64) -> u64 {
    match u.end {
        End::Cond { taken, next } if taken == next => u.runs,
        End::Cond { taken, .. } if taken == v => u.taken,
        End::Cond { .. } => u.runs.saturating_sub(u.taken),
        _ => u.runs,
    }
}

/// The loops of one function whose entry is `entry` (its symbol's start).
pub fn find(nodes: &[Node], entry: u64) -> Vec<Loop> {
    let index: HashMap<u64, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.start, i))
        .collect();
    let succs: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            let mut s: Vec<usize> = n
                .end
                .local_successors()
                .iter()
                .filter_map(|pc| index.get(pc).copied())
                .collect();
            s.dedup();
            s
        })
        .collect();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (u, ss) in succs.iter().enumerate() {
        for &v in ss {
            preds[v].push(u);
        }
    }
    // Entries: the symbol's start, and nodes reached only from outside.
    let mut roots: Vec<usize> = (0..nodes.len())
        .filter(|&i| preds[i].is_empty() || nodes[i].start == entry)
        .collect();
    if roots.is_empty() && !nodes.is_empty() {
        roots.push(
            (0..nodes.len())
                .min_by_key(|&i| nodes[i].start)
                .unwrap_or(0),
        );
    }
    let mut is_root = vec![false; nodes.len()];
    for &r in &roots {
        is_root[r] = true;
    }
    // A call's edge to its return site: executions of the return site not
    // reached through its other edges, at most the call's. Assuming every
    // call returns made a loop of code after a call that never returns
    // (the C library's call of `main`): iterations 1, entries 0. Where the
    // return site is also entered from outside the control flow, or another
    // edge into it is not known, the call's executions, as before.
    let returns: Vec<u64> = (0..nodes.len())
        .map(|u| {
            let n = &nodes[u];
            let (End::Call { next, .. } | End::IndirectCall { next }) = n.end else {
                return n.runs;
            };
            let Some(&v) = index.get(&next) else {
                return n.runs;
            };
            if is_root[v] {
                return n.runs;
            }
            let mut others = 0;
            for &p in preds[v].iter().filter(|&&p| p != u) {
                let q = &nodes[p];
                if matches!(q.end, End::Call { .. } | End::IndirectCall { .. }) || !edges_known(q) {
                    return n.runs;
                }
                others += edge_count(q, next);
            }
            n.runs.min(nodes[v].runs.saturating_sub(others))
        })
        .collect();
    let count = |u: usize, v: u64| match nodes[u].end {
        End::Call { .. } | End::IndirectCall { .. } => returns[u],
        _ => edge_count(&nodes[u], v),
    };
    let idom = dominators(&succs, &preds, &roots);
    let tree = Intervals::of(&idom);
    let dominates = |h: usize, u: usize| tree.encloses(h, u);
    // Header -> (body, back edges' executions, whether all are known).
    let mut by_header: BTreeMap<usize, (BTreeSet<usize>, u64, bool)> = BTreeMap::new();
    for (u, ss) in succs.iter().enumerate() {
        if idom[u].is_none() {
            continue; // unreachable from the entries
        }
        for &h in ss {
            if !dominates(h, u) {
                continue;
            }
            let e = by_header
                .entry(h)
                .or_insert_with(|| (BTreeSet::from([h]), 0, true));
            e.1 += count(u, nodes[h].start);
            e.2 &= edges_known(&nodes[u]);
            let mut stack = vec![u];
            while let Some(x) = stack.pop() {
                if e.0.insert(x) {
                    stack.extend(preds[x].iter().copied());
                }
            }
        }
    }
    let mut loops: Vec<Loop> = by_header
        .into_iter()
        .map(|(h, (body, back, known))| {
            let from_outside = || {
                if is_root[h] {
                    return None; // entered from outside the function's flow
                }
                let outside = preds[h].iter().filter(|u| !body.contains(u));
                outside
                    .map(|&u| edges_known(&nodes[u]).then(|| count(u, nodes[h].start)))
                    .sum::<Option<u64>>()
            };
            let entries = match (known, from_outside()) {
                (false, Some(outside)) => outside,
                _ => nodes[h].runs.saturating_sub(back),
            };
            // A loop that ran was entered: a header first reached from
            // outside the control flow seen (the native engine's take-over
            // returns into the loader's loop of constructors) has no edge
            // in to count.
            let entries = entries.max(u64::from(nodes[h].runs > 0));
            Loop {
                header: h,
                body,
                iterations: nodes[h].runs,
                entries,
                parent: None,
            }
        })
        .collect();
    for a in 0..loops.len() {
        loops[a].parent = (0..loops.len())
            .filter(|&b| b != a && loops[b].body.contains(&loops[a].header))
            .filter(|&b| loops[b].body.len() > loops[a].body.len())
            .min_by_key(|&b| loops[b].body.len());
    }
    loops
}

/// The dominator tree numbered depth first: `h` dominates `u` when `u`'s
/// interval lies within `h`'s. Walking up from `u` instead costs the tree's
/// depth for every edge: in CPython's interpreter loop, one function of
/// thousands of blocks, that walk was most of the time finding loops.
struct Intervals {
    /// (entered, left) of each node; `None`: unreachable.
    at: Vec<Option<(usize, usize)>>,
}

impl Intervals {
    fn of(idom: &[Option<usize>]) -> Intervals {
        let n = idom.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (u, d) in idom.iter().enumerate() {
            match *d {
                Some(p) if p != u => children[p].push(u),
                Some(_) => roots.push(u),
                None => {}
            }
        }
        let mut at = vec![None; n];
        let mut clock = 0;
        for r in roots {
            let mut stack = vec![(r, 0usize)];
            at[r] = Some((clock, 0));
            clock += 1;
            while let Some((x, i)) = stack.pop() {
                if let Some(&c) = children[x].get(i) {
                    stack.push((x, i + 1));
                    at[c] = Some((clock, 0));
                    clock += 1;
                    stack.push((c, 0));
                } else if let Some((_, left)) = at[x].as_mut() {
                    *left = clock;
                    clock += 1;
                }
            }
        }
        Intervals { at }
    }

    /// Whether `u` is `h` or below it in the tree.
    fn encloses(&self, h: usize, u: usize) -> bool {
        match (self.at[h], self.at[u]) {
            (Some((he, hl)), Some((ue, ul))) => he <= ue && ul <= hl,
            _ => false,
        }
    }
}

/// Immediate dominators (`None`: unreachable; roots dominate themselves
/// under a virtual root, given as `Some(self)`).
fn dominators(succs: &[Vec<usize>], preds: &[Vec<usize>], roots: &[usize]) -> Vec<Option<usize>> {
    let n = succs.len();
    // Reverse post-order from the roots.
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    for &r in roots {
        if seen[r] {
            continue;
        }
        seen[r] = true;
        let mut stack = vec![(r, 0usize)];
        while let Some((x, i)) = stack.pop() {
            if i < succs[x].len() {
                stack.push((x, i + 1));
                let y = succs[x][i];
                if !seen[y] {
                    seen[y] = true;
                    stack.push((y, 0));
                }
            } else {
                order.push(x);
            }
        }
    }
    order.reverse();
    let mut rpo = vec![usize::MAX; n];
    for (i, &x) in order.iter().enumerate() {
        rpo[x] = i;
    }
    // VROOT stands for the virtual root above every entry.
    const VROOT: usize = usize::MAX;
    let is_root: BTreeSet<usize> = roots.iter().copied().collect();
    let mut idom: Vec<Option<usize>> = vec![None; n];
    for &r in &is_root {
        idom[r] = Some(VROOT);
    }
    let intersect = |idom: &[Option<usize>], mut a: usize, mut b: usize| -> usize {
        while a != b {
            if a == VROOT || b == VROOT {
                return VROOT;
            }
            while a != VROOT && b != VROOT && rpo[a] > rpo[b] {
                a = idom[a].unwrap_or(VROOT);
            }
            while a != VROOT && b != VROOT && rpo[b] > rpo[a] {
                b = idom[b].unwrap_or(VROOT);
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &x in &order {
            if is_root.contains(&x) {
                continue;
            }
            let mut new: Option<usize> = None;
            for &p in &preds[x] {
                if idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(q) => intersect(&idom, p, q),
                });
            }
            if new.is_some() && idom[x] != new {
                idom[x] = new;
                changed = true;
            }
        }
    }
    // Express the virtual root as "dominated by itself" for callers.
    idom.iter()
        .enumerate()
        .map(|(i, d)| d.map(|d| if d == VROOT { i } else { d }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(start: u64, end: End, runs: u64, taken: u64) -> Node {
        Node {
            start,
            end,
            runs,
            taken,
            split_known: true,
        }
    }

    /// Code after a call that never returns (the C library's call of
    /// `main`; here 0x10 jumps to 0x30, which jumps back to 0x20, the call)
    /// makes a cycle, but its edge back never ran: entered once, run once.
    /// A call in a loop that does return counts every iteration.
    #[test]
    fn a_call_that_never_returns_closes_no_loop() {
        let nodes = vec![
            node(0x10, End::Jump { target: 0x30 }, 1, 0),
            node(
                0x20,
                End::Call {
                    target: 0x900,
                    next: 0x30,
                },
                1,
                0,
            ),
            node(0x30, End::Jump { target: 0x20 }, 1, 0),
        ];
        let loops = find(&nodes, 0x10);
        assert_eq!(loops.len(), 1);
        assert_eq!((loops[0].iterations, loops[0].entries), (1, 1));
        // for (i = 0; i < 10; i++) f(); entered twice: 0x10 entry, 0x20
        // header calling f, 0x30 its return site, `jne 0x20`, 0x40 exit.
        let nodes = vec![
            node(0x10, End::Fall { next: 0x20 }, 2, 0),
            node(
                0x20,
                End::Call {
                    target: 0x900,
                    next: 0x30,
                },
                20,
                0,
            ),
            node(
                0x30,
                End::Cond {
                    taken: 0x20,
                    next: 0x40,
                },
                20,
                18,
            ),
            node(0x40, End::Other, 2, 0),
        ];
        let loops = find(&nodes, 0x10);
        assert_eq!(loops.len(), 1);
        assert_eq!(
            (loops[0].header, loops[0].iterations, loops[0].entries),
            (1, 20, 2)
        );
    }

    /// A loop first reached from outside the control flow seen (the native
    /// engine's take-over returns into the loader's loop), left through a
    /// forward branch neither side of which was counted: its back edge then
    /// reads every execution of the latch, and no edge in from outside
    /// counts the entry. A loop that ran was entered: once, at least.
    #[test]
    fn a_loop_that_ran_was_entered_at_least_once() {
        let latch = Node {
            split_known: false,
            ..node(
                0x30,
                End::Cond {
                    taken: 0x50,
                    next: 0x20,
                },
                3,
                0,
            )
        };
        let nodes = vec![
            node(0x20, End::Fall { next: 0x30 }, 3, 0),
            latch,
            node(0x50, End::Other, 1, 0),
        ];
        let loops = find(&nodes, 0x10);
        assert_eq!(loops.len(), 1);
        assert_eq!((loops[0].iterations, loops[0].entries), (3, 1));
    }

    /// An early exit at the bottom of a loop entered by a jump to its test
    /// (gcc -O2): 0x10 entry, `jmp 0x30`; 0x20 body, `je 0x40` (forward:
    /// the exit, taken 3 times) falling through to 0x30, the test, `jne
    /// 0x20`. 3 entries, 111 tests. With neither side of 0x20's branch
    /// counted (the native engine's forward branches; taken then reads 0),
    /// entries come from the edge into the test from outside.
    #[test]
    fn a_back_edge_through_an_uncounted_branch_takes_entries_from_outside() {
        let body = |known: bool| Node {
            split_known: known,
            ..node(
                0x20,
                End::Cond {
                    taken: 0x40,
                    next: 0x30,
                },
                111,
                if known { 3 } else { 0 },
            )
        };
        for known in [true, false] {
            let nodes = vec![
                node(0x10, End::Jump { target: 0x30 }, 3, 0),
                body(known),
                node(
                    0x30,
                    End::Cond {
                        taken: 0x20,
                        next: 0x40,
                    },
                    111,
                    111,
                ),
                node(0x40, End::Other, 3, 0),
            ];
            let loops = find(&nodes, 0x10);
            assert_eq!(loops.len(), 1);
            assert_eq!(loops[0].header, 2);
            assert_eq!(
                (loops[0].iterations, loops[0].entries),
                (111, 3),
                "split known: {known}"
            );
        }
    }

    /// for (i = 0; i < 10; i++) for (j = 0; j < 5; j++) body, entered twice:
    /// 0x10 entry -> 0x20 outer header -> 0x30 inner (self-loop) -> 0x40 outer latch -> 0x50 exit.
    #[test]
    fn nested_loops_with_entries_and_iterations() {
        let nodes = vec![
            node(0x10, End::Fall { next: 0x20 }, 2, 0),
            node(0x20, End::Fall { next: 0x30 }, 20, 0),
            node(
                0x30,
                End::Cond {
                    taken: 0x30,
                    next: 0x40,
                },
                100,
                80,
            ),
            node(
                0x40,
                End::Cond {
                    taken: 0x20,
                    next: 0x50,
                },
                20,
                18,
            ),
            node(0x50, End::Other, 2, 0),
        ];
        let loops = find(&nodes, 0x10);
        assert_eq!(loops.len(), 2);
        let outer = &loops[0];
        assert_eq!((outer.header, outer.iterations, outer.entries), (1, 20, 2));
        assert_eq!(outer.body, BTreeSet::from([1, 2, 3]));
        assert_eq!(outer.parent, None);
        let inner = &loops[1];
        assert_eq!(
            (inner.header, inner.iterations, inner.entries),
            (2, 100, 20)
        );
        assert_eq!(inner.body, BTreeSet::from([2]));
        assert_eq!(inner.parent, Some(0));
    }

    /// A rotated loop: guard, then body with the test at the bottom.
    #[test]
    fn a_rotated_loop_counts_entries_through_its_guard() {
        let nodes = vec![
            node(
                0x10,
                End::Cond {
                    taken: 0x40,
                    next: 0x20,
                },
                3,
                1,
            ),
            node(
                0x20,
                End::Cond {
                    taken: 0x20,
                    next: 0x40,
                },
                14,
                12,
            ),
            node(0x40, End::Other, 3, 0),
        ];
        let loops = find(&nodes, 0x10);
        assert_eq!(loops.len(), 1);
        assert_eq!((loops[0].iterations, loops[0].entries), (14, 2));
    }

    #[test]
    fn straight_code_has_no_loop() {
        let nodes = vec![
            node(
                0x10,
                End::Call {
                    target: 0x900,
                    next: 0x20,
                },
                1,
                0,
            ),
            node(0x20, End::Other, 1, 0),
        ];
        assert!(find(&nodes, 0x10).is_empty());
    }
}
