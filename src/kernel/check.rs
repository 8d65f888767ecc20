//! One kernel check, as `ptxmm kernel` and the Python API run it: the kernel built from its PTX,
//! its litmus test decided by the one driver, checked again with every warp or every lane where
//! a count of those left out can explain a hang, and summarised (`Checked`: the text report,
//! `record::json_record`, the command line's SARIF).

use crate::config::Config;
use crate::decide::liveness::LivenessOutcome;
use crate::decide::report::JsonError;
use crate::decide::{Decider, Outcome, RunError, Verdict};
use crate::diag::SourceFile;
use crate::kernel::{Kernel, KernelOptions};
use std::fmt::Write as _;

/// Which of the two checks run: the verdict and findings, and whether some fair execution hangs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    /// Both.
    Check,
    /// The verdict and findings only.
    Skip,
    /// The liveness check only.
    Only,
}

/// The exit status of a kernel with a finding (a race, undefined behaviour, a hang, or a failing
/// assertion), so that a script or CI job can fail on it as it would on a sanitizer's report.
pub const FINDINGS_STATUS: u8 = 3;

/// Why a check ended without a report: its exit status, the diagnostic as printed on stderr,
/// the same for a JSON error record, and the file it is about when that is not the PTX (a
/// launch file).
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub file: Option<String>,
    pub rendered: String,
    /// Boxed: a failure is rare, and the results that carry one stay small.
    pub error: Box<JsonError>,
}

impl Failure {
    pub fn plain(code: u8, rendered: String) -> Failure {
        let message = rendered.trim_end().strip_prefix("error: ").unwrap_or(rendered.trim_end()).to_string();
        let error = Box::new(JsonError { rendered: rendered.trim_end().to_string(), ..JsonError::plain(message) });
        Failure { code, file: None, error, rendered }
    }
}

/// The summary of a check: the findings counted and what was not decided.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The lines the text report ends with (`Summary: ...`, then a line per reading).
    pub text: String,
    /// Whether a finding was established (exit status 3).
    pub found: bool,
    /// What was not decided (a limit, no execution completes, the liveness check unfinished).
    pub open: Vec<String>,
}

/// A finished check: the kernel as last built (with every warp or lane where a recheck kept
/// that), its answers, and its exit status (0 decided with no finding, 1 no complete answer,
/// [`FINDINGS_STATUS`] a finding).
pub struct Checked {
    pub kernel: Kernel,
    pub outcome: Option<Outcome>,
    pub live: Option<LivenessOutcome>,
    /// Why the liveness check did not finish, where it did not.
    pub live_error: Option<String>,
    /// The model's name, as records name it.
    pub model: String,
    pub summary: Summary,
    pub status: u8,
}

impl Checked {
    /// The report `ptxmm kernel` prints.
    pub fn report(&self) -> String {
        let mut text = report(&self.kernel, self.outcome.as_ref(), self.live.as_ref());
        text.push_str(&self.summary.text);
        text
    }
}

/// What one check is given: the PTX module, the launch and what is modelled, the configuration
/// (model, limits), which checks run, and the deadline every build and decision shares.
pub struct CheckRequest<'a> {
    pub ptx: &'a SourceFile,
    pub options: &'a KernelOptions,
    pub config: &'a Config,
    pub model: &'a str,
    pub liveness: Liveness,
    pub deadline: Option<crate::clock::Instant>,
    /// Whether diagnostics are rendered with colour.
    pub color: bool,
}

