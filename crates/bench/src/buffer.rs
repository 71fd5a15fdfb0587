//! Aligned fp64 arrays for the STREAM kernels.

use std::alloc::{alloc, dealloc, Layout};

/// An fp64 array aligned to 2 MiB and, when large, advised to the kernel as
/// a transparent-huge-page candidate (fewer TLB misses while streaming from
/// DRAM; Linux's default THP mode is `madvise`), starting `offset_lines` cache lines in, which keeps the arrays of one
/// kernel off the same 4 KiB offsets (4K aliasing of loads and stores).
pub struct Buffer {
    base: *mut u8,
    layout: Layout,
    data: *mut f64,
    len: usize,
}

// SAFETY: the buffer owns its memory; it is moved to, not shared between, threads.
unsafe impl Send for Buffer {}

impl Buffer {
    /// `len` elements set by the calling thread (first touch places the
    /// pages on its NUMA node) to `base x (1 + (i mod 1024) / 1024)`: values
    /// that differ from page to page (no page is a copy of another that a
    /// host could merge), with so few mantissa bits that the STREAM formulas
    /// are exact in any rounding, and made with integer operations only (so
    /// that counting the kernel counts no FLOP but the kernel's). `base` must
    /// be a power of two (or its negative).
    pub fn new(len: usize, offset_lines: usize, base_value: f64) -> Buffer {
        assert!(
            base_value != 0.0 && base_value.to_bits() & ((1 << 52) - 1) == 0,
            "{base_value} is not a power of two"
        );
        let offset = offset_lines * 64;
        let bytes = (len * 8 + offset).max(64);
        let layout = Layout::from_size_align(bytes, 2 << 20).expect("array size fits a layout");
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { alloc(layout) };
        if base.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        if bytes >= 4 << 20 {
            // SAFETY: advice on memory this buffer owns; failure only loses the advice.
            unsafe { libc::madvise(base.cast(), bytes, libc::MADV_HUGEPAGE) };
        }
        // SAFETY: `offset + len * 8` bytes fit in the allocation.
        let data = unsafe { base.add(offset) } as *mut f64;
        let mut b = Buffer {
            base,
            layout,
            data,
            len,
        };
        for (i, x) in b.as_mut_slice().iter_mut().enumerate() {
            *x = value_at(base_value, i);
        }
        b
    }

    pub fn as_ptr(&self) -> *const f64 {
        self.data
    }

    pub fn as_mut_ptr(&mut self) -> *mut f64 {
        self.data
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_mut_slice(&mut self) -> &mut [f64] {
        // SAFETY: `data` holds `len` elements owned by this buffer.
        unsafe { std::slice::from_raw_parts_mut(self.data, self.len) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.base, self.layout) }
    }
}

/// The value [`Buffer::new`] puts at index `i` for `base`.
pub fn value_at(base: f64, i: usize) -> f64 {
    f64::from_bits(base.to_bits() | ((i as u64 % 1024) << 42))
}
