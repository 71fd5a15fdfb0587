// Integration tests of the sampler, one binary: real C programs (gcc) run
// under the real preload library (built by `common::preload_lib`).

/// Building the library and the programs, running them, addresses to functions.
#[path = "suite/common.rs"]
mod common;
/// The program's own SIGPROF handler, a stray SIGPROF, bad settings, a full file.
#[path = "suite/edges.rs"]
mod edges;
/// fork, exec, SIGKILL, a library loaded with dlopen before _exit.
#[path = "suite/processes.rs"]
mod processes;
/// CPU time split 3:1 between two functions comes back 3:1, and adds up.
#[path = "suite/ratio.rs"]
mod ratio;
/// Threads: both sampled, pthread_exit unharmed, timers deleted with their threads.
#[path = "suite/threads.rs"]
mod threads;
