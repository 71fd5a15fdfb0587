//! Region markers: tell flopscope which code to count and time.
//!
//! ```
//! let sum = flopscope_markers::region("dot", || {
//!     let (x, y) = ([1u32, 2, 3], [4u32, 5, 6]);
//!     x.iter().zip(&y).map(|(a, b)| a * b).sum::<u32>()
//! });
//! assert_eq!(sum, 32);
//! {
//!     let _r = flopscope_markers::Region::begin("setup");
//!     // ... counted as region "setup" until `_r` drops
//! }
//! ```
//!
//! Under `flopscope count` each [`Region`] is counted separately (FLOP,
//! bytes, instructions, entries); in flopscope's native timed run its wall
//! time is recorded; under `--engine perf` each region reads the hardware
//! counters at its boundaries (line format in `include/flopscope.h`). Run on its own (neither counted nor timed: flopscope
//! sets `FLOPSCOPE_COUNTING` or `FLOPSCOPE_REGION_TIMES` when it is), a
//! marker is one load and one predictable branch. The same marker
//! instruction as `include/flopscope.h` is used, so C, C++, Fortran and Rust
//! regions of one program appear in one report.
//!
//! The C header, the LIKWID-compatible header and the Fortran module ship in
//! this crate's `include/` and `fortran/` folders ([`C_HEADER`] and friends
//! hold their text; `flopscope markers --write DIR` writes them out).
//!
//! Programs that call LIKWID's marker API as functions and link with
//! `-llikwid` get them from `likwid/likwid.c` ([`LIKWID_LIBRARY`]), a
//! stand-in for LIKWID's `liblikwid.so.5` on the same markers; flopscope
//! preloads it into counted programs that call LIKWID's own library
//! ([`likwid::marker_calls`] tells which, with the default `elf` feature).

#[cfg(feature = "elf")]
pub mod likwid;
mod perf;
mod timing;

/// `include/flopscope.h`.
pub const C_HEADER: &str = include_str!("../include/flopscope.h");
/// `include/likwid-marker.h`: the LIKWID marker macros on flopscope's markers.
pub const LIKWID_HEADER: &str = include_str!("../include/likwid-marker.h");
/// `include/likwid.h`: LIKWID's marker functions declared, as LIKWID's
/// `likwid.h` declares them.
pub const LIKWID_API_HEADER: &str = include_str!("../include/likwid.h");
/// `likwid/likwid.c`: LIKWID's marker functions on flopscope's markers, the
/// source of flopscope's `liblikwid` (built as its header comment shows).
pub const LIKWID_LIBRARY: &str = include_str!("../likwid/likwid.c");
/// `fortran/flopscope.f90`: the Fortran module.
pub const FORTRAN_MODULE: &str = include_str!("../fortran/flopscope.f90");
/// `fortran/flopscope_fortran.c`: the C side of the Fortran module.
pub const FORTRAN_GLUE: &str = include_str!("../fortran/flopscope_fortran.c");

const NAME_BYTES: usize = 64;

/// A region name as the marker needs it: NUL-terminated, at most 63 bytes.
#[derive(Clone, Copy)]
struct Name([u8; NAME_BYTES]);

impl Name {
    fn new(name: &str) -> Name {
        let mut b = [0u8; NAME_BYTES];
        let n = name.len().min(NAME_BYTES - 1);
        b[..n].copy_from_slice(&name.as_bytes()[..n]);
        Name(b)
    }
}

/// The marker instruction (see include/flopscope.h): `cmp byte ptr
/// cs:ds:[name], kind`, recognised by the emulate engine at run time.
#[inline(always)]
fn mark<const KIND: u8>(name: &Name) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: reads the first byte of `name`, which is valid; changes only flags.
    unsafe {
        std::arch::asm!(
            ".byte 0x2e, 0x3e",
            "cmp byte ptr [{p}], {k}",
            p = in(reg) name.0.as_ptr(),
            k = const KIND,
            options(nostack, readonly),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = name;
}

/// An open region; it ends when dropped.
pub struct Region {
    /// The name, when flopscope counts or times this run; `None` otherwise,
    /// so that a plain run pays one branch and no copy.
    name: Option<Box<Name>>,
}

impl Region {
    /// Begins region `name` (names longer than 63 bytes are cut).
    #[inline(always)]
    pub fn begin(name: &str) -> Region {
        if !timing::active() {
            return Region { name: None };
        }
        Region::begin_marked(name)
    }

    /// The copy, the timing and the marker happen before the region starts.
    #[cold]
    #[inline(never)]
    fn begin_marked(name: &str) -> Region {
        let name = Box::new(Name::new(name));
        timing::on_begin(&name.0);
        mark::<1>(&name);
        Region { name: Some(name) }
    }
}

impl Drop for Region {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(name) = self.name.take() {
            end_marked(name);
        }
    }
}

/// The marker and the timing happen after the region ends.
#[cold]
#[inline(never)]
fn end_marked(name: Box<Name>) {
    mark::<2>(&name);
    timing::on_end(&name.0);
}

/// Runs `f` as region `name`.
#[inline]
pub fn region<R>(name: &str, f: impl FnOnce() -> R) -> R {
    let _r = Region::begin(name);
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_nul_terminated_and_cut() {
        let long = "x".repeat(100);
        let n = Name::new(&long);
        assert_eq!(n.0[62], b'x');
        assert_eq!(n.0[63], 0);
        assert_eq!(&Name::new("ab").0[..3], b"ab\0");
    }

    #[test]
    fn a_plain_run_makes_no_copy() {
        // The test process is neither counted nor timed by flopscope.
        if std::env::var_os("FLOPSCOPE_COUNTING").is_none()
            && std::env::var_os("FLOPSCOPE_REGION_TIMES").is_none()
        {
            assert!(Region::begin("x").name.is_none());
        }
    }

    #[test]
    fn regions_run_their_body_and_nest() {
        let v = region("outer", || region("inner", || 41) + 1);
        assert_eq!(v, 42);
    }

    #[test]
    fn shipped_sources_define_the_documented_macros() {
        assert!(C_HEADER.contains("#define FLOPSCOPE_REGION_BEGIN(name)"));
        assert!(LIKWID_HEADER
            .contains("#define LIKWID_MARKER_START(regionTag) flopscope_region_begin(regionTag)"));
        assert!(FORTRAN_MODULE.contains("subroutine flopscope_region_begin(name)"));
        assert!(LIKWID_API_HEADER.contains("int likwid_markerStartRegion(const char *regionTag);"));
        assert!(LIKWID_LIBRARY.contains("flopscope_region_begin(regionTag);"));
    }
}
