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
