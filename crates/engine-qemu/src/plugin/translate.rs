//! Translation time: turn a QEMU translation block into a counting profile.

use super::api::{
    self, api, qemu_plugin_id_t, qemu_plugin_insn, qemu_plugin_tb, QEMU_PLUGIN_CB_NO_REGS,
    QEMU_PLUGIN_MEM_RW,
};
use super::bank::{bank_of, bump, slot_for, view};
use super::markers::{self, Marker};
use super::profile as prof;
use super::regions;
use crate::layout::{
    word, SlotKind, MAX_MEM_SHIFT, SLOT_MEM_READ_SHIFT0, SLOT_MEM_WRITE_SHIFT0, TEXT_BYTES,
    UNSUPPORTED_TEXT,
};
use flopscope_counter_file::profile::{self, End, Record, DYNAMIC_COUNTERS};
use flopscope_isa::{classify, DynamicMem, InsnInfo};
use std::collections::BTreeMap;
use std::ffi::{c_uint, c_void};
use std::sync::atomic::Ordering;

/// One (slot, increment) pair of a block profile.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Item {
    pub slot: u32,
    pub inc: u32,
}

/// Accumulates a piece of a block (the code between region markers): its
/// static counts, and each instruction's own items for the code table.
#[derive(Default)]
struct Profile {
    by_slot: BTreeMap<u32, u64>,
    insns: Vec<profile::Insn>,
    lost: bool,
}

impl Profile {
    /// Adds `n` of `kind` to the piece and to `insn`'s items.
    fn add(&mut self, insn: &mut BTreeMap<u32, u32>, kind: SlotKind, n: u64) {
        if n == 0 {
            return;
        }
        match slot_for(kind) {
            Some(s) => {
                *self.by_slot.entry(s).or_default() += n;
                *insn.entry(s).or_default() += n as u32;
            }
            None => self.lost = true,
        }
    }

    fn add_insn(&mut self, pc: u64, info: &InsnInfo) {
        let mut own = BTreeMap::new();
        self.add(&mut own, SlotKind::Instructions, 1);
        if let Some(fp) = info.fp {
            let k = fp.key;
            self.add(
                &mut own,
                SlotKind::FpInsn {
                    precision: k.precision,
                    op: k.op,
                    lanes: k.lanes,
                    width_bits: k.width_bits,
                    masked: k.masked,
                    flop_per_insn: fp.flop.total(),
                },
                1,
            );
            // QEMU 7.2 cannot execute EVEX, so a masked form never runs here;
            // were it to, all lanes would be counted (the full `flop`).
            for (op, n) in fp.flop.iter() {
                self.add(
                    &mut own,
                    SlotKind::Flop {
                        precision: k.precision,
                        op,
                    },
                    u64::from(n),
                );
            }
        }
        if info.mem.dynamic.is_none() {
            for (size, n) in info.mem.reads.counts() {
                self.add(&mut own, SlotKind::MemRead { size }, u64::from(n));
            }
            for (size, n) in info.mem.writes.counts() {
                self.add(&mut own, SlotKind::MemWrite { size }, u64::from(n));
            }
        }
        self.push(pc, own);
    }

    /// An instruction that only counts as one instruction.
    fn add_plain(&mut self, pc: u64) {
        let mut own = BTreeMap::new();
        self.add(&mut own, SlotKind::Instructions, 1);
        self.push(pc, own);
    }

    fn push(&mut self, pc: u64, own: BTreeMap<u32, u32>) {
        self.insns.push(profile::Insn {
            pc,
            // QEMU ends a block at every jump: no jump is followed.
            jumped: false,
            items: own.into_iter().collect(),
        });
    }

