//! Time per function from the counted run itself: with [`crate::SAMPLES_ENV`]
//! naming a directory, every thread's program counter is sampled on a
//! CPU-time timer, as `crates/sampler` samples an uninstrumented run, into
//! the same files (`samples.<pid>` and `maps.<pid>`, `flopscope_sampler::
//! format`), so that the same reader and the same placement give time per
//! function, loop and line.
//!
//! Why not the sampler's preload library: loaded into a counted program,
//! its code would run translated, from the cache, and its samples would be
//! cache addresses. Here the runtime owns the timers and the handler:
//! - **Timers**: one per thread (`timer_create` on the thread's CPU clock,
//!   `SIGEV_THREAD_ID`, SIGPROF; why per thread: see crates/sampler's
//!   threads.rs), armed for the thread that takes the program over, for each
//!   thread `clone` creates (by the parent, once the child's id is known),
//!   and in a forked child; deleted when a thread exits. An exec'd program
//!   is taken over afresh (execve deletes the timers) and samples into
//!   `samples.<pid>.<n>`.
//! - **Handler**: the runtime's own, installed with the raw system call and
//!   hidden from the program (`rt_sigaction` reads SIG_DFL for SIGPROF, or
//!   what the program set; a SIG_DFL or SIG_IGN it sets is remembered and
//!   applies to SIGPROFs that are not the timers'). A program installing a
//!   handler of its own (the Go runtime does at start-up, for every
//!   signal) shares SIGPROF: the kernel then holds `fs_sigprof_entry` with
//!   the program's flags and mask, which takes the timers' signals (code
//!   SI_TIMER, the runtime's cookie as value) as samples and passes every
//!   other SIGPROF (its own `setitimer` or timers) to the program's handler
//!   as for any signal it handles (signals.rs). Only a handler installed
//!   with SA_RESETHAND, or before the take-over, ends sampling in that
//!   process; `HANDLER_REPLACED` says so.
//! - **Where a sample lands**: the interrupted RIP, in a translated block,
//!   is mapped back to the program's instruction ([`crate::cachemap`]);
//!   anywhere else (dispatcher, translator, an arena's lookup routine, the
//!   runtime's handlers) it is the engine's time, counted in the header's
//!   `ENGINE_WEIGHT`, not recorded. A system call the program makes runs in
//!   its block: program time.
//!
//! The handler is async-signal-safe: atomics on the file's mapping and the
//! cache map, no allocation, no lock.

use crate::signals::{KernelSigaction, SA_RESETHAND, SA_RESTORER, SA_SIGINFO};
use crate::sys::{self, syscall6};
use crate::{cachemap, thread};
use flopscope_counter_file::descriptors::with_all_files_allowed;
use flopscope_sampler::format::{self, flag, word};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU64, Ordering};
use std::sync::Mutex;

/// The counted run is sampled: blocks get marks and the cache map is kept.
static ON: AtomicBool = AtomicBool::new(false);
/// SIGPROF's handler is the runtime's and timers are armed (cleared when the
/// program installs its own handler).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// The samples file: header words, then records.
static MAP: AtomicPtr<AtomicU64> = AtomicPtr::new(std::ptr::null_mut());
static CAPACITY: AtomicU64 = AtomicU64::new(0);
static INTERVAL_NS: AtomicU64 = AtomicU64::new(0);
/// Each thread's timer (by thread index): NO_TIMER, or EXITED once the
/// thread has exited (a timer armed after that is deleted at once).
static TIMERS: [AtomicI64; thread::MAX_THREADS] =
    [const { AtomicI64::new(NO_TIMER) }; thread::MAX_THREADS];
const NO_TIMER: i64 = -1;
const EXITED: i64 = -2;

/// Where this process writes: the directory, and its maps file's name.
struct Paths {
    dir: String,
    maps: String,
}
static PATHS: Mutex<Option<Paths>> = Mutex::new(None);

/// The lock held, if free now (a fork's, see `fork`).
pub(crate) fn hold() -> Option<impl Sized> {
    crate::fork::try_guard(&PATHS)
}

/// `sigev_value` of the runtime's timers (the sampler's: "flopscop").
const COOKIE: usize = 0x666c_6f70_7363_6f70;
const SI_TIMER: i32 = -2;
/// SA_SIGINFO was added to the program's SIGPROF action ([`share_with`]).
static SIGINFO_ADDED: AtomicBool = AtomicBool::new(false);

