//! From ring-buffer records to samples per function: a [`Collector`] takes
//! every [`Record`] of a run, places each sample in the mapping its process
//! had at the sample's time ([`AddressSpaces`]), and [`Collector::finish`]
//! names the functions with `crates/symbols` into a [`Profile`].
//!
//! Records reach the collector one drain of all rings at a time, and a ring
//! read later may hold side-band records older than samples already read
//! (another CPU's). Every record older than a drain's start has been read by
//! the end of that drain, so the samples of one drain are placed at the end
//! of the next ([`Collector::end_drain`]), and the last ones at the end.
//!
//! Functions are named as the exact engines name them (crates/attribution):
//! the innermost source function at the address (an inlined one is a row of
//! its own, `inlined_into` its caller), `module+0xoffset` without symbols,
//! `[anonymous]+0xpage` outside every file mapping, `[vdso]` for the vDSO.

use crate::mappings::AddressSpaces;
use crate::records::Record;
use flopscope_symbols::{Mapping, Symbolizer};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Samples of one function, per sampled event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SampledFunction {
    /// As in [`flopscope_model::FunctionRow::name`].
    pub name: String,
    pub module: String,
    /// Its start where the symbol gives it, else the lowest sampled address.
    pub address: u64,
    /// The lowest source line sampled in it, where DWARF gives lines.
    pub file: Option<String>,
    pub line: Option<u32>,
    pub inlined_into: Vec<String>,
    /// Event name -> samples of that event in the function.
    pub samples: BTreeMap<String, u64>,
}

impl SampledFunction {
    /// Samples of every event.
    pub fn total_samples(&self) -> u64 {
        self.samples.values().sum()
    }
}

/// What one sampled run saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    /// Events of each sampled event between two samples.
    pub period: u64,
    /// The sampled events' names.
    pub events: Vec<String>,
    pub functions: Vec<SampledFunction>,
    /// Records the kernel dropped because a ring was full (PERF_RECORD_LOST,
    /// PERF_RECORD_LOST_SAMPLES).
    pub lost: u64,
    /// Times the kernel throttled an event (too many samples per second).
    pub throttled: u64,
    /// Bytes of records that did not parse, and samples of no opened event.
    pub malformed: u64,
}

impl Profile {
    /// Samples of `event` over all functions.
    pub fn samples_of(&self, event: &str) -> u64 {
        self.functions
            .iter()
            .filter_map(|f| f.samples.get(event))
            .sum()
    }
}

/// No mapping: the sample's address is outside every file the process mapped.
const UNMAPPED: usize = usize::MAX;

#[derive(Debug, Clone, Copy)]
struct Pending {
    pid: u32,
    time: u64,
    ip: u64,
    event: u16,
}

/// Gathers the records of a run.
#[derive(Debug, Default)]
pub struct Collector {
    spaces: AddressSpaces,
    /// Kernel event id -> index of the sampled event.
    ids: HashMap<u64, u16>,
    events: Vec<String>,
    /// Samples read in the previous drain, and in this one.
    previous: Vec<Pending>,
    current: Vec<Pending>,
    /// (mapping or UNMAPPED, address, event) -> samples.
    placed: HashMap<(usize, u64, u16), u64>,
    lost: u64,
    throttled: u64,
    malformed: u64,
}

impl Collector {
    /// A collector for samples of `events`, whose kernel ids are given with [`Collector::add_id`].
    pub fn new(events: Vec<String>) -> Collector {
        Collector {
            events,
            ..Default::default()
        }
    }

    /// Samples carrying `id` are of `events[event]`.
    pub fn add_id(&mut self, id: u64, event: usize) {
        self.ids.insert(id, event as u16);
    }

    /// Counts `bytes` of records that did not parse.
    pub fn add_malformed(&mut self, bytes: usize) {
        self.malformed += bytes as u64;
    }

