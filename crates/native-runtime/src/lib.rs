//! The native engine's in-process side: a preload library that takes the
//! program over and runs it from a code cache with counters added
//! (dynamic binary instrumentation). See crates/engine-native for the
//! CLI side and the README for what is and is not counted.
//!
//! Where things are:
//! - `lib.rs`: take-over, from the library's constructor (`fs_init_stub`):
//!   execution continues in the cache at the constructor's return address;
//!   in the host of a statically linked program, [`loader`] maps that
//!   program and it starts in the cache at its entry point, [`hostfs`]
//!   giving the runtime the host's `fs` on its threads.
//! - [`translate`]: one block: decode (iced-x86), classify (`flopscope-isa`),
//!   instrument, exits; [`emit`]: the added instructions; [`slots`]: what
//!   each counter slot stands for; [`translator`]: the shared state (blocks,
//!   slots, arenas, lookup table) behind one lock; [`cache`]: arenas near the
//!   code, stubs, the indirect-branch lookup routine; [`codemap`]: where
//!   readable code is; [`cpu`]: extensions this processor lacks.
//! - [`asm`]: dispatcher entry/exit, resume, thread clone, sigreturn;
//!   [`dispatch`]: the dispatcher; [`syscalls`]: the program's system calls;
//!   [`signals`], [`settle`]: the counts of a block a handler left
//!   half-way; [`regions`]: markers and SSC marks, [`region_times`]: their wall times; [`thread`],
//!   [`header`]: per-thread state behind `gs`; [`out`]: the counter file;
//!   [`alloc`]: the runtime's allocator; [`sys`]: raw system calls;
//!   [`written_code`]: code written at run time followed (pages
//!   protected, blocks invalidated); [`attribution`]: the code table and block counters written beside the
//!   counter file, for functions, loops and lines.
//! - [`sampling`]: the counted run's program counter sampled on CPU-time
//!   timers (time per function), mapped back from the cache by
//!   [`cachemap`].

pub mod alloc;
pub mod asm;
pub mod attribution;
pub mod cache;
pub mod cachemap;
pub mod code;
pub mod codemap;
pub mod cpu;
pub mod dispatch;
pub mod emit;
pub mod exec_env;
pub mod fork;
pub mod header;
pub mod hostfs;
pub mod kernel_writes;
pub mod loader;
pub mod out;
pub mod region_times;
pub mod regions;
pub mod sampling;
pub mod settle;
pub mod signals;
pub mod slots;
pub mod stats;
pub mod sys;
pub mod syscalls;
pub mod thread;
pub mod translate;
pub mod translator;
pub mod written_code;

#[cfg(feature = "preload")]
#[global_allocator]
static ALLOC: alloc::RuntimeAlloc = alloc::RuntimeAlloc;

#[cfg(feature = "preload")]
extern "C" {
    fn fs_init_stub();
}

#[cfg(feature = "preload")]
#[used]
#[link_section = ".init_array"]
static INIT: unsafe extern "C" fn() = fs_init_stub;

#[cfg(feature = "preload")]
std::arch::global_asm!(
    r#"
    .text
    .globl fs_init_stub
    .type fs_init_stub,@function
fs_init_stub:
    push rbx
    push rbp
    push r12
    push r13
    push r14
    push r15
    sub rsp, 8
    mov rcx, rdx
    mov rdx, rsi
    mov rsi, rdi
    lea rdi, [rsp + 56]
    call {takeover}
    add rsp, 8
    pop r15
    pop r14
    pop r13
    pop r12
    pop rbp
    pop rbx
    test rax, rax
    jz 1f
    mov gs:[0x20], rax
    lea rsp, [rsp + 8]
    jmp qword ptr gs:[0x20]
1:
    ret
"#,
    takeover = sym fs_takeover,
);

// The C start files' `_init` calls `__gmon_start__` when that name resolves
// (gprof's hook). Left undefined here, it resolved to the program's own when
// the program was built with `-pg`: its profiling started in this library's
// initializer, before the take-over, and the SIGPROF handler it installed
// ran natively, uncounted, sampling cache addresses that gprof dropped (its
// profile held no time). A hidden definition binds this library's call to
// a no-op; the program's own `_init` starts its profiling, in the cache.
#[cfg(feature = "preload")]
std::arch::global_asm!(
    ".text",
    ".globl __gmon_start__",
    ".hidden __gmon_start__",
    ".type __gmon_start__,@function",
    "__gmon_start__:",
    "ret",
);

/// The environment variable naming the counter file; without it the
/// library does nothing.
pub const OUT_ENV: &str = "FLOPSCOPE_NATIVE_OUT";
/// Set: programs the counted one starts with exec run uncounted.
pub const NO_FOLLOW_ENV: &str = "FLOPSCOPE_NATIVE_NO_FOLLOW";
/// The directory the counted run's samples go to ([`sampling`]); unset:
/// not sampled (no timer, no handler).
pub const SAMPLES_ENV: &str = "FLOPSCOPE_NATIVE_SAMPLES";

