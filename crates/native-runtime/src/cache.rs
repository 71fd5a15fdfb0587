//! The code cache: arenas of executable memory within reach (+-2 GiB) of the
//! code they hold copies of, exit stubs, the shared routines at the start
//! of each arena (dispatcher entry trampoline, the indirect-branch lookup's
//! slow paths), the table the lookup searches, and the code each indirect
//! branch ends in (its own one-target cache, then its own table lookup).

use crate::code::{self, Code, Target, RAX, RCX};
use crate::header;
use crate::sys;
use crate::translate::Exit;
use std::sync::atomic::{AtomicU64, Ordering};

pub const ARENA_BYTES: usize = 64 << 20;
const STUB_BYTES: u64 = 56;
/// Reach of a rel32 operand, with a margin for the arena's own size.
const REACH: u64 = (2u64 << 30) - ARENA_BYTES as u64 - (64 << 20);

/// Indirect-branch table: (program address, cache address) pairs, open
/// addressing on the address's bits 4 to 21, linear probing into a tail.
/// One 16-byte entry per 16 bytes of code: a page of the table covers a
/// page of code, so a short run faults in few of its pages (indexed by the
/// low bits, every target touched a page of its own), and the table spans
/// 4 MiB of code before two far-apart addresses share a start.
pub const IBL_BITS: u32 = 18;
const IBL_SHIFT: u32 = 4;
/// The byte offset of `pc`'s first probe: `(pc >> 4) mod 2^18`, times 16.
const IBL_OFFSET_MASK: u32 = ((1 << IBL_BITS) - 1) << IBL_SHIFT;
pub const IBL_ENTRIES: usize = (1 << IBL_BITS) + PROBE;
const PROBE: usize = 512;
pub struct IblTable {
    entries: *mut AtomicU64,
}

// SAFETY: entries are atomics in a mapping that is never freed.
unsafe impl Send for IblTable {}

impl IblTable {
    pub fn new() -> Option<IblTable> {
        let p = sys::map_anon(IBL_ENTRIES * 16, false)?;
        Some(IblTable {
            entries: p as *mut AtomicU64,
        })
    }

    pub fn base(&self) -> u64 {
        self.entries as u64
    }

    fn word(&self, i: usize) -> &AtomicU64 {
        // SAFETY: i < 2 * IBL_ENTRIES by the callers.
        unsafe { &*self.entries.add(i) }
    }

    /// Publishes `pc -> cache` (the cache address first, so that a reader
    /// that sees the key sees its value). False when the probe range is full.
    ///
    /// An entry is never removed nor its slot given to another address: a
    /// reader that loaded the old key, then the value (two loads, no lock),
    /// would take the new address's block for the old one's. A slot only
    /// ever holds one address, whose value may change to a newer
    /// translation ([`IblTable::retarget`]).
    pub fn insert(&self, pc: u64, cache: u64) -> bool {
        let start = (pc as usize & IBL_OFFSET_MASK as usize) >> IBL_SHIFT;
        for i in start..start + PROBE {
            let k = self.word(2 * i).load(Ordering::Acquire);
            if k == 0 || k == pc {
                self.word(2 * i + 1).store(cache, Ordering::Release);
                self.word(2 * i).store(pc, Ordering::Release);
                return true;
            }
        }
        false
    }

    /// Aims the entry of `pc`, if any, at `cache`: its block was
    /// invalidated, and `cache` is the stub that leads to its next
    /// translation. (Removing the entry instead would cost a slot each
    /// time: code rewritten in a loop would fill its probe range.)
    pub fn retarget(&self, pc: u64, cache: u64) {
        let start = (pc as usize & IBL_OFFSET_MASK as usize) >> IBL_SHIFT;
        for i in start..start + PROBE {
            let k = self.word(2 * i).load(Ordering::Acquire);
            if k == pc {
                self.word(2 * i + 1).store(cache, Ordering::Release);
                return;
            }
            if k == 0 {
                return;
            }
        }
    }
}