    pub fn record(&mut self, r: Record) {
        match r {
            Record::Sample {
                id, ip, pid, time, ..
            } => match self.ids.get(&id) {
                Some(&event) => self.current.push(Pending {
                    pid,
                    time,
                    ip,
                    event,
                }),
                None => self.malformed += 1,
            },
            Record::Mmap2 {
                pid,
                time,
                addr,
                len,
                pgoff,
                prot,
                path,
            } if prot & libc::PROT_EXEC as u32 != 0 => self.spaces.mmap(
                pid,
                time,
                Mapping {
                    start: addr,
                    end: addr.saturating_add(len),
                    file_offset: pgoff,
                    executable: true,
                    path: path.into(),
                },
            ),
            Record::Exec { pid, time } => self.spaces.exec(pid, time),
            Record::Fork { pid, ppid, time } => self.spaces.fork(pid, ppid, time),
            Record::Lost { lost, .. } | Record::LostSamples { lost } => self.lost += lost,
            Record::Throttle { .. } => self.throttled += 1,
            Record::Mmap2 { .. } | Record::Other { .. } => {}
        }
    }

    fn place(&mut self, samples: Vec<Pending>) {
        for s in samples {
            let map = self.spaces.find(s.pid, s.time, s.ip).unwrap_or(UNMAPPED);
            *self.placed.entry((map, s.ip, s.event)).or_default() += 1;
        }
    }

    /// Ends one drain of every ring: places the samples of the drain before.
    pub fn end_drain(&mut self) {
        let previous = std::mem::replace(&mut self.previous, std::mem::take(&mut self.current));
        self.place(previous);
    }

    /// Places what is left and names the functions; `period` is the sampling period.
    pub fn finish(mut self, period: u64, symbolizer: &mut Symbolizer) -> Profile {
        let rest: Vec<Pending> = self
            .previous
            .drain(..)
            .chain(self.current.drain(..))
            .collect();
        self.place(rest);
        let mut functions: BTreeMap<(String, String), SampledFunction> = BTreeMap::new();
        let mut callers: HashMap<(String, String), BTreeSet<String>> = HashMap::new();
        for (&(map, ip, event), &n) in &self.placed {
            let p = place(&self.spaces, symbolizer, map, ip);
            let key = (p.module.clone(), p.function.clone());
            let f = functions
                .entry(key.clone())
                .or_insert_with(|| SampledFunction {
                    name: p.function.clone(),
                    module: p.module.clone(),
                    address: u64::MAX,
                    ..Default::default()
                });
            f.address = f.address.min(p.start);
            if let (Some(file), Some(line)) = (&p.file, p.line) {
                if f.line.is_none_or(|l| line < l) {
                    f.file = Some(file.clone());
                    f.line = Some(line);
                }
            }
            *f.samples
                .entry(self.events[usize::from(event)].clone())
                .or_default() += n;
            if let Some(c) = p.inlined_into {
                callers.entry(key).or_default().insert(c);
            }
        }
        let functions = functions
            .into_iter()
            .map(|(key, mut f)| {
                f.inlined_into = callers
                    .remove(&key)
                    .unwrap_or_default()
                    .into_iter()
                    .collect();
                f
            })
            .collect();
        Profile {
            period,
            events: self.events,
            functions,
            lost: self.lost,
            throttled: self.throttled,
            malformed: self.malformed,
        }
    }
}

/// Where one sampled address is.
struct Place {
    module: String,
    function: String,
    inlined_into: Option<String>,
    /// The function's start where known, else the address.
    start: u64,
    file: Option<String>,
    line: Option<u32>,
}