    /// Freezes the counts into a leaked array whose first item holds the
    /// length; it lives, as callback user data, for the life of QEMU. The
    /// instructions go to the code table as the piece counted by `counter`.
    fn freeze(self, counter: u32) -> (*const Item, profile::Piece) {
        let mut items = vec![Item { slot: 0, inc: 0 }];
        for (slot, n) in self.by_slot {
            // A block has at most a few hundred instructions: increments fit.
            items.push(Item {
                slot,
                inc: u32::try_from(n).unwrap_or(u32::MAX),
            });
        }
        items[0].slot = (items.len() - 1) as u32;
        let piece = profile::Piece {
            counter,
            kind: profile::PieceKind::Own,
            insns: self.insns,
        };
        (Box::leak(items.into_boxed_slice()).as_ptr(), piece)
    }
}

/// Adds a frozen profile into a bank.
#[inline(always)]
fn add_items(bank: *mut u64, items: *const Item) {
    // SAFETY: a frozen profile: a length item then that many items.
    unsafe {
        let n = (*items).slot as usize;
        for i in 1..=n {
            let it = *items.add(i);
            bump(bank, it.slot, u64::from(it.inc));
        }
    }
}

/// A marker instruction and the profile of the instructions after it (up to
/// the next marker or the end of the block).
struct Site {
    marker: Marker,
    /// Host address minus guest address (user mode maps guest memory linearly).
    host_delta: i64,
    rest: *const Item,
    /// The rest's counter in the `.prof` banks.
    counter: u32,
}

/// Adds a marker site's rest of the block into `bank`.
fn add_rest(vcpu: c_uint, bank: Option<*mut u64>, site: &Site) {
    let bank = bank.unwrap_or_else(|| bank_of(vcpu));
    add_items(bank, site.rest);
    prof::count(prof::counters_of(bank), site.counter);
}

/// Before an SSC mark's `64 67 90` executes: switch region, then count the
/// rest of the block in the new region.
extern "C" fn on_ssc(vcpu: c_uint, udata: *mut c_void) {
    // SAFETY: udata is a leaked Site.
    let site = unsafe { &*(udata as *const Site) };
    let bank = match site.marker {
        Marker::Ssc(value) => markers::ssc_event_now(value).map(|e| regions::transition(vcpu, e)),
        Marker::Named(_) => None,
    };
    add_rest(vcpu, bank, site);
}

/// After a named marker loaded the first byte of the region's name.
extern "C" fn on_named(vcpu: c_uint, _info: u32, vaddr: u64, udata: *mut c_void) {
    // SAFETY: udata is a leaked Site.
    let site = unsafe { &*(udata as *const Site) };
    let bank = match site.marker {
        Marker::Named(kind) => {
            let host = (vaddr as i64).wrapping_add(site.host_delta) as *const u8;
            // SAFETY: the program just read this address as a C string's first byte.
            let name = unsafe { markers::read_name(host) };
            markers::named(vcpu, kind, &name)
        }
        Marker::Ssc(_) => None,
    };
    add_rest(vcpu, bank, site);
}

/// Execution-time callback: one per block execution.
extern "C" fn on_tb_exec(vcpu: c_uint, udata: *mut c_void) {
    // SAFETY: udata is a leaked BlockData.
    let d = unsafe { &*(udata as *const prof::BlockData) };
    let bank = bank_of(vcpu);
    add_items(bank, d.items);
    prof::block_ran(vcpu, bank, d);
}

/// Run-time memory callback for instructions whose traffic only shows when
/// they run (REP strings, masked moves, gathers, XSAVE).
extern "C" fn on_mem(vcpu: c_uint, info: u32, _vaddr: u64, udata: *mut c_void) {
    let a = api();
    // SAFETY: plain accessors of the meminfo word QEMU passed.
    let (shift, store) = unsafe { ((a.mem_size_shift)(info), (a.mem_is_store)(info)) };
    let shift = shift.min(MAX_MEM_SHIFT);
    let slot = if store {
        SLOT_MEM_WRITE_SHIFT0
    } else {
        SLOT_MEM_READ_SHIFT0
    } + shift;
    let bank = bank_of(vcpu);
    bump(bank, slot, 1);
    // udata: the instruction's first dynamic counter (reads, then writes).
    let first = udata as usize as u32;
    if first != prof::NONE {
        let c = first + u32::from(store) * (MAX_MEM_SHIFT + 1) + shift;
        prof::count(prof::counters_of(bank), c);
    }
}

