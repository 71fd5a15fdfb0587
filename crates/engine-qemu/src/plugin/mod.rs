//! The plugin side: installed by QEMU, counts into the shared counter file.
//!
//! Design (QEMU 7.2, plugin API v1, which has no per-vCPU scoreboards and
//! only a global inline add that loses updates between threads):
//! - at translation, each block's instructions are decoded and classified
//!   once by `flopscope-isa` into a short list of (counter slot, increment);
//! - at execution, one callback per block adds that list into the executing
//!   vCPU's own bank: plain adds, no atomics, no locks, no allocation;
//! - only instructions whose traffic is known at run time alone (REP
//!   strings, masked moves, gathers, XSAVE) get per-access memory callbacks;
//! - for attribution (functions, loops, lines), each block's instructions
//!   and end go to a code table at translation, and each execution adds 1
//!   to the block's own counter in the vCPU's bank (`profile`).

mod bank;
mod cut;
mod markers;
mod own_file;
mod profile;
mod regions;
mod translate;

pub mod api;

use api::{qemu_info_t, qemu_plugin_id_t};
use std::ffi::{c_char, c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The plugin API version this plugin was written against (QEMU 7.2).
#[no_mangle]
pub static qemu_plugin_version: c_int = 1;

/// Entry point called by QEMU when it loads the plugin.
///
/// # Safety
/// Called by QEMU with `argc` valid C strings in `argv`.
#[no_mangle]
pub unsafe extern "C" fn qemu_plugin_install(
    id: qemu_plugin_id_t,
    info: *const qemu_info_t,
    argc: c_int,
    argv: *const *const c_char,
) -> c_int {
    let args: Vec<String> = (0..argc.max(0) as usize)
        // SAFETY: QEMU passes argc valid NUL-terminated strings.
        .map(|i| {
            unsafe { CStr::from_ptr(*argv.add(i)) }
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    // SAFETY: QEMU passes a valid info pointer.
    let system = !info.is_null() && unsafe { (*info).system_emulation };
    match catch_unwind(AssertUnwindSafe(|| install(id, system, &args))) {
        Ok(Ok(())) => 0,
        Ok(Err(msg)) => {
            api::outs(&msg);
            eprintln!("flopscope plugin: {msg}");
            -1
        }
        Err(_) => -1,
    }
}

fn install(id: qemu_plugin_id_t, system: bool, args: &[String]) -> Result<(), String> {
    let api = api::resolve()?;
    if system {
        return Err(
            "the flopscope plugin counts user-mode programs (qemu-x86_64), not system emulation"
                .into(),
        );
    }
    let mut out = None;
    let mut create = false;
    let mut command = Vec::new();
    let mut ssc = (0u64, 0u64);
    let number = |v: &str| -> Result<u64, String> {
        let parsed = match v.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => v.parse(),
        };
        parsed.map_err(|_| format!("plugin argument value `{v}` is not a number"))
    };
    for a in args {
        match a.split_once('=') {
            Some(("out", path)) => out = Some(path.to_string()),
            Some(("create", v)) => create = number(v)? != 0,
            Some(("cmd", hex)) => command = unhex(hex)?,
            Some(("ssc_start", v)) => ssc.0 = number(v)?,
            Some(("ssc_stop", v)) => ssc.1 = number(v)?,
            Some(("ssc_once", v)) => {
                if number(v)? != 0 {
                    markers::SSC_GATE.set_once();
                }
            }
            _ => return Err(format!("unknown plugin argument `{a}` (expected out=PATH, create=1, cmd=HEX, ssc_start=N, ssc_stop=N, ssc_once=1)")),
        }
    }
    let out = out.ok_or("missing plugin argument out=PATH (the counter file made by flopscope)")?;
    bank::open_counter_file(&out, create, &command)?;
    if ssc != (0, 0) {
        let name = flopscope_counter_file::regions::ssc_region_name(ssc.0, ssc.1);
        let id = regions::region_id(name.as_bytes()).ok_or("cannot register the SSC region")?;
        markers::SSC_START.store(ssc.0, std::sync::atomic::Ordering::Relaxed);
        markers::SSC_STOP.store(ssc.1, std::sync::atomic::Ordering::Relaxed);
        markers::SSC_REGION.store(u64::from(id), std::sync::atomic::Ordering::Relaxed);
    }
    // SAFETY: registering callbacks with their v1 signatures.
    unsafe {
        (api.register_vcpu_tb_trans_cb)(id, translate::on_tb_trans);
        (api.register_vcpu_syscall_ret_cb)(id, bank::on_syscall_ret);
        (api.register_vcpu_syscall_cb)(id, bank::on_syscall);
        (api.register_atexit_cb)(id, bank::on_exit, std::ptr::null_mut());
    }
    Ok(())
}

/// The bytes of `cmd=HEX`: the program's command line (its arguments, each
/// ended by a NUL), hex-encoded because QEMU splits plugin arguments at
/// commas.
fn unhex(hex: &str) -> Result<Vec<u8>, String> {
    let bad = || format!("plugin argument cmd=`{hex}` is not hexadecimal");
    if !hex.len().is_multiple_of(2) {
        return Err(bad());
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2).ok_or_else(bad)?, 16).map_err(|_| bad()))
        .collect()
}
