//! Region names and states, registered in a counter file as markers meet
//! them: a state is a stack of open regions (state 0: none open). The QEMU
//! plugin and the native runtime keep one [`RegionTables`] each, behind
//! their own lock, and move a thread from state to state with
//! [`RegionTables::transition`].

use crate::layout::{self, word, View};
use std::collections::HashMap;
use std::sync::atomic::Ordering;

/// The name of the region SDE SSC marks `start`..`stop` delimit, the same
/// under both engines.
pub fn ssc_region_name(start: u64, stop: u64) -> String {
    format!("ssc:{start:#x}-{stop:#x}")
}

/// SDE's meaning of SSC marks without `:repeat`: only the first start..stop
/// pair counts; later marks are ignored. Shared by both engines' run-time
/// sides (one per process).
pub struct SscGate {
    once: std::sync::atomic::AtomicBool,
    done: std::sync::atomic::AtomicBool,
}

impl SscGate {
    pub const fn new() -> SscGate {
        SscGate {
            once: std::sync::atomic::AtomicBool::new(false),
            done: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Only the first pair from now on (`--start-mark N` without `:repeat`).
    pub fn set_once(&self) {
        self.once.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether a mark (a start, or a stop) is to be acted on.
    pub fn admit(&self, stop: bool) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        if !self.once.load(Relaxed) {
            return true;
        }
        if stop {
            !self.done.swap(true, Relaxed)
        } else {
            !self.done.load(Relaxed)
        }
    }
}

impl Default for SscGate {
    fn default() -> Self {
        Self::new()
    }
}

/// A region boundary met by a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Begin(u16),
    End(u16),
}

pub struct RegionTables {
    names: HashMap<Vec<u8>, u16>,
    states: HashMap<Vec<u16>, u32>,
    stacks: Vec<Vec<u16>>,
}

impl Default for RegionTables {
    fn default() -> Self {
        let mut states = HashMap::new();
        states.insert(Vec::new(), 0);
        RegionTables {
            names: HashMap::new(),
            states,
            stacks: vec![Vec::new()],
        }
    }
}

/// Counts a region end that did not match; the first is described.
pub fn note_mismatch(v: &View, text: String) {
    if v.word(word::MISMATCHES).fetch_add(1, Ordering::AcqRel) == 0 {
        let mut b = text.into_bytes();
        b.truncate(layout::TEXT_BYTES - 1);
        b.push(0);
        // SAFETY: written once, by the first mismatch.
        unsafe { v.write_bytes(layout::MISMATCH_TEXT, &b) };
    }
}

impl RegionTables {
    /// The id of the region called `name`, registered in the file on first
    /// use; `None` when the region table is full.
    pub fn region_id(&mut self, v: &View, name: &[u8]) -> Option<u16> {
        if let Some(id) = self.names.get(name) {
            return Some(*id);
        }
        let id = layout::load(v.word(word::REGIONS_USED)) as usize;
        if id >= layout::MAX_REGIONS {
            return None;
        }
        let mut bytes = name.to_vec();
        bytes.truncate(layout::REGION_NAME_BYTES - 1);
        bytes.push(0);
        // SAFETY: region-table entries are written only here, under the owner's lock.
        unsafe {
            v.write_bytes(
                layout::REGION_TABLE + id * layout::REGION_NAME_BYTES,
                &bytes,
            )
        };
        v.word(word::REGIONS_USED)
            .store(id as u64 + 1, Ordering::Release);
        self.names.insert(name.to_vec(), id as u16);
        Some(id as u16)
    }

    fn state_of(&mut self, v: &View, stack: Vec<u16>) -> Option<u32> {
        if let Some(s) = self.states.get(&stack) {
            return Some(*s);
        }
        let s = layout::load(v.word(word::STATES_USED)) as usize;
        if s >= layout::MAX_STATES || stack.len() > layout::MAX_DEPTH {
            return None;
        }
        let mut raw = [0u8; 16];
        for (i, id) in stack.iter().enumerate() {
            raw[i * 2..i * 2 + 2].copy_from_slice(&id.to_le_bytes());
        }
        // SAFETY: state-table entries are written only here, under the owner's lock.
        unsafe { v.write_bytes(layout::STATE_TABLE + s * 16, &raw) };
        v.word(word::STATES_USED)
            .store(s as u64 + 1, Ordering::Release);
        self.states.insert(stack.clone(), s as u32);
        self.stacks.push(stack);
        Some(s as u32)
    }

    /// The state after `event` in state `cur`. An end closes the region and
    /// any still open inside it; an end of a region not open is ignored.
    /// Both are noted as mismatches, as is a full table (the state then stays).
    pub fn transition(&mut self, v: &View, cur: u32, event: Event) -> u32 {
        let mut stack = self.stacks.get(cur as usize).cloned().unwrap_or_default();
        match event {
            Event::Begin(id) => stack.push(id),
            Event::End(id) => match stack.iter().rposition(|r| *r == id) {
                Some(pos) => {
                    if pos + 1 != stack.len() {
                        note_mismatch(
                            v,
                            format!(
                                "region {} ended while {} inside it was still open: closed both",
                                v.region_name(id as usize),
                                v.region_name(*stack.last().unwrap_or(&0) as usize)
                            ),
                        );
                    }
                    stack.truncate(pos);
                }
                None => {
                    note_mismatch(
                        v,
                        format!(
                            "region {} ended but was not open: end ignored",
                            v.region_name(id as usize)
                        ),
                    );
                    return cur;
                }
            },
        }
        match self.state_of(v, stack) {
            Some(s) => s,
            None => {
                note_mismatch(
                    v,
                    "too many regions, nested states or nesting levels: region counting stopped growing".into(),
                );
                cur
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> (Vec<u64>, View) {
        let mut mem = vec![0u64; layout::FILE_BYTES / 8];
        // SAFETY: a zeroed buffer of FILE_BYTES bytes, alive as long as the view is used.
        let v = unsafe { View::new(mem.as_mut_ptr() as *mut u8) };
        // SAFETY: nothing else uses the buffer.
        unsafe { layout::format_new(&v, 1) };
        (mem, v)
    }

    #[test]
    fn states_nest_close_and_note_mismatches() {
        let (_mem, v) = file();
        let mut t = RegionTables::default();
        let (a, b) = (
            t.region_id(&v, b"outer").unwrap(),
            t.region_id(&v, b"inner").unwrap(),
        );
        assert_eq!((a, b), (1, 2));
        assert_eq!(t.region_id(&v, b"outer"), Some(1));
        let s1 = t.transition(&v, 0, Event::Begin(a));
        let s2 = t.transition(&v, s1, Event::Begin(b));
        assert_eq!(v.state_stack(s2 as usize), vec![a, b]);
        assert_eq!(t.transition(&v, s2, Event::End(b)), s1);
        // Ending the outer region with the inner one open closes both.
        assert_eq!(t.transition(&v, s2, Event::End(a)), 0);
        assert_eq!(layout::load(v.word(word::MISMATCHES)), 1);
        // An end of a region not open changes nothing.
        assert_eq!(t.transition(&v, 0, Event::End(b)), 0);
        assert_eq!(layout::load(v.word(word::MISMATCHES)), 2);
        assert!(v
            .text(layout::MISMATCH_TEXT)
            .contains("outer ended while inner"));
    }
}
