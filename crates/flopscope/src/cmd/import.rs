//! `flopscope import sde`: read Intel SDE outputs into a flopscope report.

use super::count::{emit, Format};
use anyhow::Result;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args)]
#[command(
    after_help = "Examples:\n  flopscope import sde myapp_mix.out myapp_msk.out -o myapp.json"
)]
pub struct ImportArgs {
    #[command(subcommand)]
    what: ImportKind,
}

#[derive(Subcommand)]
enum ImportKind {
    /// Intel SDE instruction mixes (-omix, with or without -iform) and dynamic
    /// mask profiles (-odyn_mask_profile); several files (one per rank or
    /// process, as `sde -i` writes them) merge into one report.
    #[command(
        after_help = "Examples:\n  flopscope import sde sde-mix-out.txt\n  flopscope import sde myapp_mix.out myapp_msk.out -o myapp.json\n  flopscope import sde sde_*.txt --format table"
    )]
    Sde(SdeArgs),
}

#[derive(Args)]
struct SdeArgs {
    /// Mix outputs and mask profiles (told apart by content; a profile pairs
    /// with the mix whose file name ends in the same process id).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Output format (default: from the -o file's extension, else table).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Write the report to FILE (atomically) instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub fn run(a: ImportArgs) -> Result<i32> {
    match a.what {
        ImportKind::Sde(s) => {
            let report = flopscope_import_sde::import_files(&s.files)?;
            let format = s.format.unwrap_or_else(|| {
                s.output
                    .as_deref()
                    .map(Format::from_path)
                    .unwrap_or(Format::Table)
            });
            emit(&report, format, s.output.as_deref())?;
            Ok(0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        import: ImportArgs,
    }

    /// `flopscope import sde FILE` succeeds on every fixture of the importer,
    /// and writes the totals derived by hand in its tests.
    #[test]
    fn import_sde_succeeds_on_every_fixture() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../import-sde/tests/fixtures");
        let cases: [(&[&str], u64); 9] = [
            (&["variants/sde924-openmp.txt"], 625),
            (&["variants/sde863-global-only.txt"], 1000),
            (&["variants/pin-mixmt-v2.txt"], 1040),
            (&["hsw-iform.txt"], 39_340 + 50_565),
            (&["hsw-iclass.txt"], 14_000),
            (&["skx-avx512-iform.txt", "skx-avx512-mask.xml"], 78_560),
            (&["skx-functions.txt", "skx-functions-mask.xml"], 73_200),
            (&["ranks/sde-mix-out.1001.txt"], 0),
            (
                &["ranks/sde-mix-out.1001.txt", "ranks/sde-mix-out.1002.txt"],
                4_000_000_400,
            ),
        ];
        let out = tempfile::tempdir().unwrap();
        for (files, flop) in cases {
            let json = out.path().join("r.json");
            let mut args = vec!["flopscope".to_string(), "sde".to_string()];
            args.extend(files.iter().map(|f| dir.join(f).display().to_string()));
            args.extend(["-o".to_string(), json.display().to_string()]);
            let cli = Cli::try_parse_from(&args).unwrap();
            assert_eq!(run(cli.import).unwrap(), 0, "{files:?}");
            let r: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
            assert_eq!(r["engine"], "sde-import");
            if flop > 0 {
                assert_eq!(r["flop"]["total"], flop, "{files:?}");
            }
        }
    }
}
