//! The kernel's perf_event ABI, spelled as in `include/uapi/linux/perf_event.h`.
//! Only what this engine uses: counting and sampling raw, generic and software
//! events, and the ring buffer's record types (parsed in [`crate::records`]).
#![allow(non_camel_case_types)]

use std::io;

/// `struct perf_event_attr` up to `sig_data` (PERF_ATTR_SIZE_VER7, 128 bytes):
/// the kernel accepts any published size, and `config3` (VER8) is not needed.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct perf_event_attr {
    pub type_: u32,
    pub size: u32,
    pub config: u64,
    pub sample_period: u64,
    pub sample_type: u64,
    pub read_format: u64,
    /// The bit-field word: `disabled` is bit 0 (see the `ATTR_*` constants).
    pub flags: u64,
    pub wakeup_events: u32,
    pub bp_type: u32,
    pub config1: u64,
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub __reserved_2: u16,
    pub aux_sample_size: u32,
    pub __reserved_3: u32,
    pub sig_data: u64,
}

pub const PERF_ATTR_SIZE_VER7: u32 = 128;
const _: () = assert!(std::mem::size_of::<perf_event_attr>() == PERF_ATTR_SIZE_VER7 as usize);

pub const PERF_TYPE_HARDWARE: u32 = 0;
pub const PERF_TYPE_SOFTWARE: u32 = 1;
pub const PERF_TYPE_RAW: u32 = 4;
pub const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
pub const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
pub const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;
pub const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
/// Counts nothing: carries the side-band records (mmap, comm, fork).
pub const PERF_COUNT_SW_DUMMY: u64 = 9;
/// Generic hardware events name a hybrid PMU in config bits 32-63 (Linux 5.13+).
pub const PERF_PMU_TYPE_SHIFT: u32 = 32;

pub const ATTR_DISABLED: u64 = 1 << 0;
pub const ATTR_INHERIT: u64 = 1 << 1;
pub const ATTR_EXCLUDE_KERNEL: u64 = 1 << 5;
pub const ATTR_EXCLUDE_HV: u64 = 1 << 6;
pub const ATTR_MMAP: u64 = 1 << 8;
pub const ATTR_COMM: u64 = 1 << 9;
pub const ATTR_ENABLE_ON_EXEC: u64 = 1 << 12;
/// PERF_RECORD_FORK and PERF_RECORD_EXIT.
pub const ATTR_TASK: u64 = 1 << 13;
/// `wakeup_watermark` (bytes) instead of `wakeup_events`.
pub const ATTR_WATERMARK: u64 = 1 << 14;
/// Every record, not only samples, ends with the sample's id fields.
pub const ATTR_SAMPLE_ID_ALL: u64 = 1 << 18;
pub const ATTR_MMAP2: u64 = 1 << 23;
/// Marks the COMM record of an exec (`PERF_RECORD_MISC_COMM_EXEC`).
pub const ATTR_COMM_EXEC: u64 = 1 << 24;

pub const PERF_SAMPLE_IP: u64 = 1 << 0;
pub const PERF_SAMPLE_TID: u64 = 1 << 1;
pub const PERF_SAMPLE_TIME: u64 = 1 << 2;
/// The event's id first in a sample, last in other records' sample id.
pub const PERF_SAMPLE_IDENTIFIER: u64 = 1 << 16;

pub const PERF_RECORD_MMAP: u32 = 1;
pub const PERF_RECORD_LOST: u32 = 2;
pub const PERF_RECORD_COMM: u32 = 3;
pub const PERF_RECORD_EXIT: u32 = 4;
pub const PERF_RECORD_THROTTLE: u32 = 5;
pub const PERF_RECORD_UNTHROTTLE: u32 = 6;
pub const PERF_RECORD_FORK: u32 = 7;
pub const PERF_RECORD_SAMPLE: u32 = 9;
pub const PERF_RECORD_MMAP2: u32 = 10;
pub const PERF_RECORD_LOST_SAMPLES: u32 = 13;
/// In `misc` of a PERF_RECORD_COMM: the name changed because of an exec.
pub const PERF_RECORD_MISC_COMM_EXEC: u16 = 1 << 13;

/// Offsets in `struct perf_event_mmap_page`, the first page of a ring buffer.
pub const MMAP_PAGE_DATA_HEAD: usize = 1024;
pub const MMAP_PAGE_DATA_TAIL: usize = 1032;
pub const MMAP_PAGE_DATA_OFFSET: usize = 1040;
pub const MMAP_PAGE_DATA_SIZE: usize = 1048;

pub const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
pub const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;

pub const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// `_IO('$', 0)` and `_IO('$', 1)`.
pub const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
pub const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;
/// `_IO('$', 5)`: send this event's records to another event's ring buffer.
pub const PERF_EVENT_IOC_SET_OUTPUT: libc::c_ulong = 0x2405;
/// `_IOR('$', 7, __u64)`: the id samples carry.
pub const PERF_EVENT_IOC_ID: libc::c_ulong = 0x8008_2407;

/// `perf_event_open(2)`: a counter on `pid` (0 = self, -1 = any) and `cpu` (-1 = any).
pub fn perf_event_open(attr: &perf_event_attr, pid: libc::pid_t, cpu: i32) -> io::Result<i32> {
    // SAFETY: `attr` is a valid, fully initialised perf_event_attr whose `size`
    // says how much of it the kernel may read; the other arguments are plain integers.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr as *const perf_event_attr,
            pid,
            cpu,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(fd as i32)
    }
}

/// Enables or disables a counter.
pub fn ioctl(fd: i32, request: libc::c_ulong) -> io::Result<()> {
    // SAFETY: `fd` is a perf event descriptor this process opened; the request takes no argument.
    let r = unsafe { libc::ioctl(fd, request as _, 0) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Sends `fd`'s records to the ring buffer of `target` (same CPU).
pub fn set_output(fd: i32, target: i32) -> io::Result<()> {
    // SAFETY: both are perf event descriptors of this process; the argument is an fd.
    let r = unsafe { libc::ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT as _, target) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The id the kernel writes into `fd`'s samples (inherited copies carry their parent's).
pub fn event_id(fd: i32) -> io::Result<u64> {
    let mut id = 0u64;
    // SAFETY: PERF_EVENT_IOC_ID writes one u64 through the pointer.
    let r = unsafe { libc::ioctl(fd, PERF_EVENT_IOC_ID as _, &mut id as *mut u64) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(id)
    }
}

/// One counter's value with `PERF_FORMAT_TOTAL_TIME_ENABLED | _RUNNING`.
pub fn read_counter(fd: i32) -> io::Result<[u64; 3]> {
    let mut buf = [0u64; 3];
    // SAFETY: `buf` is 24 writable bytes, which is what the kernel writes for this read format.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), std::mem::size_of_val(&buf)) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n as usize != std::mem::size_of_val(&buf) {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("perf counter read returned {n} bytes, not 24"),
        ));
    }
    Ok(buf)
}
