//! `flopscope markers`: write the region-marker sources (C header, LIKWID
//! header, Fortran module) into a directory, or print where to put them.

use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
#[command(
    after_help = "Examples:\n  flopscope markers --write third_party/flopscope\n  gcc -O2 -Ithird_party/flopscope -o app app.c\n  gfortran third_party/flopscope/flopscope.f90 app.f90 third_party/flopscope/flopscope_fortran.c   # the module first"
)]
pub struct MarkersArgs {
    /// Directory to write flopscope.h, likwid-marker.h, flopscope.f90 and
    /// flopscope_fortran.c into (created if missing).
    #[arg(long, value_name = "DIR")]
    write: PathBuf,
}

pub fn run(a: MarkersArgs) -> Result<i32> {
    std::fs::create_dir_all(&a.write).with_context(|| format!("creating {}", a.write.display()))?;
    let glue = flopscope_markers::FORTRAN_GLUE.replace(
        "#include \"../include/flopscope.h\"",
        "#include \"flopscope.h\"",
    );
    for (name, text) in [
        ("flopscope.h", flopscope_markers::C_HEADER),
        ("likwid-marker.h", flopscope_markers::LIKWID_HEADER),
        ("flopscope.f90", flopscope_markers::FORTRAN_MODULE),
        ("flopscope_fortran.c", glue.as_str()),
    ] {
        let p = a.write.join(name);
        flopscope_model::write_atomic(&p, text.as_bytes())?;
        eprintln!("flopscope: wrote {}", p.display());
    }
    Ok(0)
}