/// Build, decide and summarise one kernel. `built` sees each kernel built, before its decision
/// (`--emit-litmus` writes it, so that a kernel that stops can be read as the test it became);
/// an error there ends the check.
///
/// Without a choice of lanes, every lane of the warps modelled is checked (a warp is 32 threads
/// of the memory model: their arrival counts, their exchanges and their races are per lane),
/// within half of the time left; where that does not finish (a limit, or an error of a lane
/// that lane 0 may not meet), lane 0 of each warp is checked instead, and the report says why
/// and what lane 0 cannot show.
pub fn check(req: &CheckRequest, built: &mut dyn FnMut(&Kernel) -> Result<(), Failure>) -> Result<Checked, Failure> {
    if req.options.lanes.is_some() {
        return check_lanes_given(req, built, false);
    }
    let every = KernelOptions { lanes: Some((0..32).collect()), ..req.options.clone() };
    let now = crate::clock::Instant::now();
    let share = req.deadline.map(|d| now + d.duration_since(now) / 2);
    // What every lane established before it stopped: kept where lane 0 cannot stand in.
    let mut partial = None;
    let why = match check_lanes_given(&CheckRequest { options: &every, deadline: share, ..*req }, built, false) {
        Ok(mut c) if finished(&c) => {
            c.kernel.lane_choice = Some("every lane of each warp modelled (the default)".to_string());
            return Ok(c);
        }
        Ok(c) => {
            let why = what_stopped(&c);
            partial = Some(c);
            why
        }
        Err(f) => f.error.message.clone(),
    };
    // A time limit here is the half given, not the user's --timeout the message names.
    let why = match share {
        Some(end) if why.contains("time limit") => {
            format!("it was still running after {:.1} s, half of the time limit", end.duration_since(now).as_secs_f64())
        }
        _ => why,
    };
    let lane0 = KernelOptions { lanes: Some(vec![0]), ..req.options.clone() };
    let mut c = match (check_lanes_given(&CheckRequest { options: &lane0, ..*req }, built, true), partial) {
        // Lane 0 did not finish either and found nothing: it shows less than every lane did.
        (Ok(c), Some(mut every)) if !finished(&c) && !c.summary.found => {
            let why0 = what_stopped(&c);
            every.kernel.lane_choice = Some(format!(
                "every lane of each warp modelled (the default), within half of the time: the check did not finish ({why}); lane 0 of each warp, checked in the other half, did not finish either ({why0})"
            ));
            return Ok(every);
        }
        (Ok(c), _) => c,
        // Lane 0 alone stops where every lane did not (a value only the other lanes give, as
        // a warp vote's): what every lane found in its half is the answer, said so.
        (Err(f), Some(mut every)) => {
            every.kernel.lane_choice = Some(format!(
                "every lane of each warp modelled (the default), within half of the time: the check did not finish ({why}); lane 0 of each warp, checked in the other half, cannot stand in: {}",
                f.error.message.trim_start_matches("error: ")
            ));
            return Ok(every);
        }
        (Err(f), None) => return Err(f),
    };
    let caution = if hangs_or_never_completes_in(c.outcome.as_ref(), c.live.as_ref()) {
        "; caution: a count of the lanes left out (one arrival per lane, a barrier's thread count) can cause the hang or the executions that never complete found with lane 0"
    } else {
        "; races between lanes and findings of other lanes are not searched"
    };
    c.kernel.lane_choice = Some(format!(
        "lane 0 of each warp: the check with every lane (the default) did not finish within half of the time ({why}){caution}"
    ));
    Ok(c)
}

/// What stopped a check that did not finish.
fn what_stopped(c: &Checked) -> String {
    match (&c.outcome.as_ref().and_then(|o| o.incomplete.clone()), &c.live_error) {
        (Some(why), _) => why.clone(),
        (None, Some(e)) => format!("the liveness check: {e}"),
        (None, None) => "a limit".to_string(),
    }
}

/// Whether a check finished: no limit stopped the verdict's search or the liveness check.
fn finished(c: &Checked) -> bool {
    c.outcome.as_ref().is_none_or(|o| o.incomplete.is_none()) && c.live_error.is_none()
}

