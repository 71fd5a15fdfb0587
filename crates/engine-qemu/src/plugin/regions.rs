//! Region markers at run time: each vCPU's stack of open regions, as a state
//! number, and the bank that counts for that vCPU in that state.
//!
//! Region boundaries are rare next to blocks, so transitions take a lock;
//! the per-block path only reads the vCPU's current bank.

use super::bank::{view, MAX_VCPUS, VCPU_BANK};
use crate::layout::{self, MAX_STATES};
pub use flopscope_counter_file::regions::Event;
use flopscope_counter_file::regions::RegionTables;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::Mutex;

/// Each vCPU's current state (0: no region open).
pub static VCPU_STATE: [AtomicU32; MAX_VCPUS] = [const { AtomicU32::new(0) }; MAX_VCPUS];

/// The bank of (vCPU, state), once allocated. Zero pages until used.
pub static BANK_OF: [AtomicPtr<u64>; MAX_VCPUS * MAX_STATES] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_VCPUS * MAX_STATES];

static TABLES: Mutex<Option<RegionTables>> = Mutex::new(None);

fn with_tables<R>(f: impl FnOnce(&mut RegionTables) -> R) -> Option<R> {
    let mut g = TABLES.lock().ok()?;
    Some(f(g.get_or_insert_with(RegionTables::default)))
}

/// The id of the region called `name` (registered in the file on first use).
pub fn region_id(name: &[u8]) -> Option<u16> {
    with_tables(|t| t.region_id(&view(), name)).flatten()
}

/// Applies a region boundary met by `vcpu`; returns its bank in the new state.
pub fn transition(vcpu: u32, event: Event) -> *mut u64 {
    let i = (vcpu as usize).min(MAX_VCPUS - 1);
    let cur = VCPU_STATE[i].load(Ordering::Relaxed);
    let next = with_tables(|t| t.transition(&view(), cur, event)).unwrap_or(cur);
    VCPU_STATE[i].store(next, Ordering::Relaxed);
    let bank = super::bank::bank_for(vcpu as usize, next);
    VCPU_BANK[i].store(bank, Ordering::Relaxed);
    if matches!(event, Event::Begin(_)) && next != cur {
        super::bank::bump(bank, layout::SLOT_REGION_ENTRIES, 1);
    }
    bank
}
