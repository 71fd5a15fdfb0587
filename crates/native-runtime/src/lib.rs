//! The native engine's in-process side: a preload library that takes the
//! program over and runs it from a code cache with counters added
//! (dynamic binary instrumentation). See crates/engine-native for the
//! CLI side and the README for what is and is not counted.
//!
//! Where things are:
//! - `lib.rs`: take-over, from the library's constructor (`fs_init_stub`):
//!   execution continues in the cache at the constructor's return address.
//! - [`translate`]: one block: decode (iced-x86), classify (`flopscope-isa`),
//!   instrument, exits; [`emit`]: the added instructions; [`slots`]: what
//!   each counter slot stands for; [`translator`]: the shared state (blocks,
//!   slots, arenas, lookup table) behind one lock; [`cache`]: arenas near the
//!   code, stubs, the indirect-branch lookup routine; [`codemap`]: where
//!   readable code is; [`cpu`]: extensions this processor lacks.
//! - [`asm`]: dispatcher entry/exit, resume, thread clone, sigreturn;
//!   [`dispatch`]: the dispatcher; [`syscalls`]: the program's system calls;
//!   [`signals`]; [`regions`]: markers and SSC marks, [`region_times`]: their wall times; [`thread`],
//!   [`header`]: per-thread state behind `gs`; [`out`]: the counter file;
//!   [`alloc`]: the runtime's allocator; [`sys`]: raw system calls;
//!   [`attribution`]: the code table and block counters written beside the
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
pub mod header;
pub mod out;
pub mod region_times;
pub mod regions;
pub mod sampling;
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

/// The environment variable naming the counter file; without it the
/// library does nothing.
pub const OUT_ENV: &str = "FLOPSCOPE_NATIVE_OUT";
/// Set: programs the counted one starts with exec run uncounted.
pub const NO_FOLLOW_ENV: &str = "FLOPSCOPE_NATIVE_NO_FOLLOW";
/// The directory the counted run's samples go to ([`sampling`]); unset:
/// not sampled (no timer, no handler).
pub const SAMPLES_ENV: &str = "FLOPSCOPE_NATIVE_SAMPLES";

/// Sets the engine up and returns the cache address of the constructor's
/// return address (0: run natively, uncounted).
///
/// # Safety
/// Called once, by `fs_init_stub`, with the address of its return address.
pub unsafe extern "C" fn fs_takeover(ret_slot: *const u64) -> u64 {
    let Some(path) = std::env::var_os(OUT_ENV) else {
        return 0;
    };
    let path = path.to_string_lossy().into_owned();
    let t0 = stats::now();
    stats::started();
    let fail = |e: String| {
        sys::write_all(
            2,
            format!("flopscope: the native engine did not start: {e}\n").as_bytes(),
        );
        0
    };
    if let Err(e) = out::attach(&path) {
        if e == out::NOT_FOLLOWED {
            return 0;
        }
        return fail(e);
    }
    asm::detect_xsavec();
    regions::init_ssc();
    if let Err(e) = translator::init() {
        return fail(e);
    }
    let Some(th) = thread::create(sys::gettid()) else {
        return fail("no memory for the first thread".into());
    };
    let Some(bank) = th.bank(0) else {
        return fail("no memory for counters".into());
    };
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
    signals::install_fatal();
    if let Some(dir) = std::env::var_os(SAMPLES_ENV).filter(|d| !d.is_empty()) {
        if let Err(e) = sampling::start(&dir.to_string_lossy(), th.index) {
            sampling::warn(&e);
        }
    }
    // SAFETY: the stub passes the address of its return address.
    let ret = unsafe { *ret_slot };
    match translator::lookup_or_translate(ret) {
        Ok(c) => c,
        Err(e) => fail(e),
    }
}
