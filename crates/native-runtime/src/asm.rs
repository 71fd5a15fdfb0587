//! The hand-written transitions between the program's code in the cache and
//! the runtime: dispatcher entry and exit, resuming a saved context (new
//! threads, take-over), the raw `clone` of a new thread, `rt_sigreturn` on
//! the program's stack, the start of a statically linked program, and the
//! constructor stub that takes the program over.
//!
//! Dispatcher entry contract (`fs_enter`): cache code has stored the
//! program's rax at gs:[SAVE_RAX] and put an exit descriptor's address in
//! rax; rsp is the program's. Everything else is the program's state.

use std::arch::global_asm;

/// The program's general registers and flags as saved by `fs_enter`, lowest
/// address first (the push order reversed).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Context {
    pub r15: u64,
    pub r14: u64,
    pub r13: u64,
    pub r12: u64,
    pub r11: u64,
    pub r10: u64,
    pub r9: u64,
    pub r8: u64,
    pub rdi: u64,
    pub rsi: u64,
    pub rbp: u64,
    pub rbx: u64,
    pub rdx: u64,
    pub rcx: u64,
    pub rax: u64,
    pub rflags: u64,
}

extern "C" {
    /// Dispatcher entry (see the module docs). Never called from Rust.
    pub fn fs_enter();
    /// Restores `ctx` and the xsave area, then jumps to `target` with rsp =
    /// gs:[APP_RSP]. Never returns.
    pub fn fs_resume(ctx: *const Context, target: u64) -> !;
    /// `clone(flags, newsp, ptid, ctid, tls)`; the child sets its gs base to
    /// `child_gs` (and, in a static program, its `fs` to `tls` with
    /// CLONE_SETTLS, else to its creator's: the creator runs the dispatcher
    /// with the host's) and resumes from its header's RESUME_CTX/RESUME_TARGET.
    pub fn fs_clone(flags: u64, newsp: u64, ptid: u64, ctid: u64, tls: u64, child_gs: u64) -> i64;
    /// `rt_sigreturn` with rsp = `frame` (a static program's `fs` set back
    /// first: the kernel's frame does not hold it). Never returns.
    pub fn fs_sigreturn(frame: u64) -> !;
    /// Starts a statically linked program as the kernel starts one: rsp =
    /// `sp` (its argc), `fs` = gs:[APP_FS], the initial vector state, every
    /// other register zero, flags 0x202; continues at the cache address
    /// `target`. Never returns.
    pub fn fs_start_program(sp: u64, target: u64) -> !;
    /// Starts a statically linked program at `entry` natively, uncounted
    /// (no gs needed; `fs` = 0): as `fs_start_program`.
    pub fn fs_start_native(sp: u64, entry: u64) -> !;
}

global_asm!(
    r#"
    .text
    .globl fs_enter
    .type fs_enter,@function
fs_enter:
    mov gs:[0x30], rsp
    mov rsp, gs:[0x38]
    pushfq
    push qword ptr gs:[0x08]
    push rcx
    push rdx
    push rbx
    push rbp
    push rsi
    push rdi
    push r8
    push r9
    push r10
    push r11
    push r12
    push r13
    push r14
    push r15
    cld
    pushfq
    and dword ptr [rsp], {no_ac}
    popfq
    mov rbx, rax
    mov rbp, rsp
    mov rcx, gs:[0x40]
    mov eax, -1
    mov edx, -1
    cmp byte ptr [rip + {xsavec}], 0
    je 3f
    xsavec64 [rcx]
    jmp 4f
3:
    xsave64 [rcx]
4:
    mov rdi, rbp
    mov rsi, rbx
    and rsp, -16
    call {dispatch}
    mov rdi, rbp
    mov rsi, rax
    jmp fs_resume

    .globl fs_resume
    .type fs_resume,@function
fs_resume:
    mov gs:[0x20], rsi
    mov rbx, rdi
    mov rcx, gs:[0x40]
    mov eax, -1
    mov edx, -1
    xrstor64 [rcx]
    mov rsp, rbx
    pop r15
    pop r14
    pop r13
    pop r12
    pop r11
    pop r10
    pop r9
    pop r8
    pop rdi
    pop rsi
    pop rbp
    pop rbx
    pop rdx
    pop rcx
    pop rax
    popfq
    mov rsp, gs:[0x30]
    jmp qword ptr gs:[0x20]

    .globl fs_clone
    .type fs_clone,@function
fs_clone:
    push r12
    mov r12, r9
    mov r10, rcx
    mov eax, 56
    syscall
    test rax, rax
    jz 2f
    pop r12
    ret
2:
    mov rbx, rdi
    mov rbp, r8
    mov edi, 0x1001
    mov rsi, r12
    mov eax, 158
    syscall
    cmp qword ptr gs:[0x98], 0
    je 5f
    test rbx, 0x80000
    jz 6f
    mov gs:[0x90], rbp
6:
    mov rsi, gs:[0x90]
    call fs_set_fs
5:
    mov rdi, gs:[0x58]
    mov rsi, gs:[0x60]
    jmp fs_resume

    .globl fs_sigreturn
    .type fs_sigreturn,@function
fs_sigreturn:
    mov rsp, rdi
    cmp qword ptr gs:[0x98], 0
    je 1f
    mov rsi, gs:[0x90]
    call fs_set_fs
1:
    mov eax, 15
    syscall
    ud2

    .globl fs_start_program
    .type fs_start_program,@function
fs_start_program:
    mov rbx, rdi
    mov r12, rsi
    mov rsi, gs:[0x90]
    call fs_set_fs
    mov rdi, rbx
    mov rsi, r12
    jmp fs_fresh_start

    .globl fs_start_native
    .type fs_start_native,@function
fs_start_native:
    mov rbx, rdi
    mov r12, rsi
    mov edi, 0x1002
    xor esi, esi
    mov eax, 158
    syscall
    mov rdi, rbx
    mov rsi, r12
    jmp fs_fresh_start

    /* The state the kernel starts a program in: rsp = rdi, the initial
       vector state, every other register zero, flags 0x202; continues at
       rsi (pushed, then returned to). */
    .type fs_fresh_start,@function
fs_fresh_start:
    lea rcx, [rip + {init_xstate}]
    mov eax, -1
    mov edx, -1
    xrstor64 [rcx]
    mov rsp, rdi
    push rsi
    xor eax, eax
    xor ebx, ebx
    xor ecx, ecx
    xor edx, edx
    xor esi, esi
    xor edi, edi
    xor ebp, ebp
    xor r8d, r8d
    xor r9d, r9d
    xor r10d, r10d
    xor r11d, r11d
    xor r12d, r12d
    xor r13d, r13d
    xor r14d, r14d
    xor r15d, r15d
    push 0x202
    popfq
    ret

    .type fs_set_fs,@function
fs_set_fs:
    cmp byte ptr [rip + {fsgsbase}], 0
    je 7f
    wrfsbase rsi
    ret
7:
    mov edi, 0x1002
    mov eax, 158
    syscall
    ret
"#,
    dispatch = sym crate::dispatch::fs_dispatch,
    xsavec = sym HAS_XSAVEC,
    // RFLAGS without AC (alignment check, bit 18): the runtime's code may
    // load unaligned data, and a program may leave the cache with AC set.
    no_ac = const !(1u32 << 18),
    fsgsbase = sym crate::hostfs::HAS_FSGSBASE,
    init_xstate = sym INIT_XSTATE,
);

