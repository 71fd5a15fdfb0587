//! Statically linked programs: loaded by the runtime itself.
//!
//! A static program has no dynamic loader to preload the runtime through.
//! The CLI runs a small dynamically linked host executable instead
//! (host/static_host.c), with the runtime preloaded, the program's own
//! argv, and [`STATIC_ENV`] naming the program. The runtime's constructor
//! takes the host over as usual, then, in place of returning to the
//! loader:
//! 1. maps the program's PT_LOAD segments as the kernel's ELF loader does
//!    (fs/binfmt_elf.c): ET_EXEC at its addresses, a static PIE (ET_DYN
//!    without PT_INTERP) at a base the kernel chooses, the bss zeroed; an
//!    executable stack if PT_GNU_STACK asks for one;
//! 2. turns the host's initial stack (argc, argv, envp, auxv, as the kernel
//!    built it for the host) into the program's: the same argv (the host was
//!    started with the program's), the same environment ([`STATIC_ENV`]
//!    renamed in place to [`LOADED_NAME`], so that programs it starts are
//!    not taken for hosts), and the auxiliary vector the kernel gives a
//!    static program: AT_PHDR/AT_PHENT/AT_PHNUM/AT_ENTRY the program's,
//!    AT_BASE 0, AT_EXECFN its path, AT_RANDOM 16 fresh bytes, the rest
//!    (AT_SYSINFO_EHDR, AT_HWCAP, AT_HWCAP2, AT_PAGESZ, AT_CLKTCK, AT_UID...,
//!    AT_SECURE, AT_PLATFORM, AT_MINSIGSTKSZ) this process's own;
//! 3. gives the thread the name the kernel would (the program's file name),
//!    unregisters the host's rseq area from it (the program registers its
//!    own), and starts the program at its entry point from the cache, with
//!    `fs` 0 and every register as the kernel leaves them
//!    (`asm::fs_start_program`). Nothing runs before the entry point.
//!
//! Differences from a program the kernel started: `/proc/self/exe` names
//! the host; the memory map holds the host, the runtime and the host's
//! libc. The heap (`brk`) is the runtime's: the kernel's `brk` lies after
//! the host, whose glibc (running the runtime's thread creation) may use it
//! too, so the program's `brk` calls are performed by the dispatcher on a
//! region right after the program's image ([`brk`]; the kernel puts a
//! non-PIE static program's after its image too, at a random distance).
//!
//! A static program that a counted one starts with `execve` is started the
//! same way: the dispatcher makes the call exec the host instead
//! ([`exec_in_host`]), the host's path coming from [`HOST_ENV`].

use crate::sys::{self, syscall6};
use std::os::unix::fs::FileExt;
use std::sync::Mutex;

/// Set by the CLI in the host's environment: the static program to load.
pub const STATIC_ENV: &str = "FLOPSCOPE_NATIVE_STATIC";
/// What [`STATIC_ENV`] is renamed to once the program is loaded (the same
/// length: renamed in place, the environment's layout unchanged).
pub const LOADED_NAME: &str = "FLOPSCOPE_NATIVE_LOADED";

const PAGE: u64 = 4096;
/// Address space kept for the program's heap after its image: `brk`
/// grows into it (and, beyond it, where nothing is mapped). Code cache
/// arenas go past it, still within reach of the program's code.
const BRK_RESERVE: u64 = 1 << 30;

const PT_LOAD: u32 = 1;
const PT_INTERP: u32 = 3;
const PT_PHDR: u32 = 6;
const PT_GNU_STACK: u32 = 0x6474_e551;
const ET_EXEC: u16 = 2;
const ET_DYN: u16 = 3;

const AT_PHDR: u64 = 3;
const AT_PHENT: u64 = 4;
const AT_PHNUM: u64 = 5;
const AT_BASE: u64 = 7;
const AT_ENTRY: u64 = 9;
const AT_RANDOM: u64 = 25;
const AT_EXECFN: u64 = 31;

fn page_down(a: u64) -> u64 {
    a & !(PAGE - 1)
}

fn page_up(a: u64) -> u64 {
    (a + PAGE - 1) & !(PAGE - 1)
}

