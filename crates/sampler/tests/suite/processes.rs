use crate::common::*;
use std::path::Path;

/// A forked child writes its own files, with its own samples.
#[test]
fn fork_child_has_its_own_files() {
    let s = scratch();
    let exe = compile(&s.bin, "fork.c", "fork", &[]);
    let out = run(sampled(&exe, &["0.2"], &s.out, &[]));
    assert_ok(&out);
    let child: u32 = stdout(&out)
        .trim()
        .strip_prefix("child ")
        .and_then(|p| p.parse().ok())
        .expect("the program prints its child's pid");
    let procs = read(&s.out);
    assert_eq!(procs.len(), 2, "{procs:#?}");
    for p in &procs {
        assert!(p.exited, "pid {} did not record its exit", p.pid);
        let maps = p.maps_text.as_deref().expect("a maps file");
        let f = functions(&exe, maps, &["parent_work", "child_work"]);
        let c = counts_in(p, &f);
        let (mine, other) = if p.pid == child {
            (c[1], c[0])
        } else {
            (c[0], c[1])
        };
        assert!(
            other == 0 && mine as f64 >= 0.9 * p.total as f64,
            "pid {} (child {child}): {c:?} of {}; elsewhere {}",
            p.pid,
            p.total,
            elsewhere(p, &f)
        );
    }
    assert!(procs.iter().any(|p| p.pid == child));
}

/// A program that execs itself: one pid, two images, each with its own
/// samples and map; the first never exited.
#[test]
fn exec_gives_a_second_image() {
    let s = scratch();
    let exe = compile(&s.bin, "exec.c", "exec", &[]);
    let out = run(sampled(&exe, &["0.2"], &s.out, &[]));
    assert_ok(&out);
    let procs = read(&s.out);
    assert_eq!(procs.len(), 2, "{procs:#?}");
    assert_eq!(procs[0].pid, procs[1].pid);
    assert_eq!((procs[0].image, procs[1].image), (0, 1));
    assert!(!procs[0].exited && procs[1].exited);
    for (p, want) in procs.iter().zip([0, 1]) {
        let maps = p.maps_text.as_deref().expect("a maps file");
        let f = functions(&exe, maps, &["before_exec", "after_exec"]);
        let c = counts_in(p, &f);
        assert!(
            c[1 - want] == 0 && c[want] as f64 >= 0.9 * p.total as f64,
            "image {}: {c:?} of {}; elsewhere {}",
            p.image,
            p.total,
            elsewhere(p, &f)
        );
    }
}

/// SIGKILL: the samples so far and the map written at start are there.
#[test]
fn killed_process_keeps_samples_and_map() {
    let s = scratch();
    let exe = compile(&s.bin, "spin.c", "spin", &[]);
    let mut child = sampled(&exe, &["forever"], &s.out, &[])
        .spawn()
        .expect("starts");
    wait_until("50 signals", || {
        read(&s.out).first().is_some_and(|p| p.signals >= 50)
    });
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let procs = read(&s.out);
    assert_eq!(procs.len(), 1, "{procs:#?}");
    let p = &procs[0];
    assert!(!p.exited && p.cpu_time_s.is_none() && p.signals >= 50);
    let maps = p.maps_text.as_deref().expect("a maps file");
    let f = functions(&exe, maps, &["spin_forever"]);
    let c = counts_in(p, &f);
    assert!(
        c[0] as f64 >= 0.9 * p.total as f64,
        "{c:?} of {}; elsewhere {}",
        p.total,
        elsewhere(p, &f)
    );
}

/// Code loaded with dlopen after start-up, and no exit handlers (_exit):
/// the map was refreshed when the first sample fell in the new library.
#[test]
fn dlopened_library_is_in_the_map() {
    let s = scratch();
    let lib = compile(&s.bin, "plug.c", "libplug.so", &["-shared", "-fPIC"]);
    let exe = compile(&s.bin, "host.c", "host", &["-ldl"]);
    let out = run(sampled(
        &exe,
        &[lib.to_str().expect("UTF-8"), "0.3"],
        &s.out,
        &[],
    ));
    assert_ok(&out);
    let procs = read(&s.out);
    assert_eq!(procs.len(), 1, "{procs:#?}");
    let p = &procs[0];
    assert!(!p.exited);
    let maps = p.maps_text.as_deref().expect("a maps file");
    let f = functions(&lib, maps, &["plug_work"]);
    let c = counts_in(p, &f);
    assert!(
        c[0] as f64 >= 0.8 * p.total as f64,
        "{c:?} of {}; elsewhere {}",
        p.total,
        elsewhere(p, &f)
    );
}

/// A shell that runs the program: the shell's images and the program's are
/// all there, and the program's samples are in its function.
#[test]
fn through_a_shell() {
    let s = scratch();
    let exe = compile(&s.bin, "ratio.c", "ratio", &[]);
    let script = format!("{} 0.2; true", exe.display());
    let out = run(sampled(Path::new("sh"), &["-c", &script], &s.out, &[]));
    assert_ok(&out);
    let procs = read(&s.out);
    let ratio: Vec<_> = procs
        .iter()
        .filter(|p| {
            p.maps_text
                .as_deref()
                .is_some_and(|m| m.contains(exe.to_str().expect("UTF-8")))
        })
        .collect();
    assert_eq!(ratio.len(), 1, "{procs:#?}");
    let p = ratio[0];
    let maps = p.maps_text.as_deref().expect("a maps file");
    let f = functions(&exe, maps, &["work3", "work1"]);
    let c = counts_in(p, &f);
    assert!(
        (c[0] + c[1]) as f64 >= 0.9 * p.total as f64,
        "{c:?} of {}; elsewhere {}",
        p.total,
        elsewhere(p, &f)
    );
}
