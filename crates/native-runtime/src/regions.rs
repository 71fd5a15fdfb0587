//! Region markers at run time: a thread's stack of open regions is a state
//! number (the tables are the counter file's, `flopscope_counter_file::regions`);
//! each state has its own bank of counters, so a marker moves `gs`.

use crate::out;
use crate::thread;
use flopscope_counter_file::regions::{note_mismatch, Event, RegionTables};
use std::sync::atomic::Ordering;
use std::sync::Mutex;

pub const BEGIN: u8 = 1;
pub const END: u8 = 2;

static TABLES: Mutex<Option<RegionTables>> = Mutex::new(None);

/// A named marker of `kind` met by the calling thread.
pub fn marker(kind: u8, name: &[u8]) {
    let Some(v) = out::view() else { return };
    let th = thread::current();
    let cur = th.state.load(Ordering::Acquire);
    let next = {
        let mut g = TABLES.lock().unwrap_or_else(|e| e.into_inner());
        let t = g.get_or_insert_with(RegionTables::default);
        let Some(id) = t.region_id(&v, name) else {
            note_mismatch(
                &v,
                "too many regions: region counting stopped growing".into(),
            );
            return;
        };
        t.transition(
            &v,
            cur,
            if kind == BEGIN {
                Event::Begin(id)
            } else {
                Event::End(id)
            },
        )
    };
    if kind == BEGIN && next != cur {
        th.entries[next as usize].fetch_add(1, Ordering::AcqRel);
    }
    if !th.switch_to(next) {
        note_mismatch(
            &v,
            "no memory for another bank of counters: region counting stopped".into(),
        );
    }
}
