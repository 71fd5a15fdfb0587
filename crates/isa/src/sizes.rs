//! The sizes of one instruction's reads (or writes), kept inline: however
//! many accesses an instruction makes (ENTER with nesting level 31 makes 62),
//! they come in at most a few distinct sizes, so a [`crate::MemInfo`] costs
//! no allocation. Engines classify every instruction they translate.

/// Distinct access sizes one instruction can have in each direction. x86-64
/// has no form with more than two; the sweep test holds every form to it.
const RUNS: usize = 4;

/// Accesses by size: each distinct size with how many accesses have it, in
/// order of first appearance.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Sizes {
    runs: [(u32, u32); RUNS],
    len: u8,
}

impl Sizes {
    /// Records one access of `size` bytes.
    ///
    /// # Panics
    /// On a fifth distinct size, which no instruction has.
    pub fn push(&mut self, size: u32) {
        let n = usize::from(self.len);
        if let Some(run) = self.runs[..n].iter_mut().find(|(s, _)| *s == size) {
            run.1 += 1;
            return;
        }
        assert!(
            n < RUNS,
            "an instruction with more than {RUNS} access sizes"
        );
        self.runs[n] = (size, 1);
        self.len += 1;
    }

    /// (size in bytes, accesses of that size), each size once.
    pub fn counts(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.runs[..usize::from(self.len)].iter().copied()
    }

    /// The size of every access, one item per access.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.counts()
            .flat_map(|(size, n)| std::iter::repeat_n(size, n as usize))
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Accesses of every size.
    pub fn accesses(&self) -> u32 {
        self.counts().map(|(_, n)| n).sum()
    }
}

impl FromIterator<u32> for Sizes {
    fn from_iter<I: IntoIterator<Item = u32>>(sizes: I) -> Sizes {
        let mut s = Sizes::default();
        for size in sizes {
            s.push(size);
        }
        s
    }
}

impl std::fmt::Debug for Sizes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<const N: usize> PartialEq<[u32; N]> for Sizes {
    fn eq(&self, other: &[u32; N]) -> bool {
        self.iter().eq(other.iter().copied())
    }
}

impl PartialEq<Vec<u32>> for Sizes {
    fn eq(&self, other: &Vec<u32>) -> bool {
        self.iter().eq(other.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accesses_group_by_size_in_order_of_first_appearance() {
        let mut s = Sizes::default();
        assert!(s.is_empty());
        for size in [8, 16, 8, 8] {
            s.push(size);
        }
        assert_eq!(s.counts().collect::<Vec<_>>(), vec![(8, 3), (16, 1)]);
        assert_eq!(s, [8, 8, 8, 16]);
        assert_eq!(s.accesses(), 4);
        assert_eq!(format!("{s:?}"), "[8, 8, 8, 16]");
    }

    #[test]
    #[should_panic(expected = "more than 4 access sizes")]
    fn a_fifth_size_is_refused() {
        let mut s = Sizes::default();
        for size in [1, 2, 4, 8, 16] {
            s.push(size);
        }
    }
}