/// Every arena's range, for signal handlers that must tell cache code from
/// the runtime's own without a lock: (base, end) pairs, 0 where unused.
static ARENA_RANGES: [AtomicU64; 2 * MAX_ARENAS] = [const { AtomicU64::new(0) }; 2 * MAX_ARENAS];
const MAX_ARENAS: usize = 256;

/// Whether `pc` lies in a code cache arena.
pub fn in_cache(pc: u64) -> bool {
    (0..MAX_ARENAS).any(|i| {
        let base = ARENA_RANGES[2 * i].load(Ordering::Acquire);
        base != 0 && base <= pc && pc < ARENA_RANGES[2 * i + 1].load(Ordering::Acquire)
    })
}

fn register(base: u64, end: u64) {
    for i in 0..MAX_ARENAS {
        if ARENA_RANGES[2 * i].load(Ordering::Acquire) == 0 {
            ARENA_RANGES[2 * i + 1].store(end, Ordering::Release);
            ARENA_RANGES[2 * i].store(base, Ordering::Release);
            return;
        }
    }
}

/// Where the dispatcher's indirect-branch misses come from.
pub static IBL_MISS: crate::translate::Exit = crate::translate::Exit::IblMiss;
/// Where an indirect branch's first execution enters the dispatcher.
pub static IBL_FILL: crate::translate::Exit = crate::translate::Exit::IblFill;

/// The shared routines of an arena, which its blocks jump to.
#[derive(Debug, Clone, Copy, Default)]
pub struct Routines {
    /// `jmp [rip]; dq fs_enter`.
    pub enter: u64,
    /// The lookup's probes after the first (see [`indirect_site`]).
    pub probe: u64,
    /// An indirect branch's first execution (see [`indirect_site`]).
    pub fill: u64,
    /// 512 bits, one a system call number: set for those the dispatcher
    /// handles (`syscalls::SPECIAL`, complete before the first arena),
    /// for `Code::syscall_check`.
    pub specials: u64,
}

/// `syscalls::SPECIAL` as a bit map (bit n of byte n / 8: `bt`'s order).
fn special_bits() -> [u8; 64] {
    let mut bits = [0u8; 64];
    for (n, on) in crate::syscalls::SPECIAL.iter().enumerate() {
        if on.load(std::sync::atomic::Ordering::Relaxed) != 0 {
            bits[n / 8] |= 1 << (n % 8);
        }
    }
    bits
}

pub struct Arena {
    pub base: u64,
    /// Blocks grow up from the base, stubs down from the end.
    pub next: u64,
    pub stub_top: u64,
    pub end: u64,
    pub routines: Routines,
}

impl Arena {
    /// Maps an arena within reach of `pc`.
    pub fn near(pc: u64) -> Option<Arena> {
        let prot = libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC;
        let flags = libc::MAP_PRIVATE
            | libc::MAP_ANONYMOUS
            | libc::MAP_NORESERVE
            | libc::MAP_FIXED_NOREPLACE;
        let step = 256u64 << 20;
        let mut base = None;
        for k in 1..=6u64 {
            for hint in [
                pc.saturating_sub(k * step) & !0xffff,
                (pc + k * step) & !0xffff,
            ] {
                if hint < 0x10000 {
                    continue;
                }
                if let Some(p) = sys::map_at(hint, ARENA_BYTES, prot, flags) {
                    if p as u64 == hint {
                        base = Some(hint);
                        break;
                    }
                    sys::unmap(p, ARENA_BYTES);
                }
            }
            if base.is_some() {
                break;
            }
        }
        let base = match base {
            Some(b) => b,
            None => sys::map_at(0, ARENA_BYTES, prot, flags & !libc::MAP_FIXED_NOREPLACE)? as u64,
        };
        let end = base + ARENA_BYTES as u64;
        register(base, end);
        let mut a = Arena {
            base,
            next: base,
            stub_top: end,
            end,
            routines: Routines::default(),
        };
        a.routines.enter = a.next;
        // `jmp [rip+2]; int3; int3; dq fs_enter`: the literal 8-byte aligned
        // (the arena is), as a program that sets the alignment-check flag
        // (RFLAGS.AC, which the JVM toggles while it probes the CPU) may
        // leave the cache through here with it set.
        let mut tramp = vec![0xff, 0x25, 0x02, 0, 0, 0, 0xcc, 0xcc];
        tramp.extend_from_slice(&(crate::asm::fs_enter as *const () as u64).to_le_bytes());
        a.put(&tramp)?;
        a.align(16);
        a.routines.probe = a.next;
        a.put(&probe_routine(a.next, a.routines.enter))?;
        a.align(16);
        a.routines.fill = a.next;
        a.put(&fill_routine(a.next, a.routines.enter))?;
        a.align(64);
        a.routines.specials = a.put(&special_bits())?;
        Some(a)
    }