/// [`check`] with the lanes the options give. `lane0_instead` marks the check with lane 0 that
/// stands in for every lane: a hang there is not established (a count of the lanes left out can
/// cause it), so it is reported as not decided.
fn check_lanes_given(
    req: &CheckRequest,
    built: &mut dyn FnMut(&Kernel) -> Result<(), Failure>,
    lane0_instead: bool,
) -> Result<Checked, Failure> {
    let CheckRequest { ptx, options, config, liveness, deadline, color, .. } = *req;
    let name = ptx.name().to_string();
    let kernel = crate::kernel::build(ptx, options, &config.input).map_err(|e| Failure {
        code: e.exit_status(),
        file: None,
        rendered: e.render(color),
        error: Box::new(match &e {
            crate::kernel::KernelError::Ptx(d) => JsonError::of_diagnostic(d),
            _ => JsonError::plain(e.render(false).trim_end().trim_start_matches("error: ")),
        }),
    })?;
    built(&kernel)?;
    let again = Again { ptx, options, config, deadline, liveness };
    let mut left_out = lane0_instead.then(|| LeftOut {
        no_completion:
            "no execution completes with lane 0 of each warp, which a count of the lanes left out can cause (see Lanes modelled)"
                .to_string(),
        hang: "a hang found with lane 0 of each warp only, which a count of the lanes left out can cause (see Lanes modelled)".to_string(),
    });
    let (kernel, (outcome, live)) = match decide_kernel(&kernel, &name, config, deadline, liveness, color)? {
        d if kernel.warps_left_out && hangs_or_never_completes(&d) => {
            let (kernel, d, warps) = recheck_with_every_warp(kernel, d, &again);
            // The check with every warp did not finish: the hang is the one of the warps kept.
            if let (Some(warps), None) = (warps, &left_out) {
                let cause = format!("with warps {warps} left out, which a count of the warps left out can cause (see Warps modelled)");
                left_out =
                    Some(LeftOut { no_completion: format!("no execution completes {cause}"), hang: format!("a hang found {cause}") });
            }
            (kernel, d)
        }
        d => (kernel, d),
    };
    built(&kernel)?;
    let mut status = 0u8;
    let (live, live_error) = match live.transpose() {
        Ok(l) => (l, None),
        Err(e) => {
            status = 1;
            (None, Some(e.to_string()))
        }
    };
    // Accesses left unchecked (unknown global addresses) leave the answer partial: no finding is
    // not "no bug" then.
    if outcome.as_ref().is_some_and(|o| o.incomplete.is_some() || o.inconclusive().is_some() || !o.unchecked.is_empty()) {
        status = 1;
    }
    let summary = summary(outcome.as_ref(), live.as_ref(), live_error.as_deref(), kernel.assertion.is_some(), left_out.as_ref());
    if !summary.open.is_empty() {
        status = 1;
    }
    // A finding is established even where another check stopped early, so it wins over 1.
    let status = if summary.found { FINDINGS_STATUS } else { status };
    Ok(Checked { kernel, outcome, live, live_error, model: req.model.to_string(), summary, status })
}

type Decision = (Option<Outcome>, Option<Result<LivenessOutcome, RunError>>);

/// Decide a kernel's litmus test: the verdict (an error ends the check with its exit status) and
/// the liveness answer, as `run` decides one.
fn decide_kernel(
    kernel: &Kernel,
    name: &str,
    config: &crate::config::Config,
    deadline: Option<crate::clock::Instant>,
    liveness: Liveness,
    color: bool,
) -> Result<Decision, Failure> {
    let program = crate::parse_program_with(SourceFile::new(name.to_string(), kernel.litmus.clone()), &config.input)
        .map_err(|e| Failure { error: Box::new(JsonError::of_load(&e)), ..Failure::plain(1, e.render(color)) })?;
    let decider = Decider::until(config, deadline);
    let outcome = if liveness == Liveness::Only { None } else { Some(decider.verdict(&program)) };
    let live = if liveness == Liveness::Skip { None } else { Some(decider.liveness(&program)) };
    match outcome.transpose() {
        Ok(o) => Ok((o, live)),
        Err(e) => {
            // An address error carries its own `line:col: ` prefix (as in `run`).
            let sep = if matches!(&e, RunError::Explore(x) if x.is_located()) { ":" } else { ": " };
            let mut rendered = format!("{name}{sep}{e}");
            if matches!(e, RunError::Explore(crate::exec::trace::ExploreError::BadAddress { .. })) {
                rendered.push_str(&format!(
                    "\nnote: a pointer parameter is a buffer of {} bytes unless --param NAME=buffer:BYTES gives its size",
                    crate::kernel::params::DEFAULT_BUFFER_BYTES
                ));
            }
            let error = located_error(&e.to_string(), &rendered);
            Err(Failure { code: if matches!(e, RunError::Model(_)) { 2 } else { 1 }, file: None, rendered, error: Box::new(error) })
        }
    }
}

/// The JSON error of a search error, with the `line:col: ` its message starts with when it has one.
fn located_error(message: &str, rendered: &str) -> JsonError {
    let mut parts = message.splitn(3, ':');
    match (parts.next().map(str::parse::<usize>), parts.next().map(str::parse::<usize>), parts.next()) {
        (Some(Ok(line)), Some(Ok(column)), Some(rest)) => {
            JsonError { message: rest.trim_start().to_string(), line: Some(line), column: Some(column), rendered: rendered.to_string() }
        }
        _ => JsonError { message: message.to_string(), line: None, column: None, rendered: rendered.to_string() },
    }
}

