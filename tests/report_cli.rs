//! `flopscope report` and `flopscope roofline` on reports of real runs:
//! merge, diff, the exports and the charts, through the command line.

use crate::support::{self, FLOPSCOPE};
use flopscope_model::sde_mix::parse_sde_totals;
use flopscope_model::Report;
use std::path::Path;
use std::process::Command;

/// Counts `two_regions N 10` built with AVX2+FMA into `dir/name`.
fn counted(dir: &Path, name: &str, n: u64) -> std::path::PathBuf {
    let exe = crate::reports::two_regions(support::AVX2_FMA);
    let out = dir.join(name);
    let s = Command::new(FLOPSCOPE)
        .args(["count", "--format", "json", "-o"])
        .arg(&out)
        .arg("--")
        .arg(exe)
        .args([n.to_string(), "10".into()])
        .output()
        .unwrap();
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    out
}

fn flopscope(args: &[&std::ffi::OsStr]) -> String {
    let out = Command::new(FLOPSCOPE).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "flopscope {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn report_merges_diffs_and_exports() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        counted(dir.path(), "rank0.json", 1000),
        counted(dir.path(), "rank1.json", 3000),
    );
    let merged = dir.path().join("merged.json");
    let html = dir.path().join("merged.html");
    flopscope(&[
        "report".as_ref(),
        a.as_os_str(),
        b.as_os_str(),
        "-o".as_ref(),
        merged.as_os_str(),
        "--html".as_ref(),
        html.as_os_str(),
    ]);
    let m = Report::load(&merged).unwrap();
    assert_eq!(m.summary.flop.total, 3 * 4000 * 10);
    assert_eq!(m.processes.len(), 2);
    let page = std::fs::read_to_string(&html).unwrap();
    // Self-contained: its only script is inline (the sortable tables).
    assert!(page.contains("<svg") && page.contains("rank1.json") && !page.contains("<script src"));

    let table = flopscope(&["report".as_ref(), a.as_os_str(), b.as_os_str()]);
    assert!(
        table.contains("Load imbalance (FLOP): max/mean 1.500"),
        "{table}"
    );

    let d = flopscope(&[
        "report".as_ref(),
        "--diff".as_ref(),
        a.as_os_str(),
        b.as_os_str(),
    ]);
    assert!(d.contains("axpy") && d.contains("+40,000"), "{d}");

    let mix = flopscope(&[
        "report".as_ref(),
        a.as_os_str(),
        "--format".as_ref(),
        "sde-mix".as_ref(),
    ]);
    let r = Report::load(&a).unwrap();
    let t = parse_sde_totals(&mix);
    assert_eq!(t.flop(), u128::from(r.summary.flop.total));
    assert_eq!(
        t.bytes_read + t.bytes_written,
        u128::from(r.summary.bytes.unwrap().total().0)
    );
}

#[test]
fn roofline_writes_svg_png_and_html() {
    let dir = tempfile::tempdir().unwrap();
    let a = counted(dir.path(), "run.json", 2000);
    let machine = dir.path().join("machine.json");
    std::fs::write(
        &machine,
        r#"{"source":"test","machine":"test","compute":[{"name":"fp64 FMA","precision":"fp64","width_bits":256,"gflops":100.0,"measured":false}],"bandwidth":[{"level":"L1","gbytes_per_s":500.0,"measured":true},{"level":"DRAM","gbytes_per_s":20.0,"measured":true}]}"#,
    )
    .unwrap();
    for ext in ["svg", "png", "html"] {
        let out = dir.path().join(format!("chart.{ext}"));
        flopscope(&[
            "roofline".as_ref(),
            a.as_os_str(),
            "--machine".as_ref(),
            machine.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        let bytes = std::fs::read(&out).unwrap();
        match ext {
            "png" => assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n"),
            _ => assert!(String::from_utf8(bytes)
                .unwrap()
                .contains("DRAM 20.0 GB/s (measured)")),
        }
    }
    // Narrower than the layout is tested for: refused, saying what is
    // accepted, and nothing written.
    let narrow = dir.path().join("narrow.svg");
    let out = Command::new(FLOPSCOPE)
        .args(["roofline".as_ref(), a.as_os_str(), "--width".as_ref()])
        .args(["600".as_ref(), "-o".as_ref(), narrow.as_os_str()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("640..=4000"), "{err}");
    assert!(!narrow.exists());
}

#[test]
fn reports_of_different_programs_are_never_summed() {
    let dir = tempfile::tempdir().unwrap();
    let a = counted(dir.path(), "sse.json", 1000);
    let exe = support::build("triad.c", support::SSE2);
    let b = dir.path().join("triad.json");
    let s = Command::new(FLOPSCOPE)
        .args(["count", "-o"])
        .arg(&b)
        .arg("--")
        .arg(exe)
        .args(["1000", "5"])
        .output()
        .unwrap();
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let refused = |args: &[&std::ffi::OsStr]| {
        let out = Command::new(FLOPSCOPE).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("not parts of one job") && err.contains("--allow-different"),
            "{err}"
        );
    };
    refused(&["report".as_ref(), a.as_os_str(), b.as_os_str()]);
    let html = dir.path().join("both.html");
    refused(&[
        "roofline".as_ref(),
        a.as_os_str(),
        b.as_os_str(),
        "-o".as_ref(),
        html.as_os_str(),
    ]);
    // Shown one by one, each with its own counts.
    let (ra, rb) = (Report::load(&a).unwrap(), Report::load(&b).unwrap());
    let json = flopscope(&[
        "report".as_ref(),
        a.as_os_str(),
        b.as_os_str(),
        "--allow-different".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    let both: Vec<Report> = serde_json::from_str(&json).unwrap();
    assert_eq!(both.len(), 2);
    assert_eq!(both[0].summary.flop.total, ra.summary.flop.total);
    assert_eq!(both[1].summary.flop.total, rb.summary.flop.total);
    let table = flopscope(&[
        "report".as_ref(),
        a.as_os_str(),
        b.as_os_str(),
        "--allow-different".as_ref(),
    ]);
    assert!(
        table.contains("== sse.json ==") && table.contains("== triad.json =="),
        "{table}"
    );
    assert!(!table.contains("Load imbalance"), "{table}");
    // The chart draws each as its own series.
    flopscope(&[
        "roofline".as_ref(),
        a.as_os_str(),
        b.as_os_str(),
        "--allow-different".as_ref(),
        "-o".as_ref(),
        html.as_os_str(),
    ]);
    assert!(std::fs::read_to_string(&html).unwrap().contains("<svg"));
}
