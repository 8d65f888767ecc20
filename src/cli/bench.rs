//! `ptxmm bench`: the benchmark families, each point measured in its own process.

use crate::cli::ExitCode;

/// The machine, for the context of a table: cores and CPU model.
pub(crate) fn machine_line() -> String {
    let cores = std::thread::available_parallelism().map_or_else(|_| "? cores".to_string(), |n| format!("{n} cores"));
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split_once(':')).map(|(_, v)| v.trim().to_string()));
    match cpu {
        Some(cpu) => format!("{cores} (available_parallelism), {cpu}"),
        None => format!("{cores} (available_parallelism), CPU model unknown"),
    }
}

/// This process's command line, quoted for a shell where needed.
pub(crate) fn command_line() -> String {
    let quote = |a: String| {
        if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c)) {
            a
        } else {
            format!("'{}'", a.replace('\'', "'\\''"))
        }
    };
    std::env::args().map(quote).collect::<Vec<_>>().join(" ")
}

/// `ptxmm bench`: measure each point in a child process (`bench-point`) and print the table.
pub(crate) fn cmd_bench(quick: bool, families: &[String], json: bool, timeout: f64, no_explain: bool) -> ExitCode {
    use crate::families::{self, Measurement};
    let mut wanted = Vec::new();
    for f in families {
        match families::family_name(f) {
            Some(name) => wanted.push(name),
            None => {
                eprintln!("error: --family: unknown family `{f}` (one of: {})", families::FAMILIES.join(", "));
                return ExitCode::from(2);
            }
        }
    }
    let points: Vec<_> = if quick { families::quick_points() } else { families::all_points() }
        .into_iter()
        .filter(|p| wanted.is_empty() || wanted.contains(&p.family))
        .collect();
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot find this executable to run the points: {e}");
            return ExitCode::from(2);
        }
    };
    let limit = crate::Limits::timeout_from_secs(timeout);
    let started = std::time::Instant::now();
    if json {
        eprintln!("Machine: {}", machine_line());
        eprintln!("Command: {}", command_line());
    }
    let mut rows = Vec::new();
    // Points whose child crashed (not those stopped by a limit).
    let mut failed = Vec::new();
    for (i, point) in points.iter().enumerate() {
        let (row, crashed) = measure_in_child(&exe, point, timeout, limit, no_explain);
        if crashed {
            failed.push(row.name.clone());
        }
        let note = match (&row.error, row.mismatch()) {
            (_, true) => " MISMATCH".to_string(),
            (Some(e), _) => format!(" ({e})"),
            _ => String::new(),
        };
        eprintln!(
            "[{}/{}] {} {}: {} in {:.3} s{note}",
            i + 1,
            points.len(),
            point.family,
            point.params,
            row.verdict.as_deref().unwrap_or("error"),
            row.run_s
        );
        if json {
            let mut v = serde_json::to_value(&row).expect("measurements serialise");
            v["schema_version"] = crate::decide::report::SCHEMA_VERSION.into();
            outln!("{v}");
        }
        rows.push(row);
    }
    if !json {
        outln!("Machine: {}", machine_line());
        outln!("Command: {}", command_line());
        outln!(
            "Limits: --timeout {timeout} s for each of verdict, liveness{} per point; --unroll per point; model {}",
            if no_explain { "" } else { ", explanation" },
            crate::config::models::DEFAULT_MODEL
        );
        outln!("Peak MB: the child process's VmHWM (MiB). The verdict's search statistics: evaluations (of the model, on partial and complete candidates), partial (candidates built a choice at a time), dead ends (partial candidates with nothing consistent below), candidates (complete ones evaluated), consistent");
        outln!();
        out!("{}", families::markdown_table(&rows));
        outln!();
        outln!("{} points in {:.1} s", rows.len(), started.elapsed().as_secs_f64());
    }
    let mismatches: Vec<&Measurement> = rows.iter().filter(|r| r.mismatch()).collect();
    let crashed: Vec<&Measurement> = rows.iter().filter(|r| failed.contains(&r.name)).collect();
    for r in &mismatches {
        eprintln!(
            "MISMATCH {} ({} {}): verdict {} (expected {}), liveness {} (expected {})",
            r.name,
            r.family,
            r.params,
            r.verdict.as_deref().unwrap_or("-"),
            r.expected_verdict,
            r.liveness.as_deref().unwrap_or("-"),
            r.expected_liveness
        );
    }
    for r in &crashed {
        eprintln!("FAILED {} ({} {}): {}", r.name, r.family, r.params, r.error.as_deref().unwrap_or(""));
    }
    if mismatches.is_empty() && crashed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Run `ptxmm bench-point` for `point` and read its JSON line. A child that crashes, prints no