/// Whether `insn` is an AVX masked load (VMASKMOVPS/PD, VPMASKMOVD/Q with
/// a memory source): QEMU 7.2 reads its whole operand, masked-off elements
/// included, and the memory callbacks show those reads (its masked stores
/// and gathers touch only the active elements). With no register reads in
/// the plugin API, the mask cannot be read here: the report says how many
/// ran instead.
fn full_width_masked_load(insn: &iced_x86::Instruction) -> bool {
    use iced_x86::{Mnemonic as M, OpKind};
    matches!(
        insn.mnemonic(),
        M::Vmaskmovps | M::Vmaskmovpd | M::Vpmaskmovd | M::Vpmaskmovq
    ) && insn.op0_kind() != OpKind::Memory
}

extern "C" fn on_full_width_load(_vcpu: c_uint, _udata: *mut c_void) {
    view()
        .word(word::FULL_WIDTH_MASKED_LOADS)
        .fetch_add(1, Ordering::Relaxed);
}

/// An instruction QEMU 7.2 cannot execute (EVEX: AVX-512), described at
/// translation time.
struct Unsupported {
    pc: u64,
    evex: bool,
    text: Vec<u8>,
}

/// Reached an unsupported instruction: record where, so that the CLI can
/// explain the SIGILL that follows.
extern "C" fn on_unsupported(_vcpu: c_uint, udata: *mut c_void) {
    // SAFETY: udata is a leaked `Unsupported`.
    let u = unsafe { &*(udata as *const Unsupported) };
    let v = view();
    let w = v.word(word::UNSUPPORTED_PC);
    if w.compare_exchange(0, u.pc, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        // SAFETY: the text field is written once, by the vCPU that won above.
        unsafe { v.write_bytes(UNSUPPORTED_TEXT, &u.text) };
        v.word(word::UNSUPPORTED_KIND)
            .store(if u.evex { 1 } else { 2 }, Ordering::Release);
    }
}

fn unsupported(insn: &iced_x86::Instruction) -> *mut c_void {
    use iced_x86::Formatter;
    let mut text = String::new();
    iced_x86::IntelFormatter::new().format(insn, &mut text);
    let mut bytes = text.into_bytes();
    bytes.truncate(TEXT_BYTES - 1);
    bytes.push(0);
    let evex = insn.encoding() == iced_x86::EncodingKind::EVEX;
    Box::into_raw(Box::new(Unsupported {
        pc: insn.ip(),
        evex,
        text: bytes,
    })) as *mut c_void
}

/// Whether the instruction QEMU listed at `vaddr` with `qemu_len` bytes is
/// longer in the program's memory and runs into the next page (QEMU 7.2
/// then ends the block before it, having read some of its bytes).
fn crosses_into_next_page(vaddr: u64, qemu_len: usize) -> bool {
    let code = read_guest(vaddr, 15);
    flopscope_isa::decode_one(&code, vaddr)
        .is_some_and(|d| d.len() > qemu_len && (vaddr & 4095) + d.len() as u64 > 4096)
}

/// Up to `len` bytes of the program's memory at `vaddr` (fewer where a page
/// cannot be read: the read stops there instead of faulting).
fn read_guest(vaddr: u64, len: usize) -> Vec<u8> {
    let mut code = vec![0u8; len];
    let mut got = 0;
    while got < len {
        let at = vaddr + got as u64;
        let chunk = (4096 - (at as usize & 4095)).min(len - got);
        let local = libc::iovec {
            iov_base: code[got..].as_mut_ptr().cast(),
            iov_len: chunk,
        };
        let remote = libc::iovec {
            iov_base: (at as i64).wrapping_add(super::bank::guest_delta()) as *mut c_void,
            iov_len: chunk,
        };
        // SAFETY: reads this process's own memory into `code`.
        let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
        if n != chunk as isize {
            break;
        }
        got += chunk;
    }
    code.truncate(got);
    code
}