/// Whether a decision hangs or has no complete execution: with warps left out, an arrival count
/// (`mbarrier.init`, `bar.sync N`) that counts them can cause either.
fn hangs_or_never_completes(d: &Decision) -> bool {
    hangs_or_never_completes_in(d.0.as_ref(), d.1.as_ref().and_then(|l| l.as_ref().ok()))
}

/// [`hangs_or_never_completes`] of a verdict and a liveness answer.
fn hangs_or_never_completes_in(o: Option<&Outcome>, live: Option<&LivenessOutcome>) -> bool {
    o.is_some_and(|o| o.inconclusive().is_some() && !o.loop_cut) || live.is_some_and(|l| !l.hang.is_empty())
}

/// What a hang (or no complete execution) found with threads left out is reported as: not a
/// finding, since a count of the threads left out can cause it.
struct LeftOut {
    no_completion: String,
    hang: String,
}

/// The check again with every warp where the first, with warps left out, hangs or never
/// completes, kept where it decides (no limit stopped it); otherwise the first decision, with a
/// caution that the warps left out may be the cause, and those warps (compact).
fn recheck_with_every_warp(kernel: Kernel, first: Decision, again: &Again) -> (Kernel, Decision, Option<String>) {
    let Again { options, .. } = *again;
    let every = crate::kernel::KernelOptions { every_warp: true, ..options.clone() };
    // The warps the first check left out, named, so that "every warp" and "left out" do not
    // read as a contradiction.
    let kept: std::collections::BTreeSet<u64> = kernel.launch.threads.iter().map(|t| t.tid / 32).collect();
    let left: Vec<u64> = (0..kernel.launch.block.div_ceil(32)).filter(|w| !kept.contains(w)).collect();
    let warps = crate::kernel::warps::compact(&left);
    let why =
        format!("the first check, with warps {warps} left out, hangs or never completes, which a count of the warps left out can cause");
    if let Some((mut all, d)) = again.decide(&every) {
        all.warp_choice = Some(format!("every warp: {why}, so every warp was checked"));
        return (all, d, None);
    }
    let mut kernel = kernel;
    if let Some(w) = &mut kernel.warp_choice {
        w.push_str(&format!("; caution: {why}, and the check with every warp (--warps all) did not finish within the limits"));
    }
    (kernel, first, Some(warps))
}

/// What a second check of the kernel (every warp, every lane) is built and decided with.
#[derive(Clone, Copy)]
struct Again<'a> {
    ptx: &'a SourceFile,
    options: &'a crate::kernel::KernelOptions,
    config: &'a crate::config::Config,
    deadline: Option<crate::clock::Instant>,
    liveness: Liveness,
}

impl Again<'_> {
    /// The kernel built again with `options` and decided, where time is left and the decision
    /// finishes (no limit stopped it).
    fn decide(&self, options: &crate::kernel::KernelOptions) -> Option<(Kernel, Decision)> {
        let has_time =
            self.deadline.is_none_or(|d| d.duration_since(crate::clock::Instant::now()) >= std::time::Duration::from_millis(200));
        let kernel = has_time.then(|| crate::kernel::build(self.ptx, options, &self.config.input).ok()).flatten()?;
        let d = decide_kernel(&kernel, self.ptx.name(), self.config, self.deadline, self.liveness, false).ok()?;
        let decided = d.0.as_ref().is_none_or(|o| o.incomplete.is_none()) && !matches!(&d.1, Some(Err(_)));
        decided.then_some((kernel, d))
    }
}

