//! Region markers at run time: a thread's stack of open regions is a state
//! number; each state has its own bank of counters, so a marker moves `gs`.
//! Names and states are registered in the counter file as they appear.

use crate::out;
use crate::thread;
use flopscope_counter_file::layout::{self, word};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

pub const BEGIN: u8 = 1;
pub const END: u8 = 2;

#[derive(Default)]
struct Tables {
    names: HashMap<Vec<u8>, u16>,
    states: HashMap<Vec<u16>, u32>,
    stacks: Vec<Vec<u16>>,
}

static TABLES: Mutex<Option<Tables>> = Mutex::new(None);

fn id_of(t: &mut Tables, v: &layout::View, name: &[u8]) -> Option<u16> {
    if let Some(id) = t.names.get(name) {
        return Some(*id);
    }
    let id = layout::load(v.word(word::REGIONS_USED)) as usize;
    if id >= layout::MAX_REGIONS {
        return None;
    }
    let mut bytes = name.to_vec();
    bytes.truncate(layout::REGION_NAME_BYTES - 1);
    bytes.push(0);
    // SAFETY: region-table entries are written only here, under the lock.
    unsafe {
        v.write_bytes(
            layout::REGION_TABLE + id * layout::REGION_NAME_BYTES,
            &bytes,
        )
    };
    v.word(word::REGIONS_USED)
        .store(id as u64 + 1, Ordering::Release);
    t.names.insert(name.to_vec(), id as u16);
    Some(id as u16)
}

fn state_of(t: &mut Tables, v: &layout::View, stack: Vec<u16>) -> Option<u32> {
    if let Some(s) = t.states.get(&stack) {
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
    // SAFETY: state-table entries are written only here, under the lock.
    unsafe { v.write_bytes(layout::STATE_TABLE + s * 16, &raw) };
    v.word(word::STATES_USED)
        .store(s as u64 + 1, Ordering::Release);
    t.states.insert(stack.clone(), s as u32);
    t.stacks.push(stack);
    Some(s as u32)
}

fn mismatch(v: &layout::View, text: String) {
    if v.word(word::MISMATCHES).fetch_add(1, Ordering::AcqRel) == 0 {
        let mut b = text.into_bytes();
        b.truncate(layout::TEXT_BYTES - 1);
        b.push(0);
        // SAFETY: written once, by the first mismatch.
        unsafe { v.write_bytes(layout::MISMATCH_TEXT, &b) };
    }
}

/// A named marker of `kind` met by the calling thread.
pub fn marker(kind: u8, name: &[u8]) {
    let Some(v) = out::view() else { return };
    let th = thread::current();
    let cur = th.state.load(Ordering::Acquire);
    let mut g = TABLES.lock().unwrap_or_else(|e| e.into_inner());
    let t = g.get_or_insert_with(|| {
        let mut t = Tables::default();
        t.states.insert(Vec::new(), 0);
        t.stacks.push(Vec::new());
        t
    });
    let Some(id) = id_of(t, &v, name) else {
        mismatch(
            &v,
            "too many regions: region counting stopped growing".into(),
        );
        return;
    };
    let mut stack = t.stacks.get(cur as usize).cloned().unwrap_or_default();
    if kind == BEGIN {
        stack.push(id);
    } else {
        match stack.iter().rposition(|r| *r == id) {
            Some(pos) => {
                if pos + 1 != stack.len() {
                    mismatch(
                        &v,
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
                mismatch(
                    &v,
                    format!(
                        "region {} ended but was not open: end ignored",
                        v.region_name(id as usize)
                    ),
                );
                return;
            }
        }
    }
    let Some(next) = state_of(t, &v, stack) else {
        mismatch(
            &v,
            "too many regions, nested states or nesting levels: region counting stopped growing"
                .into(),
        );
        return;
    };
    drop(g);
    if kind == BEGIN && next != cur {
        th.entries[next as usize].fetch_add(1, Ordering::AcqRel);
    }
    if !th.switch_to(next) {
        mismatch(
            &v,
            "no memory for another bank of counters: region counting stopped".into(),
        );
    }
}