/// measurement, or outlives every limit it was given (three stages plus a margin) gives a row
/// with the reason; the flag says whether the child crashed (rather than ran past its limits).
pub(crate) fn measure_in_child(
    exe: &std::path::Path,
    point: &crate::families::FamilyPoint,
    timeout: f64,
    limit: Option<std::time::Duration>,
    no_explain: bool,
) -> (crate::families::Measurement, bool) {
    use crate::families::Measurement;
    use std::io::Read as _;
    use std::process::{Command as Process, Stdio};
    let mut cmd = Process::new(exe);
    cmd.arg("bench-point").arg("--timeout").arg(timeout.to_string());
    if no_explain {
        cmd.arg("--no-explain");
    }
    cmd.arg(point.family).args(point.params.split_whitespace()).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return (Measurement::failed(point, format!("cannot start {}: {e}", exe.display())), true),
    };
    let reader = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let stdout = reader(child.stdout.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let stderr = reader(child.stderr.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    // The child enforces its own limits; this only catches one that ignores them.
    let watchdog = limit.map(|l| l * 4 + std::time::Duration::from_secs(30));
    let started = std::time::Instant::now();
    let mut killed = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {
                if watchdog.is_some_and(|w| started.elapsed() > w) {
                    let _ = child.kill();
                    killed = true;
                    break child.wait();
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => break Err(e),
        }
    };
    let out = stdout.join().unwrap_or_default();
    let err = stderr.join().unwrap_or_default();
    let tail = |s: &str| {
        let s = s.trim();
        let start = s.char_indices().rev().nth(400).map_or(0, |(i, _)| i);
        s[start..].replace('\n', " ")
    };
    if killed {
        return (Measurement::failed(point, format!("killed after {:.0} s (past every limit)", started.elapsed().as_secs_f64())), false);
    }
    let failed = |why: String| (Measurement::failed(point, why), true);
    match status {
        Ok(s) if s.success() => match out.lines().rev().find_map(|l| serde_json::from_str::<Measurement>(l).ok()) {
            Some(m) => (m, false),
            None => failed(format!("the child printed no measurement: {}", tail(&err))),
        },
        Ok(s) => failed(format!("the child failed ({s}): {}", tail(&err))),
        Err(e) => failed(format!("cannot wait for the child: {e}")),
    }
}

/// `ptxmm bench-point`: measure one point in this process and print its JSON object, or (with
/// `source`) print the point's litmus text.
pub(crate) fn cmd_bench_point(family: &str, params: &[String], timeout: f64, no_explain: bool, source: bool) -> ExitCode {
    let point = match crate::families::point(family, &params.join(" ")) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if source {
        outln!("{}", point.source.trim_end());
        return ExitCode::SUCCESS;
    }
    // The families' expected verdicts are the default model's.
    let config = crate::Config::default_model().with_timeout(crate::Limits::timeout_from_secs(timeout));
    let m = crate::families::measure(&point, &config, !no_explain);
    outln!("{}", serde_json::to_string(&m).expect("measurements serialise"));
    ExitCode::SUCCESS
}