/// The instruction at `insn` decoded from guest memory, when QEMU consumed
/// fewer bytes than the instruction has: QEMU 7.2 stops at the first byte
/// of an EVEX (AVX-512) instruction it cannot decode and raises SIGILL there.
/// Reads stay within the instruction's page.
unsafe fn decode_whole(
    insn: *const qemu_plugin_insn,
    vaddr: u64,
    qemu_len: usize,
) -> Option<iced_x86::Instruction> {
    let a = api();
    // SAFETY: haddr is the host address of the instruction's bytes.
    let host = unsafe { (a.insn_haddr)(insn) } as *const u8;
    if host.is_null() {
        return None;
    }
    let in_page = 4096 - (vaddr as usize & 4095);
    let len = in_page.min(15);
    // SAFETY: the instruction's page is mapped (QEMU just read from it).
    let bytes = unsafe { std::slice::from_raw_parts(host, len) };
    let d = flopscope_isa::decode_one(bytes, vaddr)?;
    (d.len() > qemu_len).then_some(d)
}

unsafe fn insn_bytes<'a>(insn: *const qemu_plugin_insn) -> &'a [u8] {
    let a = api();
    // SAFETY: QEMU keeps an instruction's bytes alive during translation.
    unsafe { std::slice::from_raw_parts((a.insn_data)(insn) as *const u8, (a.insn_size)(insn)) }
}

pub extern "C" fn on_tb_trans(_id: qemu_plugin_id_t, tb: *mut qemu_plugin_tb) {
    let r = std::panic::catch_unwind(|| {
        // SAFETY: tb is the block QEMU is translating.
        unsafe { translate(tb) }
    });
    if r.is_err() {
        api::outs("internal error while classifying a block; its counts are missing");
        view().word(word::OVERFLOW).fetch_add(1, Ordering::Relaxed);
    }
}

