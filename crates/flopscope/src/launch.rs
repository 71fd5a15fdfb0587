//! Running as one rank of a parallel job: which rank (from the launcher's
//! environment) and per-rank output names (`%r`, `%p`, `%h`).

use anyhow::Result;
use flopscope_model::RankInfo;
use std::path::{Path, PathBuf};

/// Rank variables, in order of preference: Open MPI, PMIx, MPICH/Intel MPI (PMI), Slurm.
const RANK_VARS: [&str; 4] = [
    "OMPI_COMM_WORLD_RANK",
    "PMIX_RANK",
    "PMI_RANK",
    "SLURM_PROCID",
];
const SIZE_VARS: [&str; 4] = [
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "SLURM_NTASKS",
    "PMIX_SIZE",
];

fn first_number(vars: &[&str], get: &dyn Fn(&str) -> Option<String>) -> Option<u32> {
    vars.iter().find_map(|v| get(v)?.trim().parse().ok())
}

/// This process's rank, if a launcher started it as one.
pub fn rank_info() -> Option<RankInfo> {
    rank_info_from(&|v| std::env::var(v).ok())
}

fn rank_info_from(get: &dyn Fn(&str) -> Option<String>) -> Option<RankInfo> {
    let rank = first_number(&RANK_VARS, get)?;
    Some(RankInfo {
        rank,
        size: first_number(&SIZE_VARS, get),
        host: hostname(),
        pid: std::process::id(),
    })
}

pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) } == 0;
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    if ok {
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        "unknown-host".into()
    }
}

/// The report's file for `-o template` in this process: expanded
/// ([`expand_output`]) and checked before the program runs. Under a
/// launcher with more than one rank, a name without `%r` or `%p` is
/// refused: every rank would write the one file, each replacing the last.
pub fn output_path(template: &Path, rank: Option<&RankInfo>) -> Result<PathBuf> {
    let text = template.to_string_lossy();
    if let Some(r) = rank.filter(|r| r.size != Some(1)) {
        if !names_each_rank(&text) {
            let ranks = r.size.map_or("several".to_string(), |n| n.to_string());
            anyhow::bail!(
                "-o {text}: each of the job's {ranks} ranks would write this one file, replacing the others' reports: put %r (the rank) in the name, as in -o {}; the program was not run",
                with_rank(template).display()
            );
        }
    }
    let path = expand_output(&text, rank);
    crate::output::check_writable(&path)?;
    Ok(path)
}

/// Whether `template` names a file of its own for each rank (`%r`, `%p`).
fn names_each_rank(template: &str) -> bool {
    let mut chars = template.chars();
    while let Some(c) = chars.next() {
        if c == '%' && matches!(chars.next(), Some('r' | 'p')) {
            return true;
        }
    }
    false
}

/// `template` with `.%r` before its extension (`r.json` -> `r.%r.json`).
fn with_rank(template: &Path) -> PathBuf {
    match (template.file_stem(), template.extension()) {
        (Some(stem), Some(ext)) => template.with_file_name(format!(
            "{}.%r.{}",
            stem.to_string_lossy(),
            ext.to_string_lossy()
        )),
        _ => PathBuf::from(format!("{}.%r", template.display())),
    }
}

/// Expands `%r` (rank, 0 outside a launcher), `%p` (pid), `%h` (host) and
/// `%%` in an output file name, so that the ranks of a job never collide.
pub fn expand_output(template: &str, rank: Option<&RankInfo>) -> PathBuf {
    let mut out = String::new();
    let mut chars = template.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('r') => out.push_str(&rank.map_or(0, |r| r.rank).to_string()),
            Some('p') => out.push_str(&std::process::id().to_string()),
            Some('h') => out.push_str(&rank.map(|r| r.host.clone()).unwrap_or_else(hostname)),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    PathBuf::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_comes_from_the_first_launcher_variable_set() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |v: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == v)
                    .map(|(_, x)| x.to_string())
            }
        };
        let r = rank_info_from(&env(&[("PMI_RANK", "3"), ("PMI_SIZE", "8")])).unwrap();
        assert_eq!((r.rank, r.size), (3, Some(8)));
        let r = rank_info_from(&env(&[
            ("SLURM_PROCID", "5"),
            ("OMPI_COMM_WORLD_RANK", "1"),
        ]))
        .unwrap();
        assert_eq!(r.rank, 1);
        assert!(rank_info_from(&env(&[])).is_none());
        assert!(rank_info_from(&env(&[("PMI_RANK", "x")])).is_none());
    }

    #[test]
    fn output_names_expand_per_rank() {
        let r = RankInfo {
            rank: 7,
            size: Some(8),
            host: "node3".into(),
            pid: 1,
        };
        assert_eq!(
            expand_output("out/report.%r.json", Some(&r)),
            PathBuf::from("out/report.7.json")
        );
        assert_eq!(
            expand_output("%h-%r-%%.json", Some(&r)),
            PathBuf::from("node3-7-%.json")
        );
        assert_eq!(expand_output("a.%r.json", None), PathBuf::from("a.0.json"));
        let pid = std::process::id().to_string();
        assert_eq!(
            expand_output("x.%p", None),
            PathBuf::from(format!("x.{pid}"))
        );
        assert_eq!(expand_output("odd%q%", None), PathBuf::from("odd%q%"));
    }

    #[test]
    fn a_name_all_ranks_would_share_is_refused_with_one_that_is_not() {
        let rank = |size| RankInfo {
            rank: 1,
            size,
            host: "node3".into(),
            pid: 1,
        };
        let dir = std::env::temp_dir();
        let shared = dir.join("r.json");
        let e = output_path(&shared, Some(&rank(Some(4))))
            .unwrap_err()
            .to_string();
        assert!(e.contains("4 ranks") && e.contains("r.%r.json"), "{e}");
        assert!(output_path(&shared, Some(&rank(None))).is_err());
        assert!(output_path(&dir.join("r.%%r.json"), Some(&rank(Some(4)))).is_err());
        assert_eq!(
            output_path(&dir.join("r.%r.json"), Some(&rank(Some(4)))).unwrap(),
            dir.join("r.1.json")
        );
        assert!(output_path(&dir.join("r.%p.json"), Some(&rank(Some(4)))).is_ok());
        assert_eq!(output_path(&shared, Some(&rank(Some(1)))).unwrap(), shared);
        assert_eq!(output_path(&shared, None).unwrap(), shared);
        assert_eq!(with_rank(Path::new("noext")), PathBuf::from("noext.%r"));
    }
}