/// The register state a program starts with after `execve`: XRSTOR of an
/// area whose header asks for every component's initial state (x87 control
/// word 0x37f, vector registers zero) and whose MXCSR is the initial 0x1f80
/// (XRSTOR loads MXCSR from the legacy area even then; Intel SDM vol. 1,
/// 13.8.1).
#[repr(C, align(64))]
pub struct InitXstate([u8; 576]);

pub static INIT_XSTATE: InitXstate = {
    let mut a = [0u8; 576];
    a[24] = 0x80;
    a[25] = 0x1f;
    InitXstate(a)
};

/// 1 when the processor has XSAVEC (set at take-over): dispatcher entries
/// then save only the register state in use (compacted form, which XRSTOR
/// reads back), instead of every component.
pub static HAS_XSAVEC: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Bytes of one xsave area (a dispatcher nesting level): set at take-over
/// by [`detect_xsavec`] from the processor's XSAVE size.
pub static XSAVE_AREA: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(4096);

/// The XSAVE area size for the components XCR0 enables (CPUID leaf 0xD,
/// sub-leaf 0, EBX), in whole pages: one page holds the AVX-512 state
/// (about 2.7 KiB), AMX's tile data takes 8 KiB more (three pages), which
/// a one-page area let XSAVE write past, into the next level's area and,
/// from the last level, past the areas' mapping.
fn xsave_area_bytes() -> usize {
    // SAFETY: CPUID has no side effects; leaf 0xD exists with OSXSAVE.
    #[allow(unused_unsafe)]
    let ebx = unsafe { std::arch::x86_64::__cpuid_count(0xd, 0).ebx } as usize;
    ebx.max(1).div_ceil(4096) * 4096
}

/// Detects XSAVEC (CPUID leaf 0xD, sub-leaf 1, EAX bit 1), and the size of
/// an xsave area ([`XSAVE_AREA`]).
pub fn detect_xsavec() {
    // CPUID leaf 0xD exists when OSXSAVE (leaf 1, ECX bit 27) is set.
    // (CPUID is a safe intrinsic in recent Rust, an unsafe one before.)
    #[allow(unused_unsafe)]
    // SAFETY: CPUID has no side effects.
    let ok = unsafe {
        let l1 = std::arch::x86_64::__cpuid(1);
        l1.ecx & (1 << 27) != 0 && std::arch::x86_64::__cpuid_count(0xd, 1).eax & 2 != 0
    };
    HAS_XSAVEC.store(u8::from(ok), std::sync::atomic::Ordering::Relaxed);
    // SAFETY: CPUID leaf 1 exists on every x86-64 processor.
    #[allow(unused_unsafe)]
    let osxsave = unsafe { std::arch::x86_64::__cpuid(1).ecx } & (1 << 27) != 0;
    if osxsave {
        XSAVE_AREA.store(xsave_area_bytes(), std::sync::atomic::Ordering::Relaxed);
    }
}

#[cfg(test)]
mod xsave_tests {
    /// An xsave area holds all the state XCR0 enables, whole pages: one on
    /// an AVX-512 processor, three with AMX (8 KiB of tile data more).
    #[test]
    fn an_xsave_area_holds_the_processors_whole_xsave_state() {
        #[allow(unused_unsafe)]
        // SAFETY: CPUID has no side effects.
        let size = unsafe { std::arch::x86_64::__cpuid_count(0xd, 0).ebx } as usize;
        let area = super::xsave_area_bytes();
        assert!(
            area >= size && area.is_multiple_of(4096) && area - size < 4096,
            "{area} for {size}"
        );
    }
}
