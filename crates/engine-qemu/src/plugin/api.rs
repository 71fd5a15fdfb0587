//! The QEMU TCG plugin API, version 1 (QEMU 7.2's `include/qemu/qemu-plugin.h`).
//!
//! The functions are looked up with `dlsym` when QEMU installs the plugin
//! instead of being linked as undefined symbols: the same crate is then also
//! an ordinary library that the CLI links (for the counter-file layout)
//! without dangling references to QEMU.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::OnceLock;

pub type qemu_plugin_id_t = u64;
pub type qemu_plugin_meminfo_t = u32;

#[repr(C)]
pub struct qemu_plugin_tb {
    _private: [u8; 0],
}

#[repr(C)]
pub struct qemu_plugin_insn {
    _private: [u8; 0],
}

#[repr(C)]
pub struct qemu_info_version {
    pub min: c_int,
    pub cur: c_int,
}

#[repr(C)]
pub struct qemu_info_t {
    pub target_name: *const c_char,
    pub version: qemu_info_version,
    pub system_emulation: bool,
    pub smp_vcpus: c_int,
    pub max_vcpus: c_int,
}

/// `enum qemu_plugin_cb_flags`: the callback reads no guest registers.
pub const QEMU_PLUGIN_CB_NO_REGS: c_int = 0;
/// `enum qemu_plugin_mem_rw`.
pub const QEMU_PLUGIN_MEM_RW: c_int = 3;

pub type vcpu_simple_cb_t = extern "C" fn(qemu_plugin_id_t, c_uint);
pub type vcpu_udata_cb_t = extern "C" fn(c_uint, *mut c_void);
pub type vcpu_tb_trans_cb_t = extern "C" fn(qemu_plugin_id_t, *mut qemu_plugin_tb);
pub type vcpu_mem_cb_t = extern "C" fn(c_uint, qemu_plugin_meminfo_t, u64, *mut c_void);
pub type udata_cb_t = extern "C" fn(qemu_plugin_id_t, *mut c_void);
pub type vcpu_syscall_ret_cb_t = extern "C" fn(qemu_plugin_id_t, c_uint, i64, i64);
/// `qemu_plugin_vcpu_syscall_cb_t`: the number and eight arguments.
pub type vcpu_syscall_cb_t =
    extern "C" fn(qemu_plugin_id_t, c_uint, i64, u64, u64, u64, u64, u64, u64, u64, u64);

/// The subset of the API flopscope uses, resolved once at install time.
pub struct Api {
    pub register_vcpu_init_cb: unsafe extern "C" fn(qemu_plugin_id_t, vcpu_simple_cb_t),
    pub register_vcpu_tb_trans_cb: unsafe extern "C" fn(qemu_plugin_id_t, vcpu_tb_trans_cb_t),
    pub register_vcpu_tb_exec_cb:
        unsafe extern "C" fn(*mut qemu_plugin_tb, vcpu_udata_cb_t, c_int, *mut c_void),
    pub register_vcpu_insn_exec_cb:
        unsafe extern "C" fn(*mut qemu_plugin_insn, vcpu_udata_cb_t, c_int, *mut c_void),
    pub register_vcpu_mem_cb:
        unsafe extern "C" fn(*mut qemu_plugin_insn, vcpu_mem_cb_t, c_int, c_int, *mut c_void),
    pub register_vcpu_syscall_ret_cb: unsafe extern "C" fn(qemu_plugin_id_t, vcpu_syscall_ret_cb_t),
    pub register_vcpu_syscall_cb: unsafe extern "C" fn(qemu_plugin_id_t, vcpu_syscall_cb_t),
    pub register_atexit_cb: unsafe extern "C" fn(qemu_plugin_id_t, udata_cb_t, *mut c_void),
    pub tb_n_insns: unsafe extern "C" fn(*const qemu_plugin_tb) -> usize,
    pub tb_get_insn: unsafe extern "C" fn(*const qemu_plugin_tb, usize) -> *mut qemu_plugin_insn,
    pub insn_data: unsafe extern "C" fn(*const qemu_plugin_insn) -> *const c_void,
    pub insn_size: unsafe extern "C" fn(*const qemu_plugin_insn) -> usize,
    pub insn_vaddr: unsafe extern "C" fn(*const qemu_plugin_insn) -> u64,
    pub insn_haddr: unsafe extern "C" fn(*const qemu_plugin_insn) -> *mut c_void,
    pub mem_size_shift: unsafe extern "C" fn(qemu_plugin_meminfo_t) -> c_uint,
    pub mem_is_store: unsafe extern "C" fn(qemu_plugin_meminfo_t) -> bool,
    pub outs: unsafe extern "C" fn(*const c_char),
}