/// Sets the engine up and returns the cache address of the constructor's
/// return address (0: run natively, uncounted). In a host of a statically
/// linked program ([`loader`]), starts that program instead (counted, or
/// uncounted if the engine does not start) and does not return, unless
/// the program cannot be loaded (0: the host says so and exits).
///
/// # Safety
/// Called once, by `fs_init_stub`, with the address of its return address
/// and the arguments the dynamic loader passes constructors (argc, argv,
/// envp: the kernel's initial arrays).
pub unsafe extern "C" fn fs_takeover(
    ret_slot: *const u64,
    argc: i64,
    argv: *mut *mut u8,
    envp: *mut *mut u8,
) -> u64 {
    // SAFETY: per the contract.
    unsafe { environ_before_libc(envp) };
    // SAFETY: per the contract.
    let program = unsafe { loader::requested(argc, argv, envp) };
    let counted = match std::env::var_os(OUT_ENV) {
        Some(path) => {
            exec_env::capture();
            // SAFETY: the kernel's initial environment, the C library's
            // `environ` (or the static program's, the same array); one
            // thread runs.
            unsafe { exec_env::hide_runtime(envp) };
            take_over(&path.to_string_lossy(), ret_slot, program.as_ref())
        }
        None => Err(None),
    };
    match counted {
        Ok(target) => target,
        Err(why) => {
            if let Some(e) = why {
                sys::write_all(
                    2,
                    format!("flopscope: the native engine did not start: {e}\n").as_bytes(),
                );
            }
            if let Some(req) = program {
                run_uncounted(&req);
            }
            0
        }
    }
}

extern "C" {
    static mut environ: *mut *mut u8;
}

/// Points the C library's `environ` at `envp` if it is not set yet: this
/// constructor runs first (build.rs: `-z initfirst`), before the C
/// library's own sets it, and the runtime reads its settings through it.
/// The C library's constructor, run later from the cache, sets the same
/// array.
///
/// # Safety
/// `envp`: the process's initial environment; one thread runs.
unsafe fn environ_before_libc(envp: *mut *mut u8) {
    // SAFETY: per the contract; the C library's variable, read and written
    // while no other thread exists.
    unsafe {
        let env = std::ptr::addr_of_mut!(environ);
        if (*env).is_null() && !envp.is_null() {
            *env = envp;
        }
    }
}

/// The take-over; `Err(None)`: not to be counted (an exec'd program under
/// `--no-follow`), `Err(Some(why))`: the engine could not start. A static
/// program (`program`) is started from here and never returns `Ok`.
fn take_over(
    path: &str,
    ret_slot: *const u64,
    program: Option<&loader::Request>,
) -> Result<u64, Option<String>> {
    let t0 = stats::now();
    stats::started();
    if let Err(e) = out::attach(path) {
        return Err((e != out::NOT_FOLLOWED).then_some(e));
    }
    let started = start(t0, ret_slot, program);
    if let Err(e) = &started {
        // Attached: the report says why nothing (more) was counted.
        let why = format!("the engine did not start ({e}); the program ran uncounted, if at all");
        out::note_unsupported(0, &why);
        out::flush(false);
    }
    started.map_err(Some)
}

/// The take-over once the counter file is attached.
fn start(t0: u64, ret_slot: *const u64, program: Option<&loader::Request>) -> Result<u64, String> {
    if program.is_some() {
        hostfs::init();
        syscalls::SPECIAL[libc::SYS_brk as usize].store(1, std::sync::atomic::Ordering::Relaxed);
    }
    asm::detect_xsavec();
    regions::init_ssc();
    // Settings from the environment, read now, while one thread runs: the
    // program may change its environment later from any thread.
    attribution::enabled();
    dispatch::debug();
    region_times::dir();
    translator::init()?;
    let image = program.map(|p| loader::map(&p.path)).transpose()?;
    let th = thread::create(sys::gettid())
        .ok_or_else(|| sys::no_memory("no memory for the first thread"))?;
    let bank = th
        .bank(0)
        .ok_or_else(|| sys::no_memory("no memory for counters"))?;
    sys::set_gs(bank as u64);
    if dispatch::debug() {
        sys::write_all(
            2,
            format!(
                "[fs] take-over set up in {:.3} ms\n",
                (stats::now() - t0) as f64 / 1e6
            )
            .as_bytes(),
        );
    }
    signals::unblock_segv();
    signals::install_fatal();
    if let Some(dir) = std::env::var_os(SAMPLES_ENV).filter(|d| !d.is_empty()) {
        if let Err(e) = sampling::start(&dir.to_string_lossy(), th.index) {
            sampling::warn(&e);
        }
    }
    let (Some(req), Some(image)) = (program, image) else {
        // SAFETY: the stub passes the address of its return address.
        let ret = unsafe { *ret_slot };
        return translator::lookup_or_translate(ret);
    };
    let target = translator::lookup_or_translate(image.entry)?;
    // SAFETY: the host's initial stack, which the host never reads again.
    unsafe { loader::prepare(req, &image)? };
    // SAFETY: the program's initial stack and the cache copy of its entry.
    unsafe { asm::fs_start_program(req.sp, target) }
}

/// Runs the static program of `req` uncounted (the engine did not start,
/// or the program was exec'd under `--no-follow`); returns only if it
/// cannot be loaded.
fn run_uncounted(req: &loader::Request) {
    let started: Result<(), String> = loader::map(&req.path).and_then(|image| {
        // SAFETY: as in `take_over`.
        unsafe { loader::prepare(req, &image)? };
        // SAFETY: the program's initial stack and entry point.
        unsafe { asm::fs_start_native(req.sp, image.entry) }
    });
    if let Err(e) = started {
        sys::write_all(
            2,
            format!("flopscope: cannot start {}: {e}\n", req.path.display()).as_bytes(),
        );
    }
}