/// The report: the launch, the parameters, what was abstracted, the verdict and findings with
/// their PTX and CUDA lines, the liveness answer, and a summary line.
fn report(k: &Kernel, o: Option<&crate::decide::Outcome>, live: Option<&crate::decide::liveness::LivenessOutcome>) -> String {
    let mut s = String::new();
    let threads: Vec<String> = k
        .launch
        .columns()
        .iter()
        .enumerate()
        .map(|(c, col)| {
            let t = &k.launch.threads[col.first];
            match col.warp {
                Some(w) => format!("P{c} = CTA {} warp {w} (tid {}-{})", t.cta, t.tid, t.tid + col.threads as u64 - 1),
                None => format!("P{c} = CTA {} tid {}", t.cta, t.tid),
            }
        })
        .collect();
    let _ = writeln!(s, "Kernel {} of {}: {}", k.entry, k.file, k.launch.describe());
    if let Some(w) = &k.warp_choice {
        let _ = writeln!(s, "Warps modelled: {w}");
    }
    if let Some(l) = &k.lane_choice {
        let _ = writeln!(s, "Lanes modelled: {l}");
    }
    let _ = writeln!(s, "Threads modelled: {}", threads.join(", "));
    if let Some(groups) = o.map(|o| &o.groups_apart).filter(|g| !g.is_empty()) {
        let shown: Vec<String> = groups.iter().map(|ctas| cta_list(ctas)).collect();
        let _ = writeln!(
            s,
            "Decided apart: {} groups of CTAs that share nothing one of them writes, one at a time ({}); --whole-program decides them as one",
            groups.len(),
            shown.join("; ")
        );
    }
    for b in &k.bindings {
        let _ = writeln!(s, "Parameter {b}");
    }
    if k.abstracted.is_empty() {
        let _ = writeln!(s, "Abstracted: nothing (every instruction is modelled)");
    } else {
        let _ =
            writeln!(s, "Abstracted ({}): instructions whose results the model does not compute (register-only instructions it does not interpret, the fragments of ldmatrix/stmatrix); their results are unknown values (stored as unknown, never an address, a size or a count; a branch on one goes both ways):", k.abstracted.len());
        for a in &k.abstracted {
            let _ = writeln!(s, "  {} `{}`: {}", place(k, a.line), a.instruction, a.why);
        }
    }
    let mut lines = std::collections::BTreeSet::new();
    if let Some(o) = o {
        let headline = crate::decide::report::headline(o, live);
        // Without --assert the condition is the generated `exists (false)`: its Forbidden says
        // only that some execution completes, which is no verdict a user asked for.
        let generated = k.assertion.is_none() && k.condition == "exists (false)";
        match headline.strip_prefix("Verdict: Forbidden\n") {
            Some(rest) if generated => {
                s.push_str("Verdict: none asked (no --assert condition): the findings and the liveness check are the answer\n");
                s.push_str(&k.with_sources(rest));
            }
            _ => {
                s.push_str(&k.with_sources(&headline));
                if k.assertion.is_none() {
                    let _ = writeln!(s, "Condition: {} (the findings and the liveness check are the answer)", k.condition);
                }
            }
        }
        s.push_str(&k.with_sources(&crate::decide::report::findings_block(o)));
        for f in o.undefined.iter().chain(&o.races).chain(&o.flag_findings) {
            lines.extend(f.sites.iter().map(|site| (site.line, site.instruction.clone())));
        }
        if let Some(a) = &k.assertion {
            let holds = match o.verdict() {
                Verdict::Forbidden => "holds at the end of every execution",
                Verdict::Allowed => "fails in some execution; final states where it fails:",
                _ => "not decided (see the verdict)",
            };
            let _ = writeln!(s, "Assertion `{a}`: {holds}");
            if o.verdict() == Verdict::Allowed {
                for state in o.states.iter().filter(|(_, &fails)| fails).map(|(state, _)| state).take(8) {
                    let _ = writeln!(s, "  {}", crate::decide::report::state_line(o, state));
                }
            }
        }
        s.push_str(&k.with_sources(&crate::decide::report::loops_block(o)));
        s.push_str(&k.with_sources(&crate::decide::report::unchecked_block(o)));
    }
    if let Some(l) = live {
        s.push_str(&k.with_sources(&l.report()));
        lines.extend(l.hang.iter().map(|t| (t.line, t.instruction.clone())));
    }
    if !lines.is_empty() {
        let _ = writeln!(s, "Lines of the findings:");
        for (line, instruction) in &lines {
            let _ = writeln!(s, "  {} `{instruction}`", place(k, *line));
        }
    }
    s
}