/// The counted run is sampled (translation keeps the cache map).
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The runtime owns SIGPROF (the program has not installed a handler).
pub fn owns_sigprof() -> bool {
    ACTIVE.load(Ordering::Acquire)
}

/// Starts sampling at take-over, before anything is translated, on the
/// thread of index `thread_index`. Errors leave the run counted, unsampled.
pub fn start(dir: &str, thread_index: u32) -> Result<(), String> {
    let hz = setting(
        flopscope_sampler::HZ_ENV,
        flopscope_sampler::DEFAULT_HZ,
        1_000_000,
    )?;
    let capacity = setting(
        flopscope_sampler::CAPACITY_ENV,
        flopscope_sampler::DEFAULT_CAPACITY,
        1 << 32,
    )?;
    if !dir.starts_with('/') {
        return Err(format!("{dir} is not an absolute path"));
    }
    let current = current_action();
    INTERVAL_NS.store((1_000_000_000 / hz).max(1), Ordering::Relaxed);
    CAPACITY.store(capacity, Ordering::Relaxed);
    create_file(dir.trim_end_matches('/'))?;
    if current.handler > 1 {
        // Installed before the take-over (another profiler preloaded).
        header(word::FLAGS).fetch_or(flag::HANDLER_REPLACED, Ordering::Release);
        return Err("SIGPROF already has a handler (another profiler?)".into());
    }
    if current.handler == 1 {
        crate::signals::set_app_handler(libc::SIGPROF as usize, 1);
    }
    ON.store(true, Ordering::Release);
    install_handler();
    ACTIVE.store(true, Ordering::Release);
    arm(thread_index, sys::gettid());
    write_maps(&read_maps());
    Ok(())
}

/// A whole number from the environment (the sampler's settings).
fn setting(name: &str, default: u64, max: u64) -> Result<u64, String> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(v) => v
            .parse::<u64>()
            .ok()
            .filter(|n| (1..=max).contains(n))
            .ok_or_else(|| format!("{name}={v} is not a whole number between 1 and {max}")),
    }
}

/// Creates and maps `samples.<pid>` (`.<n>` when taken: an exec'd program).
fn create_file(dir: &str) -> Result<(), String> {
    let pid = sys::getpid();
    let capacity = CAPACITY.load(Ordering::Relaxed);
    let bytes = format::file_bytes(capacity) as usize;
    let mut image = 0u32;
    let (fd, path) = loop {
        let suffix = if image == 0 {
            String::new()
        } else {
            format!(".{image}")
        };
        let path = format!("{dir}/{}{pid}{suffix}\0", format::SAMPLES_PREFIX);
        let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC;
        // SAFETY: a NUL-terminated path.
        let fd = unsafe {
            syscall6(
                libc::SYS_openat as u64,
                [
                    libc::AT_FDCWD as u64,
                    path.as_ptr() as u64,
                    flags as u64,
                    0o644,
                    0,
                    0,
                ],
            )
        };
        if fd >= 0 {
            break (fd as u64, path);
        }
        if fd != -(libc::EEXIST as i64) || image >= 10_000 {
            return Err(format!(
                "cannot create {}: errno {}",
                path.trim_end_matches('\0'),
                -fd
            ));
        }
        image += 1;
    };
    // SAFETY: the file just created; the mapping is checked.
    let p = unsafe {
        let sized = syscall6(libc::SYS_ftruncate as u64, [fd, bytes as u64, 0, 0, 0, 0]);
        let p = if sized == 0 {
            syscall6(
                libc::SYS_mmap as u64,
                [
                    0,
                    bytes as u64,
                    (libc::PROT_READ | libc::PROT_WRITE) as u64,
                    libc::MAP_SHARED as u64,
                    fd,
                    0,
                ],
            )
        } else {
            sized
        };
        syscall6(libc::SYS_close as u64, [fd, 0, 0, 0, 0, 0]);
        if (-4095..=0).contains(&p) {
            syscall6(
                libc::SYS_unlink as u64,
                [path.as_ptr() as u64, 0, 0, 0, 0, 0],
            );
            return Err(format!(
                "cannot map {}: errno {}",
                path.trim_end_matches('\0'),
                -p
            ));
        }
        // See crates/sampler's state.rs: no read-around on the sparse file.
        syscall6(
            libc::SYS_madvise as u64,
            [p as u64, bytes as u64, libc::MADV_RANDOM as u64, 0, 0, 0],
        );
        p as *mut AtomicU64
    };
    // SAFETY: a fresh mapping of `bytes` bytes, header first.
    let w = |i: usize| unsafe { &*p.add(i) };
    w(word::VERSION).store(format::VERSION, Ordering::Relaxed);
    w(word::CAPACITY).store(capacity, Ordering::Relaxed);
    w(word::INTERVAL_NS).store(INTERVAL_NS.load(Ordering::Relaxed), Ordering::Relaxed);
    w(word::PID).store(pid, Ordering::Relaxed);
    w(word::MAGIC).store(format::MAGIC, Ordering::Release);
    let old = MAP.swap(p, Ordering::AcqRel);
    if !old.is_null() {
        // A forked child's copy of its parent's mapping: not to be written.
        sys::unmap(old as *mut u8, bytes);
    }
    *PATHS.lock().unwrap_or_else(|e| e.into_inner()) = Some(Paths {
        dir: dir.to_string(),
        maps: format::maps_name(pid as u32, image),
    });
    Ok(())
}

