//! `flopscope markers`: write the region-marker sources (C header, LIKWID
//! header, Fortran module) into a directory, or print where to put them.

use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
#[command(
    after_help = "Examples:\n  flopscope markers --write third_party/flopscope\n  gcc -O2 -Ithird_party/flopscope -o app app.c\n  gfortran third_party/flopscope/flopscope.f90 app.f90 third_party/flopscope/flopscope_fortran.c   # the module first\n  # LIKWID's marker functions (likwid_markerStartRegion...), without LIKWID installed:\n  gcc -shared -fPIC -O2 -Wl,-soname,liblikwid.so.5 -Ithird_party/flopscope -o lib/liblikwid.so.5 third_party/flopscope/likwid.c\n  ln -sf liblikwid.so.5 lib/liblikwid.so && gcc -O2 -Ithird_party/flopscope app.c -Llib -Wl,-rpath,$PWD/lib -llikwid"
)]
pub struct MarkersArgs {
    /// Directory to write flopscope.h, likwid-marker.h, flopscope.f90,
    /// flopscope_fortran.c, and LIKWID's function API (likwid.h, likwid.c)
    /// into (created if missing).
    #[arg(long, value_name = "DIR")]
    write: PathBuf,
}

pub fn run(a: MarkersArgs) -> Result<i32> {
    std::fs::create_dir_all(&a.write).with_context(|| format!("creating {}", a.write.display()))?;
    let glue = flopscope_markers::FORTRAN_GLUE.replace(
        "#include \"../include/flopscope.h\"",
        "#include \"flopscope.h\"",
    );
    let likwid = flopscope_markers::LIKWID_LIBRARY
        .replace(
            "#include \"../include/flopscope.h\"",
            "#include \"flopscope.h\"",
        )
        .replace("#include \"../include/likwid.h\"", "#include \"likwid.h\"");
    for (name, text) in [
        ("flopscope.h", flopscope_markers::C_HEADER),
        ("likwid-marker.h", flopscope_markers::LIKWID_HEADER),
        ("flopscope.f90", flopscope_markers::FORTRAN_MODULE),
        ("flopscope_fortran.c", glue.as_str()),
        ("likwid.h", flopscope_markers::LIKWID_API_HEADER),
        ("likwid.c", likwid.as_str()),
    ] {
        let p = a.write.join(name);
        flopscope_model::write_atomic(&p, text.as_bytes())?;
        eprintln!("flopscope: wrote {}", p.display());
    }
    Ok(0)
}