/// The host's initial stack, as its constructor was given it, and the
/// program to load.
pub struct Request {
    /// The kernel's initial rsp for the host (the address of argc).
    pub sp: u64,
    envp: *mut *mut u8,
    /// The environment entry naming the program (`STATIC_ENV=path`).
    entry: *mut u8,
    pub path: std::path::PathBuf,
}

/// The program the host is to run, if it is a host: `argv` and `envp` are
/// what the loader passes constructors (the kernel's own arrays).
///
/// # Safety
/// `argv`/`envp` are the process's initial arrays, NULL-terminated.
pub unsafe fn requested(argc: i64, argv: *mut *mut u8, envp: *mut *mut u8) -> Option<Request> {
    if argv.is_null() || envp.is_null() || argc < 0 {
        return None;
    }
    use std::os::unix::ffi::OsStrExt;
    let prefix = format!("{STATIC_ENV}=");
    let mut e = envp;
    // SAFETY: per the contract.
    unsafe {
        while !(*e).is_null() {
            let s = std::ffi::CStr::from_ptr(*e as *const libc::c_char).to_bytes();
            if let Some(path) = s.strip_prefix(prefix.as_bytes()) {
                let sp = argv as u64 - 8;
                // The arrays are the kernel's: argc just below argv, envp
                // just after argv's NULL.
                if *(sp as *const i64) != argc || argv.add(argc as usize + 1) != envp {
                    return None;
                }
                return Some(Request {
                    sp,
                    envp,
                    entry: *e,
                    path: std::ffi::OsStr::from_bytes(path).into(),
                });
            }
            e = e.add(1);
        }
    }
    None
}

/// A loaded program: what its auxiliary vector says of it.
#[derive(Debug)]
pub struct Image {
    pub entry: u64,
    pub phdr: u64,
    pub phent: u64,
    pub phnum: u64,
    /// PT_GNU_STACK asks for an executable stack.
    pub exec_stack: bool,
}

