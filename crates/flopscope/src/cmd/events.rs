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
    match detected_set() {
        Ok((set, why)) => {
            if let Some(why) = why {
                println!("{why}");
            }
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

/// The event set for this CPU, by its family and model; under a hypervisor
/// whose model number the CPU's ISA contradicts (a "Rocket Lake" with
/// AVX512-FP16), the set of the microarchitecture the peak takes instead
/// (`flopscope_machine::uarch`), with a line saying why.
pub fn detected_set() -> Result<(&'static perf::EventSet, Option<String>), perf::PerfError> {
    set_for(&flopscope_machine::Machine::identify())
}

fn set_for(
    machine: &flopscope_machine::Machine,
) -> Result<(&'static perf::EventSet, Option<String>), perf::PerfError> {
    let by_isa = flopscope_machine::uarch::table()
        .lookup(&machine.cpu_key())
        .and_then(|u| {
            let aside = u.instead_of?;
            let set = perf::event_set_named(&u.name)?;
            Some((set, u.name, aside))
        });
    if let Some((set, name, aside)) = by_isa {
        let why = format!(
            "event set {} ({name}) chosen by the ISA flags: CPUID's model number is {:?}'s, whose cores never have {}, so a hypervisor reports a model of its own (pass --arch if you know the host's)",
            set.name,
            aside.name,
            aside.lacks.join(", ")
        );
        return Ok((perf::usable(set)?, Some(why)));
    }
    let cpu = perf::CpuId {
        vendor: machine.vendor_id.clone(),
        family: machine.family,
        model: machine.model,
        stepping: machine.stepping,
        model_name: Some(machine.model_name.clone()),
    };
    Ok((perf::event_set_for(&cpu)?, None))
}

#[cfg(test)]
mod tests {
    use flopscope_machine::Machine;

    /// A KVM guest seen on a Sapphire Rapids-class host: Rocket Lake's
    /// model number with AVX512-FP16 and BF16.
    fn guest(hypervisor: bool) -> Machine {
        let mut m = Machine::from_sources(None, None, std::path::Path::new("/nonexistent"));
        m.vendor_id = "GenuineIntel".into();
        m.vendor = flopscope_machine::Vendor::Intel;
        (m.family, m.model, m.stepping) = (6, 0xa7, 1);
        m.flags = [
            "sse2",
            "avx",
            "fma",
            "avx2",
            "avx512f",
            "avx512_fp16",
            "avx512_bf16",
        ]
        .map(String::from)
        .to_vec();
        m.hypervisor = hypervisor;
        m
    }

    #[test]
    fn a_hypervisors_model_number_gives_way_to_the_isa_as_for_the_peak() {
        let (set, why) = super::set_for(&guest(true)).unwrap();
        assert_eq!(set.name, "spr");
        assert_eq!(
            why.unwrap(),
            "event set spr (Sapphire Rapids) chosen by the ISA flags: CPUID's model number is \
             \"Rocket Lake\"'s, whose cores never have avx512_fp16, avx512_bf16, so a hypervisor \
             reports a model of its own (pass --arch if you know the host's)"
        );
        let (set, why) = super::set_for(&guest(false)).unwrap();
        assert_eq!((set.name.as_str(), why), ("icl", None));
    }
}