    pub fn reaches(&self, pc: u64) -> bool {
        pc.abs_diff(self.base) < REACH && self.stub_top - self.next > 1 << 20
    }

    pub fn align(&mut self, n: u64) {
        self.next = self.next.next_multiple_of(n);
    }

    /// Copies `code` at the next free address; returns that address.
    pub fn put(&mut self, code: &[u8]) -> Option<u64> {
        if self.next + code.len() as u64 > self.stub_top {
            return None;
        }
        let at = self.next;
        // SAFETY: [at, at+len) lies in this arena's writable mapping.
        unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), at as *mut u8, code.len()) };
        self.next += code.len() as u64;
        Some(at)
    }

    /// An exit stub for a direct branch not yet linked:
    /// `jmp [rip+2]; pad; dq slow; slow: mov gs:[SAVE_RAX], rax; mov rax, desc; jmp enter; dq site`.
    /// Linking stores the target's cache address in the literal at +8, and
    /// re-aims the branch whose rel32 is at `site` (+40; 0 for none, until
    /// [`set_site`]) straight at the target. Returns the stub's address.
    pub fn stub(&mut self, desc: u64) -> Option<u64> {
        let at = (self.stub_top - STUB_BYTES) & !7;
        if at < self.next {
            return None;
        }
        // jmp [rip+2]; int3 x2; dq at+16 (stub_exit);
        // at+16: mov gs:[SAVE_RAX], rax; mov rax, desc; jmp enter
        let mut b = [0u8; STUB_BYTES as usize];
        b[..8].copy_from_slice(&[0xff, 0x25, 0x02, 0, 0, 0, 0xcc, 0xcc]);
        b[8..16].copy_from_slice(&stub_exit(at).to_le_bytes());
        b[16..21].copy_from_slice(&[0x65, 0x48, 0x89, 0x04, 0x25]);
        b[21..25].copy_from_slice(&header::SAVE_RAX.to_le_bytes());
        b[25..27].copy_from_slice(&[0x48, 0xb8]);
        b[27..35].copy_from_slice(&desc.to_le_bytes());
        b[35] = 0xe9;
        let rel = i32::try_from(self.routines.enter as i64 - (at as i64 + 40)).ok()?;
        b[36..40].copy_from_slice(&rel.to_le_bytes());
        // b[40..48]: the site, none yet; b[48..56]: the next stub linked
        // to the same block, none (translator.rs, `incoming`).
        // SAFETY: [at, at+len) lies in this arena, below the previous stubs.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), at as *mut u8, b.len()) };
        self.stub_top = at;
        Some(at)
    }

    /// An indirect branch's record (see [`indirect_site`]): three words,
    /// below the stubs, and the exit stub its one-target cache jumps
    /// through.
    pub fn record(&mut self) -> Option<u64> {
        let desc = Box::into_raw(Box::new(Exit::Direct {
            target: u64::MAX,
            stub: 0,
        }));
        let stub = self.stub(desc as u64)?;
        // SAFETY: desc was just allocated and is not shared yet.
        unsafe {
            *desc = Exit::Direct {
                target: u64::MAX,
                stub,
            }
        };
        // Three words in 32 bytes: `data` aligns a piece to its size.
        let at = self.data(32)?;
        // SAFETY: an aligned record of this arena, just taken.
        unsafe { (at as *mut u64).add(RECORD_STUB).write(stub) };
        Some(at)
    }

    /// An 8-byte literal holding `value`, below the stubs.
    pub fn literal(&mut self, value: u64) -> Option<u64> {
        let at = self.data(8)?;
        // SAFETY: an aligned word of this arena, just taken.
        unsafe { (at as *mut u64).write(value) };
        Some(at)
    }

    /// `bytes` (8, 16 or 32) of data, aligned to their size, below the stubs.
    fn data(&mut self, bytes: u64) -> Option<u64> {
        let at = (self.stub_top - bytes) & !(bytes - 1);
        if at < self.next {
            return None;
        }
        self.stub_top = at;
        Some(at)
    }
}