struct Segment {
    flags: u32,
    offset: u64,
    vaddr: u64,
    filesz: u64,
    memsz: u64,
    align: u64,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn mmap(addr: u64, len: u64, prot: i32, flags: i32, fd: i64, off: u64) -> Result<u64, i64> {
    // SAFETY: mappings of the program's image, in ranges the loader
    // reserved for it (MAP_FIXED) or checked free (MAP_FIXED_NOREPLACE).
    let r = unsafe {
        syscall6(
            libc::SYS_mmap as u64,
            [addr, len, prot as u64, flags as u64, fd as u64, off],
        )
    };
    if (-4095..0).contains(&r) {
        Err(-r)
    } else {
        Ok(r as u64)
    }
}

/// `mmap` with MAP_FIXED_NOREPLACE at `addr`, checked (kernels before
/// 4.17 take the flag for a hint).
fn mmap_free(addr: u64, len: u64, prot: i32, flags: i32) -> Result<u64, i64> {
    let at = mmap(addr, len, prot, flags | libc::MAP_FIXED_NOREPLACE, -1, 0)?;
    if at != addr {
        sys::unmap(at as *mut u8, len as usize);
        return Err(libc::EEXIST as i64);
    }
    Ok(at)
}

fn prot_of(flags: u32) -> i32 {
    (if flags & 4 != 0 { libc::PROT_READ } else { 0 })
        | (if flags & 2 != 0 { libc::PROT_WRITE } else { 0 })
        | (if flags & 1 != 0 { libc::PROT_EXEC } else { 0 })
}

/// Maps the static program at `path`.
pub fn map(path: &std::path::Path) -> Result<Image, String> {
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open {shown}: {e}"))?;
    let read = |buf: &mut [u8], at: u64| {
        file.read_exact_at(buf, at)
            .map_err(|e| format!("cannot read {shown}: {e}"))
    };
    let mut eh = [0u8; 64];
    read(&mut eh, 0)?;
    if &eh[..4] != b"\x7fELF" || eh[4] != 2 || eh[5] != 1 || u16_at(&eh, 18) != 62 {
        return Err(format!("{shown} is not an x86-64 ELF executable"));
    }
    let kind = u16_at(&eh, 16);
    if kind != ET_EXEC && kind != ET_DYN {
        return Err(format!("{shown} is not an executable (ELF type {kind})"));
    }
    let (entry, phoff) = (u64_at(&eh, 24), u64_at(&eh, 32));
    let (phent, phnum) = (u16_at(&eh, 54) as usize, u16_at(&eh, 56) as usize);
    if phent < 56 || phnum == 0 {
        return Err(format!("{shown} has no program headers"));
    }
    let mut ph = vec![0u8; phent * phnum];
    read(&mut ph, phoff)?;
    let mut loads = Vec::new();
    let (mut phdr_vaddr, mut exec_stack) = (None, false);
    for p in ph.chunks(phent) {
        let seg = Segment {
            flags: u32_at(p, 4),
            offset: u64_at(p, 8),
            vaddr: u64_at(p, 16),
            filesz: u64_at(p, 32),
            memsz: u64_at(p, 40),
            align: u64_at(p, 48),
        };
        match u32_at(p, 0) {
            PT_LOAD => loads.push(seg),
            PT_INTERP => {
                return Err(format!(
                    "{shown} is dynamically linked: it is taken over through its loader"
                ))
            }
            PT_PHDR => phdr_vaddr = Some(seg.vaddr),
            PT_GNU_STACK => exec_stack = seg.flags & 1 != 0,
            _ => {}
        }
    }
    if loads.is_empty() {
        return Err(format!("{shown} has nothing to load (no PT_LOAD)"));
    }
    let lo = loads.iter().map(|s| page_down(s.vaddr)).min().unwrap_or(0);
    let hi = loads
        .iter()
        .map(|s| page_up(s.vaddr + s.memsz))
        .max()
        .unwrap_or(0);
    let none = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
    // The whole image's range first (nothing else may be there), then each
    // segment over it, in order, as the kernel maps them.
    let bias = if kind == ET_EXEC {
        mmap_free(lo, hi - lo, libc::PROT_NONE, none).map_err(|e| {
            format!(
                "cannot map {shown} at {lo:#x}..{hi:#x}: the range is taken in this process (errno {e})"
            )
        })?;
        0
    } else {
        let align = loads
            .iter()
            .map(|s| s.align)
            .max()
            .unwrap_or(PAGE)
            .max(PAGE)
            .next_power_of_two();
        let span = hi - lo + BRK_RESERVE;
        let at = mmap(0, span + align, libc::PROT_NONE, none, -1, 0)
            .map_err(|e| format!("cannot reserve address space for {shown} (errno {e})"))?;
        let base = (at + align - 1) & !(align - 1);
        if base > at {
            sys::unmap(at as *mut u8, (base - at) as usize);
        }
        if at + align > base {
            sys::unmap((base + span) as *mut u8, (at + align - base) as usize);
        }
        base - lo
    };
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd() as i64;
    for s in &loads {
        let start = bias + s.vaddr;
        let map_start = page_down(start);
        let file_end = start + s.filesz;
        let mem_end = start + s.memsz;
        let prot = prot_of(s.flags);
        let fixed = libc::MAP_PRIVATE | libc::MAP_FIXED;
        if s.filesz > 0 {
            mmap(
                map_start,
                page_up(file_end) - map_start,
                prot,
                fixed,
                fd,
                s.offset - (start - map_start),
            )
            .map_err(|e| format!("cannot map {shown}'s segment at {start:#x} (errno {e})"))?;
            // The bss's first bytes share the file's last page: zeroed.
            if s.memsz > s.filesz && file_end % PAGE != 0 {
                zero(file_end, page_up(file_end) - file_end, prot)?;
            }
        }
        let anon_from = if s.filesz > 0 {
            page_up(file_end)
        } else {
            map_start
        };
        if page_up(mem_end) > anon_from {
            mmap(
                anon_from,
                page_up(mem_end) - anon_from,
                prot,
                fixed | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
            .map_err(|e| format!("cannot map {shown}'s bss at {anon_from:#x} (errno {e})"))?;
        }
    }
    // The holes between segments are left unmapped, as the kernel leaves
    // them (its first mapping spans the image; it unmaps the rest).
    let mut spans: Vec<(u64, u64)> = loads
        .iter()
        .map(|s| (page_down(bias + s.vaddr), page_up(bias + s.vaddr + s.memsz)))
        .collect();
    spans.sort_unstable();
    let mut covered = bias + lo;
    for (from, to) in spans {
        if from > covered {
            sys::unmap(covered as *mut u8, (from - covered) as usize);
        }
        covered = covered.max(to);
    }
    let phdr = match phdr_vaddr {
        Some(v) => v,
        None => loads
            .iter()
            .find(|s| s.offset <= phoff && phoff < s.offset + s.filesz)
            .map_or(lo + phoff, |s| s.vaddr + (phoff - s.offset)),
    } + bias;
    heap_after(bias + hi, kind == ET_EXEC);
    Ok(Image {
        entry: entry + bias,
        phdr,
        phent: phent as u64,
        phnum: phnum as u64,
        exec_stack,
    })
}

/// Zeroes `len` bytes at `at` in a segment mapped with `prot`.
fn zero(at: u64, len: u64, prot: i32) -> Result<(), String> {
    let page = page_down(at);
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    let set = |p: i32| {
        // SAFETY: the segment's own page, just mapped.
        unsafe { syscall6(libc::SYS_mprotect as u64, [page, PAGE, p as u64, 0, 0, 0]) }
    };
    if prot & libc::PROT_WRITE == 0 && set(rw) != 0 {
        return Err(format!("cannot zero the bss at {at:#x}"));
    }
    // SAFETY: within the page just made writable (a private copy).
    unsafe { std::ptr::write_bytes(at as *mut u8, 0, len as usize) };
    if prot & libc::PROT_WRITE == 0 {
        set(prot);
    }
    Ok(())
}

/// The program's heap: its `brk` calls, performed by the dispatcher.
struct Heap {
    /// The initial break (the kernel's `start_brk`).
    start: u64,
    /// The current break.
    now: u64,
    /// The end of the reserved range (PROT_NONE where not in use).
    reserved_end: u64,
}

static HEAP: Mutex<Heap> = Mutex::new(Heap {
    start: 0,
    now: 0,
    reserved_end: 0,
});

/// The lock held, if free now (a fork's, see `fork`).
pub(crate) fn hold() -> Option<impl Sized> {
    crate::fork::try_guard(&HEAP)
}

/// Sets the heap up at `end` (the image's page-aligned end); the range
/// after it is reserved (for a static PIE, `map` reserved it already).
fn heap_after(end: u64, reserve: bool) {
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
    let reserved = !reserve || mmap_free(end, BRK_RESERVE, libc::PROT_NONE, flags).is_ok();
    let mut h = HEAP.lock().unwrap_or_else(|e| e.into_inner());
    *h = Heap {
        start: end,
        now: end,
        reserved_end: if reserved { end + BRK_RESERVE } else { end },
    };
}

/// The program's `brk(addr)`, as the kernel answers it (mm/mmap.c): the
/// break unchanged below the start or when the memory cannot be had, else
/// moved (pages past it returned, new pages zero).
pub fn brk(addr: u64) -> u64 {
    let mut h = HEAP.lock().unwrap_or_else(|e| e.into_inner());
    if addr < h.start {
        return h.now;
    }
    let (old_top, new_top) = (page_up(h.now), page_up(addr));
    let anon = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    if new_top > old_top {
        // Beyond the reservation: only where nothing is mapped.
        if new_top > h.reserved_end {
            let from = old_top.max(h.reserved_end);
            if mmap_free(from, new_top - from, rw, anon).is_err() {
                return h.now;
            }
        }
        let upto = new_top.min(h.reserved_end);
        if upto > old_top
            && mmap(old_top, upto - old_top, rw, anon | libc::MAP_FIXED, -1, 0).is_err()
        {
            return h.now;
        }
    } else if new_top < old_top {
        let upto = old_top.min(h.reserved_end);
        if upto > new_top {
            let flags = anon | libc::MAP_FIXED | libc::MAP_NORESERVE;
            let _ = mmap(new_top, upto - new_top, libc::PROT_NONE, flags, -1, 0);
        }
        if old_top > h.reserved_end {
            let from = new_top.max(h.reserved_end);
            sys::unmap(from as *mut u8, (old_top - from) as usize);
        }
    }
    h.now = addr;
    addr
}

/// Turns the host's initial stack into the program's (see the module's
/// doc), names the thread after the program and leaves the host's rseq.
///
/// # Safety
/// `req` is the host's initial stack, which nothing will read again as the
/// host's (the host never runs).
pub unsafe fn prepare(req: &Request, image: &Image) -> Result<(), String> {
    // SAFETY: the kernel's arrays, per the contract; the renamed entry keeps
    // its length.
    unsafe {
        std::ptr::copy_nonoverlapping(LOADED_NAME.as_ptr(), req.entry, LOADED_NAME.len());
        let path_ptr = req.entry as u64 + STATIC_ENV.len() as u64 + 1;
        let mut e = req.envp;
        while !(*e).is_null() {
            e = e.add(1);
        }
        let mut aux = e.add(1) as *mut u64;
        while *aux != 0 {
            let value = aux.add(1);
            match *aux {
                AT_PHDR => *value = image.phdr,
                AT_PHENT => *value = image.phent,
                AT_PHNUM => *value = image.phnum,
                AT_BASE => *value = 0,
                AT_ENTRY => *value = image.entry,
                AT_EXECFN => *value = path_ptr,
                AT_RANDOM => {
                    let r = syscall6(libc::SYS_getrandom as u64, [*value, 16, 0, 0, 0, 0]);
                    if r != 16 {
                        return Err("no random bytes for AT_RANDOM".into());
                    }
                }
                _ => {}
            }
            aux = aux.add(2);
        }
    }
    if image.exec_stack {
        // The kernel's executable stack (VM_EXEC on the whole stack mapping).
        let prot = libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC | libc::PROT_GROWSDOWN;
        // SAFETY: the stack's own pages.
        let r = unsafe {
            syscall6(
                libc::SYS_mprotect as u64,
                [page_down(req.sp), PAGE, prot as u64, 0, 0, 0],
            )
        };
        if r != 0 {
            return Err(format!(
                "the program asks for an executable stack, which the kernel refused (errno {})",
                -r
            ));
        }
    }
    // The kernel names a process after the file it runs (the first 15 bytes).
    use std::os::unix::ffi::OsStrExt;
    let base = req.path.file_name().map_or(&[][..], |n| n.as_bytes());
    let mut name = [0u8; 16];
    let n = base.len().min(15);
    name[..n].copy_from_slice(&base[..n]);
    // SAFETY: a NUL-terminated name of at most 16 bytes.
    unsafe {
        syscall6(
            libc::SYS_prctl as u64,
            [libc::PR_SET_NAME as u64, name.as_ptr() as u64, 0, 0, 0, 0],
        )
    };
    leave_rseq();
    Ok(())
}

/// Unregisters the rseq area the host's glibc registered for this thread:
/// the program's libc registers its own, as after exec (the kernel allows
/// one per thread).
fn leave_rseq() {
    const RSEQ_FLAG_UNREGISTER: u64 = 1;
    /// glibc's RSEQ_SIG on x86 (sysdeps/unix/sysv/linux/x86/bits/rseq.h).
    const RSEQ_SIG: u64 = 0x5305_3053;
    // SAFETY: dlsym of glibc's exported rseq variables (2.35+); absent in
    // older glibc, which registers none.
    let (offset, size) = unsafe {
        let off = libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_offset".as_ptr());
        let size = libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_size".as_ptr());
        if off.is_null() || size.is_null() {
            return;
        }
        (*(off as *const isize), *(size as *const u32))
    };
    if size == 0 {
        return;
    }
    let area = (crate::hostfs::current() as i64 + offset as i64) as u64;
    // glibc registers 32 bytes (the original struct rseq) or its size.
    for len in [32, u64::from(size)] {
        // SAFETY: unregisters this thread's area, which stays mapped.
        let r = unsafe {
            syscall6(
                libc::SYS_rseq as u64,
                [area, len, RSEQ_FLAG_UNREGISTER, RSEQ_SIG, 0, 0],
            )
        };
        if r == 0 {
            return;
        }
    }
}

/// Set by the CLI (and inherited): the host executable, for the static
/// programs the counted one starts with `execve`.
pub const HOST_ENV: &str = "FLOPSCOPE_NATIVE_HOST";

/// The program's registers an `execve` rewritten by [`exec_in_host`] had,
/// and the memory the rewritten call points at (kept until it returns).
pub struct ExecInHost {
    saved: [u64; 6],
    _host: std::ffi::CString,
    _entry: std::ffi::CString,
    _envp: Vec<u64>,
}

impl ExecInHost {
    /// The exec failed: the program's registers as it made the call.
    pub fn restore(self, ctx: &mut Context) {
        [ctx.rdi, ctx.rsi, ctx.rdx, ctx.r10, ctx.r8, ctx.r9] = self.saved;
    }
}

use crate::asm::Context;

/// An `execve` (or `execveat` of a path) of a statically linked program,
/// made to start the host instead, with [`STATIC_ENV`] naming the program
/// (the same argv; the program's environment plus that entry): the exec'd
/// program is loaded and counted as the first one was, in a counter file
/// of its own, where the kernel would have started it uncounted. Only
/// where exec'd programs are followed and the environment passed on keeps
/// the runtime (LD_PRELOAD and the counter file's variable), as for a
/// dynamically linked program. `None`: left as the program made it.
pub fn exec_in_host(ctx: &mut Context) -> Option<ExecInHost> {
    if !matches!(ctx.rax as i64, libc::SYS_execve | libc::SYS_execveat)
        || std::env::var_os(crate::NO_FOLLOW_ENV).is_some()
    {
        return None;
    }
    let host = std::env::var_os(HOST_ENV).filter(|h| !h.is_empty())?;
    let (path, argv, envp) = match ctx.rax as i64 {
        libc::SYS_execve => (ctx.rdi, ctx.rsi, ctx.rdx),
        // execveat(dirfd, path, argv, envp, flags): a path the cwd or `/`
        // resolves, as execve's.
        libc::SYS_execveat if ctx.r8 == 0 => {
            let path = sys::read_cstr(ctx.rsi, 4096)?;
            if ctx.rdi as i32 != libc::AT_FDCWD && !path.starts_with(b"/") {
                return None;
            }
            (ctx.rsi, ctx.rdx, ctx.r10)
        }
        _ => return None,
    };
    let path = sys::read_cstr(path, 4096)?;
    use std::os::unix::ffi::OsStrExt;
    if !is_static(std::ffi::OsStr::from_bytes(&path)) {
        return None;
    }
    let mut ptrs = sys::read_pointers(envp)?;
    let (mut preload, mut out) = (false, false);
    for &p in &ptrs {
        let mut head = [0u8; 32];
        let n = sys::read_self(p, &mut head);
        preload |= head[..n].starts_with(b"LD_PRELOAD=");
        out |= head[..n].starts_with(format!("{}=", crate::OUT_ENV).as_bytes());
    }
    if !(preload && out) {
        return None;
    }
    let host = std::ffi::CString::new(host.as_bytes()).ok()?;
    let mut entry = format!("{STATIC_ENV}=").into_bytes();
    entry.extend_from_slice(&path);
    let entry = std::ffi::CString::new(entry).ok()?;
    ptrs.push(entry.as_ptr() as u64);
    ptrs.push(0);
    let saved = [ctx.rdi, ctx.rsi, ctx.rdx, ctx.r10, ctx.r8, ctx.r9];
    ctx.rax = libc::SYS_execve as u64;
    ctx.rdi = host.as_ptr() as u64;
    ctx.rsi = argv;
    ctx.rdx = ptrs.as_ptr() as u64;
    Some(ExecInHost {
        saved,
        _host: host,
        _entry: entry,
        _envp: ptrs,
    })
}

/// Whether `path` is a statically linked x86-64 executable (an ELF
/// executable without PT_INTERP).
pub fn is_static(path: &std::ffi::OsStr) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut eh = [0u8; 64];
    if file.read_exact_at(&mut eh, 0).is_err()
        || &eh[..4] != b"\x7fELF"
        || eh[4] != 2
        || u16_at(&eh, 18) != 62
        || !matches!(u16_at(&eh, 16), ET_EXEC | ET_DYN)
    {
        return false;
    }
    let (phoff, phent, phnum) = (
        u64_at(&eh, 32),
        u16_at(&eh, 54) as usize,
        u16_at(&eh, 56) as usize,
    );
    if phent < 56 {
        return false;
    }
    let mut ph = vec![0u8; phent * phnum];
    if file.read_exact_at(&mut ph, phoff).is_err() {
        return false;
    }
    let types: Vec<u32> = ph.chunks(phent).map(|p| u32_at(p, 0)).collect();
    types.contains(&PT_LOAD) && !types.contains(&PT_INTERP)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A C program built with `flags` into `dir`.
    fn compile(dir: &std::path::Path, name: &str, flags: &[&str]) -> String {
        let src = dir.join("p.c");
        std::fs::write(
            &src,
            "int zeroed[4096]; int main(void) { return zeroed[100]; }\n",
        )
        .unwrap();
        let exe = dir.join(name);
        let ok = std::process::Command::new("gcc")
            .args(flags)
            .arg("-o")
            .arg(&exe)
            .arg(&src)
            .status()
            .expect("gcc runs (install gcc)")
            .success();
        assert!(ok, "gcc {flags:?} failed");
        exe.display().to_string()
    }

    fn mapping_of(addr: u64) -> Option<String> {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        maps.lines()
            .find(|l| {
                let (lo, hi) = l.split_once(' ').unwrap().0.split_once('-').unwrap();
                let (lo, hi) = (
                    u64::from_str_radix(lo, 16).unwrap(),
                    u64::from_str_radix(hi, 16).unwrap(),
                );
                lo <= addr && addr < hi
            })
            .map(str::to_string)
    }

    #[test]
    fn static_executables_are_mapped_as_the_kernel_maps_them_and_brk_behaves() {
        /// Removed however the test ends.
        struct Dir(std::path::PathBuf);
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
        let dir = Dir(std::env::temp_dir().join(format!("fs-loader-{}", std::process::id())));
        let dir = &dir.0;
        std::fs::create_dir_all(dir).unwrap();
        let exec = compile(dir, "exec", &["-O2", "-static", "-no-pie"]);
        let pie = compile(dir, "pie", &["-O2", "-static-pie"]);
        let dynamic = compile(dir, "dynamic", &["-O2"]);
        assert!(is_static(exec.as_ref()) && is_static(pie.as_ref()));
        assert!(!is_static(dynamic.as_ref()) && !is_static("/nonexistent".as_ref()));
        assert!(map(dynamic.as_ref())
            .unwrap_err()
            .contains("dynamically linked"));
        for path in [&exec, &pie] {
            let image = map(path.as_ref()).unwrap();
            let bytes = std::fs::read(path).unwrap();
            let phoff = u64_at(&bytes, 32) as usize;
            let len = (image.phent * image.phnum) as usize;
            // SAFETY: AT_PHDR's memory, just mapped.
            let phdr = unsafe { std::slice::from_raw_parts(image.phdr as *const u8, len) };
            assert_eq!(phdr, &bytes[phoff..phoff + len], "{path}: AT_PHDR");
            let text = mapping_of(image.entry).expect("the entry point is mapped");
            assert!(
                text.contains("r-xp") && text.ends_with(path.as_str()),
                "{text}"
            );
            if path == &exec {
                assert_eq!(image.entry, u64_at(&bytes, 24), "ET_EXEC at its address");
            }
            // The heap, right after the image: brk as the kernel answers it.
            let start = brk(0);
            assert_eq!(start % PAGE, 0);
            assert_eq!(brk(start + 10_000), start + 10_000);
            // SAFETY: the heap just grown.
            unsafe { std::ptr::write_bytes(start as *mut u8, 7, 10_000) };
            assert_eq!(brk(start + 100), start + 100, "shrinks");
            assert_eq!(brk(start + 3 * PAGE), start + 3 * PAGE, "grows again");
            // SAFETY: as above.
            let page2 = unsafe { *((start + 2 * PAGE) as *const u8) };
            assert_eq!(page2, 0, "pages given back come back zeroed");
            assert_eq!(
                brk(start - 1),
                start + 3 * PAGE,
                "below the start: unchanged"
            );
            // Beyond the reserved range: only where nothing is mapped.
            let end = start + BRK_RESERVE;
            let rw = libc::PROT_READ | libc::PROT_WRITE;
            let anon = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
            if let Ok(blocker) = mmap_free(end + 2 * PAGE, PAGE, rw, anon) {
                let past = end + 4 * PAGE;
                assert_eq!(brk(past), start + 3 * PAGE, "a mapping in the way");
                sys::unmap(blocker as *mut u8, PAGE as usize);
                if let Ok(free) = mmap_free(end, 4 * PAGE, rw, anon) {
                    sys::unmap(free as *mut u8, 4 * PAGE as usize);
                    assert_eq!(brk(past), past, "nothing in the way");
                }
            }
        }
    }
}
