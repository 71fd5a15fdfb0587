//! Descriptors for the engines' own files in a program that left none.
//!
//! A program may lower its limit on open files (RLIMIT_NOFILE) to the few
//! it uses, then fork: the child's counter file, attribution files and
//! samples each need a descriptor for a moment, and the engine's in-process
//! side runs under the program's limit.

/// Runs `f` with the soft limit on open files raised to the hard one, then
/// puts the program's limit back: a program that lowered its limit (to 3,
/// say) and forked still has its child's counter and attribution files
/// created (by either engine), which take a descriptor each for a moment.
pub fn with_all_files_allowed<T>(f: impl FnOnce() -> T) -> T {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid rlimit to fill.
    let got = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0;
    let raise = got && lim.rlim_cur < lim.rlim_max;
    if raise {
        let all = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: a valid rlimit; only the soft limit changes.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &all) };
    }
    let r = f();
    if raise {
        // SAFETY: the program's own limit, as it was.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    }
    r
}