/// Header word `i` of the current file (one exists whenever `ON`).
fn header(i: usize) -> &'static AtomicU64 {
    let p = MAP.load(Ordering::Acquire);
    debug_assert!(!p.is_null() && i < format::HEADER_WORDS);
    // SAFETY: the mapping holds HEADER_WORDS header words; never unmapped
    // but in a forked child, which replaces it before using it.
    unsafe { &*p.add(i) }
}

/// SIGPROF's action as the kernel holds it.
pub fn current_action() -> KernelSigaction {
    let mut old = KernelSigaction::default();
    // SAFETY: reads SIGPROF's action.
    unsafe {
        syscall6(
            libc::SYS_rt_sigaction as u64,
            [libc::SIGPROF as u64, 0, &mut old as *mut _ as u64, 8, 0, 0],
        )
    };
    old
}

/// The runtime's SIGPROF handler, as the kernel holds it.
pub fn handler_address() -> u64 {
    on_sigprof as *const () as u64
}

/// The SIGPROF entry while the program has a handler of its own.
pub fn shared_entry() -> u64 {
    fs_sigprof_entry as *const () as u64
}

extern "C" {
    fn fs_sigprof_entry();
}

// A timer's sample: recorded by `on_sigprof`, then back to the interrupted
// code through rt_sigreturn (the return address the kernel pushed, the
// program's restorer, is dropped). Any other SIGPROF: the program's
// handler, entered as the kernel would enter it.
std::arch::global_asm!(
    r#"
    .text
    .globl fs_sigprof_entry
    .type fs_sigprof_entry,@function
fs_sigprof_entry:
    cmp dword ptr [rsi + 8], {si_timer}
    jne 1f
    movabs rax, {cookie}
    cmp qword ptr [rsi + 24], rax
    jne 1f
    sub rsp, 8
    call {on_sigprof}
    add rsp, 16
    mov eax, 15
    syscall
    ud2
1:
    jmp fs_signal_entry
"#,
    si_timer = const SI_TIMER,
    cookie = const COOKIE,
    on_sigprof = sym on_sigprof,
);

/// The program installs a handler of its own for SIGPROF, `act` as the
/// kernel is to hold it (its handler already the engine's entry): the
/// entry that shares SIGPROF goes in its place; or, where sampling cannot
/// go on beside it (SA_RESETHAND would leave the timers' signals with the
/// default action), sampling stops ([`give_up`]).
pub fn share_with(act: &mut KernelSigaction) {
    if act.flags & SA_RESETHAND != 0 {
        give_up();
        return;
    }
    // The entry reads the siginfo, which the kernel writes into the frame
    // only with SA_SIGINFO (without it, the frame holds whatever was on the
    // stack: an earlier sample's siginfo, say). The program's handler gets
    // the same registers either way on x86-64.
    SIGINFO_ADDED.store(act.flags & SA_SIGINFO == 0, Ordering::Release);
    act.flags |= SA_SIGINFO;
    act.handler = shared_entry();
}

/// An action the kernel holds with the shared entry, as the program set
/// it (its handler aside).
pub fn as_program_set(act: &mut KernelSigaction) {
    if SIGINFO_ADDED.load(Ordering::Acquire) {
        act.flags &= !SA_SIGINFO;
    }
}

