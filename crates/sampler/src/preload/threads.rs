//! One CPU-time timer per thread, and arming it for every thread: those
//! running when the library loads, those the program creates, a forked
//! child's.
//!
//! Why per-thread timers (`timer_create` on the thread's CPU clock,
//! `SIGEV_THREAD_ID`) and not `setitimer(ITIMER_PROF)`:
//! - Time. The kernel checks CPU timers on its tick (CONFIG_HZ, 250 on
//!   Debian), so a 1 ms timer fires at most every 4 ms. `ITIMER_PROF` then
//!   silently samples at 250 Hz; a POSIX timer reports the expirations it
//!   folded into one signal (`si_overrun`), so each sample is weighted by the
//!   CPU time it stands for and counts times the interval add up to the
//!   thread's CPU time. (Measured on this kernel, 1000 Hz asked: 1.19 s of
//!   CPU gave 305 signals standing for 1189 intervals; ITIMER_PROF gave 292
//!   signals, nothing to say they stood for 4 ms each.) On a loaded machine
//!   fewer signals come, each weighing more: a thread preempted between
//!   ticks (by a wake-up, or when it reads a CPU clock) may see no tick.
//! - exec. Interval timers survive execve but signal handlers do not: the
//!   new program would be killed by SIGPROF ("Profiling timer expired")
//!   whenever it fired before this library's constructor ran again, or in a
//!   program run without it. POSIX timers are deleted by execve.
//! - Threads. A process-wide POSIX timer is delivered to the main thread
//!   before Linux 6.3 (commit bcb7ee79029d), whatever thread ran.
//!
//! The price: every thread needs its own timer. Threads started with
//! `pthread_create` (and so C++ `std::thread`, OpenMP, Rust `std::thread`)
//! get theirs from the interposed `pthread_create` below, which starts the
//! thread on a trampoline that arms the timer and *jumps* to the program's
//! start routine: no frame of the library stays on the thread's stack, so
//! `pthread_exit`, cancellation and C++ exceptions unwind exactly as they
//! would without it. The timer is deleted at thread exit (a thread-specific
//! key's destructor). Threads that exist when the library loads are found
//! in /proc/self/task. Threads made otherwise (a raw `clone`; C11
//! `thrd_create`, which glibc implements with an internal call of its
//! pthread_create) are not sampled.

use super::sys::{self, SavedErrno};
use super::{maps, signal, state};
use crate::format::word;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering::*};
use libc::{c_int, c_void};

static KEY: AtomicU32 = AtomicU32::new(0);
static KEY_OK: AtomicBool = AtomicBool::new(false);

/// Sets up the thread-exit key and the fork handler.
///
/// # Safety
/// From the constructor, once.
pub unsafe fn init() {
    // SAFETY: valid pointers; the destructor and fork handler are
    // `extern "C"` functions that never unwind.
    unsafe {
        let mut key: libc::pthread_key_t = 0;
        if libc::pthread_key_create(&mut key, Some(on_thread_exit)) == 0 {
            KEY.store(key, Relaxed);
            KEY_OK.store(true, Release);
        }
        libc::pthread_atfork(None, None, Some(after_fork_child));
    }
}

/// The CPU clock of thread `tid` (the kernel's MAKE_THREAD_CPUCLOCK(tid,
/// CPUCLOCK_SCHED), include/linux/posix-timers.h; what
/// pthread_getcpuclockid returns).
fn thread_cpu_clock(tid: i32) -> libc::clockid_t {
    ((!(tid as u32) << 3) | 6) as libc::clockid_t
}

/// Arms a timer on thread `tid`'s CPU time that sends it SIGPROF every
/// interval; its kernel timer id, or None (counted in the header).
/// Async-signal-safe.
pub fn arm(tid: i32) -> Option<c_int> {
    let map = state::map()?;
    let _errno = SavedErrno::new();
    let ns = state::config().interval_ns;
    // SAFETY: zeroed is a valid sigevent; the system calls get valid
    // pointers.
    let id = unsafe {
        let mut ev: libc::sigevent = core::mem::zeroed();
        ev.sigev_value = libc::sigval {
            sival_ptr: signal::COOKIE as *mut c_void,
        };
        ev.sigev_signo = libc::SIGPROF;
        ev.sigev_notify = libc::SIGEV_THREAD_ID;
        ev.sigev_notify_thread_id = tid;
        let mut id: c_int = 0;
        let created = libc::syscall(
            libc::SYS_timer_create,
            thread_cpu_clock(tid),
            &mut ev as *mut libc::sigevent,
            &mut id as *mut c_int,
        ) == 0;
        let period = libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        };
        let spec = libc::itimerspec {
            it_interval: period,
            it_value: period,
        };
        let armed = created
            && libc::syscall(
                libc::SYS_timer_settime,
                id,
                0,
                &spec as *const libc::itimerspec,
                core::ptr::null_mut::<libc::itimerspec>(),
            ) == 0;
        if created && !armed {
            libc::syscall(libc::SYS_timer_delete, id);
        }
        armed.then_some(id)
    };
    let counter = if id.is_some() {
        word::THREADS
    } else {
        word::THREAD_FAILURES
    };
    map.word(counter).fetch_add(1, Relaxed);
    id
}

/// Arms the calling thread's timer and has it deleted when the thread exits.
fn arm_current() {
    if let Some(id) = arm(sys::gettid()) {
        if KEY_OK.load(Acquire) {
            // SAFETY: a key created by `init`; the value is not a pointer
            // (id + 1, non-null so that the destructor runs).
            unsafe {
                libc::pthread_setspecific(KEY.load(Relaxed), (id as usize + 1) as *const c_void)
            };
        }
    }
}

