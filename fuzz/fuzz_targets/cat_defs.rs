//! Generated cat models whose definitions reference earlier ones (chains, fan-in, functions
//! applying functions, procedures, `let rec`): each byte picks the next item, so small inputs
//! reach the shapes that used to blow up (issue 25). The model either loads within its
//! bounds or is rejected with a diagnostic, and a loaded one decides a fixed test; never a
//! panic, a run over libFuzzer's `-timeout` or over `-rss_limit_mb`.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use std::sync::OnceLock;

const MP: &str = "PTX MP\n{ x = 0; flag = 0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.acquire.gpu r0, flag ;\n st.release.gpu flag, 1 | ld.weak r1, x ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n";
const BASE: [&str; 6] = ["po", "rf", "co", "fr", "loc", "0"];
const OPS: [&str; 4] = ["|", "&", ";", "\\"];

fn program() -> &'static ptxmm::program::Program {
    static P: OnceLock<ptxmm::program::Program> = OnceLock::new();
    P.get_or_init(|| ptxmm::parse_program(ptxmm::diag::SourceFile::new("MP.litmus", MP)).expect("MP parses"))
}

/// The cat text `data` describes: definitions `d0, d1, ...`, functions `f0, f1, ...` and
/// procedures `p0, p1, ...`, each item naming earlier ones.
fn model(data: &[u8]) -> String {
    let (mut defs, mut funs, mut procs) = (0usize, 0usize, 0usize);
    let mut text = String::new();
    let mut bytes = data.chunks(3);
    let name = |b: u8, defs: usize| if defs == 0 || b % 4 == 0 { BASE[b as usize % BASE.len()].to_string() } else { format!("d{}", b as usize % defs) };
    while let Some(&[kind, a, b]) = bytes.next() {
        let (x, y, op) = (name(a, defs), name(b, defs), OPS[(a ^ b) as usize % OPS.len()]);
        match kind % 6 {
            0 | 1 => text += &format!("let d{defs} = {x} {op} {y}\n"),
            2 if funs > 0 => text += &format!("let d{defs} = f{}({x})\n", a as usize % funs),
            2 => text += &format!("let d{defs} = ({x})+\n"),
            3 => {
                let inner = if funs > 0 { format!("f{}(f{}(x))", b as usize % funs, a as usize % funs) } else { "x | x".into() };
                text += &format!("let f{funs}(x) = {inner} {op} {y}\n");
                funs += 1;
                continue;
            }
            4 => {
                text += &format!("procedure p{procs}(r) = acyclic r {op} {x}\nlet q = {y} end\ncall p{procs}({x})\n");
                procs += 1;
                continue;
            }
            _ => text += &format!("let rec d{defs} = {x} | (d{defs} ; {y})\n"),
        }
        defs += 1;
    }
    if defs > 0 {
        text += &format!("acyclic d{}\nempty d0 \\ co\n", defs - 1);
    }
    text
}

fuzz_target!(|data: &[u8]| {
    let text = model(data);
    let Ok(model) = ptxmm::cat::CatModel::from_source(ptxmm::diag::SourceFile::new("fuzz.cat", text), &[]) else { return };
    let config = common::small_limits(ptxmm::Config::new(model, "fuzz.cat"));
    let _ = ptxmm::decide::Decider::new(&config).verdict(program());
});
