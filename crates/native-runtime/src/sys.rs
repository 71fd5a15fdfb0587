//! System calls the runtime makes itself, through the raw `syscall`
//! instruction (no dependency on the program's libc state).

use std::arch::asm;

/// A raw system call with up to six arguments; returns the kernel's value
/// (negative errno on failure).
///
/// # Safety
/// The call's effects are the caller's responsibility.
#[inline]
pub unsafe fn syscall6(nr: u64, a: [u64; 6]) -> i64 {
    let ret: i64;
    // SAFETY: per the contract.
    unsafe {
        asm!("syscall",
            inlateout("rax") nr as i64 => ret,
            in("rdi") a[0], in("rsi") a[1], in("rdx") a[2],
            in("r10") a[3], in("r8") a[4], in("r9") a[5],
            lateout("rcx") _, lateout("r11") _,
            options(nostack));
    }
    ret
}

pub fn map_anon(len: usize, exec: bool) -> Option<*mut u8> {
    let prot = libc::PROT_READ | libc::PROT_WRITE | if exec { libc::PROT_EXEC } else { 0 };
    map_at(
        0,
        len,
        prot,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
    )
}

/// `mmap` of anonymous memory, at `hint` if non-zero.
pub fn map_at(hint: u64, len: usize, prot: i32, flags: i32) -> Option<*mut u8> {
    // SAFETY: anonymous mapping; no existing memory is touched unless the
    // caller passes MAP_FIXED, which it does not.
    let r = unsafe {
        syscall6(
            libc::SYS_mmap as u64,
            [hint, len as u64, prot as u64, flags as u64, u64::MAX, 0],
        )
    };
    (!(-4095..=0).contains(&r)).then_some(r as *mut u8)
}

/// `mremap` with MREMAP_MAYMOVE.
pub fn remap(p: *mut u8, old: usize, new: usize) -> Option<*mut u8> {
    // SAFETY: the caller owns the mapping; the kernel moves it whole.
    let r = unsafe {
        syscall6(
            libc::SYS_mremap as u64,
            [
                p as u64,
                old as u64,
                new as u64,
                libc::MREMAP_MAYMOVE as u64,
                0,
                0,
            ],
        )
    };
    (!(-4095..=0).contains(&r)).then_some(r as *mut u8)
}

pub fn unmap(p: *mut u8, len: usize) {
    // SAFETY: the caller owns the mapping.
    unsafe { syscall6(libc::SYS_munmap as u64, [p as u64, len as u64, 0, 0, 0, 0]) };
}

/// Writes all of `b` to `fd`, ignoring errors (diagnostics only).
pub fn write_all(fd: i32, mut b: &[u8]) {
    while !b.is_empty() {
        // SAFETY: writing from a valid buffer.
        let n = unsafe {
            syscall6(
                libc::SYS_write as u64,
                [fd as u64, b.as_ptr() as u64, b.len() as u64, 0, 0, 0],
            )
        };
        if n <= 0 {
            return;
        }
        b = &b[n as usize..];
    }
}

pub fn getpid() -> u64 {
    // SAFETY: no arguments, no effects.
    unsafe { syscall6(libc::SYS_getpid as u64, [0; 6]) as u64 }
}

pub fn gettid() -> u64 {
    // SAFETY: no arguments, no effects.
    unsafe { syscall6(libc::SYS_gettid as u64, [0; 6]) as u64 }
}

/// Whether no thread or process has the id `tid` any more: kill(tid, 0)
/// finds threads and CLONE_VM processes alike (tgkill would miss the
/// latter, which share the runtime's memory as threads do).
pub fn id_gone(tid: u64) -> bool {
    // SAFETY: signal 0 only checks that the id exists.
    unsafe { syscall6(libc::SYS_kill as u64, [tid, 0, 0, 0, 0, 0]) == -(libc::ESRCH as i64) }
}

/// Sets this thread's `gs` base.
pub fn set_gs(base: u64) {
    // SAFETY: gs belongs to the runtime (the program's own use is refused).
    unsafe { syscall6(libc::SYS_arch_prctl as u64, [0x1001, base, 0, 0, 0, 0]) };
}

