//! Inclusive counts: a function with its callees, so that `main -> solve
//! -> dgemm_kernel` reads as a tree.
//!
//! How they are obtained (the engines count blocks, not call stacks):
//! - a function's *local* counts are those of every instruction whose
//!   inlining chain includes it (its own, and those of functions inlined
//!   into it): exact;
//! - calls are the executed direct `call` instructions (count: executions
//!   of the block ending in the call), from every function of the call's
//!   inlining chain to the function at the call's target; a call to a PLT
//!   stub (`scale@plt`) goes on to the function of that name;
//! - a callee's inclusive counts are shared among its callers in proportion
//!   to the calls each made over the times the callee was entered (calls
//!   through pointers and virtual calls are not seen, so their share of a
//!   callee stays with nobody), rounded to whole counts: exact when every
//!   entry of a callee comes from one caller;
//! - calls within a recursive cycle are not followed: a recursive function
//!   includes its own recursion once (its local counts already hold it; its
//!   callers share it by their calls over its entries from outside the
//!   cycle), and members of a cycle of several functions do not include
//!   each other.

use flopscope_model::counts::FpTally;
use flopscope_model::Counts;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, HashMap};

/// (module, function name)
pub type FnKey = (crate::place::Name, crate::place::Name);

/// The call graph of a process (or a merged job).
#[derive(Debug, Clone, Default)]
pub struct Calls {
    /// Local counts per function (see the module's doc).
    pub local: BTreeMap<FnKey, Counts>,
    /// (caller, callee) -> calls.
    pub edges: BTreeMap<(FnKey, FnKey), u64>,
    /// Times each function was entered at its start.
    pub entries: BTreeMap<FnKey, u64>,
}

impl Calls {
    /// [`Calls::add`] of calls no longer needed: what only they hold is
    /// moved.
    pub fn merge(&mut self, o: Calls) {
        crate::rows::move_into(&mut self.local, o.local, Counts::merge);
        for (k, n) in o.edges {
            *self.edges.entry(k).or_default() += n;
        }
        for (k, n) in o.entries {
            *self.entries.entry(k).or_default() += n;
        }
    }

    pub fn add(&mut self, o: &Calls) {
        for (k, c) in &o.local {
            self.local.entry(k.clone()).or_default().merge(c);
        }
        for (k, n) in &o.edges {
            *self.edges.entry(k.clone()).or_default() += n;
        }
        for (k, n) in &o.entries {
            *self.entries.entry(k.clone()).or_default() += n;
        }
    }

    /// Calls to PLT stubs continuing to the function of their name (the one
    /// with the most entries, when several modules define it): (stub,
    /// function) and the stub's entries.
    fn through_plt(&self) -> Vec<((&FnKey, &FnKey), u64)> {
        let mut by_name: HashMap<&str, (&FnKey, u64)> = HashMap::new();
        for (k, n) in &self.entries {
            if k.1.ends_with("@plt") {
                continue;
            }
            let e = by_name.entry(&*k.1).or_insert((k, *n));
            if *n > e.1 {
                *e = (k, *n);
            }
        }
        let mut extra = Vec::new();
        for (k, n) in &self.entries {
            if let Some(target) = k.1.strip_suffix("@plt") {
                if let Some((callee, _)) = by_name.get(target) {
                    extra.push(((k, *callee), *n));
                }
            }
        }
        extra
    }

