//! Joining timing-only reports (`flopscope time`, engine `time`) to the
//! counting reports of the same job: under an MPI launcher a rank cannot run
//! its program twice, so counts and native times come from two launches.

use crate::report::Report;

/// The engine name of timing-only reports.
pub const TIME_ENGINE: &str = "time";

/// Gives `count` the native wall time and region times of `time` (a timing
/// report of the same program and rank), and recomputes its rates.
pub fn attach(count: &mut Report, time: &Report) {
    for r in &mut count.regions {
        if let Some(t) = time.regions.iter().find(|t| t.name == r.name) {
            r.native_time_s = t.native_time_s;
        }
    }
    count.native_time_s = time.native_time_s;
    count
        .warnings
        .retain(|w| !w.starts_with("started as an MPI rank: the native timed run is skipped"));
    count.refresh_derived();
}

/// Splits `reports` into counting and timing ones and attaches each timing
/// report to the counting report of the same rank (or, without ranks, the
/// same position). Returns the counting reports, and a description of each
/// timing report that matched none.
pub fn join<T>(reports: Vec<(T, Report)>) -> (Vec<(T, Report)>, Vec<String>) {
    let (times, mut counts): (Vec<_>, Vec<_>) = reports
        .into_iter()
        .partition(|(_, r)| r.engine == TIME_ENGINE);
    let mut unmatched = Vec::new();
    for (i, (_, t)) in times.iter().enumerate() {
        let target = match &t.mpi {
            Some(m) => counts
                .iter_mut()
                .find(|(_, c)| c.mpi.as_ref().map(|cm| cm.rank) == Some(m.rank)),
            None => counts.get_mut(i),
        };
        match target {
            Some((_, c)) => attach(c, t),
            None => unmatched.push(match &t.mpi {
                Some(m) => format!(
                    "the timing report of rank {} matches no counting report",
                    m.rank
                ),
                None => format!("timing report #{} matches no counting report", i + 1),
            }),
        }
    }
    (counts, unmatched)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{RankInfo, Region, Summary};

    fn count(rank: u32, flop: u64) -> Report {
        let mut r = Report::new("emulate", vec!["./app".into()]);
        r.mpi = Some(RankInfo {
            rank,
            size: Some(2),
            host: "h".into(),
            pid: 1,
        });
        r.summary.flop.total = flop;
        r.regions.push(Region {
            name: "work".into(),
            entries: 1,
            summary: Summary {
                flop: r.summary.flop.clone(),
                ..Default::default()
            },
            ..Default::default()
        });
        r
    }

    fn time(rank: u32, secs: f64) -> Report {
        let mut r = Report::new(TIME_ENGINE, vec!["./app".into()]);
        r.mpi = Some(RankInfo {
            rank,
            size: Some(2),
            host: "h".into(),
            pid: 2,
        });
        r.native_time_s = Some(secs);
        r.regions.push(Region {
            name: "work".into(),
            entries: 1,
            native_time_s: Some(secs / 2.0),
            ..Default::default()
        });
        r
    }

    #[test]
    fn times_join_the_counts_of_the_same_rank() {
        let input = vec![
            ("c1", count(1, 4000)),
            ("t0", time(0, 1.0)),
            ("c0", count(0, 2000)),
            ("t1", time(1, 2.0)),
        ];
        let (counts, unmatched) = join(input);
        assert!(unmatched.is_empty());
        assert_eq!(counts.len(), 2);
        let c1 = &counts[0].1;
        assert_eq!(c1.native_time_s, Some(2.0));
        assert_eq!(c1.gflops, Some(4000.0 / 2.0 / 1e9));
        assert_eq!(c1.regions[0].native_time_s, Some(1.0));
        assert_eq!(counts[1].1.native_time_s, Some(1.0));
    }

    #[test]
    fn a_time_without_its_rank_is_reported() {
        let (counts, unmatched) = join(vec![("c0", count(0, 1)), ("t5", time(5, 1.0))]);
        assert_eq!(counts.len(), 1);
        assert_eq!(
            unmatched,
            vec!["the timing report of rank 5 matches no counting report".to_string()]
        );
    }
}
