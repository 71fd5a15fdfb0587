//! The roofline of real runs read at a glance: counted programs (one point,
//! several loops, fp64 and fp32 together) under four memory levels close
//! together, charted through the CLI; every text of the SVG (a bandwidth
//! roof's label turned along its roof, checked as the turned rectangle it
//! is) clear of every other, of every roof and of every marker; only the
//! roofs of the precisions computed; and the HTML page loaded in headless
//! Chromium (when installed): scripts run without errors, the chart drawn
//! at its size, the points table once.

use crate::support::{self, FLOPSCOPE};
use flopscope_model::Report;
use flopscope_roofline::font::EmbeddedFont;
use flopscope_roofline::render::svg_texts;
use flopscope_roofline::roofs::RoofKind;
use flopscope_roofline::{chart, svg, Chart, ChartOptions, Input, PointSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn flopscope(args: &[&std::ffi::OsStr]) -> String {
    let out = Command::new(FLOPSCOPE).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "flopscope {args:?}: {err}");
    err
}

/// `exe args` counted natively (timed) into `dir/name`, with bandwidth
/// roofs written into its machine record as a saved profile gives them:
/// one core's L1, L2, L3 and DRAM, each level under twice the one above
/// (bands between their roofs thinner than the roofs' labels are long).
fn counted(dir: &Path, name: &str, exe: &Path, args: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut a: Vec<&std::ffi::OsStr> = vec![
        "count".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
        "--".as_ref(),
        exe.as_os_str(),
    ];
    a.extend(args.iter().map(std::ffi::OsStr::new));
    flopscope(&a);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    v["machine"]["ceilings"]["bandwidth"] = serde_json::json!([
        {"level": "L1", "gbytes_per_s": 180.0, "measured": true},
        {"level": "L2", "gbytes_per_s": 95.0, "measured": true},
        {"level": "L3", "gbytes_per_s": 55.0, "measured": true},
        {"level": "DRAM", "gbytes_per_s": 20.5, "measured": true}
    ]);
    std::fs::write(&out, serde_json::to_string(&v).unwrap()).unwrap();
    out
}

/// The chart the CLI draws of `reports` (`flopscope roofline REPORTS
/// [--points WHAT]`, default width and title), laid out again here to
/// know where its roofs and markers are.
fn same_chart(reports: &[Report], names: &[&Path], points: PointSet) -> Chart {
    let labels: Vec<String> = names
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let inputs: Vec<Input> = reports
        .iter()
        .zip(&labels)
        .map(|(report, label)| Input { label, report })
        .collect();
    let ceilings = reports[0].machine.as_ref().unwrap().ceilings.clone();
    chart(
        &inputs,
        &ceilings,
        &ChartOptions {
            points,
            title: format!("Roofline: {}", reports[0].command.join(" ")),
            ..Default::default()
        },
    )
}

/// Every text of the CLI's SVG, read back from it, against every other,
/// every roof and every marker of the same chart laid out again; and the
/// layout's own problems (a label without a free place).
fn check(name: &str, cli_svg: &str, c: &Chart) {
    assert_eq!(
        svg(c).unwrap(),
        cli_svg,
        "{name}: the CLI drew another chart"
    );
    let font = EmbeddedFont::new();
    let texts = svg_texts(cli_svg);
    assert!(texts.len() > 15, "{name}: {} texts", texts.len());
    let clashes = c.clashes(&texts, &font);
    assert!(clashes.is_empty(), "{name}: {clashes:#?}");
    let problems = c.problems(&font);
    assert!(problems.is_empty(), "{name}: {problems:#?}");
}

fn chart_svg(dir: &Path, reports: &[&Path], extra: &[&str], name: &str) -> String {
    let out = dir.join(name);
    let mut a: Vec<&std::ffi::OsStr> = vec!["roofline".as_ref()];
    a.extend(reports.iter().map(|r| r.as_os_str()));
    a.extend(extra.iter().map(std::ffi::OsStr::new));
    a.extend(["-o".as_ref(), out.as_os_str()]);
    flopscope(&a);
    std::fs::read_to_string(&out).unwrap()
}

