use crate::common::*;

/// A program that installs its own SIGPROF handler gets the sampler's
/// signals from then on and runs to the end; the file says so.
#[test]
fn own_sigprof_handler() {
    let s = scratch();
    let exe = compile(&s.bin, "spin.c", "spin", &[]);
    let out = run(sampled(&exe, &["own-handler", "0.2"], &s.out, &[]));
    assert_ok(&out);
    let received: u64 = stdout(&out)
        .trim()
        .strip_prefix("received ")
        .and_then(|n| n.parse().ok())
        .expect("the program prints what it received");
    assert!(received > 0);
    let p = &read(&s.out)[0];
    assert!(p.exited && p.handler_replaced);
}

/// A SIGPROF that is not the sampler's has its default action, as without
/// the sampler: the process dies of it.
#[test]
fn stray_sigprof_terminates_as_without_sampler() {
    use std::os::unix::process::ExitStatusExt;
    let s = scratch();
    let exe = compile(&s.bin, "spin.c", "spin", &[]);
    let mut child = sampled(&exe, &["forever"], &s.out, &[])
        .spawn()
        .expect("starts");
    wait_until("a first sample", || {
        read(&s.out).first().is_some_and(|p| p.signals >= 1)
    });
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGPROF) };
    let status = child.wait().expect("reaped");
    assert_eq!(status.signal(), Some(libc::SIGPROF), "{status}");
}

/// Bad settings: the program runs unsampled and says why on stderr.
#[test]
fn bad_settings_leave_the_program_alone() {
    let s = scratch();
    let exe = compile(&s.bin, "ratio.c", "ratio", &[]);
    for (var, value) in [
        (flopscope_sampler::HZ_ENV, "fast"),
        (flopscope_sampler::HZ_ENV, "0"),
        (flopscope_sampler::CAPACITY_ENV, "-1"),
    ] {
        let out = run(sampled(&exe, &["0.01"], &s.out, &[(var, value)]));
        assert_ok(&out);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "flopscope: sampler: {var}={value} is not a whole number"
            )),
            "{err}"
        );
    }
    let out = run(sampled(
        &exe,
        &["0.01"],
        &s.out,
        &[(flopscope_sampler::DIR_ENV, "rel")],
    ));
    assert_ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("FLOPSCOPE_SAMPLE_DIR=rel is not an absolute path"),
        "{err}"
    );
    let missing = s.out.join("missing");
    let out = run(sampled(&exe, &["0.01"], &missing, &[]));
    assert_ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot create") && err.contains("not sampled"),
        "{err}"
    );
    assert!(read(&s.out).is_empty());
}
