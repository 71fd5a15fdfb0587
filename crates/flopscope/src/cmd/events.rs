//! `flopscope events`: the hardware event set and formulas the perf engine
//! would use on this CPU or a named one.

use anyhow::Result;
use clap::Args;
use flopscope_engine_perf as perf;
use std::path::Path;

#[derive(Args)]
#[command(
    after_help = "Examples:\n  flopscope events            # this CPU, and whether its PMU can be opened\n  flopscope events --arch zen4\n  flopscope events --list"
)]
pub struct EventsArgs {
    /// A microarchitecture's event set instead of this CPU's (see --list;
    /// `flopscope peak`'s names, such as "Zen 4", are taken too).
    #[arg(long, visible_alias = "uarch", value_name = "NAME")]
    arch: Option<String>,
    /// List the known event sets.
    #[arg(long)]
    list: bool,
}

pub fn run(a: EventsArgs) -> Result<i32> {
    if a.list {
        print!("{}", perf::list_sets());
        return Ok(0);
    }
    if let Some(name) = &a.arch {
        print!("{}", perf::describe(perf::event_set_by_name(name)?));
        return Ok(0);
    }
    let cpu = perf::detect_cpu();
    match perf::event_set_for(&cpu) {
        Ok(set) => {
            print!("{}", perf::describe(set));
            print!("{}", perf::describe_on_machine(set, Path::new("/sys")));
            Ok(0)
        }
        Err(e) => {
            eprintln!("flopscope: {e}");
            print!("{}", perf::list_sets());
            Ok(crate::EXIT_FLOPSCOPE_ERROR)
        }
    }
}