    /// Inclusive counts and the shares used, per function: `time_local`
    /// gives local values of another measure (time) to propagate alike.
    pub fn inclusive(
        &self,
        time_local: &HashMap<FnKey, f64>,
    ) -> BTreeMap<FnKey, (Counts, Option<f64>)> {
        let plt = self.through_plt();
        let edges = || {
            self.edges
                .iter()
                .map(|((a, b), n)| ((a, b), *n))
                .chain(plt.iter().copied())
        };
        // The functions in key order: those with local counts (already in
        // order), then any other an edge names, sorted in. Keys are looked
        // up by hash: their (module, name) texts share long prefixes, and a
        // compiler's graph of 40,000 edges spent most of this function
        // comparing them in ordered maps.
        let mut keys: Vec<&FnKey> = self.local.keys().collect();
        let mut index: FxHashMap<&FnKey, usize> =
            keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
        let mut others = false;
        for ((a, b), _) in edges() {
            for k in [a, b] {
                if !index.contains_key(k) {
                    index.insert(k, keys.len());
                    keys.push(k);
                    others = true;
                }
            }
        }
        if others {
            keys.sort_unstable();
            index = keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
        }
        // Each caller's callees in key order, a callee once (a stub's call
        // to its function adds to a direct call of it, if any).
        let mut out_edges: Vec<Vec<(usize, u64)>> = vec![Vec::new(); keys.len()];
        for ((a, b), n) in edges() {
            out_edges[index[a]].push((index[b], n));
        }
        for es in &mut out_edges {
            es.sort_unstable_by_key(|&(g, _)| g);
            es.dedup_by(|(g, n), (kept, m)| {
                let same = g == kept;
                if same {
                    *m += *n;
                }
                same
            });
        }
        let scc = sccs(&out_edges);
        // Entries from within a callee's own cycle (recursion) are not calls
        // of its callers: shares are of the entries from outside.
        let mut internal = vec![0u64; keys.len()];
        for (f, es) in out_edges.iter().enumerate() {
            for &(g, n) in es {
                if scc.of[f] == scc.of[g] {
                    internal[g] += n;
                }
            }
        }
        // Each function's local counts and entries, by index.
        let mut local: Vec<Option<&Counts>> = vec![None; keys.len()];
        for (k, c) in &self.local {
            local[index[k]] = Some(c);
        }
        let mut entries = vec![0u64; keys.len()];
        for (k, n) in &self.entries {
            if let Some(&i) = index.get(k) {
                entries[i] = *n;
            }
        }
        let mut result: Vec<Option<(Counts, Option<f64>)>> = vec![None; keys.len()];
        // Tarjan's components come callees first.
        for comp in &scc.components {
            for &f in comp {
                let mut c = local[f].cloned().unwrap_or_default();
                let mut t = time_local.get(keys[f]).copied();
                for &(g, calls) in &out_edges[f] {
                    if scc.of[g] == scc.of[f] {
                        continue; // within a recursive cycle
                    }
                    let entered = entries[g].saturating_sub(internal[g]).max(calls);
                    if let Some((gc, gt)) = &result[g] {
                        add_scaled(&mut c, gc, calls, entered);
                        if let Some(gt) = gt {
                            *t.get_or_insert(0.0) += gt * calls as f64 / entered as f64;
                        }
                    }
                }
                result[f] = Some((c, t));
            }
        }
        keys.into_iter()
            .zip(result)
            .filter_map(|(k, r)| Some((k.clone(), r?)))
            .collect()
    }
}

/// Adds `c` x num / den into `into`, each count rounded to the nearest
/// whole (without a scaled copy: a call graph of 40,000 edges made as many).
fn add_scaled(into: &mut Counts, c: &Counts, num: u64, den: u64) {
    if num == den {
        return into.merge(c);
    }
    let s =
        |x: u64| ((u128::from(x) * u128::from(num) + u128::from(den) / 2) / u128::from(den)) as u64;
    into.instructions += s(c.instructions);
    for (k, t) in &c.fp_instructions {
        into.fp_instructions.entry(*k).or_default().add(FpTally {
            count: s(t.count),
            flop: s(t.flop),
        });
    }
    for (k, v) in &c.flop {
        *into.flop.entry(*k).or_default() += s(*v);
    }
    for (from, to) in [
        (&c.mem_read, &mut into.mem_read),
        (&c.mem_write, &mut into.mem_write),
    ] {
        for (k, v) in from {
            *to.entry(*k).or_default() += s(*v);
        }
    }
}

struct Sccs {
    /// Components, callees before callers (reverse topological order).
    components: Vec<Vec<usize>>,
    /// Component of each node.
    of: Vec<usize>,
}