unsafe fn translate(tb: *mut qemu_plugin_tb) {
    let a = api();
    let mut head = Profile::default();
    // Markers met so far, each with the profile that follows it.
    let mut sites: Vec<(*mut qemu_plugin_insn, Marker, i64, Profile)> = Vec::new();
    let mut prev: Option<iced_x86::Instruction> = None;
    // The last instruction and where the one after it would be (the end).
    let mut last: Option<iced_x86::Instruction> = None;
    let mut after_last = 0u64;
    // Whether the last instruction classified may write memory, and the
    // first one.
    let mut writes = false;
    let mut first_writes = false;
    // SAFETY: tb and its instructions are valid during this callback.
    let n = unsafe { (a.tb_n_insns)(tb) };
    let mut start = 0;
    for i in 0..n {
        // SAFETY: i < n.
        let insn = unsafe { (a.tb_get_insn)(tb, i) };
        // SAFETY: as above.
        let (bytes, vaddr) = unsafe { (insn_bytes(insn), (a.insn_vaddr)(insn)) };
        if i == 0 {
            start = vaddr;
            // SAFETY: as above.
            let host = unsafe { (a.insn_haddr)(insn) } as i64;
            prof::note_code_at(vaddr, host.wrapping_sub(vaddr as i64));
            super::bank::note_guest_delta(host.wrapping_sub(vaddr as i64));
        }
        after_last = vaddr + bytes.len() as u64;
        let current = match sites.last_mut() {
            Some(s) => &mut s.3,
            None => &mut head,
        };
        let last_listed = i > 0 && i + 1 == n;
        if last_listed && vaddr & 4095 > 4096 - 15 && crosses_into_next_page(vaddr, bytes.len()) {
            // As below, where QEMU listed fewer bytes than the page holds
            // or the bytes decode as a shorter instruction (both were
            // counted before, though QEMU runs the whole instruction in
            // the next block).
            after_last = vaddr;
            continue;
        }
        let Some(decoded) = flopscope_isa::decode_one(bytes, vaddr) else {
            if last_listed && (vaddr + bytes.len() as u64).is_multiple_of(4096) {
                // Cut at the end of its page: QEMU 7.2 began the instruction
                // here, found it crossing into the next page, and ended the
                // block before it (it starts the next block, whole). The
                // block still lists it, but never runs it: not counted, and
                // the block falls through to it.
                after_last = vaddr;
                continue;
            }
            // SAFETY: as above.
            if let Some(whole) = unsafe { decode_whole(insn, vaddr, bytes.len()) } {
                // SAFETY: registering a callback with leaked user data.
                unsafe {
                    (a.register_vcpu_insn_exec_cb)(
                        insn,
                        on_unsupported,
                        QEMU_PLUGIN_CB_NO_REGS,
                        unsupported(&whole),
                    )
                };
            }
            current.add_plain(vaddr);
            prev = None;
            last = None;
            continue;
        };
        last = Some(decoded);
        match markers::recognise(bytes, &decoded, prev.as_ref()) {
            Some(m @ Marker::Ssc(value)) if markers::ssc_event(value).is_some() => {
                let mut after = Profile::default();
                after.add_insn(vaddr, &classify(&decoded));
                sites.push((insn, m, 0, after));
                prev = Some(decoded);
                continue;
            }
            Some(m @ Marker::Named(_)) => {
                // SAFETY: as above.
                let host = unsafe { (a.insn_haddr)(insn) } as i64;
                // The marker itself is not counted: it is flopscope's, not the program's work.
                sites.push((insn, m, host.wrapping_sub(vaddr as i64), Profile::default()));
                prev = Some(decoded);
                continue;
            }
            _ => {}
        }
        if decoded.encoding() == iced_x86::EncodingKind::EVEX {
            // SAFETY: registering a callback with leaked user data.
            unsafe {
                (a.register_vcpu_insn_exec_cb)(
                    insn,
                    on_unsupported,
                    QEMU_PLUGIN_CB_NO_REGS,
                    unsupported(&decoded),
                )
            };
        }
        let info = classify(&decoded);
        // A REP string instruction is not one (it ends its block, which
        // QEMU enters again at it for each iteration).
        writes = info.mem.writes.counts().next().is_some()
            || matches!(
                info.mem.dynamic,
                Some(DynamicMem::Masked | DynamicMem::GatherScatter | DynamicMem::StateDependent)
            );
        first_writes |= i == 0 && writes;
        if full_width_masked_load(&decoded) {
            // SAFETY: registering a callback without user data.
            unsafe {
                (a.register_vcpu_insn_exec_cb)(
                    insn,
                    on_full_width_load,
                    QEMU_PLUGIN_CB_NO_REGS,
                    std::ptr::null_mut(),
                )
            };
        }
        if info.mem.dynamic.is_some() {
            let first = prof::counters(DYNAMIC_COUNTERS);
            if first != prof::NONE {
                prof::write(&Record::Dynamic {
                    counter: first,
                    pc: vaddr,
                });
            }
            // SAFETY: as above; the user data is a number, not a pointer.
            unsafe {
                (a.register_vcpu_mem_cb)(
                    insn,
                    on_mem,
                    QEMU_PLUGIN_CB_NO_REGS,
                    QEMU_PLUGIN_MEM_RW,
                    first as usize as *mut c_void,
                )
            };
        }
        current.add_insn(vaddr, &info);
        prev = Some(decoded);
    }
    let lost = head.lost || sites.iter().any(|s| s.3.lost);
    if lost {
        view().word(word::OVERFLOW).fetch_add(1, Ordering::Relaxed);
    }
    let end = block_end(last.as_ref(), after_last);
    // QEMU runs each iteration of a REP string instruction as a block
    // that ends by going back to it.
    let rep_at = last.filter(rep_string).map(|i| i.ip());
    let unseen = matches!(end, End::IndirectCall { .. } | End::Other)
        || last.is_some_and(|i| i.mnemonic() == iced_x86::Mnemonic::Syscall);
    let taken_counter = match end {
        End::Cond { .. } => prof::counters(1),
        _ => prof::NONE,
    };
    let (items, head_piece) = head.freeze(prof::counters(1));
    let mut pieces = vec![head_piece];
    let data = Box::into_raw(Box::new(prof::BlockData {
        items,
        counter: pieces[0].counter,
        taken_counter,
        start,
        taken: match end {
            End::Cond { taken, .. }
            | End::Jump { target: taken }
            | End::Call { target: taken, .. } => taken,
            _ => rep_at.unwrap_or(u64::MAX),
        },
        len: u32::try_from(after_last.wrapping_sub(start)).unwrap_or(0),
        flags: if n == 1 && writes {
            prof::ALONE_WRITE
        } else {
            0
        } | if first_writes { prof::FIRST_WRITES } else { 0 }
            | if unseen { prof::GOES_UNSEEN } else { 0 }
            | if sites.is_empty() { 0 } else { prof::MARKED },
    }));
    // SAFETY: the data lives for the rest of the process.
    unsafe {
        (a.register_vcpu_tb_exec_cb)(tb, on_tb_exec, QEMU_PLUGIN_CB_NO_REGS, data as *mut c_void)
    };
    for (insn, marker, host_delta, rest) in sites {
        let (rest, piece) = rest.freeze(prof::counters(1));
        let site = Box::into_raw(Box::new(Site {
            marker,
            host_delta,
            rest,
            counter: piece.counter,
        })) as *mut c_void;
        pieces.push(piece);
        // SAFETY: registering callbacks with leaked user data.
        unsafe {
            match marker {
                Marker::Ssc(_) => {
                    (a.register_vcpu_insn_exec_cb)(insn, on_ssc, QEMU_PLUGIN_CB_NO_REGS, site)
                }
                Marker::Named(_) => (a.register_vcpu_mem_cb)(
                    insn,
                    on_named,
                    QEMU_PLUGIN_CB_NO_REGS,
                    QEMU_PLUGIN_MEM_RW,
                    site,
                ),
            }
        }
    }
    prof::write(&Record::Block(profile::Block {
        start,
        end,
        taken_counter: (taken_counter != prof::NONE).then_some(taken_counter),
        fall_counter: None,
        pieces,
    }));
}

