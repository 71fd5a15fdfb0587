//! Linkage names -> the names a performance engineer reads.
//!
//! Rust (legacy and v0) by `rustc-demangle`, C++ (Itanium) by `cpp_demangle`.
//! gfortran's module procedures (`__mymod_MOD_proc`) are hand-written here:
//! no crate demangles them, and the scheme is one fixed infix (gfortran's
//! `trans-decl.cc`, `gfc_sym_mangled_function_id`). Anything else, such as
//! C names and gcc's outlined OpenMP bodies (`main._omp_fn.0`), is kept as is.

use std::borrow::Cow;

/// `name` demangled, or `name` itself when no scheme recognises it. A
/// suffix after `@` (`_Znwm@plt`, a PLT stub's name) is kept as it is.
pub fn demangle(name: &str) -> Cow<'_, str> {
    if let Some((base, suffix)) = name.split_once('@') {
        return match demangle(base) {
            Cow::Owned(d) => Cow::Owned(format!("{d}@{suffix}")),
            Cow::Borrowed(_) => Cow::Borrowed(name),
        };
    }
    if let Some(rust) = rust(name) {
        return Cow::Owned(rust);
    }
    if let Some(cpp) = cpp(name) {
        return Cow::Owned(cpp);
    }
    if let Some(fortran) = gfortran(name) {
        return Cow::Owned(fortran);
    }
    Cow::Borrowed(name)
}

fn rust(name: &str) -> Option<String> {
    // Legacy Rust names are Itanium-shaped (`_ZN...17h<hash>E`): only take
    // them when the hash is there, so C++ `_ZN...` names reach cpp_demangle.
    let legacy = name.starts_with("_ZN") && name.contains("17h") && name.ends_with('E');
    let v0 = name.starts_with("_R");
    if !(legacy || v0) {
        return None;
    }
    // `{:#}` drops the legacy hash, as addr2line and backtraces print it.
    rustc_demangle::try_demangle(name)
        .ok()
        .map(|d| format!("{d:#}"))
}

fn cpp(name: &str) -> Option<String> {
    // cpp_demangle also parses bare types ("i" -> "int"): only mangled names.
    if !name.starts_with("_Z") {
        return None;
    }
    cpp_demangle::Symbol::new(name).ok()?.demangle().ok()
}

fn gfortran(name: &str) -> Option<String> {
    let rest = name.strip_prefix("__")?;
    // gfortran lower-cases identifiers, so "_MOD_" cannot occur in a module
    // name: the first occurrence is the separator.
    let (module, proc) = rest.split_once("_MOD_")?;
    if module.is_empty() || proc.is_empty() {
        return None;
    }
    Some(format!("{module}::{proc}"))
}

#[cfg(test)]
mod tests {
    use super::demangle;

    #[test]
    fn languages() {
        let cases = [
            ("main", "main"),
            ("main._omp_fn.0", "main._omp_fn.0"),
            ("MAIN__", "MAIN__"),
            ("__mymod_MOD_axpy", "mymod::axpy"),
            ("__my_mod_MOD_do_it", "my_mod::do_it"),
            ("_ZN2ns3fooEv", "ns::foo()"),
            ("_Znwm@plt", "operator new(unsigned long)@plt"),
            ("memcpy@plt", "memcpy@plt"),
            ("_ZN2ns3BoxIiE3getEv", "ns::Box<int>::get()"),
            ("_Z4workv._omp_fn.0", "work() [clone ._omp_fn.0]"),
            (
                "_ZN4core3ptr13drop_in_place17h0123456789abcdefE",
                "core::ptr::drop_in_place",
            ),
            ("_RNvCs1234_7mycrate3foo", "mycrate::foo"),
            ("_Z", "_Z"),
        ];
        for (mangled, want) in cases {
            assert_eq!(demangle(mangled), want, "{mangled}");
        }
    }
}
