//! The engine's variables passed on to a program the counted one execs with
//! an environment of its own.
//!
//! An exec'd program is followed through its environment: `LD_PRELOAD`
//! loads the runtime into it and `FLOPSCOPE_NATIVE_OUT` names the counter
//! file (and `FLOPSCOPE_NATIVE_HOST` starts a static program in the host).
//! A program that execs with an environment it built (`execve` with a short
//! list, `env -i`, Python's `subprocess.run(env=...)`) dropped them, and its
//! child ran uncounted without a word. So the runtime keeps the variables
//! flopscope set (`LD_PRELOAD` and every `FLOPSCOPE_*` but the static
//! program to load; `GLIBC_TUNABLES` when features are hidden, see
//! [`capture`]), as the process started, and an `execve`/`execveat`
//! whose environment lacks one gets it added (an `LD_PRELOAD` of the
//! program's own gets the runtime's list in front); the program's own
//! pointer is given back if the exec fails. Under `--no-follow` nothing is
//! added.
//!
//! The program itself no longer sees the runtime in its `LD_PRELOAD`
//! ([`hide_runtime`]): a program that passes its environment on to code it
//! loads without exec (QEMU's user mode to its guest) loaded the runtime
//! into that code too, which then counted itself into the same file.

use crate::sys;
use std::sync::OnceLock;

/// "NAME=value" of each variable kept, NUL-terminated.
static KEPT: OnceLock<Vec<Vec<u8>>> = OnceLock::new();

/// Keeps the engine's variables from the environment the process started
/// with; at the take-over, before the program runs.
///
/// Under `FLOPSCOPE_HIDE_CPU_FEATURES`, `GLIBC_TUNABLES` too: flopscope
/// set it to keep glibc off the hidden features (engine-native's
/// `glibc_tunables`), which a program exec'd with a cleared environment
/// would otherwise use in its C library's start-up, and stop there.
pub fn capture() {
    use std::os::unix::ffi::OsStrExt;
    let hiding = std::env::var_os(crate::cpu::HIDE_ENV).is_some();
    let _ = KEPT.set(
        std::env::vars_os()
            .filter(|(k, _)| {
                k == "LD_PRELOAD"
                    || k.as_bytes().starts_with(b"FLOPSCOPE_")
                    || (hiding && k == "GLIBC_TUNABLES")
            })
            // The static program this process was started to load: each
            // exec names its own (loader.rs, `exec_in_host`).
            .filter(|(k, _)| k != crate::loader::STATIC_ENV)
            .map(|(k, v)| {
                let mut e = k.as_bytes().to_vec();
                e.push(b'=');
                e.extend_from_slice(v.as_bytes());
                e.push(0);
                e
            })
            .collect(),
    );
}

/// The runtime's path in the kept `LD_PRELOAD=...` entry `e` (NUL-ended):
/// its list's first entry, which flopscope puts there.
fn runtime_in(e: &[u8]) -> &[u8] {
    let list = &e[b"LD_PRELOAD=".len()..e.len() - 1];
    list.split(|b| *b == b':').next().unwrap_or(list)
}

