//! The dispatcher: what runs when cache code exits (see `asm.rs`): links a
//! direct branch, resolves an indirect-branch miss, performs a system call,
//! applies a region marker; returns the cache address to continue at.

use crate::asm::Context;
use crate::header;
use crate::translate::{Exit, MemRef};
use crate::{hostfs, loader, out, regions, signals, sys, syscalls, translator};
use iced_x86::Register;

/// Called by `fs_enter` on the dispatcher stack.
///
/// # Safety
/// `ctx` is the context `fs_enter` saved; `exit` an exit descriptor.
pub unsafe extern "C" fn fs_dispatch(
    ctx: *mut Context,
    exit: *const crate::translate::Exit,
) -> u64 {
    // SAFETY: per the contract.
    let (ctx, exit) = unsafe { (&mut *ctx, &*exit) };
    // A translation exit of a dynamically linked program defers the signals
    // that come meanwhile (signals.rs, `defer`) instead of blocking them.
    // Else signals are blocked first, then a static program's fs switched
    // (hostfs.rs): the program's handlers never run with the host's.
    let deferring = match exit {
        Exit::Direct { .. } | Exit::IblMiss | Exit::IblFill | Exit::Alone { .. } => true,
        // A call the dispatcher only checks (kernel_writes.rs), which then
        // runs in the cache, where a deferred signal lands before it.
        Exit::Syscall { native, .. } => *native != 0 && crate::kernel_writes::routed(ctx.rax),
        Exit::Efault { .. } => true,
        _ => false,
    } && !hostfs::on();
    let masked = match exit {
        _ if deferring => {
            set_gs_word(header::DEFER, 1);
            None
        }
        // Blocked whatever the program's handlers: see hostfs::must_block;
        // and `rt_sigprocmask`, whose new mask takes effect as the
        // dispatcher leaves (signals::sigprocmask), where a signal it
        // unblocks lands as if at the program's system call (a sample
        // there is the program's).
        Exit::Syscall { .. }
            if hostfs::must_block(ctx.rax) || ctx.rax == libc::SYS_rt_sigprocmask as u64 =>
        {
            Some(signals::block_all_but_faults())
        }
        _ => signals::block_in_dispatcher(),
    };
    set_gs_word(header::UNMASK_FOR_PROGRAM, 0);
    hostfs::enter();
    let target = hostfs::keep_errno(|| dispatch(ctx, exit, masked));
    hostfs::leave();
    if deferring {
        set_gs_word(header::DEFER, 0);
        return signals::raise_deferred(target);
    }
    target
}

fn dispatch(ctx: &mut Context, exit: &Exit, mut masked: Option<u64>) -> u64 {
    if debug() {
        crate::stats::add_entry();
        if every_entry() {
            let t = format!(
                "[fs] +{:.3} ms tid {} exit {:?} rsp={:#x} rax={:#x}\n",
                crate::stats::since_start() as f64 / 1e6,
                sys::gettid(),
                exit,
                gs_word(header::APP_RSP),
                ctx.rax
            );
            sys::write_all(2, t.as_bytes());
        }
    }
    let r = match exit {
        Exit::Direct { target, stub } => translator::lookup_and_link(*target, *stub),
        Exit::IblMiss => translator::lookup_indirect(gs_word(header::IBL_TARGET), None),
        Exit::IblFill => {
            translator::lookup_indirect(gs_word(header::IBL_TARGET), Some(gs_word(header::JUMP)))
        }
        Exit::Alone { pc } => translator::run_alone(*pc),
        Exit::Syscall { next, native } => {
            match crate::kernel_writes::before_syscall(ctx, *native) {
                Some(at) => Ok(at),
                None => syscall(ctx, *next, &mut masked),
            }
        }
        Exit::Efault { next, native } => crate::kernel_writes::after_efault(ctx, *next, *native),
        Exit::Cpuid { next } => {
            crate::cpu::answer_cpuid(ctx);
            translator::lookup_or_translate(*next)
        }
        Exit::Marker { kind, next, mem } => {
            let at = address(ctx, mem);
            let mut name = [0u8; 64];
            let n = sys::read_self(at, &mut name[..63]);
            let len = name[..n].iter().position(|b| *b == 0).unwrap_or(n);
            regions::marker(*kind, &name[..len]);
            translator::lookup_or_translate(*next)
        }
        Exit::Ssc { kind, next } => {
            regions::ssc(*kind);
            translator::lookup_or_translate(*next)
        }
    };
    let target = match crate::codemap::or_native_fault(r, jump_target(exit)) {
        Ok(c) => c,
        Err(e) => fatal(0, &e),
    };
    match masked {
        // Leave with the program's mask restored outside the dispatcher.
        Some(mask) => {
            set_gs_word(header::MASK, mask);
            set_gs_word(header::NEXT, target);
            signals::fs_unmask_and_go as *const () as u64
        }
        None => target,
    }
}