#[test]
fn real_charts_have_no_text_over_another_a_roof_or_a_marker_and_only_the_roofs_that_matter() {
    let dir = tempfile::tempdir().unwrap();
    let fp64 = counted(
        dir.path(),
        "triad.json",
        &support::build("triad.c", &["-O2", "-g"]),
        &["4096", "3000"],
    );
    let fp32 = counted(
        dir.path(),
        "striad.json",
        &support::build("triad.c", &["-O2", "-g", "-DSINGLE"]),
        &["4096", "3000"],
    );
    let loops = counted(
        dir.path(),
        "where.json",
        &support::build("matmul.c", &["-O2", "-g"]),
        &["200", "5"],
    );
    for (name, reports, extra) in [
        ("one point", vec![fp64.as_path()], vec!["--points", "total"]),
        ("loops", vec![loops.as_path()], vec![]),
        (
            "functions",
            vec![loops.as_path()],
            vec!["--points", "functions"],
        ),
        (
            "fp32 and fp64",
            vec![fp64.as_path(), fp32.as_path()],
            vec!["--points", "total"],
        ),
    ] {
        let svg = chart_svg(dir.path(), &reports, &extra, "c.svg");
        assert!(
            svg.contains(">DRAM 20.5 GB/s (measured)<"),
            "{name}: no DRAM roof"
        );
        let fp32_roof = svg.contains(">fp32 ");
        assert_eq!(fp32_roof, name == "fp32 and fp64", "{name}: fp32 roofs");
        // One compute roof per precision here (all theoretical): no roof per ISA.
        assert_eq!(
            svg.matches(" GFLOP/s (theoretical)<").count(),
            1 + usize::from(fp32_roof),
            "{name}"
        );
        let rs: Vec<Report> = reports.iter().map(|r| Report::load(r).unwrap()).collect();
        let points = match extra.get(1) {
            Some(&"total") => PointSet::Total,
            Some(&"functions") => PointSet::Functions,
            _ => PointSet::Auto,
        };
        let c = same_chart(&rs, &reports, points);
        // Every memory level's roof, its label along it.
        let turned: Vec<f64> = c
            .roofs
            .iter()
            .filter(|r| r.roof.kind == RoofKind::Bandwidth)
            .map(|r| r.label.angle)
            .collect();
        assert_eq!(turned.len(), 4, "{name}");
        assert!(
            turned.iter().all(|a| *a > 20.0 && *a < 80.0),
            "{name}: {turned:?}"
        );
        check(name, &svg, &c);
    }
    // Without bandwidth roofs, the chart says how to get them.
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&fp64).unwrap()).unwrap();
    v["machine"]["ceilings"]["bandwidth"] = serde_json::json!([]);
    let bare = dir.path().join("bare.json");
    std::fs::write(&bare, serde_json::to_string(&v).unwrap()).unwrap();
    let svg = chart_svg(dir.path(), &[&bare], &[], "bare.svg");
    assert!(svg.contains("No bandwidth roof") && svg.contains("flopscope bench --save"));
    let c = same_chart(&[Report::load(&bare).unwrap()], &[&bare], PointSet::Auto);
    check("no bandwidth roof", &svg, &c);
}

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
fn the_html_page_loads_in_a_browser_without_layout_errors() {
    let Some(browser) = chromium() else {
        eprintln!("skipped: no chromium (scripts/setup.sh installs Debian's)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let r = counted(
        dir.path(),
        "matmul.json",
        &support::build("matmul.c", &["-O2", "-g"]),
        &["200", "5"],
    );
    let page = dir.path().join("page.html");
    flopscope(&[
        "roofline".as_ref(),
        r.as_os_str(),
        "-o".as_ref(),
        page.as_os_str(),
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<table class=\"points\">").count(), 1);
    // The chart inside the page has no table of its own.
    assert!(!html.contains(">attainable GFLOP/s</text>"));
    // The page's script measures the chart after layout and writes it into the DOM.
    let probe = dir.path().join("probe.html");
    std::fs::write(
        &probe,
        html.replace(
            "</body>",
            "<script>window.onerror=function(m){document.title='JSERROR '+m};\
             addEventListener('load',function(){var s=document.querySelector('figure svg').getBoundingClientRect();\
             var w=document.documentElement.scrollWidth;\
             document.body.setAttribute('data-probe',Math.round(s.width)+'x'+Math.round(s.height)+' page '+w)});</script></body>",
        ),
    )
    .unwrap();
    let url = format!("file://{}", probe.display());
    let run = |extra: &[&str]| {
        let out = Command::new(browser)
            .args([
                "--headless",
                "--disable-gpu",
                "--no-sandbox",
                "--window-size=1280,1600",
            ])
            .args(extra)
            .arg(&url)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    let dom = run(&["--dump-dom", "--virtual-time-budget=2000"]);
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(!dom.contains("<title>JSERROR"), "a script failed");
    let stderr = String::from_utf8_lossy(&run(&["--dump-dom"]).stderr).into_owned();
    assert!(!stderr.contains("Uncaught"), "{stderr}");
    let probe = dom
        .split("data-probe=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("the probe ran");
    let (size, page_w) = probe.split_once(" page ").unwrap();
    let (w, h) = size.split_once('x').unwrap();
    let (w, h, page_w): (u32, u32, u32) = (
        w.parse().unwrap(),
        h.parse().unwrap(),
        page_w.parse().unwrap(),
    );
    assert!(w >= 900 && h >= 500, "the chart is {w}x{h}");
    // Nothing wider than the window but the scrolling tables' own boxes.
    assert!(page_w <= 1280, "the page is {page_w} pixels wide");
    let shot = dir.path().join("page.png");
    run(&[&format!("--screenshot={}", shot.display())]);
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}
