//! Which file was mapped at an address of a process at a given time, from
//! the ring buffer's side-band records (PERF_RECORD_MMAP2, the COMM of an
//! exec, FORK): every executable mapping the program and its children make,
//! with its path and file offset, as `/proc/PID/maps` would show it then.
//!
//! Records of different CPUs' rings arrive out of time order, so nothing is
//! forgotten: each process keeps every mapping with the time it was made and
//! the times it exec'd, and [`AddressSpaces::find`] answers for the sample's
//! own time (the newest mapping made before it, since the last exec before
//! it). A forked child that has not exec'd sees its parent's mappings up to
//! the fork. Mappings removed by munmap are not reported by the kernel; a
//! newer mapping at the same address hides an older one, so a library
//! unloaded and another loaded in its place are told apart.

use flopscope_symbols::Mapping;
use std::collections::HashMap;

#[derive(Debug, Default)]
struct Process {
    /// (time made, index in `AddressSpaces::mappings`), by time.
    maps: Vec<(u64, usize)>,
    /// Times of its execs, by time.
    execs: Vec<u64>,
    /// The process it was forked from, and when.
    parent: Option<(u32, u64)>,
}

/// Every process's executable mappings over time.
#[derive(Debug, Default)]
pub struct AddressSpaces {
    /// Every mapping seen, by index (a [`find`](Self::find) result).
    pub mappings: Vec<Mapping>,
    processes: HashMap<u32, Process>,
}

fn insert_sorted<T: Ord + Copy>(v: &mut Vec<T>, x: T) {
    let at = v.partition_point(|y| *y <= x);
    v.insert(at, x);
}

impl AddressSpaces {
    /// Process `pid` mapped `mapping` at `time`.
    pub fn mmap(&mut self, pid: u32, time: u64, mapping: Mapping) {
        self.mappings.push(mapping);
        let id = self.mappings.len() - 1;
        insert_sorted(&mut self.processes.entry(pid).or_default().maps, (time, id));
    }

    /// Process `pid` called exec at `time`.
    pub fn exec(&mut self, pid: u32, time: u64) {
        insert_sorted(&mut self.processes.entry(pid).or_default().execs, time);
    }

    /// Process `pid` was forked from `ppid` at `time` (ignored for threads, `pid == ppid`).
    pub fn fork(&mut self, pid: u32, ppid: u32, time: u64) {
        if pid != ppid {
            self.processes.entry(pid).or_default().parent = Some((ppid, time));
        }
    }

    /// The mapping holding `ip` in process `pid` at `time`, as an index into
    /// [`mappings`](Self::mappings).
    pub fn find(&self, pid: u32, time: u64, ip: u64) -> Option<usize> {
        let mut pid = pid;
        let mut time = time;
        // A chain of forks without exec; bounded in case a record loops it.
        for _ in 0..64 {
            let p = self.processes.get(&pid)?;
            let last_exec = p.execs[..p.execs.partition_point(|t| *t <= time)]
                .last()
                .copied();
            let made = &p.maps[..p.maps.partition_point(|(t, _)| *t <= time)];
            let found = made
                .iter()
                .rev()
                .take_while(|(t, _)| last_exec.is_none_or(|e| *t >= e))
                .find(|(_, id)| self.mappings[*id].contains(ip));
            if let Some((_, id)) = found {
                return Some(*id);
            }
            match (last_exec, p.parent) {
                (None, Some((ppid, at))) => {
                    pid = ppid;
                    time = time.min(at);
                }
                _ => return None,
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(start: u64, path: &str) -> Mapping {
        Mapping {
            start,
            end: start + 0x1000,
            file_offset: 0,
            executable: true,
            path: path.into(),
        }
    }

    fn path(s: &AddressSpaces, id: Option<usize>) -> Option<String> {
        id.map(|i| s.mappings[i].path.display().to_string())
    }

    #[test]
    fn a_sample_sees_the_mappings_made_before_it_in_any_arrival_order() {
        let mut s = AddressSpaces::default();
        // Arrival order is not time order (two CPUs' rings).
        s.mmap(1, 30, map(0x2000, "/lib/b.so"));
        s.exec(1, 10);
        s.mmap(1, 20, map(0x1000, "/bin/prog"));
        assert_eq!(
            path(&s, s.find(1, 25, 0x1800)).as_deref(),
            Some("/bin/prog")
        );
        assert_eq!(s.find(1, 25, 0x2800), None, "b.so is mapped later");
        assert_eq!(
            path(&s, s.find(1, 35, 0x2800)).as_deref(),
            Some("/lib/b.so")
        );
        assert_eq!(s.find(1, 35, 0x9000), None);
        assert_eq!(s.find(2, 35, 0x1800), None, "unknown process");
    }

    #[test]
    fn a_newer_mapping_at_the_same_address_hides_the_older() {
        let mut s = AddressSpaces::default();
        s.mmap(1, 10, map(0x1000, "/lib/first.so"));
        s.mmap(1, 20, map(0x1000, "/lib/second.so"));
        assert_eq!(
            path(&s, s.find(1, 15, 0x1000)).as_deref(),
            Some("/lib/first.so")
        );
        assert_eq!(
            path(&s, s.find(1, 25, 0x1000)).as_deref(),
            Some("/lib/second.so")
        );
    }

    #[test]
    fn exec_forgets_the_old_image_and_fork_inherits_the_parents() {
        let mut s = AddressSpaces::default();
        s.exec(1, 5);
        s.mmap(1, 10, map(0x1000, "/bin/sh"));
        // Child 2 forked at 20; the parent maps a library at 30.
        s.fork(2, 1, 20);
        s.mmap(1, 30, map(0x3000, "/lib/late.so"));
        assert_eq!(path(&s, s.find(2, 25, 0x1000)).as_deref(), Some("/bin/sh"));
        assert_eq!(
            s.find(2, 40, 0x3000),
            None,
            "mapped by the parent after the fork"
        );
        // The child execs at 50 and maps its own program at 0x1000.
        s.exec(2, 50);
        s.mmap(2, 51, map(0x1000, "/bin/prog"));
        assert_eq!(path(&s, s.find(2, 45, 0x1000)).as_deref(), Some("/bin/sh"));
        assert_eq!(
            path(&s, s.find(2, 60, 0x1000)).as_deref(),
            Some("/bin/prog")
        );
        assert_eq!(s.find(2, 60, 0x1800 + 0x1000), None);
        // Threads (pid == ppid) are no new process.
        s.fork(1, 1, 70);
        assert_eq!(path(&s, s.find(1, 80, 0x1000)).as_deref(), Some("/bin/sh"));
    }
}