/// Tarjan's strongly connected components, iteratively.
fn sccs(out: &[Vec<(usize, u64)>]) -> Sccs {
    let n = out.len();
    let (mut index, mut low) = (vec![usize::MAX; n], vec![0usize; n]);
    let mut on_stack = vec![false; n];
    let (mut stack, mut components, mut of) = (Vec::new(), Vec::new(), vec![0usize; n]);
    let mut next = 0usize;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some((v, i)) = work.pop() {
            if i < out[v].len() {
                work.push((v, i + 1));
                let w = out[v][i].0;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                if let Some(&(parent, _)) = work.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        of[w] = components.len();
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    components.push(comp);
                }
            }
        }
    }
    Sccs { components, of }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(name: &str) -> FnKey {
        ("m".into(), name.into())
    }

    fn key(module: &str, name: &str) -> FnKey {
        (module.into(), name.into())
    }

    fn flop(n: u64) -> Counts {
        Counts {
            instructions: n,
            ..Default::default()
        }
    }

    /// main calls solve twice; solve calls kernel 10 times per call; kernel
    /// is also called 20 times from elsewhere (so main gets half of it);
    /// rec calls itself.
    #[test]
    fn callees_are_shared_by_calls_and_cycles_are_not_followed() {
        let mut c = Calls::default();
        for (f, n) in [
            ("main", 1),
            ("solve", 10),
            ("kernel", 100),
            ("other", 5),
            ("rec", 7),
        ] {
            c.local.insert(k(f), flop(n));
        }
        c.edges.insert((k("main"), k("solve")), 2);
        c.edges.insert((k("solve"), k("kernel")), 20);
        c.edges.insert((k("other"), k("kernel")), 20);
        c.edges.insert((k("main"), k("rec")), 1);
        c.edges.insert((k("rec"), k("rec")), 6);
        c.entries.insert(k("solve"), 2);
        c.entries.insert(k("kernel"), 40);
        c.entries.insert(k("rec"), 7);
        let inc = c.inclusive(&HashMap::new());
        let i = |f: &str| inc[&k(f)].0.instructions;
        assert_eq!(i("kernel"), 100);
        assert_eq!(i("solve"), 10 + 50);
        assert_eq!(i("rec"), 7);
        assert_eq!(i("main"), 1 + 60 + 7);
        assert_eq!(i("other"), 5 + 50);
    }

    /// A function an edge names without local counts of its own (say, its
    /// instructions went to a function inlined into it) still passes its
    /// callees' counts on, and sorts among the others.
    #[test]
    fn a_function_without_local_counts_passes_its_callees_on() {
        let mut c = Calls::default();
        c.local.insert(k("main"), flop(1));
        c.local.insert(k("zleaf"), flop(10));
        c.edges.insert((k("main"), k("amid")), 2);
        c.edges.insert((k("amid"), k("zleaf")), 4);
        c.entries.insert(k("amid"), 2);
        c.entries.insert(k("zleaf"), 4);
        let inc = c.inclusive(&HashMap::new());
        let i = |f: &str| inc[&k(f)].0.instructions;
        assert_eq!((i("zleaf"), i("amid"), i("main")), (10, 10, 11));
        let order: Vec<&str> = inc.keys().map(|(_, n)| &**n).collect();
        assert_eq!(order, ["amid", "main", "zleaf"]);
    }

    #[test]
    fn calls_through_a_plt_stub_reach_the_function() {
        let mut c = Calls::default();
        c.local.insert(key("a", "main"), flop(1));
        c.local.insert(key("a", "scale@plt"), flop(2));
        c.local.insert(key("lib", "scale"), flop(30));
        c.edges.insert((key("a", "main"), key("a", "scale@plt")), 3);
        c.entries.insert(key("a", "scale@plt"), 3);
        c.entries.insert(key("lib", "scale"), 3);
        let inc = c.inclusive(&HashMap::new());
        assert_eq!(inc[&key("a", "main")].0.instructions, 1 + 2 + 30);
    }
}