/// The instructions of the block translated at `start`, `len` bytes
/// without a region marker, as [`translate`] profiled them, decoded again
/// from the program's memory (cut.rs); none where it cannot be read.
pub fn instructions(start: u64, len: u32) -> Vec<profile::Insn> {
    let code = read_guest(start, len as usize);
    if code.len() != len as usize {
        return Vec::new();
    }
    let mut p = Profile::default();
    let mut at = 0;
    while at < code.len() {
        let pc = start + at as u64;
        match flopscope_isa::decode_one(&code[at..], pc) {
            Some(d) => {
                p.add_insn(pc, &classify(&d));
                at += d.len();
            }
            None => {
                // Undecodable here: its length as QEMU took it is unknown,
                // and so are the instructions after it.
                p.add_plain(pc);
                break;
            }
        }
    }
    p.insns
}

/// Whether `i` is a string instruction with a REP, REPE or REPNE prefix.
fn rep_string(i: &iced_x86::Instruction) -> bool {
    i.is_string_instruction() && (i.has_rep_prefix() || i.has_repe_prefix() || i.has_repne_prefix())
}

/// How a block whose last instruction is `last` ends (`next`: the address
/// after it).
fn block_end(last: Option<&iced_x86::Instruction>, next: u64) -> End {
    use iced_x86::{FlowControl, OpKind};
    let Some(i) = last else {
        return End::Other;
    };
    let near = i.op0_kind() == OpKind::NearBranch64;
    match i.flow_control() {
        FlowControl::Next => End::Fall { next },
        FlowControl::ConditionalBranch if near => End::Cond {
            taken: i.near_branch_target(),
            next,
        },
        FlowControl::UnconditionalBranch if near => End::Jump {
            target: i.near_branch_target(),
        },
        FlowControl::Call if near => End::Call {
            target: i.near_branch_target(),
            next,
        },
        FlowControl::IndirectCall => End::IndirectCall { next },
        _ if i.mnemonic() == iced_x86::Mnemonic::Syscall => End::Fall { next },
        _ => End::Other,
    }
}