/// The literal a stub at `stub` jumps through.
pub fn stub_literal(stub: u64) -> *const AtomicU64 {
    (stub + 8) as *const AtomicU64
}

/// The address of the rel32 of the one branch that goes to `stub` and
/// linking re-aims in place; 0 for none.
pub fn stub_site(stub: u64) -> *const AtomicU64 {
    (stub + 40) as *const AtomicU64
}

/// The next stub linked to the same block as `stub` (0: none); under the
/// translator's lock.
pub fn stub_next(stub: u64) -> *const AtomicU64 {
    (stub + 48) as *const AtomicU64
}

/// Where a stub's literal points while it is not linked: its own way into
/// the dispatcher.
pub fn stub_exit(stub: u64) -> u64 {
    stub + 16
}

/// The exit a stub's way into the dispatcher names (its `mov rax, desc`).
pub fn stub_desc(stub: u64) -> *mut Exit {
    // SAFETY: the immediate of a stub made by `Arena::stub`.
    unsafe { ((stub + 27) as *const u64).read_unaligned() as *mut Exit }
}

/// Records the branch whose rel32 at `site` goes to `stub`: linking the
/// stub re-aims it. Before any thread runs the branch's block.
pub fn set_site(stub: u64, site: u64) {
    // SAFETY: the site word of a stub made by `Arena::stub`.
    unsafe { (*stub_site(stub)).store(site, Ordering::Release) };
}

/// The words of an indirect branch's record ([`Arena::record`]): the
/// target negated, zero until the branch's first execution; the exit stub
/// of the branch's one-target cache (its literal and its linked jump hold
/// the target's block); the address of its key ([`Code::key`]).
pub(crate) const RECORD_KEY: usize = 0;
pub(crate) const RECORD_STUB: usize = 1;
pub(crate) const RECORD_KEY_AT: usize = 2;

fn record_word(record: u64, i: usize) -> &'static AtomicU64 {
    // SAFETY: a record made by `Arena::record`: three aligned words.
    unsafe { &*(record as *const AtomicU64).add(i) }
}

