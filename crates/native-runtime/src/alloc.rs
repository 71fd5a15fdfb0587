//! The runtime's own memory allocator: the dispatcher may run while the
//! program is inside `malloc` (holding its lock), so the runtime never calls
//! the program's allocator. Size classes come from 1 MiB chunks mapped with
//! `mmap`: every multiple of 16 bytes up to 256 (the decoder's tables are
//! thousands of small blocks, and each page they touch is a page fault;
//! and every translated block keeps a few vectors of 100 to 250 bytes for
//! the whole run: rounded to powers of two, gcc's cc1 used 7 MB more),
//! then powers of two up to 64 KiB; larger blocks are mapped directly.

use crate::sys;
use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicBool, Ordering};

/// Classes 0..16: 16, 32, ... 256 bytes, 16-aligned; then 256 << (c - 16),
/// aligned to their size, up to 64 KiB (over-aligned small blocks too).
const FINE: usize = 16;
const CLASSES: usize = FINE + 9;
const LARGEST: usize = 64 << 10;
const CHUNK: usize = 1 << 20;

struct State {
    free: [*mut u8; CLASSES],
    next: *mut u8,
    end: *mut u8,
}

static LOCK: AtomicBool = AtomicBool::new(false);
static mut STATE: State = State {
    free: [std::ptr::null_mut(); CLASSES],
    next: std::ptr::null_mut(),
    end: std::ptr::null_mut(),
};

fn lock() {
    while LOCK
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        std::hint::spin_loop();
    }
}

fn unlock() {
    LOCK.store(false, Ordering::Release);
}

/// The allocator's lock, held until dropped (a fork's, see `fork`).
pub(crate) struct Held(());

impl Drop for Held {
    fn drop(&mut self) {
        unlock();
    }
}

/// The allocator's lock held, if free now.
pub(crate) fn hold() -> Option<Held> {
    LOCK.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
        .then_some(Held(()))
}

/// The class of a block of `size` bytes aligned to `align` (both at most
/// LARGEST), and its size.
fn class_of(size: usize, align: usize) -> (usize, usize) {
    let size = size.max(1);
    if size <= 16 * FINE && align <= 16 {
        let c = size.div_ceil(16) - 1;
        return (c, 16 * (c + 1));
    }
    let s = size.max(align).max(256).next_power_of_two();
    (FINE + s.trailing_zeros() as usize - 8, s)
}

fn is_large(size: usize, align: usize) -> bool {
    size > LARGEST || align > 4096
}

/// A failed allocation (null, on which Rust aborts the process), said
/// first in words the user can act on. Nothing is allocated here.
fn out_of_memory() -> *mut u8 {
    sys::write_all(
        2,
        b"flopscope: the native engine could not map memory of its own; if the address space \
          is limited (ulimit -v), raise the limit, or count with --engine emulate\n",
    );
    std::ptr::null_mut()
}

/// The allocator of the preload library.
pub struct RuntimeAlloc;

unsafe impl GlobalAlloc for RuntimeAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let (size, align) = (layout.size(), layout.align());
        if is_large(size, align) {
            return sys::map_anon(size.max(align).next_multiple_of(4096), false)
                .unwrap_or_else(out_of_memory);
        }
        let (c, bytes) = class_of(size, align);
        lock();
        // SAFETY: STATE is only touched under LOCK.
        let st = unsafe { &mut *std::ptr::addr_of_mut!(STATE) };
        let p = if !st.free[c].is_null() {
            let p = st.free[c];
            // SAFETY: a free block holds the next free block's address.
            st.free[c] = unsafe { *(p as *mut *mut u8) };
            p
        } else {
            let mut at = st.next as usize;
            at = at.next_multiple_of(if c < FINE { 16 } else { bytes });
            if st.next.is_null() || at + bytes > st.end as usize {
                match sys::map_anon(CHUNK, false) {
                    Some(c) => {
                        st.next = c;
                        // SAFETY: end of the chunk just mapped.
                        st.end = unsafe { c.add(CHUNK) };
                        at = c as usize;
                    }
                    None => {
                        unlock();
                        return out_of_memory();
                    }
                }
            }
            st.next = (at + bytes) as *mut u8;
            at as *mut u8
        };
        unlock();
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let (old, align) = (layout.size(), layout.align());
        if is_large(old, align) && is_large(new_size, align) {
            // Large blocks are their own mappings: move them without copying.
            return sys::remap(
                ptr,
                old.max(align).next_multiple_of(4096),
                new_size.max(align).next_multiple_of(4096),
            )
            .unwrap_or_else(out_of_memory);
        }
        if !is_large(old, align) && class_of(old, align) == class_of(new_size, align) {
            return ptr; // the block already has room
        }
        // SAFETY: the default: a new block, the bytes copied, the old freed.
        unsafe {
            let new = self.alloc(Layout::from_size_align_unchecked(new_size, layout.align()));
            if !new.is_null() {
                std::ptr::copy_nonoverlapping(ptr, new, old.min(new_size));
                self.dealloc(ptr, layout);
            }
            new
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let (size, align) = (layout.size(), layout.align());
        if is_large(size, align) {
            sys::unmap(ptr, size.max(align).next_multiple_of(4096));
            return;
        }
        let (c, _) = class_of(size, align);
        lock();
        // SAFETY: STATE is only touched under LOCK; ptr is a free block of class c.
        unsafe {
            let st = &mut *std::ptr::addr_of_mut!(STATE);
            *(ptr as *mut *mut u8) = st.free[c];
            st.free[c] = ptr;
        }
        unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_reused_and_distinct() {
        let a = RuntimeAlloc;
        let l = Layout::from_size_align(24, 8).unwrap();
        unsafe {
            let p = a.alloc(l);
            let q = a.alloc(l);
            assert_ne!(p, q);
            assert_eq!(p as usize % 16, 0);
            assert_eq!(q as usize - p as usize, 32, "24 bytes take a 32-byte block");
            a.dealloc(p, l);
            assert_eq!(a.alloc(l), p);
            assert_eq!(a.realloc(p, l, 30), p, "room in the same block");
            let over = Layout::from_size_align(24, 64).unwrap();
            assert_eq!(a.alloc(over) as usize % 64, 0);
            let big = Layout::from_size_align(1 << 20, 64).unwrap();
            let b = a.alloc(big);
            std::ptr::write_bytes(b, 7, 1 << 20);
            let bigger = a.realloc(b, big, 4 << 20);
            assert_eq!(*bigger.add((1 << 20) - 1), 7, "contents kept when moved");
            a.dealloc(bigger, Layout::from_size_align(4 << 20, 64).unwrap());
            let small = a.alloc(l);
            *small = 9;
            let grown = a.realloc(small, l, 200);
            assert_eq!(*grown, 9);
            a.dealloc(grown, Layout::from_size_align(200, 8).unwrap());
        }
        assert_eq!(class_of(1, 1), (0, 16));
        assert_eq!(class_of(17, 8), (1, 32));
        assert_eq!(class_of(40, 8), (2, 48));
        assert_eq!(class_of(128, 16), (7, 128));
        assert_eq!(class_of(129, 8), (8, 144));
        assert_eq!(class_of(256, 8), (15, 256));
        assert_eq!(class_of(257, 8), (17, 512));
        assert_eq!(
            class_of(24, 64),
            (16, 256),
            "over-aligned: a power-of-two class"
        );
        assert_eq!(class_of(65536, 8), (24, 65536));
        assert!(is_large(65537, 8) && is_large(8, 8192) && !is_large(65536, 4096));
    }
}
