//! Region markers at run time: a thread's stack of open regions is a state
//! number (the tables are the counter file's, `flopscope_counter_file::regions`);
//! each state has its own bank of counters, so a marker moves `gs`.

use crate::out;
use crate::thread;
use flopscope_counter_file::regions::{note_mismatch, ssc_region_name, Event, RegionTables};
use std::sync::atomic::Ordering;
use std::sync::{Mutex, OnceLock};

pub const BEGIN: u8 = 1;
pub const END: u8 = 2;

/// SDE SSC mark values that begin and end the region `ssc:START-STOP`, as
/// `START,STOP` (`flopscope count --start-mark START --stop-mark STOP`).
pub const SSC_ENV: &str = "FLOPSCOPE_NATIVE_SSC";

/// The SSC mark values and the region's name, read at take-over.
static SSC: OnceLock<Option<(u32, u32, String)>> = OnceLock::new();

/// Reads the SSC mark values from the environment (once, at take-over).
pub fn init_ssc() {
    SSC.get_or_init(|| parse_ssc(&std::env::var(SSC_ENV).ok()?));
}

/// Only the first start..stop pair, unless the CLI said `:repeat`.
static SSC_GATE: flopscope_counter_file::regions::SscGate =
    flopscope_counter_file::regions::SscGate::new();

fn parse_ssc(v: &str) -> Option<(u32, u32, String)> {
    let v = match v.strip_suffix(",once") {
        Some(rest) => {
            SSC_GATE.set_once();
            rest
        }
        None => v,
    };
    let (a, b) = v.split_once(',')?;
    let num = |t: &str| match t.trim().strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => t.trim().parse().ok(),
    };
    let (start, stop) = (num(a)?, num(b)?);
    Some((start, stop, ssc_region_name(start.into(), stop.into())))
}

/// The boundary an SSC mark `value` stands for, if the CLI asked for it.
pub fn ssc_kind(value: u32) -> Option<u8> {
    let (start, stop, _) = SSC.get()?.as_ref()?;
    if value == *start {
        Some(BEGIN)
    } else if value == *stop {
        Some(END)
    } else {
        None
    }
}

/// An SSC mark of `kind` met by the calling thread.
pub fn ssc(kind: u8) {
    if let Some(Some((_, _, name))) = SSC.get() {
        if SSC_GATE.admit(kind == END) {
            marker(kind, name.as_bytes());
        }
    }
}

static TABLES: Mutex<Option<RegionTables>> = Mutex::new(None);

/// The lock held, if free now (a fork's, see `fork`).
pub(crate) fn hold() -> Option<impl Sized> {
    crate::fork::try_guard(&TABLES)
}

/// A named marker of `kind` met by the calling thread.
pub fn marker(kind: u8, name: &[u8]) {
    let Some(v) = out::view() else { return };
    let th = thread::current();
    let cur = th.state.load(Ordering::Acquire);
    let (id, next) = {
        let mut g = TABLES.lock().unwrap_or_else(|e| e.into_inner());
        let t = g.get_or_insert_with(RegionTables::default);
        let Some(id) = t.region_id(&v, name) else {
            note_mismatch(
                &v,
                "too many regions: region counting stopped growing".into(),
            );
            return;
        };
        let event = if kind == BEGIN {
            Event::Begin(id)
        } else {
            Event::End(id)
        };
        (id, t.transition(&v, cur, event))
    };
    if kind == BEGIN && next != cur {
        th.entries[next as usize].fetch_add(1, Ordering::AcqRel);
    }
    if next != cur {
        if kind == BEGIN {
            crate::region_times::begin(id.into(), name, th.index);
        } else {
            crate::region_times::end(id.into(), th.index);
        }
    }
    if !th.switch_to(next) {
        note_mismatch(
            &v,
            crate::sys::no_memory(
                "no memory for another bank of counters: region counting stopped",
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssc_values_parse_as_the_cli_writes_them() {
        assert_eq!(
            parse_ssc("0x111,0x222"),
            Some((0x111, 0x222, "ssc:0x111-0x222".to_string()))
        );
        assert_eq!(
            parse_ssc("273,546").map(|s| (s.0, s.1)),
            Some((0x111, 0x222))
        );
        assert_eq!(parse_ssc("0x111"), None);
        assert_eq!(parse_ssc("0x111,zz"), None);
    }
}