/// The code an indirect branch (jump, call or return) ends in, once the
/// block has put its target in rax (the program's rax at gs:[SAVE_RAX]):
/// 1. The branch's own one-target cache: a key, the target negated, in the
///    immediate of a `mov rcx` ([`Code::key`]), [`code::KEY_UNSET`] until the
///    branch's first execution, when the dispatcher sets it, once
///    ([`fill_record`]), and links the branch's exit stub to the target's
///    block. A hit compares without touching the flags (`lea`, `jrcxz`:
///    nothing to save) and without reading memory, and goes on by a direct
///    jump (through the stub when the block is out of rel32 reach). With
///    the key and the block's address in data words instead (a load, then
///    a jump through memory), CPython's float loop ran 5% longer counted.
/// 2. Else the table's first probe, inline, ending in a jump of this
///    branch's own too: a branch with several targets (an interpreter's
///    dispatch, a return from a function called from many places) is
///    predicted from its own history, not through the one jump every
///    indirect branch of the program would share in a common routine.
/// 3. Further probes in the arena's shared routine ([`Routines::probe`]),
///    and the dispatcher when the target has no block in the table.
///
/// `count`: the block's counter, bumped here (rcx is free once saved, and
/// `lea` leaves the flags alone) when the flags are live all through the
/// block; at its start, a bump keeping them would save and reload rax
/// just before the branch saves it again.
pub fn indirect_site(c: &mut Code, record: u64, r: &Routines, count: Option<u32>) {
    let (poly, fill) = (c.label(), c.label());
    c.store_gs(header::SAVE_RCX, RCX);
    if let Some(slot) = count {
        c.add_through(RCX, slot, 1);
    }
    c.key(record); // mov rcx, -target
    c.bytes(&[0x48, 0x8d, 0x0c, 0x08]); // lea rcx, [rax+rcx]
    c.bytes(&[0xe3, 0x05]); // jrcxz over the next jump (5 bytes: to a label)
    c.jmp(Target::Label(poly));
    c.load_gs(RCX, header::SAVE_RCX);
    c.load_gs(RAX, header::SAVE_RAX);
    c.jmp(Target::Stub(
        record_word(record, RECORD_STUB).load(Ordering::Relaxed),
    ));
    c.place(poly);
    c.bytes(&[0x48, 0x89, 0xc1]); // mov rcx, rax
    c.save_flags();
    c.bytes(&[0x48, 0x89, 0xc8]); // mov rax, rcx
    c.rip(&[0x48, 0x83, 0x3d, 0, 0, 0, 0, 0], 3, record); // cmp qword [record], 0
    c.jcc(0x4, Target::Label(fill));
    c.bytes(&[0x81, 0xe1]); // and ecx, IBL_OFFSET_MASK (zero-extends)
    c.bytes(&IBL_OFFSET_MASK.to_le_bytes());
    c.bytes(&[0x65, 0x48, 0x03, 0x0c, 0x25]); // add rcx, gs:[IBL_TABLE]
    c.bytes(&header::IBL_TABLE.to_le_bytes());
    c.bytes(&[0x48, 0x3b, 0x01]); // cmp rax, [rcx]
    c.jcc(0x5, Target::Abs(r.probe));
    found(c);
    c.place(fill);
    c.rip(&[0x48, 0x8d, 0x0d, 0, 0, 0, 0], 3, record); // lea rcx, [record]
    c.jmp(Target::Abs(r.fill));
}

/// Tells `record` where its branch's key is: the block is placed.
pub fn set_key(record: u64, key_at: u64) {
    record_word(record, RECORD_KEY_AT).store(key_at, Ordering::Release);
}

/// Sets an indirect branch's record (see [`indirect_site`]) to `pc` unless
/// it is set already: its exit stub gets `pc` for its target and is linked
/// to `pc`'s block (by `link`, the translator's, which lists links to code
/// that may change), then its key is set, then the record's own word.
/// Under the translator's lock. A thread that sees the new key jumps to the
/// stub, or to the block once the branch is re-aimed: both lead there. Set
/// once, never changed. A block invalidated since is unlinked from the
/// stub, which then leads to the dispatcher and the code now at `pc`.
pub fn fill_record(record: u64, pc: u64, link: impl FnOnce(u64)) {
    let key = record_word(record, RECORD_KEY);
    if key.load(Ordering::Acquire) != 0 {
        return;
    }
    let stub = record_word(record, RECORD_STUB).load(Ordering::Acquire);
    let key_at = record_word(record, RECORD_KEY_AT).load(Ordering::Acquire);
    // SAFETY: the literal word of a stub made by `Arena::stub`.
    let literal = unsafe { &*stub_literal(stub) };
    // Linked already: its branch went to u64::MAX (the unset key's one
    // match), which the dispatcher took as any other target. The branch
    // then keeps no one-target cache (its table lookup is as exact).
    if key_at != 0 && literal.load(Ordering::Acquire) == stub_exit(stub) {
        // SAFETY: the stub's exit is taken only by a thread that matched
        // the key, which is unset until below.
        unsafe { *stub_desc(stub) = Exit::Direct { target: pc, stub } };
        link(stub);
        // SAFETY: an 8-byte aligned immediate in a placed block (code.rs).
        unsafe { &*(key_at as *const AtomicU64) }.store(pc.wrapping_neg(), Ordering::Release);
    }
    key.store(pc.wrapping_neg(), Ordering::Release);
}

