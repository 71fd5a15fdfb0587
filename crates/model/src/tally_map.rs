//! [`TallyMap`]: the maps of [`crate::Counts`] (FLOP by kind, accesses by
//! size), kept as one vector sorted by key.
//!
//! A tally has a handful of keys (one or two access sizes, a few kinds of
//! FP instruction), and attribution holds one per source line, loop and
//! function of a run: millions of them for a compiler's run. A `BTreeMap`
//! allocates a node for eleven entries even for one, and its clones and
//! merges walk nodes; here a tally is one allocation of its own size, and
//! merging two adds one into the other, key by key. The interface is `BTreeMap`'s, as far
//! as tallies use it: sorted iteration, `entry(..).or_default()`, `insert`,
//! `get`, `retain`, indexing.

use std::borrow::Borrow;

/// A map kept as a vector of entries sorted by key (see the module).
#[derive(Clone, PartialEq, Eq)]
pub struct TallyMap<K, V> {
    items: Vec<(K, V)>,
}

impl<K, V> Default for TallyMap<K, V> {
    fn default() -> Self {
        TallyMap { items: Vec::new() }
    }
}

impl<K: std::fmt::Debug, V: std::fmt::Debug> std::fmt::Debug for TallyMap<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// The entry of one key, for [`TallyMap::entry`].
pub struct Entry<'a, K, V> {
    items: &'a mut Vec<(K, V)>,
    /// Where the key is (Ok) or would be inserted (Err).
    at: Result<usize, usize>,
    key: K,
}

impl<'a, K, V> Entry<'a, K, V> {
    pub fn or_insert_with(self, make: impl FnOnce() -> V) -> &'a mut V {
        let i = match self.at {
            Ok(i) => i,
            Err(i) => {
                self.items.insert(i, (self.key, make()));
                i
            }
        };
        &mut self.items[i].1
    }

    pub fn or_default(self) -> &'a mut V
    where
        V: Default,
    {
        self.or_insert_with(V::default)
    }
}

impl<K: Ord, V> TallyMap<K, V> {
    pub fn new() -> Self {
        TallyMap::default()
    }

    fn find<Q>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.items.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub fn entry(&mut self, key: K) -> Entry<'_, K, V> {
        let at = self.find(&key);
        Entry {
            items: &mut self.items,
            at,
            key,
        }
    }

    /// Sets `key` to `value`, returning the value it had.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.items[i].1, value)),
            Err(i) => {
                self.items.insert(i, (key, value));
                None
            }
        }
    }

    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| &self.items[i].1)
    }

    /// Adds every entry of `other` into this map's, with `add` where both
    /// have the key: each of `other`'s keys searched for once.
    pub fn merge_with(&mut self, other: &TallyMap<K, V>, add: impl Fn(&mut V, &V))
    where
        K: Clone,
        V: Clone,
    {
        if other.items.is_empty() {
            return;
        }
        if self.items.is_empty() {
            self.items.clone_from(&other.items);
            return;
        }
        // Keys this map holds are added in place, the others appended and
        // the whole sorted again (a handful of entries).
        let mut new = Vec::new();
        for (k, v) in &other.items {
            match self.find(k) {
                Ok(i) => add(&mut self.items[i].1, v),
                Err(_) => new.push((k.clone(), v.clone())),
            }
        }
        if !new.is_empty() {
            self.items.extend(new);
            self.items.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        }
    }
}

impl<K, V> TallyMap<K, V> {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The entries in key order.
    pub fn iter(&self) -> Iter<'_, K, V> {
        self.items.iter().map(|(k, v)| (k, v))
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.items.iter().map(|(_, v)| v)
    }

    /// Keeps the entries for which `keep` holds.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.items.retain_mut(|(k, v)| keep(k, v));
    }
}

/// [`TallyMap::iter`]'s iterator.
pub type Iter<'a, K, V> =
    std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;

impl<'a, K, V> IntoIterator for &'a TallyMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<K, V> IntoIterator for TallyMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for TallyMap<K, V> {
    /// The last value of a key given twice wins, as in `BTreeMap`.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut m = TallyMap::new();
        m.extend(iter);
        m
    }
}

impl<K: Ord, V> Extend<(K, V)> for TallyMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<K: Ord, V, const N: usize> From<[(K, V); N]> for TallyMap<K, V> {
    fn from(a: [(K, V); N]) -> Self {
        a.into_iter().collect()
    }
}

impl<K: Ord + Borrow<Q>, Q: Ord + ?Sized, V> std::ops::Index<&Q> for TallyMap<K, V> {
    type Output = V;
    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("no entry for the key in the tally")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Every operation against `BTreeMap`'s, on keys inserted out of order,
    /// repeated and removed.
    #[test]
    fn behaves_as_a_btreemap() {
        let ops: Vec<(u32, u64)> = (0..200u64)
            .map(|i| (((i * 37 + 11) % 23) as u32, i))
            .collect();
        let mut t = TallyMap::new();
        let mut b = BTreeMap::new();
        for (k, v) in &ops {
            assert_eq!(t.insert(*k, *v), b.insert(*k, *v));
            *t.entry(k + 100).or_default() += v;
            *b.entry(k + 100).or_default() += v;
            assert_eq!(t.get(k), b.get(k));
        }
        t.retain(|k, v| !(*k + *v as u32).is_multiple_of(3));
        b.retain(|k, v| !(*k + *v as u32).is_multiple_of(3));
        assert_eq!(t.iter().collect::<Vec<_>>(), b.iter().collect::<Vec<_>>());
        assert_eq!(t.len(), b.len());
        assert_eq!(t.get(&7), b.get(&7));
        let again: TallyMap<u32, u64> = b.clone().into_iter().collect();
        assert_eq!(again, t);
        assert_eq!(format!("{t:?}"), format!("{b:?}"));
    }

    #[test]
    fn merging_adds_shared_keys_and_keeps_the_others_in_order() {
        let add = |a: &mut u64, b: &u64| *a += b;
        let mut a = TallyMap::from([(4u32, 1u64), (8, 2), (32, 3)]);
        // Only keys it has: added in place.
        a.merge_with(&TallyMap::from([(8, 10), (32, 20)]), add);
        assert_eq!(a, TallyMap::from([(4, 1), (8, 12), (32, 23)]));
        // New keys before, between and after.
        a.merge_with(&TallyMap::from([(1, 5), (8, 1), (16, 6), (64, 7)]), add);
        assert_eq!(
            a.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>(),
            vec![(1, 5), (4, 1), (8, 13), (16, 6), (32, 23), (64, 7)]
        );
        // Into an empty map, and an empty one into it.
        let mut e = TallyMap::new();
        e.merge_with(&a, add);
        assert_eq!(e, a);
        e.merge_with(&TallyMap::new(), add);
        assert_eq!(e, a);
    }
}
