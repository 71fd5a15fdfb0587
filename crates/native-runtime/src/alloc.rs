//! The runtime's own memory allocator: the dispatcher may run while the
//! program is inside `malloc` (holding its lock), so the runtime never calls
//! the program's allocator. Size classes from 16 bytes to 64 KiB come from
//! 1 MiB chunks mapped with `mmap`; larger blocks are mapped directly.

use crate::sys;
use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicBool, Ordering};

const CLASSES: usize = 13; // 16 << 12 = 64 KiB
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

fn class_of(size: usize) -> usize {
    let s = size.max(16).next_power_of_two();
    s.trailing_zeros() as usize - 4
}

/// The allocator of the preload library.
pub struct RuntimeAlloc;

unsafe impl GlobalAlloc for RuntimeAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let size = layout.size().max(layout.align());
        if size > 16 << (CLASSES - 1) || layout.align() > 4096 {
            return sys::map_anon(size.next_multiple_of(4096), false)
                .unwrap_or(std::ptr::null_mut());
        }
        let c = class_of(size);
        let bytes = 16usize << c;
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
            at = at.next_multiple_of(bytes);
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
                        return std::ptr::null_mut();
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
        let large = |n: usize| n > 16 << (CLASSES - 1) || layout.align() > 4096;
        let old = layout.size().max(layout.align());
        if large(old) && large(new_size) {
            // Large blocks are their own mappings: move them without copying.
            return sys::remap(
                ptr,
                old.next_multiple_of(4096),
                new_size.next_multiple_of(4096),
            )
            .unwrap_or(std::ptr::null_mut());
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
        let size = layout.size().max(layout.align());
        if size > 16 << (CLASSES - 1) || layout.align() > 4096 {
            sys::unmap(ptr, size.next_multiple_of(4096));
            return;
        }
        let c = class_of(size);
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
            assert_eq!(p as usize % 32, 0);
            a.dealloc(p, l);
            assert_eq!(a.alloc(l), p);
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
        assert_eq!(class_of(1), 0);
        assert_eq!(class_of(17), 1);
        assert_eq!(class_of(65536), 12);
    }
}