/// The table entry rcx points at holds the target: its block, with the
/// flags, rcx and rax given back to the program, from a jump of the code
/// this is emitted in.
fn found(c: &mut Code) {
    c.bytes(&[0x48, 0x8b, 0x49, 0x08]); // mov rcx, [rcx+8]
    c.store_gs(header::JUMP, RCX);
    c.restore_flags();
    c.load_gs(RCX, header::SAVE_RCX);
    c.load_gs(RAX, header::SAVE_RAX);
    c.bytes(&[0x65, 0xff, 0x24, 0x25]); // jmp gs:[JUMP]
    c.bytes(&header::JUMP.to_le_bytes());
}

/// The lookup's probes after an indirect branch's own first one: entered
/// with rcx at the entry that did not hold the target (in rax), the flags
/// saved, the program's rcx and rax at gs:[SAVE_RCX] and gs:[SAVE_RAX].
fn probe_routine(at: u64, enter: u64) -> Vec<u8> {
    let mut c = Code::default();
    let (next, miss) = (c.label(), c.label());
    c.place(next);
    c.bytes(&[0x48, 0x83, 0x39, 0x00]); // cmp qword [rcx], 0
    c.jcc(0x4, Target::Label(miss));
    c.bytes(&[0x48, 0x83, 0xc1, 0x10]); // add rcx, 16
    c.bytes(&[0x48, 0x3b, 0x01]); // cmp rax, [rcx]
    c.jcc(0x5, Target::Label(next));
    found(&mut c);
    c.place(miss);
    to_dispatcher(&mut c, &IBL_MISS, enter);
    code::layout(&c, at).expect("the probe routine lays out")
}

/// To the dispatcher with `exit`, the target (in rax) at gs:[IBL_TARGET],
/// the flags and rcx given back to the program.
fn to_dispatcher(c: &mut Code, exit: &'static crate::translate::Exit, enter: u64) {
    c.store_gs(header::IBL_TARGET, RAX);
    c.restore_flags();
    c.load_gs(RCX, header::SAVE_RCX);
    c.mov_rax(exit as *const _ as u64);
    c.jmp(Target::Abs(enter));
}

/// An indirect branch's first execution: entered with rcx at its record,
/// the target in rax, the flags saved, the program's rcx and rax at
/// gs:[SAVE_RCX] and gs:[SAVE_RAX]; exits to the dispatcher with the record
/// at gs:[JUMP] and the target at gs:[IBL_TARGET].
fn fill_routine(at: u64, enter: u64) -> Vec<u8> {
    let mut c = Code::default();
    c.store_gs(header::JUMP, RCX);
    to_dispatcher(&mut c, &IBL_FILL, enter);
    code::layout(&c, at).expect("the fill routine lays out")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(at: u64, len: usize) -> Vec<String> {
        // SAFETY: the arena's memory, just written.
        code::disassemble(
            unsafe { std::slice::from_raw_parts(at as *const u8, len) },
            at,
        )
    }

    #[test]
    fn a_stub_exits_until_its_literal_is_linked() {
        let here = a_stub_exits_until_its_literal_is_linked as *const () as u64;
        let mut a = Arena::near(here).expect("an arena");
        assert!(a.reaches(here));
        let stub = a.stub(0x1234_5678).expect("room for a stub");
        assert_eq!(stub % 8, 0);
        // SAFETY: the literal of the stub just made.
        let lit = unsafe { &*stub_literal(stub) };
        assert_eq!(lit.load(Ordering::Relaxed), stub + 16);
        assert_eq!(text(stub, 6), [format!("jmp qword ptr [{:X}h]", stub + 8)]);
        assert_eq!(
            text(stub + 16, 24),
            [
                "mov gs:[8],rax".to_string(),
                "mov rax,12345678h".to_string(),
                format!("jmp {:016X}h", a.routines.enter)
            ]
        );
        // SAFETY: as above.
        assert_eq!(unsafe { &*stub_site(stub) }.load(Ordering::Relaxed), 0);
        // SAFETY: as above.
        assert_eq!(unsafe { &*stub_next(stub) }.load(Ordering::Relaxed), 0);
        let below = a.stub(1).unwrap();
        assert_eq!(below, stub - 56);
    }
}
