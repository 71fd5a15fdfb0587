//! Files on disk: telling mix files from mask profiles, pairing them per
//! process, reading and importing them.

use crate::build::report_from;
use crate::error::SdeError;
use crate::mask::{parse_mask_profile, MaskProfile};
use crate::merge::merge_sources;
use crate::mix::parse_mix;
use flopscope_model::merge::Source;
use flopscope_model::Report;
use std::io::Read;
use std::path::{Path, PathBuf};

/// One process's SDE outputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The `-omix` output.
    pub mix: PathBuf,
    /// The `-odyn_mask_profile` output of the same run, if any.
    pub mask_profile: Option<PathBuf>,
}

/// What a file holds, judged from its first bytes: the mask profile is XML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Mix,
    MaskProfile,
}

/// Reads the start of `path` to tell a mask profile (`<...`) from a mix file.
pub fn file_kind(path: &Path) -> Result<FileKind, SdeError> {
    let read_err = |source| SdeError::Read {
        file: path.to_path_buf(),
        source,
    };
    let mut head = Vec::with_capacity(4096);
    std::fs::File::open(path)
        .map_err(read_err)?
        .take(4096)
        .read_to_end(&mut head)
        .map_err(read_err)?;
    let text = String::from_utf8_lossy(&head);
    let first = text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .chars()
        .next();
    Ok(if first == Some('<') {
        FileKind::MaskProfile
    } else {
        FileKind::Mix
    })
}

/// The process id SDE's `-i` puts in a file name: its last run of digits
/// (`sde-mix-out.12345.txt` and `sde-dyn-mask-profile.12345.txt` share 12345).
fn process_key(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    let mut runs = name
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty());
    runs.next_back().map(str::to_string)
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// Sorts `paths` into mix files and mask profiles and pairs each profile with
/// the mix file of its process: the only one when there is one of each,
/// otherwise the one whose name ends in the same number (the process id that
/// `sde -i` appends). Mix files keep the order given.
pub fn pair_files(paths: &[PathBuf]) -> Result<Vec<Run>, SdeError> {
    if paths.is_empty() {
        return Err(SdeError::Inputs {
            file: "sde import".to_string(),
            message: "no input files: give one or more `sde -omix` outputs (and their `-odyn_mask_profile` outputs)".to_string(),
        });
    }
    for (i, p) in paths.iter().enumerate() {
        if paths[..i].contains(p) {
            return Err(SdeError::Inputs {
                file: shown(p),
                message: "given twice: its counts would be added twice".to_string(),
            });
        }
    }
    let mut mixes = Vec::new();
    let mut masks = Vec::new();
    for p in paths {
        match file_kind(p)? {
            FileKind::Mix => mixes.push(p.clone()),
            FileKind::MaskProfile => masks.push(p.clone()),
        }
    }
    let mut runs: Vec<Run> = mixes
        .iter()
        .map(|m| Run {
            mix: m.clone(),
            mask_profile: None,
        })
        .collect();
    if masks.is_empty() {
        return Ok(runs);
    }
    if runs.is_empty() {
        return Err(SdeError::Inputs {
            file: shown(&masks[0]),
            message: "a mask profile alone has no instruction mix: give the `-omix` output of the same run too".to_string(),
        });
    }
    if runs.len() == 1 && masks.len() == 1 {
        runs[0].mask_profile = Some(masks[0].clone());
        return Ok(runs);
    }
    for mask in &masks {
        let key = process_key(mask);
        let matching: Vec<usize> = (0..runs.len())
            .filter(|&i| key.is_some() && process_key(&runs[i].mix) == key)
            .collect();
        let unpaired = |message: String| SdeError::Inputs {
            file: shown(mask),
            message,
        };
        let [i] = matching.as_slice() else {
            return Err(unpaired(match (matching.len(), &key) {
                (0, Some(k)) => format!("no mix file among the inputs ends in the same process id ({k}): give the `-omix` output of the same run, named as `sde -i` names it"),
                (0, None) => "its name has no process id to pair it with a mix file: name both as `sde -i` does (the same number at the end)".to_string(),
                _ => format!("{} mix files end in the same process id: cannot tell which one it belongs to", matching.len()),
            }));
        };
        if let Some(other) = &runs[*i].mask_profile {
            return Err(unpaired(format!(
                "{} already pairs with {}: one mask profile per mix file",
                shown(&runs[*i].mix),
                shown(other)
            )));
        }
        runs[*i].mask_profile = Some(mask.clone());
    }
    Ok(runs)
}

fn read_text(path: &Path) -> Result<String, SdeError> {
    let bytes = std::fs::read(path).map_err(|source| SdeError::Read {
        file: path.to_path_buf(),
        source,
    })?;
    // SDE writes ASCII; function names in the parts we skip may be anything.
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// One report per run, labelled by its mix file, for [`merge_sources`] (or
/// `flopscope_model::merge::merge`, which gives the labels and load imbalance).
pub fn import_sources(runs: &[Run]) -> Result<Vec<Source>, SdeError> {
    let mut sources = Vec::with_capacity(runs.len());
    for run in runs {
        let label = shown(&run.mix);
        let mix = parse_mix(&read_text(&run.mix)?, &label)?;
        let mask: Option<MaskProfile> = match &run.mask_profile {
            Some(p) => Some(parse_mask_profile(&read_text(p)?, &shown(p))?),
            None => None,
        };
        sources.push(Source {
            label,
            report: report_from(&mix, mask.as_ref())?,
        });
    }
    Ok(sources)
}

/// Imports runs given with their pairing: the report of the one run, or the
/// merge of several (one process row each, see [`merge_sources`]). Warnings
/// start with the name of the mix file they are about.
pub fn import_runs(runs: &[Run]) -> Result<Report, SdeError> {
    let mut sources = import_sources(runs)?;
    match sources.len() {
        0 => Err(SdeError::Inputs {
            file: "sde import".to_string(),
            message: "no input files: give one or more `sde -omix` outputs".to_string(),
        }),
        1 => {
            let Source { label, mut report } = sources.remove(0);
            report.warnings = report
                .warnings
                .iter()
                .map(|w| format!("{label}: {w}"))
                .collect();
            Ok(report)
        }
        _ => Ok(merge_sources(sources)?.report),
    }
}

/// Imports SDE outputs: any number of `-omix` files (one per process) and
/// their `-odyn_mask_profile` files, told apart by content and paired by
/// [`pair_files`].
pub fn import_files(paths: &[PathBuf]) -> Result<Report, SdeError> {
    import_runs(&pair_files(paths)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_key_is_the_last_number_in_the_name() {
        assert_eq!(
            process_key(Path::new("/x/sde-mix-out.12345.txt")).as_deref(),
            Some("12345")
        );
        assert_eq!(
            process_key(Path::new("run2/msk.1001")).as_deref(),
            Some("1001")
        );
        assert_eq!(process_key(Path::new("mix.txt")), None);
    }
}
