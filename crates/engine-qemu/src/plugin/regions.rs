//! Region markers at run time: each vCPU's stack of open regions, as a state
//! number, and the bank that counts for that vCPU in that state.
//!
//! Region boundaries are rare next to blocks, so transitions take a lock;
//! the per-block path only reads the vCPU's current bank.

use super::bank::{view, MAX_VCPUS, VCPU_BANK};
use crate::layout::{
    self, word, MAX_DEPTH, MAX_REGIONS, MAX_STATES, MISMATCH_TEXT, REGION_NAME_BYTES, REGION_TABLE,
    STATE_TABLE, TEXT_BYTES,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::Mutex;

/// Each vCPU's current state (0: no region open).
pub static VCPU_STATE: [AtomicU32; MAX_VCPUS] = [const { AtomicU32::new(0) }; MAX_VCPUS];

/// The bank of (vCPU, state), once allocated. Zero pages until used.
pub static BANK_OF: [AtomicPtr<u64>; MAX_VCPUS * MAX_STATES] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_VCPUS * MAX_STATES];

#[derive(Default)]
struct Tables {
    names: HashMap<Vec<u8>, u16>,
    states: HashMap<Vec<u16>, u32>,
    stacks: Vec<Vec<u16>>,
}

static TABLES: Mutex<Option<Tables>> = Mutex::new(None);

fn with_tables<R>(f: impl FnOnce(&mut Tables) -> R) -> Option<R> {
    let mut g = TABLES.lock().ok()?;
    let t = g.get_or_insert_with(|| {
        let mut t = Tables::default();
        t.states.insert(Vec::new(), 0);
        t.stacks.push(Vec::new());
        t
    });
    Some(f(t))
}

/// The id of the region called `name` (registered in the file on first use).
pub fn region_id(name: &[u8]) -> Option<u16> {
    with_tables(|t| {
        if let Some(id) = t.names.get(name) {
            return Some(*id);
        }
        let v = view();
        let id = layout::load(v.word(word::REGIONS_USED)) as usize;
        if id >= MAX_REGIONS {
            return None;
        }
        let mut bytes = name.to_vec();
        bytes.truncate(REGION_NAME_BYTES - 1);
        bytes.push(0);
        // SAFETY: region-table entries are written only here, under the lock.
        unsafe { v.write_bytes(REGION_TABLE + id * REGION_NAME_BYTES, &bytes) };
        v.word(word::REGIONS_USED)
            .store(id as u64 + 1, Ordering::Release);
        t.names.insert(name.to_vec(), id as u16);
        Some(id as u16)
    })
    .flatten()
}

fn state_of(t: &mut Tables, stack: Vec<u16>) -> Option<u32> {
    if let Some(s) = t.states.get(&stack) {
        return Some(*s);
    }
    let v = view();
    let s = layout::load(v.word(word::STATES_USED)) as usize;
    if s >= MAX_STATES || stack.len() > MAX_DEPTH {
        return None;
    }
    let mut raw = [0u8; 16];
    for (i, id) in stack.iter().enumerate() {
        raw[i * 2..i * 2 + 2].copy_from_slice(&id.to_le_bytes());
    }
    // SAFETY: state-table entries are written only here, under the lock.
    unsafe { v.write_bytes(STATE_TABLE + s * 16, &raw) };
    v.word(word::STATES_USED)
        .store(s as u64 + 1, Ordering::Release);
    t.states.insert(stack.clone(), s as u32);
    t.stacks.push(stack);
    Some(s as u32)
}

fn note_mismatch(text: String) {
    let v = view();
    if v.word(word::MISMATCHES).fetch_add(1, Ordering::AcqRel) == 0 {
        let mut b = text.into_bytes();
        b.truncate(TEXT_BYTES - 1);
        b.push(0);
        // SAFETY: written once, by the first mismatch.
        unsafe { v.write_bytes(MISMATCH_TEXT, &b) };
    }
}

/// A region boundary.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    Begin(u16),
    End(u16),
}

/// Applies a region boundary met by `vcpu`; returns its bank in the new state.
pub fn transition(vcpu: u32, event: Event) -> *mut u64 {
    let i = (vcpu as usize).min(MAX_VCPUS - 1);
    let cur = VCPU_STATE[i].load(Ordering::Relaxed);
    let next = with_tables(|t| {
        let mut stack = t.stacks.get(cur as usize).cloned().unwrap_or_default();
        match event {
            Event::Begin(id) => stack.push(id),
            Event::End(id) => match stack.iter().rposition(|r| *r == id) {
                Some(pos) => {
                    if pos + 1 != stack.len() {
                        note_mismatch(format!(
                            "region {} ended while {} inside it was still open: closed both",
                            view().region_name(id as usize),
                            view().region_name(*stack.last().unwrap_or(&0) as usize)
                        ));
                    }
                    stack.truncate(pos);
                }
                None => {
                    note_mismatch(format!(
                        "region {} ended but was not open: end ignored",
                        view().region_name(id as usize)
                    ));
                }
            },
        }
        state_of(t, stack)
    })
    .flatten();
    let next = match next {
        Some(s) => s,
        None => {
            note_mismatch("too many regions, nested states or nesting levels: region counting stopped growing".into());
            cur
        }
    };
    VCPU_STATE[i].store(next, Ordering::Relaxed);
    let bank = super::bank::bank_for(vcpu as usize, next);
    VCPU_BANK[i].store(bank, Ordering::Relaxed);
    if matches!(event, Event::Begin(_)) && next != cur {
        super::bank::bump(bank, layout::SLOT_REGION_ENTRIES, 1);
    }
    bank
}