static API: OnceLock<Api> = OnceLock::new();

/// The resolved API. Only valid after [`resolve`] succeeded (inside QEMU).
pub fn api() -> &'static Api {
    API.get()
        .expect("the QEMU plugin API is resolved at install")
}

unsafe fn sym<T: Copy>(name: &CStr) -> Result<T, String> {
    // SAFETY: RTLD_DEFAULT searches the global scope, where qemu-x86_64 (a
    // dynamically linked executable built with plugin support) exports its API.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if p.is_null() {
        return Err(format!(
            "{} is not exported by this QEMU",
            name.to_string_lossy()
        ));
    }
    // SAFETY: T is a function pointer type with the C signature of `name`.
    Ok(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&p) })
}

/// Looks the API up in the QEMU process that loaded the plugin.
pub fn resolve() -> Result<&'static Api, String> {
    if let Some(a) = API.get() {
        return Ok(a);
    }
    // SAFETY: each name is paired with its v1 signature.
    let api = unsafe {
        Api {
            register_vcpu_init_cb: sym(c"qemu_plugin_register_vcpu_init_cb")?,
            register_vcpu_tb_trans_cb: sym(c"qemu_plugin_register_vcpu_tb_trans_cb")?,
            register_vcpu_tb_exec_cb: sym(c"qemu_plugin_register_vcpu_tb_exec_cb")?,
            register_vcpu_insn_exec_cb: sym(c"qemu_plugin_register_vcpu_insn_exec_cb")?,
            register_vcpu_mem_cb: sym(c"qemu_plugin_register_vcpu_mem_cb")?,
            register_vcpu_syscall_ret_cb: sym(c"qemu_plugin_register_vcpu_syscall_ret_cb")?,
            register_vcpu_syscall_cb: sym(c"qemu_plugin_register_vcpu_syscall_cb")?,
            register_atexit_cb: sym(c"qemu_plugin_register_atexit_cb")?,
            tb_n_insns: sym(c"qemu_plugin_tb_n_insns")?,
            tb_get_insn: sym(c"qemu_plugin_tb_get_insn")?,
            insn_data: sym(c"qemu_plugin_insn_data")?,
            insn_size: sym(c"qemu_plugin_insn_size")?,
            insn_vaddr: sym(c"qemu_plugin_insn_vaddr")?,
            insn_haddr: sym(c"qemu_plugin_insn_haddr")?,
            mem_size_shift: sym(c"qemu_plugin_mem_size_shift")?,
            mem_is_store: sym(c"qemu_plugin_mem_is_store")?,
            outs: sym(c"qemu_plugin_outs")?,
        }
    };
    Ok(API.get_or_init(|| api))
}

/// Prints a line through QEMU's log (stderr unless redirected).
pub fn outs(msg: &str) {
    if let (Some(a), Ok(c)) = (
        API.get(),
        std::ffi::CString::new(format!("flopscope plugin: {msg}\n")),
    ) {
        // SAFETY: a NUL-terminated string that outlives the call.
        unsafe { (a.outs)(c.as_ptr()) }
    }
}