/// The program's system call, performed by the dispatcher, and the cache
/// address of `next`, where it goes on.
fn syscall(ctx: &mut Context, next: u64, masked: &mut Option<u64>) -> Result<u64, String> {
    if let Some(ret) = static_syscall(ctx) {
        ctx.rax = ret as u64;
        ctx.rcx = next;
        ctx.r11 = ctx.rflags;
        return translator::lookup_or_translate(next);
    }
    let nr = ctx.rax as i64;
    let env = crate::exec_env::add_engine_env(ctx);
    let in_host = loader::exec_in_host(ctx);
    let fork_tls = hostfs::fork_tls(ctx);
    let r = syscalls::handle(ctx, next, masked);
    if let Some(exec) = in_host {
        exec.restore(ctx);
    }
    if let Some(env) = env {
        env.restore(ctx, nr);
    }
    if let Some(tls) = fork_tls {
        hostfs::forked_with_tls(ctx, tls);
    }
    r
}

/// Where the program was going when it left the cache for `exit`: a
/// branch's target, or the next instruction past a block's end.
fn jump_target(exit: &Exit) -> Option<u64> {
    match exit {
        Exit::Direct { target, .. } => Some(*target),
        Exit::IblMiss | Exit::IblFill => Some(gs_word(header::IBL_TARGET)),
        _ => None,
    }
}

/// The system calls a statically linked program makes that the runtime
/// answers itself (`None`: performed as for any program): `brk` on the
/// runtime's heap (loader.rs), `arch_prctl` on `fs` (hostfs.rs); a thread's
/// `exit` frees its host thread block for a later thread.
fn static_syscall(ctx: &Context) -> Option<i64> {
    if !hostfs::on() {
        return None;
    }
    match ctx.rax as i64 {
        libc::SYS_brk => Some(loader::brk(ctx.rdi) as i64),
        libc::SYS_arch_prctl => hostfs::arch_prctl(ctx.rdi, ctx.rsi),
        libc::SYS_exit => {
            hostfs::retire();
            None
        }
        _ => None,
    }
}

/// `FLOPSCOPE_NATIVE_DEBUG` set: a summary of the translation work on
/// stderr at exit; `=2`: every dispatcher entry too.
pub fn debug() -> bool {
    debug_level() > 0
}

fn every_entry() -> bool {
    debug_level() == 2
}

/// Read once, at the take-over (`fs_takeover` asks first): the program may
/// change its environment later, from any thread, while the dispatcher runs.
fn debug_level() -> u8 {
    use std::sync::atomic::{AtomicU8, Ordering};
    static LEVEL: AtomicU8 = AtomicU8::new(u8::MAX);
    match LEVEL.load(Ordering::Relaxed) {
        u8::MAX => {
            let level = match std::env::var_os("FLOPSCOPE_NATIVE_DEBUG") {
                None => 0,
                Some(v) if v == "2" => 2,
                Some(_) => 1,
            };
            LEVEL.store(level, Ordering::Relaxed);
            level
        }
        v => v,
    }
}

/// Stops the program: the engine met something it cannot handle.
pub fn fatal(pc: u64, msg: &str) -> ! {
    let text = format!("flopscope: the native engine cannot go on: {msg}\n");
    sys::write_all(2, text.as_bytes());
    out::note_unsupported(pc, msg);
    out::flush(false);
    crate::sampling::finish(false);
    // SAFETY: ends the process.
    unsafe { sys::syscall6(libc::SYS_exit_group as u64, [125, 0, 0, 0, 0, 0]) };
    unreachable!("exit_group returned")
}

pub fn gs_word(off: i32) -> u64 {
    let v: u64;
    // SAFETY: off is a header word of the current bank.
    unsafe {
        std::arch::asm!("mov {}, gs:[{}]", out(reg) v, in(reg) off as i64, options(nostack, readonly))
    };
    v
}

pub fn set_gs_word(off: i32, v: u64) {
    // SAFETY: off is a header word of the current bank.
    unsafe { std::arch::asm!("mov gs:[{}], {}", in(reg) off as i64, in(reg) v, options(nostack)) };
}

/// The program's value of a 64-bit register.
pub fn reg(ctx: &Context, r: Register) -> u64 {
    match r.full_register() {
        Register::RAX => ctx.rax,
        Register::RBX => ctx.rbx,
        Register::RCX => ctx.rcx,
        Register::RDX => ctx.rdx,
        Register::RSI => ctx.rsi,
        Register::RDI => ctx.rdi,
        Register::RBP => ctx.rbp,
        Register::RSP => gs_word(header::APP_RSP),
        Register::R8 => ctx.r8,
        Register::R9 => ctx.r9,
        Register::R10 => ctx.r10,
        Register::R11 => ctx.r11,
        Register::R12 => ctx.r12,
        Register::R13 => ctx.r13,
        Register::R14 => ctx.r14,
        Register::R15 => ctx.r15,
        _ => 0,
    }
}

fn address(ctx: &Context, m: &MemRef) -> u64 {
    // iced gives RIP-relative operands as absolute displacements.
    let base = if m.base == Register::RIP || m.base == Register::None {
        0
    } else {
        reg(ctx, m.base)
    };
    let index = if m.index == Register::None {
        0
    } else {
        reg(ctx, m.index).wrapping_mul(u64::from(m.scale))
    };
    base.wrapping_add(index).wrapping_add(m.disp)
}