/// One `process_vm_readv` or `process_vm_writev` (`nr`) on this process:
/// `len` bytes between `local` and `remote`; the kernel's result (bytes
/// moved, or a negative errno where nothing could be).
fn process_vm(nr: i64, local: *const u8, remote: u64, len: usize) -> i64 {
    let local = libc::iovec {
        iov_base: local as *mut libc::c_void,
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: remote as *mut libc::c_void,
        iov_len: len,
    };
    let (local, remote) = (&local as *const _ as u64, &remote as *const _ as u64);
    // SAFETY: the kernel checks the remote range; the local one is the
    // caller's.
    unsafe { syscall6(nr as u64, [getpid(), local, 1, remote, 1, 0]) }
}

/// `rt_sigprocmask(how, &set, &old)` on this thread's mask; returns the
/// mask before.
pub fn sigmask(how: i32, set: u64) -> u64 {
    let mut old = 0u64;
    // SAFETY: changes this thread's mask; the caller restores it as it needs.
    unsafe {
        syscall6(
            libc::SYS_rt_sigprocmask as u64,
            [
                how as u64,
                &set as *const u64 as u64,
                &mut old as *mut u64 as u64,
                8,
                0,
                0,
            ],
        )
    };
    old
}

/// Reads up to `buf.len()` bytes of this process's memory at `addr`
/// without faulting, a page at a time; returns how many could be read
/// (stopping at the first page the kernel cannot read).
pub fn read_self(addr: u64, buf: &mut [u8]) -> usize {
    let mut done = 0;
    while done < buf.len() {
        let at = addr as usize + done;
        let len = ((at | 4095) + 1 - at).min(buf.len() - done);
        let k = process_vm(
            libc::SYS_process_vm_readv,
            buf[done..].as_mut_ptr(),
            at as u64,
            len,
        );
        if k <= 0 {
            break;
        }
        done += k as usize;
    }
    done
}

/// The NUL-terminated string at `at` in this process, read without
/// faulting, of at most `max` bytes; `None` if no NUL ends it there.
pub fn read_cstr(at: u64, max: usize) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; max];
    let n = read_self(at, &mut buf);
    let len = buf[..n].iter().position(|b| *b == 0)?;
    buf.truncate(len);
    Some(buf)
}

/// The pointers of the NULL-terminated array at `at` (an exec's argv or
/// envp), read without faulting; a null `at` is an empty array. `None`
/// when the array cannot be read (the kernel answers EFAULT).
pub fn read_pointers(at: u64) -> Option<Vec<u64>> {
    let mut out = Vec::new();
    if at == 0 {
        return Some(out);
    }
    loop {
        let mut w = [0u8; 8];
        if read_self(at + 8 * out.len() as u64, &mut w) != 8 {
            return None;
        }
        match u64::from_le_bytes(w) {
            0 => return Some(out),
            p => out.push(p),
        }
    }
}

/// Writes `data` into this process's memory at `addr` without faulting;
/// returns how many bytes were written.
pub fn write_self(addr: u64, data: &[u8]) -> usize {
    let k = process_vm(libc::SYS_process_vm_writev, data.as_ptr(), addr, data.len());
    k.max(0) as usize
}

/// `what` (the engine could not map memory of its own), with the likely
/// cause where the process's address space is limited (`ulimit -v`, a batch
/// system's virtual-memory limit): the engine maps up to some 800 MiB
/// beside the program's own (the code cache near the program and near its
/// libraries, the tables, the counters, the samples), which a limit the
/// program alone fits in may not leave.
pub fn no_memory(what: &str) -> String {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: reads this process's limit into `lim`.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0;
    if !read || lim.rlim_cur == libc::RLIM_INFINITY {
        return what.to_string();
    }
    format!(
        "{what}: the address space is limited to {} MiB (ulimit -v), and the engine maps up to some 800 MiB of its own beside the program's; raise the limit, or count with --engine emulate",
        lim.rlim_cur >> 20
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stop_at_unreadable_memory() {
        let data = *b"region name\0";
        let mut buf = [0u8; 12];
        assert_eq!(read_self(data.as_ptr() as u64, &mut buf), 12);
        assert_eq!(&buf, &data);
        assert_eq!(read_self(8, &mut buf), 0);
        // Two pages mapped, the second unmapped again: a read across stops there.
        let p = map_anon(8192, false).unwrap();
        // SAFETY: the second page of our own mapping.
        unmap(unsafe { p.add(4096) }, 4096);
        // SAFETY: the first page, still mapped.
        unsafe { *p.add(4090) = 7 };
        assert_eq!(read_self(p as u64 + 4090, &mut buf), 6);
        assert_eq!(buf[0], 7);
        unmap(p, 4096);
    }
}
