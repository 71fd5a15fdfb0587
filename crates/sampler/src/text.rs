//! Allocation-free text helpers for the preload library (which runs them in
//! a signal handler and in a forked child), kept here so that `cargo test`
//! checks them without the `preload` feature.

#![cfg_attr(not(feature = "preload"), allow(dead_code))]

/// A NUL-terminated byte string of at most `N - 1` bytes (a path, a message).
pub struct FixedBuf<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> FixedBuf<N> {
    pub const fn new() -> Self {
        FixedBuf {
            bytes: [0; N],
            len: 0,
        }
    }

    pub fn clear(&mut self) {
        self.len = 0;
        self.bytes[0] = 0;
    }

    /// Appends `s`; false (and unchanged) when it does not fit.
    pub fn push(&mut self, s: &[u8]) -> bool {
        let end = self.len + s.len();
        if end >= N {
            return false;
        }
        self.bytes[self.len..end].copy_from_slice(s);
        self.bytes[end] = 0;
        self.len = end;
        true
    }

    /// Appends `v` in decimal.
    pub fn push_dec(&mut self, v: u64) -> bool {
        let mut digits = [0u8; 20];
        self.push(format_dec(v, &mut digits))
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// The string with its terminating NUL, for system calls.
    pub fn as_ptr(&self) -> *const libc::c_char {
        self.bytes.as_ptr().cast()
    }
}

/// `v` in decimal, in the end of `buf`.
pub fn format_dec(mut v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return &buf[i..];
        }
    }
}

/// A whole decimal number (digits only), None on anything else or overflow.
pub fn parse_dec(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0u64, |acc, &b| {
        if b.is_ascii_digit() {
            acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

fn parse_hex(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    s.iter().try_fold(0u64, |acc, &b| {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        Some(acc << 4 | u64::from(d))
    })
}

/// The address range `[start, end)` of a /proc/self/maps line (without its
/// newline) when the mapping is executable, else None.
pub fn executable_range(line: &[u8]) -> Option<(u64, u64)> {
    let mut fields = line.split(|&b| b == b' ');
    let range = fields.next()?;
    let perms = fields.next()?;
    if perms.get(2) != Some(&b'x') {
        return None;
    }
    let dash = range.iter().position(|&b| b == b'-')?;
    let start = parse_hex(&range[..dash])?;
    let end = parse_hex(&range[dash + 1..])?;
    (start < end).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal() {
        let mut b = [0u8; 20];
        assert_eq!(format_dec(0, &mut b), b"0");
        assert_eq!(format_dec(4_194_304, &mut b), b"4194304");
        assert_eq!(format_dec(u64::MAX, &mut b), b"18446744073709551615");
        assert_eq!(parse_dec(b"1000"), Some(1000));
        assert_eq!(parse_dec(b"18446744073709551616"), None);
        for bad in [&b""[..], b"-1", b"1e3", b" 1", b"1.5"] {
            assert_eq!(parse_dec(bad), None);
        }
    }

    #[test]
    fn fixed_buf() {
        let mut p = FixedBuf::<16>::new();
        assert!(p.push(b"/tmp/"));
        assert!(p.push_dec(42));
        assert_eq!(p.as_bytes(), b"/tmp/42");
        // Full: 15 bytes and the NUL.
        assert!(!p.push(b"123456789"));
        assert!(p.push(b"12345678"));
        assert_eq!(p.as_bytes().len(), 15);
        // SAFETY: the buffer keeps a NUL after its bytes.
        let c = unsafe { std::ffi::CStr::from_ptr(p.as_ptr()) };
        assert_eq!(c.to_bytes(), b"/tmp/4212345678");
        p.clear();
        assert_eq!(p.as_bytes(), b"");
    }

    #[test]
    fn maps_lines() {
        let text = "\
55d0c6a00000-55d0c6a01000 r--p 00000000 fe:01 1234   /tmp/x/prog
55d0c6a01000-55d0c6a02000 r-xp 00001000 fe:01 1234   /tmp/x/prog
7ffd1c5f0000-7ffd1c611000 rw-p 00000000 00:00 0      [stack]
7ffd1c7f2000-7ffd1c7f4000 r-xp 00000000 00:00 0      [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]";
        let ranges: Vec<_> = text
            .lines()
            .filter_map(|l| executable_range(l.as_bytes()))
            .collect();
        assert_eq!(
            ranges,
            [
                (0x55d0c6a01000, 0x55d0c6a02000),
                (0x7ffd1c7f2000, 0x7ffd1c7f4000),
                (0xffffffffff600000, 0xffffffffff601000)
            ]
        );
        assert_eq!(executable_range(b"garbage"), None);
        assert_eq!(executable_range(b"zz-10 r-xp 0 0 0"), None);
    }
}