/// Takes the runtime (the first entry of the `LD_PRELOAD` flopscope set)
/// out of the program's `LD_PRELOAD`, once [`capture`] has kept it for
/// the programs the counted one execs. The value is edited in place (it
/// only gets shorter); an `LD_PRELOAD` that held the runtime alone is left
/// set and empty: removing the entry would move the array's end, and code
/// that finds the auxiliary vector past the environment's NULL (Go's
/// runtime does) would find another NULL there.
///
/// # Safety
/// `envp`: the process's initial environment array (the C library's
/// `environ`, or a static program's), with one thread running.
pub unsafe fn hide_runtime(envp: *mut *mut u8) {
    let Some(runtime) = KEPT
        .get()
        .and_then(|kept| kept.iter().find(|e| name(e) == b"LD_PRELOAD"))
        .map(|e| runtime_in(e))
        .filter(|r| !r.is_empty())
    else {
        return;
    };
    let mut at = envp;
    // SAFETY: a NULL-terminated array of NUL-terminated strings, per the
    // contract; the edit shortens its string in place.
    unsafe {
        while !(*at).is_null() {
            let entry = *at;
            let len = libc::strlen(entry.cast());
            let text = std::slice::from_raw_parts_mut(entry, len + 1);
            if name(text) == b"LD_PRELOAD" {
                let start = b"LD_PRELOAD=".len();
                let kept: Vec<u8> = text[start..len]
                    .split(|b| *b == b':' || *b == b' ')
                    .filter(|v| !v.is_empty() && *v != runtime)
                    .collect::<Vec<_>>()
                    .join(&b':');
                text[start..start + kept.len()].copy_from_slice(&kept);
                text[start + kept.len()] = 0;
                return;
            }
            at = at.add(1);
        }
    }
}

/// An exec's environment as the engine rewrote it: the arrays it points
/// at, and the program's own pointer, to give back.
pub struct Rewritten {
    register_was: u64,
    _entries: Vec<Vec<u8>>,
    _pointers: Vec<u64>,
}

/// The name of an entry `NAME=value` (up to the `=`).
fn name(entry: &[u8]) -> &[u8] {
    entry.split(|b| *b == b'=').next().unwrap_or(entry)
}

/// For the system call in `ctx` (an `execve`, or an `execveat`): adds the
/// kept variables its environment lacks; `None` when it lacks none, or is
/// no exec the engine follows.
pub fn add_engine_env(ctx: &mut crate::asm::Context) -> Option<Rewritten> {
    let register: &mut u64 = match ctx.rax as i64 {
        libc::SYS_execve => &mut ctx.rdx,
        libc::SYS_execveat => &mut ctx.r10,
        _ => return None,
    };
    let kept = KEPT.get()?;
    if kept
        .iter()
        .any(|e| name(e) == crate::NO_FOLLOW_ENV.as_bytes())
    {
        return None;
    }
    // A null environment is an empty one (glibc's `clearenv` leaves one).
    let mut pointers = sys::read_pointers(*register)?;
    let mut names = Vec::with_capacity(pointers.len());
    let mut their_preload = None;
    for (at, &p) in pointers.iter().enumerate() {
        let head = sys::read_cstr(p, 256).unwrap_or_default();
        if name(&head) == b"LD_PRELOAD" {
            their_preload = Some((at, p));
        }
        names.push(name(&head).to_vec());
    }
    let mut entries = Vec::new();
    for e in kept {
        let n = name(e);
        if n == b"LD_PRELOAD" {
            if let Some((at, p)) = their_preload {
                let theirs = sys::read_cstr(p, 64 << 10)?;
                let ours = &e[..e.len() - 1];
                let first = runtime_in(e);
                if !theirs.windows(first.len().max(1)).any(|w| w == first) {
                    let mut merged = ours.to_vec();
                    merged.push(b':');
                    merged.extend_from_slice(&theirs[b"LD_PRELOAD=".len()..]);
                    merged.push(0);
                    pointers[at] = merged.as_ptr() as u64;
                    entries.push(merged);
                }
                continue;
            }
        }
        if !names.iter().any(|x| x.as_slice() == n) {
            pointers.push(e.as_ptr() as u64);
        }
    }
    if entries.is_empty() && pointers.len() == names.len() {
        return None;
    }
    pointers.push(0);
    let was = *register;
    *register = pointers.as_ptr() as u64;
    Some(Rewritten {
        register_was: was,
        _entries: entries,
        _pointers: pointers,
    })
}

impl Rewritten {
    /// The program's own environment pointer back in its register (the
    /// exec failed and the program goes on).
    pub fn restore(self, ctx: &mut crate::asm::Context, nr: i64) {
        match nr {
            libc::SYS_execve => ctx.rdx = self.register_was,
            _ => ctx.r10 = self.register_was,
        }
    }
}