fn place(spaces: &AddressSpaces, symbolizer: &mut Symbolizer, map: usize, ip: u64) -> Place {
    let anonymous = || {
        let name = format!("[anonymous]+{:#x}", ip & !0xfff);
        Place {
            module: "[anonymous]".into(),
            function: name,
            inlined_into: None,
            start: ip & !0xfff,
            file: None,
            line: None,
        }
    };
    let Some(map) = spaces.mappings.get(map) else {
        return anonymous();
    };
    let module = map.path.display().to_string();
    if !module.starts_with('/') {
        // [vdso] and other pseudo files: one row each.
        return Place {
            function: module.clone(),
            module,
            inlined_into: None,
            start: map.start,
            file: None,
            line: None,
        };
    }
    let loc = symbolizer.locate(map, ip);
    let innermost = loc.frames.first();
    let function = loc.source_function();
    let inlined_into = loc.inlined_into();
    let start = if function == loc.symbol.name {
        loc.symbol.start
    } else {
        ip
    };
    Place {
        module,
        function,
        inlined_into,
        start,
        file: innermost.and_then(|f| f.file.clone()),
        line: innermost.and_then(|f| f.line).filter(|l| *l != 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{build, parse_records};

    /// This test binary's own code: a real file to symbolize.
    fn here() -> (u64, Mapping) {
        let maps =
            flopscope_symbols::parse_maps(&std::fs::read_to_string("/proc/self/maps").unwrap());
        let addr = Collector::record as *const () as usize as u64;
        let map = maps.into_iter().find(|m| m.contains(addr)).unwrap();
        (addr, map)
    }

    fn feed(c: &mut Collector, records: &[Vec<u8>]) {
        let bytes: Vec<u8> = records.concat();
        let bad = parse_records(&bytes, |r| c.record(r));
        assert_eq!(bad, 0);
    }

    #[test]
    fn samples_are_named_by_the_mapping_of_their_time_and_process() {
        let (addr, map) = here();
        let path = map.path.display().to_string();
        let mut c = Collector::new(vec!["A".into(), "B".into()]);
        c.add_id(11, 0);
        c.add_id(22, 1);
        // The sample arrives in a drain before the mapping it lies in (another CPU's ring).
        feed(&mut c, &[build::sample(11, addr, 5, 5, 200)]);
        c.end_drain();
        feed(
            &mut c,
            &[
                build::exec(5, 100, "prog"),
                build::mmap2(
                    5,
                    150,
                    map.start,
                    map.end - map.start,
                    map.file_offset,
                    &path,
                ),
                build::sample(22, addr, 5, 6, 210),
                build::sample(22, addr, 5, 6, 220),
                // Forked child 6 without exec: the parent's mappings.
                build::fork(6, 5, 230),
                build::sample(11, addr, 6, 6, 240),
                // Outside every mapping, and an id nobody opened.
                build::sample(11, 0x1234, 5, 5, 250),
                build::sample(99, addr, 5, 5, 260),
                build::lost(11, 7),
                build::throttle(11, 270),
                build::mmap2(5, 280, 0x7fff0000, 0x2000, 0, "[vdso]"),
                build::sample(22, 0x7fff0010, 5, 5, 290),
            ],
        );
        c.end_drain();
        let p = c.finish(1000, &mut Symbolizer::new());
        assert_eq!(p.period, 1000);
        assert_eq!((p.lost, p.throttled, p.malformed), (7, 1, 1));
        let by_name: BTreeMap<&str, &SampledFunction> =
            p.functions.iter().map(|f| (f.name.as_str(), f)).collect();
        let f = by_name["flopscope_engine_perf::profile::Collector::record"];
        assert_eq!(f.module, path);
        assert_eq!(f.address, addr, "the symbol's start");
        assert_eq!(
            f.samples,
            [("A".to_string(), 2), ("B".to_string(), 2)].into()
        );
        assert_eq!(f.total_samples(), 4);
        let a = by_name["[anonymous]+0x1000"];
        assert_eq!((a.module.as_str(), a.samples["A"]), ("[anonymous]", 1));
        assert_eq!(by_name["[vdso]"].samples["B"], 1);
        assert_eq!(p.samples_of("A"), 3);
        assert_eq!(p.samples_of("B"), 3);
    }
}