/// The program's SIGPROF is back to SIG_DFL or SIG_IGN: the runtime's
/// handler alone again, if the program had one of its own.
pub fn unshare() {
    if current_action().handler == shared_entry() {
        install_handler();
    }
}

fn install_handler() {
    // SA_RESTART: interrupted system calls restart, as under the sampler.
    // SA_ONSTACK: a thread on a small stack may have an alternate one.
    let act = KernelSigaction {
        handler: handler_address(),
        flags: (libc::SA_SIGINFO | libc::SA_RESTART | libc::SA_ONSTACK) as u64 | SA_RESTORER,
        restorer: crate::signals::fs_restore_rt as *const () as u64,
        mask: 0,
    };
    set_action(&act);
}

fn set_action(act: &KernelSigaction) {
    // SAFETY: sets SIGPROF's action, which the runtime owns.
    unsafe {
        syscall6(
            libc::SYS_rt_sigaction as u64,
            [libc::SIGPROF as u64, act as *const _ as u64, 0, 8, 0, 0],
        )
    };
}

/// The CPU clock of thread `tid` (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)).
fn thread_cpu_clock(tid: u64) -> u64 {
    u64::from((!(tid as u32) << 3) | 6)
}

/// Arms thread `index` (kernel id `tid`): SIGPROF to it every interval of
/// its CPU time. Counted in the header's THREADS or THREAD_FAILURES.
fn arm(index: u32, tid: u64) {
    if !owns_sigprof() {
        return;
    }
    // SAFETY: zeroed is a valid sigevent.
    let mut ev: libc::sigevent = unsafe { std::mem::zeroed() };
    ev.sigev_value = libc::sigval {
        sival_ptr: COOKIE as *mut libc::c_void,
    };
    ev.sigev_signo = libc::SIGPROF;
    ev.sigev_notify = libc::SIGEV_THREAD_ID;
    ev.sigev_notify_thread_id = tid as i32;
    let mut id: i32 = 0;
    let ns = INTERVAL_NS.load(Ordering::Relaxed);
    let period = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    let spec = libc::itimerspec {
        it_interval: period,
        it_value: period,
    };
    // SAFETY: valid pointers to our own structures.
    let armed = unsafe {
        let created = syscall6(
            libc::SYS_timer_create as u64,
            [
                thread_cpu_clock(tid),
                &mut ev as *mut _ as u64,
                &mut id as *mut i32 as u64,
                0,
                0,
                0,
            ],
        ) == 0;
        let set = created
            && syscall6(
                libc::SYS_timer_settime as u64,
                [id as u64, 0, &spec as *const _ as u64, 0, 0, 0],
            ) == 0;
        if created && !set {
            delete_timer(i64::from(id));
        }
        set
    };
    let kept = armed
        && TIMERS.get(index as usize).is_some_and(|t| {
            t.compare_exchange(NO_TIMER, i64::from(id), Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        });
    if armed && !kept {
        delete_timer(i64::from(id)); // the thread exited meanwhile
    }
    let counter = if kept {
        word::THREADS
    } else {
        word::THREAD_FAILURES
    };
    header(counter).fetch_add(1, Ordering::Relaxed);
    if kept && !owns_sigprof() {
        // The program took SIGPROF over meanwhile.
        if let Some(t) = TIMERS.get(index as usize) {
            delete_timer(t.swap(NO_TIMER, Ordering::AcqRel));
        }
    }
}

fn delete_timer(id: i64) {
    if id >= 0 {
        // SAFETY: deletes one of the runtime's timers.
        unsafe { syscall6(libc::SYS_timer_delete as u64, [id as u64, 0, 0, 0, 0, 0]) };
    }
}

/// A thread the program created with `clone` (index `index`, kernel id
/// `tid`), from its parent once `clone` returned.
pub fn thread_started(index: u32, tid: u64) {
    if on() {
        arm(index, tid);
    }
}

/// A new thread took over the state (and index) of thread `index`, which
/// has exited: the index may have a timer again.
pub fn slot_taken_over(index: u32) {
    if let Some(t) = TIMERS.get(index as usize) {
        let _ = t.compare_exchange(EXITED, NO_TIMER, Ordering::AcqRel, Ordering::Acquire);
    }
}

/// The calling thread is exiting: its timer goes.
pub fn thread_exit() {
    if !on() {
        return;
    }
    if let Some(t) = TIMERS.get(thread::current().index as usize) {
        delete_timer(t.swap(EXITED, Ordering::AcqRel));
    }
}

/// Sampling stops in this process, which says so (a SIGPROF handler of
/// the program's that the runtime cannot share the signal with).
pub fn give_up() {
    if !ACTIVE.swap(false, Ordering::AcqRel) {
        return;
    }
    for t in &TIMERS {
        let id = t.swap(NO_TIMER, Ordering::AcqRel);
        delete_timer(id);
    }
    header(word::FLAGS).fetch_or(flag::HANDLER_REPLACED, Ordering::Release);
}

/// A forked child: a file of its own, its one thread armed again (timers
/// are not inherited).
pub fn after_fork() {
    if !on() {
        return;
    }
    for t in &TIMERS {
        t.store(NO_TIMER, Ordering::Relaxed);
    }
    let dir = PATHS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map(|p| p.dir.clone());
    let Some(dir) = dir else { return };
    if let Err(e) = with_all_files_allowed(|| create_file(&dir)) {
        warn(&e);
        ACTIVE.store(false, Ordering::Release);
        MAP.store(std::ptr::null_mut(), Ordering::Release);
        ON.store(false, Ordering::Release);
        return;
    }
    if !owns_sigprof() {
        header(word::FLAGS).fetch_or(flag::HANDLER_REPLACED, Ordering::Release);
    }
    arm(thread::current().index, sys::gettid());
    write_maps(&with_all_files_allowed(read_maps));
}

/// Before an exec: the maps the samples so far are placed with; SIGPROF
/// ignored in the kernel if the program ignores it (the exec'd program
/// inherits that, as it would without the runtime).
pub fn before_exec() {
    if !on() {
        return;
    }
    write_maps(&read_maps());
    if owns_sigprof() && crate::signals::app_handler(libc::SIGPROF as usize) == 1 {
        set_action(&KernelSigaction {
            handler: 1,
            ..Default::default()
        });
    }
}

/// The exec failed: the process goes on, sampled.
pub fn exec_failed() {
    if owns_sigprof() && crate::signals::app_handler(libc::SIGPROF as usize) <= 1 {
        install_handler();
    }
}

/// The process ends: the maps, and (`exited`: through exit_group, not a
/// fatal signal) its CPU time and the EXITED flag.
pub fn finish(exited: bool) {
    if !on() || MAP.load(Ordering::Acquire).is_null() {
        return;
    }
    write_maps(&read_maps());
    if exited {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: writes ts.
        unsafe {
            syscall6(
                libc::SYS_clock_gettime as u64,
                [
                    libc::CLOCK_PROCESS_CPUTIME_ID as u64,
                    &mut ts as *mut _ as u64,
                    0,
                    0,
                    0,
                    0,
                ],
            )
        };
        let ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        header(word::CPU_NS_AT_EXIT).store(ns.max(1), Ordering::Relaxed);
        header(word::FLAGS).fetch_or(flag::EXITED, Ordering::Release);
    }
}

/// The mappings changed (the translator met code in a new mapping): the
/// maps file follows, so that samples in that code are placed.
pub fn maps_changed(text: &str) {
    if on() {
        write_maps(text);
    }
}

fn read_maps() -> String {
    let mut text = Vec::new();
    let path = b"/proc/self/maps\0";
    // SAFETY: open/read/close of a procfs file into our own buffer.
    unsafe {
        let fd = syscall6(
            libc::SYS_openat as u64,
            [
                libc::AT_FDCWD as u64,
                path.as_ptr() as u64,
                (libc::O_RDONLY | libc::O_CLOEXEC) as u64,
                0,
                0,
                0,
            ],
        );
        if fd < 0 {
            return String::new();
        }
        let mut buf = [0u8; 8192];
        loop {
            let n = syscall6(
                libc::SYS_read as u64,
                [
                    fd as u64,
                    buf.as_mut_ptr() as u64,
                    buf.len() as u64,
                    0,
                    0,
                    0,
                ],
            );
            if n <= 0 {
                break;
            }
            text.extend_from_slice(&buf[..n as usize]);
        }
        syscall6(libc::SYS_close as u64, [fd as u64, 0, 0, 0, 0, 0]);
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// Replaces the maps file atomically (a temporary file, renamed). Skipped
/// if another thread is writing it (a fatal signal in the middle of a write).
fn write_maps(text: &str) {
    let Ok(guard) = PATHS.try_lock() else { return };
    let Some(p) = guard.as_ref() else { return };
    let tmp = format!("{}/.{}.tmp\0", p.dir, p.maps);
    let dst = format!("{}/{}\0", p.dir, p.maps);
    // SAFETY: NUL-terminated paths; writes from our own buffer.
    unsafe {
        let fd = syscall6(
            libc::SYS_openat as u64,
            [
                libc::AT_FDCWD as u64,
                tmp.as_ptr() as u64,
                (libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC) as u64,
                0o644,
                0,
                0,
            ],
        );
        if fd < 0 {
            return;
        }
        sys::write_all(fd as i32, text.as_bytes());
        syscall6(libc::SYS_close as u64, [fd as u64, 0, 0, 0, 0, 0]);
        syscall6(
            libc::SYS_rename as u64,
            [tmp.as_ptr() as u64, dst.as_ptr() as u64, 0, 0, 0, 0],
        );
    }
}

pub fn warn(e: &str) {
    sys::write_all(
        2,
        format!("flopscope: the counted run is not sampled (no time per function): {e}\n")
            .as_bytes(),
    );
}

/// The kernel's siginfo for a POSIX timer (see crates/sampler's signal.rs).
#[repr(C)]
struct TimerInfo {
    signo: i32,
    errno: i32,
    code: i32,
    _pad: i32,
    timer_id: i32,
    overrun: i32,
    value: usize,
}

extern "C" fn on_sigprof(sig: i32, info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo (SA_SIGINFO).
    let info = unsafe { &*info.cast::<TimerInfo>() };
    if info.code != SI_TIMER || info.value != COOKIE {
        stray(sig);
        return;
    }
    let p = MAP.load(Ordering::Acquire);
    if p.is_null() {
        return;
    }
    // SAFETY: the kernel passes the interrupted context (SA_SIGINFO).
    let rip = unsafe {
        (*uc.cast::<libc::ucontext_t>()).uc_mcontext.gregs[libc::REG_RIP as usize] as u64
    };
    // A sample the program's own mask held back lands as the dispatcher
    // leaves (signals.rs, `fs_unmask_and_go`): at the block it goes to.
    let rip = crate::signals::sample_in_unmask_window(rip).unwrap_or(rip);
    let weight = 1 + info.overrun.max(0) as u64;
    match cachemap::lookup(rip) {
        Some(pc) => record(p, pc, weight),
        None => {
            header(word::ENGINE_WEIGHT).fetch_add(weight, Ordering::Relaxed);
        }
    }
}

/// Appends `pc` with `weight` intervals (the sampler's record encoding).
fn record(p: *mut AtomicU64, pc: u64, mut weight: u64) {
    let capacity = CAPACITY.load(Ordering::Relaxed);
    loop {
        let last = weight <= format::MAX_RECORD_WEIGHT;
        let r = if last {
            format::encode_record(pc, weight)
        } else {
            format::encode_continuation(pc)
        };
        let i = header(word::NEXT).fetch_add(1, Ordering::Relaxed);
        if i >= capacity {
            header(word::DROPPED).fetch_add(weight, Ordering::Relaxed);
            return;
        }
        // SAFETY: record i < capacity, within the mapping.
        unsafe { (*p.add(format::HEADER_WORDS + i as usize)).store(r, Ordering::Relaxed) };
        if last {
            return;
        }
        weight -= format::MAX_RECORD_WEIGHT;
    }
}

/// A SIGPROF that is not a sample: what the program set for it happens
/// (ignored, or the default action: termination, by raising it again with
/// the default action once this handler returns).
fn stray(sig: i32) {
    if crate::signals::app_handler(sig as usize) == 1 {
        return;
    }
    let dfl = KernelSigaction::default();
    // SAFETY: back to the default action, then the signal again.
    unsafe {
        syscall6(
            libc::SYS_rt_sigaction as u64,
            [sig as u64, &dfl as *const _ as u64, 0, 8, 0, 0],
        );
        syscall6(
            libc::SYS_tgkill as u64,
            [sys::getpid(), sys::gettid(), sig as u64, 0, 0, 0],
        );
    }
}
