//! The preload library is marked DF_1_INITFIRST (`-z initfirst`): the
//! dynamic loader runs its constructor, the take-over, before any other
//! object's (the C library's, the program's libraries'), so that their
//! constructors run from the code cache and are counted. Without it the
//! preloaded library's constructor came near the end, after those of
//! every library the program loads (a library's table-building constructor
//! ran uncounted under this engine and counted under emulation).
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,initfirst");
}
