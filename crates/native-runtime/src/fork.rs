//! A fork of the program with every lock of the runtime held by the
//! forking thread.
//!
//! A forked child has only the thread that forked. A lock another thread
//! held at that moment stays held in the child for ever: the child's first
//! translation (or its new counter file, its first mapping look-up, its
//! first allocation) then waits for good. BEAM (Erlang) forks its child
//! helper while its schedulers translate code: a test run hung so. The
//! forking thread therefore takes each lock first, as a
//! `pthread_atfork` prepare handler would, and both processes release them
//! after the fork.
//!
//! The locks are tried, not waited for: their holders take them in several
//! orders (the translator's, then the mappings'; a mapping's, then the
//! sampler's), so a thread holding some while waiting for one more could
//! deadlock with another doing the same. When one is busy, the ones taken
//! are let go and all are tried again a moment later.

use crate::{alloc, codemap, hostfs, loader, out, region_times, regions, sampling, translator};

/// Every lock of the runtime, if all are free now; held until dropped. The
/// allocator's last: nothing between it and the fork may allocate.
fn try_all() -> Option<impl Sized> {
    Some((
        translator::hold()?,
        codemap::hold()?,
        regions::hold()?,
        region_times::hold()?,
        sampling::hold()?,
        out::hold()?,
        hostfs::hold()?,
        loader::hold()?,
        alloc::hold()?,
    ))
}

/// Runs `fork` (the system call, which must not allocate) with every lock
/// of the runtime held, and lets them go in the parent and in the child.
pub fn holding_locks(fork: impl FnOnce() -> i64) -> i64 {
    loop {
        if let Some(held) = try_all() {
            let r = fork();
            drop(held);
            return r;
        }
        std::thread::yield_now();
    }
}

/// `m` locked if it is free now (see `fork`); a poisoned lock is taken too.
pub(crate) fn try_guard<T>(
    m: &'static std::sync::Mutex<T>,
) -> Option<std::sync::MutexGuard<'static, T>> {
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}