unsafe extern "C" fn on_thread_exit(value: *mut c_void) {
    let id = value as usize - 1;
    // SAFETY: deleting a timer id this thread's `arm_current` created.
    unsafe { libc::syscall(libc::SYS_timer_delete, id as c_int) };
}

/// Arms every thread of the process (the constructor runs on the main
/// thread, but an earlier constructor may have started others).
///
/// # Safety
/// From the constructor, after the file is mapped.
pub unsafe fn arm_all() {
    arm_current();
    let me = sys::gettid();
    // SAFETY: raw getdents64 into a local buffer, parsed within its length.
    unsafe {
        let fd = libc::open(
            c"/proc/self/task".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return;
        }
        let mut buf = [0u8; 4096];
        loop {
            let n = libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len());
            if n <= 0 {
                break;
            }
            let mut off = 0usize;
            while off + 19 < n as usize {
                // struct linux_dirent64: ino u64, off i64, reclen u16, type u8, name
                let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
                if reclen == 0 {
                    break;
                }
                let name = &buf[off + 19..(off + reclen).min(n as usize)];
                let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
                if let Some(tid) = crate::text::parse_dec(name) {
                    if tid as i32 != me {
                        arm(tid as i32);
                    }
                }
                off += reclen;
            }
        }
        libc::close(fd);
    }
}

/// In a forked child: a file of its own, a timer for its one thread (timers
/// are not inherited). Async-signal-safe, as a fork handler must be.
unsafe extern "C" fn after_fork_child() {
    if !super::ACTIVE.load(Acquire) {
        return;
    }
    let _errno = SavedErrno::new();
    // SAFETY: in the child before its timer is armed, as these require.
    unsafe {
        state::forget_parent_file();
        maps::reset_after_fork();
        if state::create_file() {
            arm_current();
        } else {
            super::ACTIVE.store(false, Release);
        }
    }
}

type StartRoutine = unsafe extern "C" fn(*mut c_void) -> *mut c_void;

/// What the trampoline needs: the program's start routine and argument.
#[repr(C)]
struct Start {
    routine: StartRoutine,
    arg: *mut c_void,
}

type PthreadCreate = unsafe extern "C" fn(
    *mut libc::pthread_t,
    *const libc::pthread_attr_t,
    Option<StartRoutine>,
    *mut c_void,
) -> c_int;

static REAL_CREATE: AtomicUsize = AtomicUsize::new(0);

fn real_create() -> Option<PthreadCreate> {
    let mut f = REAL_CREATE.load(Relaxed);
    if f == 0 {
        // SAFETY: dlsym with a NUL-terminated name.
        f = unsafe { libc::dlsym(libc::RTLD_NEXT, c"pthread_create".as_ptr()) } as usize;
        REAL_CREATE.store(f, Relaxed);
    }
    // SAFETY: the next definition of pthread_create has this type.
    (f != 0).then(|| unsafe { core::mem::transmute::<usize, PthreadCreate>(f) })
}

/// The interposed `pthread_create`: the thread starts on the trampoline
/// (see the module docs), or as asked when the sampler is off.
///
/// # Safety
/// As `pthread_create(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    routine: Option<StartRoutine>,
    arg: *mut c_void,
) -> c_int {
    let Some(real) = real_create() else {
        sys::warn(&[b"no pthread_create after the sampler's (dlsym RTLD_NEXT failed)"]);
        return libc::EAGAIN;
    };
    let (true, Some(routine_ptr)) = (super::ACTIVE.load(Acquire), routine) else {
        // SAFETY: the caller's arguments, unchanged.
        return unsafe { real(thread, attr, routine, arg) };
    };
    // SAFETY: malloc/free pair; the block is freed here on failure or by
    // the new thread in `thread_setup`.
    unsafe {
        let start = libc::malloc(core::mem::size_of::<Start>()).cast::<Start>();
        if start.is_null() {
            return real(thread, attr, routine, arg);
        }
        start.write(Start {
            routine: routine_ptr,
            arg,
        });
        let rc = real(
            thread,
            attr,
            Some(flopscope_sampler_thread_start),
            start.cast(),
        );
        if rc != 0 {
            libc::free(start.cast());
        }
        rc
    }
}

/// Called by the trampoline on the new thread: arms its timer, frees the
/// block, returns the program's routine and argument (in rax:rdx).
extern "C" fn thread_setup(start: *mut Start) -> Start {
    // SAFETY: the block `pthread_create` allocated and filled, ours alone.
    let s = unsafe { start.read() };
    // SAFETY: allocated with malloc.
    unsafe { libc::free(start.cast()) };
    arm_current();
    s
}

extern "C" {
    /// The new thread's entry (assembly below): `thread_setup`, then a
    /// tail jump to the program's routine with its argument, which returns
    /// straight to glibc's `start_thread`.
    fn flopscope_sampler_thread_start(start: *mut c_void) -> *mut c_void;
}

// Entered with rsp = 8 (mod 16) (just called); the push realigns it for the
// call and keeps the return address where the unwind info says it is.
core::arch::global_asm!(
    r#"
    .text
    .p2align 4
    .globl flopscope_sampler_thread_start
    .hidden flopscope_sampler_thread_start
    .type flopscope_sampler_thread_start,@function
flopscope_sampler_thread_start:
    .cfi_startproc
    push rdi
    .cfi_adjust_cfa_offset 8
    call {setup}
    add rsp, 8
    .cfi_adjust_cfa_offset -8
    mov rdi, rdx
    jmp rax
    .cfi_endproc
    .size flopscope_sampler_thread_start, .-flopscope_sampler_thread_start
"#,
    setup = sym thread_setup,
);