/// `CTA 2`, `CTAs 0-1`, `CTAs 0, 2`: the CTAs of one group (in order).
fn cta_list(ctas: &[i64]) -> String {
    let consecutive = ctas.windows(2).all(|w| w[1] == w[0] + 1);
    match ctas {
        [one] => format!("CTA {one}"),
        [first, .., last] if consecutive => format!("CTAs {first}-{last}"),
        _ => format!("CTAs {}", ctas.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")),
    }
}

/// `file.ptx:85 (tma_pipeline.cu:37)`, with the whole inline chain where there is one
/// (`file.ptx:124 (tma_pipeline.cu:31; inline chain: cp_async_bulk.h:63 in tma_pipeline.cu:31)`).
fn place(k: &Kernel, line: usize) -> String {
    let chain = k.chain_of(line);
    match k.source_of(line) {
        Some(src) if chain.len() > 1 => format!("{}:{line} ({src}; inline chain: {})", k.file, chain.join(" in ")),
        Some(src) => format!("{}:{line} ({src})", k.file),
        None => format!("{}:{line}", k.file),
    }
}

/// For each reading some finding depends on: how many findings, the reading, where production
/// code meets it, and the flag that accepts the other reading.
fn readings_note(o: Option<&crate::decide::Outcome>) -> String {
    let Some(o) = o else { return String::new() };
    let mut by: std::collections::BTreeMap<&str, (usize, &crate::config::readings::ReadingDependence)> = Default::default();
    for f in o.undefined.iter().chain(&o.races) {
        for r in &f.readings {
            by.entry(r.id).or_insert((0, r)).0 += 1;
        }
    }
    let mut s = String::new();
    for (id, (n, r)) in by {
        let practice = crate::config::readings::AMBIGUITIES.iter().find(|a| a.id == id).and_then(|a| a.in_practice);
        let _ = writeln!(
            s,
            "Reading {id}: {n} finding(s) hold only under the {} reading ({}); --reading {} takes the other ({}){}",
            r.in_effect,
            r.reading,
            r.flag,
            r.other,
            practice.map(|p| format!(". In practice: {p}")).unwrap_or_default()
        );
    }
    s
}

/// One line: the findings counted, or none; and what was not decided (a limit stopped the
/// search, or it could not answer), so that "no finding" is said only of a finished check.
fn summary(
    o: Option<&crate::decide::Outcome>,
    live: Option<&crate::decide::liveness::LivenessOutcome>,
    live_error: Option<&str>,
    asserted: bool,
    left_out: Option<&LeftOut>,
) -> Summary {
    let mut parts = Vec::new();
    let mut open = Vec::new();
    if let Some(o) = o {
        if asserted && o.verdict() == Verdict::Allowed {
            parts.push("the assertion fails".to_string());
        }
        // Findings that hold only under one reading of a documented ambiguity are counted apart.
        let apart =
            |fs: &std::collections::BTreeSet<crate::decide::findings::Finding>| fs.iter().filter(|f| !f.readings.is_empty()).count();
        let count = |n: usize, m: usize, what: &str| match m {
            0 => format!("{n} {what}"),
            m if m == n => format!("{n} {what} (only under a reading, see below)"),
            m => format!("{n} {what} ({} under every reading, {m} only under a reading, see below)", n - m),
        };
        if !o.undefined.is_empty() {
            parts.push(count(o.undefined.len(), apart(&o.undefined), "undefined behaviour"));
        }
        if !o.races.is_empty() {
            parts.push(count(o.races.len(), apart(&o.races), "data race(s)"));
        }
        if let Some(why) = &o.incomplete {
            open.push(format!("the search stopped early ({why})"));
        } else if o.loop_cut && o.inconclusive().is_some() {
            open.push("the unrolling bound cut runs (see Loops)".to_string());
        } else if o.inconclusive().is_some() && live.is_none_or(|l| l.hang.is_empty()) {
            open.push(left_out.map_or("no execution completes".to_string(), |l| l.no_completion.clone()));
        }
    }
    if live.is_some_and(|l| !l.hang.is_empty()) {
        match left_out {
            Some(l) => open.push(l.hang.clone()),
            None => parts.push("a hang".to_string()),
        }
    }
    if let Some(e) = live_error {
        open.push(format!("the liveness check did not finish ({e})"));
    }
    let found = if parts.is_empty() {
        if open.is_empty() {
            "no finding".to_string()
        } else {
            "no finding so far".to_string()
        }
    } else {
        parts.join(", ")
    };
    let unchecked = o.map_or(0, |o| o.unchecked.iter().map(|u| u.line).collect::<std::collections::BTreeSet<_>>().len());
    let unchecked = match unchecked {
        0 => String::new(),
        n => format!("; {n} instruction(s) with unknown global addresses not checked (see Not checked)"),
    };
    let mut line = if open.is_empty() {
        format!("Summary: {found}{unchecked}\n")
    } else {
        format!("Summary: {found}{unchecked}; not decided: {}\n", open.join("; "))
    };
    line.push_str(&readings_note(o));
    Summary { text: line, found: !parts.is_empty(), open }
}
