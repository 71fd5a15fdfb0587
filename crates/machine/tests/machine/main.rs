//! Integration tests of the machine crate, one module per concern.

// The embedded table: parses, and every entry's FLOP/cycle agrees with its FMA units and width.
mod table;
// Theoretical peak arithmetic: table entries x cores x GHz, worked by hand.
mod peak;
// Detection on the machine the tests run on.
mod detect;
// The machine profile: JSON round trip and the peak it gives `count`.
mod profile;

use flopscope_machine::{Machine, Vendor};

/// A machine built by hand (no detection).
pub fn machine(
    vendor: Vendor,
    family: u32,
    model: u32,
    stepping: u32,
    brand: &str,
    flags: &[&str],
    cores: u32,
) -> Machine {
    let mut m = Machine::from_sources(None, None, std::path::Path::new("/nonexistent"));
    m.vendor = vendor;
    m.vendor_id = match vendor {
        Vendor::Intel => "GenuineIntel",
        Vendor::Amd => "AuthenticAMD",
        Vendor::Hygon => "HygonGenuine",
        Vendor::Other => "Other",
    }
    .into();
    (m.family, m.model, m.stepping) = (family, model, stepping);
    m.model_name = brand.into();
    m.flags = flags.iter().map(|s| s.to_string()).collect();
    (m.sockets, m.cores, m.threads) = (1, cores, cores);
    m
}

pub const AVX512: &[&str] = &["sse", "sse2", "avx", "fma", "avx2", "avx512f"];
pub const AVX2: &[&str] = &["sse", "sse2", "avx", "fma", "avx2"];
