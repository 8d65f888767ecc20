//! Tests of the litmus parser: the Dat3M corpus, tree shapes, error messages, and robustness.

use super::ast::*;
use super::parse;
use crate::diag::{SourceFile, Spanned};
use std::path::{Path, PathBuf};

fn parse_ok(text: &str) -> LitmusTest {
    let file = SourceFile::new("t.litmus", text);
    match parse(&file) {
        Ok(test) => test,
        Err(d) => panic!("unexpected error:\n{}", d.render(&file, false)),
    }
}

/// The one-line form of the error `text` must produce.
fn parse_err(text: &str) -> String {
    let file = SourceFile::new("t.litmus", text);
    match parse(&file) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(d) => d.one_line(&file),
    }
}

fn nodes<T: Clone>(items: &[Spanned<T>]) -> Vec<T> {
    items.iter().map(|s| s.node.clone()).collect()
}

fn name(s: &str) -> Operand {
    Operand::Name(s.to_string())
}

/// A file that touches every construct the parser accepts.
const RICH: &str = r#"PTX MP+fence.sc.gpu-ld_weak+addr (v2.1)
"first comment"
"second
comment"
(* block comment *)
{
x = 0; int y=-1; uint32_t z = 0x10;
P0:r0=0; 1:r1 = 2; P0:r2=&x; P1:r3 = y;
w = x; v = &y;
s @ surface aliases x;
}
 P0@cta 0,gpu 0 | P1@cta 1, gpu 0, cluster 0 ;
 st.weak x, 1   | ld.acquire.gpu r0, y     ; // trailing comment
 L0: fence.sc.gpu | @!p bra L1 ;
 @%p1 atom.relaxed.gpu.cas r1, m, 0, 1 | L1: ;
 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [s], [x+4], 16, [bar] | st.shared.v4.u32 [%r2-8], {42, r1, -3, 0xff} ;
 mbarrier.arrive.release.cta.shared::cta.b64 _, [bar] | red.acq_rel.cta.add x, 1 ;
 | ;
 << 1,1 >> ld.global.u32 %r1, [x] | add r1,r1 , &x;
locations [x; P0:r0;]
filter (x == 1)
exists
(P0:r0 == 1 /\ 1:r1 != -2 \/ ~(x = 2) /\ not [y] >= P1:r0 \/ true) ;
"#;

#[test]
fn parses_every_construct() {
    let t = parse_ok(RICH);
    assert_eq!(t.arch.node, "PTX");
    assert_eq!(t.name.node, "MP+fence.sc.gpu-ld_weak+addr (v2.1)");
    assert_eq!(t.comments, vec!["first comment".to_string(), "second\ncomment".to_string()]);
    assert_eq!(t.init.len(), 10);
    assert!(matches!(&t.init[1].node, InitItem::Location { name, value } if name.node == "y" && value.node == -1));
    assert!(matches!(&t.init[2].node, InitItem::Location { value, .. } if value.node == 16));
    assert!(matches!(&t.init[4].node, InitItem::Register { thread, reg, value, .. }
        if thread.node == 1 && reg.node == "r1" && value.node == 2));
    assert!(matches!(&t.init[5].node, InitItem::RegisterAddress { location, .. } if location.node == "x"));
    assert!(matches!(&t.init[6].node, InitItem::RegisterAddress { location, .. } if location.node == "y"));
    assert!(matches!(&t.init[7].node, InitItem::LocationFromLocation { address_of: false, .. }));
    assert!(matches!(&t.init[8].node, InitItem::LocationFromLocation { address_of: true, .. }));
    assert!(matches!(&t.init[9].node, InitItem::Alias { proxy, target, .. }
        if proxy.node == "surface" && target.node == "x"));

    assert_eq!(t.threads.len(), 2);
    let levels: Vec<(String, i64)> = t.threads[1].placement.iter().map(|(l, v)| (l.node.clone(), v.node)).collect();
    assert_eq!(levels, vec![("cta".into(), 1), ("gpu".into(), 0), ("cluster".into(), 0)]);

    let p0 = nodes(&t.code[0]);
    let p1 = nodes(&t.code[1]);
    assert_eq!(p0.len(), 7);
    assert_eq!(p1.len(), 6);
    assert_eq!(p0[1], Statement::Label("L0".into()));
    let Statement::Instr(guarded) = &p1[1] else { panic!("{:?}", p1[1]) };
    assert_eq!(guarded.guard.as_ref().map(|(r, n)| (r.node.as_str(), *n)), Some(("p", true)));
    assert_eq!(guarded.mnemonic(), "bra");
    let Statement::Instr(cas) = &p0[3] else { panic!() };
    assert_eq!(cas.guard.as_ref().map(|(r, n)| (r.node.as_str(), *n)), Some(("%p1", false)));
    assert_eq!(nodes(&cas.operands), vec![name("r1"), name("m"), Operand::Int(0), Operand::Int(1)]);
    assert_eq!(p1[2], Statement::Label("L1".into()));

    let Statement::Instr(cp) = &p0[4] else { panic!() };
    let parts: Vec<&str> = cp.opcode.iter().map(|p| p.node.as_str()).collect();
    assert_eq!(parts, ["cp", "async", "bulk", "shared::cluster", "global", "mbarrier::complete_tx::bytes"]);
    assert_eq!(&RICH[cp.opcode[3].span.range()], "shared::cluster");
    assert_eq!(&RICH[cp.opcode_span().range()], cp.mnemonic());
    let ops = nodes(&cp.operands);
    assert!(matches!(&ops[1], Operand::Address(base, 4) if base.node == name("x")));
    let Statement::Instr(st) = &p1[3] else { panic!() };
    let ops = nodes(&st.operands);
    assert!(matches!(&ops[0], Operand::Address(base, -8) if base.node == Operand::PercentName("%r2".into())));
    let Operand::Vector(v) = &ops[1] else { panic!("{:?}", ops[1]) };
    assert_eq!(nodes(v), vec![Operand::Int(42), name("r1"), Operand::Int(-3), Operand::Int(255)]);
    let Statement::Instr(arrive) = &p0[5] else { panic!() };
    assert_eq!(arrive.operands[0].node, Operand::Sink);
    let Statement::Instr(add) = &p1[5] else { panic!() };
    assert_eq!(nodes(&add.operands), vec![name("r1"), name("r1"), Operand::AddressOf("x".into())]);

    assert_eq!(nodes(&t.locations), vec![CondValue::Location("x".into()), CondValue::Register { thread: 0, lane: None, reg: "r0".into() }]);
    assert!(t.filter.is_some());
    let cond = t.condition.expect("condition");
    assert_eq!(cond.quantifier.node, Quantifier::Exists);
    // `\/` is loosest: (a /\ b) \/ (~c /\ not d) \/ true, left-associated.
    let Prop::Or(lhs, last) = &cond.prop.node else { panic!("{:?}", cond.prop.node) };
    assert_eq!(last.node, Prop::True);
    let Prop::Or(first, second) = &lhs.node else { panic!() };
    assert!(matches!(&first.node, Prop::And(..)));
    let Prop::And(not_c, not_d) = &second.node else { panic!() };
    assert!(matches!(&not_c.node, Prop::Not(c) if matches!(c.node, Prop::Cmp(_, CmpOp::Eq, _))));
    assert!(matches!(&not_d.node, Prop::Not(d) if matches!(&d.node,
        Prop::Cmp(l, CmpOp::Ge, r) if l.node == CondValue::Location("y".into())
            && r.node == CondValue::Register { thread: 1, lane: None, reg: "r0".into() })));
}

#[test]
fn parses_dat3m_style_files() {
    let t = parse_ok(
        "PTX SL-future\n{\nx=0;\nm=1;\nP0:r0=0;\n}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n ld.weak r0, x | \
         atom.relaxed.gpu.cas r2, m, 0, 1 ;\n st.weak m, 0 | bne r2, 0, LC00 ;\n | LC00: ;\nexists 0==0",
    );
    assert_eq!(t.code[0].len(), 2);
    assert_eq!(t.code[1].len(), 3);
    let cond = t.condition.expect("condition");
    assert!(matches!(&cond.prop.node, Prop::Cmp(l, CmpOp::Eq, r)
        if l.node == CondValue::Const(0) && r.node == CondValue::Const(0)));
    for (text, q) in [("~exists", Quantifier::NotExists), ("not exists", Quantifier::NotExists), ("forall", Quantifier::Forall)] {
        let t = parse_ok(&format!("PTX a\n{{}}\nP0@cta 0,gpu 0;\nld.weak r0, x;\n{text} (P0:r0 = 0)"));
        assert_eq!(t.condition.map(|c| c.quantifier.node), Some(q));
    }
    // No condition at all, `P0` without placement, `{ }` followed by `;`.
    let t = parse_ok("ptx a\n{};\nP0 ;\n;\n");
    assert!(t.condition.is_none());
    assert!(t.threads[0].placement.is_empty());
}

#[test]
fn comments_may_quote_inside_quotes() {
    // As in Dat3M's MICRO24-Fig4b-correct.litmus: everything up to `{` is the preamble.
    let t = parse_ok("PTX q\n\"\nsays \"No, but\" here\n\"\n{}\nP0@cta 0,gpu 0;\n");
    assert_eq!(t.comments, vec!["\nsays \"No, but\" here\n".to_string()]);
}

#[test]
fn label_and_instruction_share_a_cell() {
    let t = parse_ok("PTX t\n{}\nP0@cta 0,gpu 0;\nL: mbarrier.try_wait.parity.shared::cta.b64 p, [bar], 0;\n@!p bra L;\n");
    let col = nodes(&t.code[0]);
    assert_eq!(col.len(), 3);
    assert_eq!(col[0], Statement::Label("L".into()));
    assert!(matches!(&col[1], Statement::Instr(i) if i.mnemonic() == "mbarrier.try_wait.parity.shared::cta.b64"));
    assert_eq!(&t.code[0][0].span, &crate::diag::Span::new(25, 27));
}

/// Where the Dat3M corpus lives: next to the work tree, in the shared folder.
fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/peers/dat3m/litmus")
}

fn litmus_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            litmus_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "litmus") {
            out.push(path);
        }
    }
}

#[test]
fn parses_the_whole_dat3m_corpus() {
    let dir = corpus_dir();
    if !dir.is_dir() {
        eprintln!("skipping: no corpus at {}", dir.display());
        return;
    }
    let mut paths = Vec::new();
    litmus_files(&dir, &mut paths);
    paths.sort();
    let files: Vec<SourceFile> =
        paths.iter().filter_map(|p| std::fs::read_to_string(p).ok().map(|text| SourceFile::new(p.display().to_string(), text))).collect();
    assert_eq!(files.len(), paths.len(), "unreadable corpus files");
    let started = std::time::Instant::now();
    let results: Vec<_> = files.iter().map(parse).collect();
    let elapsed = started.elapsed();
    let mut failures = Vec::new();
    for (file, result) in files.iter().zip(&results) {
        match result {
            Err(d) => failures.push(d.render(file, false)),
            // Every corpus test has a condition and one column per thread.
            Ok(t) if t.condition.is_none() || t.code.len() != t.threads.len() => {
                failures.push(format!("{}: no condition or column mismatch", file.name()))
            }
            Ok(_) => {}
        }
    }
    eprintln!("parsed {} corpus files in {:?}", files.len(), elapsed);
    for failure in &failures {
        eprintln!("{failure}");
    }
    assert!(failures.is_empty(), "{} of {} corpus files failed to parse", failures.len(), files.len());
    assert!(files.len() >= 597, "only {} corpus files found", files.len());
}

const MP: &str = "PTX MP\n{\nx=0;\ny=0;\n}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1   | ld.weak r0, y  ;\n st.weak y, 1   | ld.weak r1, x  ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n";

/// `MP` with the first occurrence of `from` replaced by `to`.
fn mp_with(from: &str, to: &str) -> String {
    assert!(MP.contains(from), "{from}");
    MP.replacen(from, to, 1)
}

#[test]
fn reports_missing_semicolon_at_end_of_row() {
    assert_eq!(
        parse_err(&mp_with("ld.weak r0, y  ;", "ld.weak r0, y")),
        "t.litmus:7:32: error: expected `;` at the end of the row, found end of line"
    );
    assert_eq!(
        parse_err(&mp_with("P1@cta 1,gpu 0 ;", "P1@cta 1,gpu 0")),
        "t.litmus:6:33: error: expected `;` at the end of the thread header row, found end of line"
    );
}

#[test]
fn reports_unknown_characters() {
    assert_eq!(
        parse_err(&mp_with("st.weak y, 1", "st.weak y # 1")),
        "t.litmus:8:12: error: expected `,`, `|` or `;`, found unknown character `#`"
    );
    assert_eq!(
        parse_err(&mp_with("x=0;", "x=é;")),
        "t.litmus:3:3: error: expected an initial value (an integer, a location or `&location`), found unknown character `é`"
    );
}

#[test]
fn reports_non_integer_placement() {
    assert_eq!(parse_err(&mp_with("P1@cta 1", "P1@cta x")), "t.litmus:6:26: error: expected an integer (the `cta` index), found `x`");
}

#[test]
fn reports_wrong_column_counts() {
    assert_eq!(
        parse_err(&mp_with("ld.weak r0, y  ;", "ld.weak r0, y | st.weak x, 2 ;")),
        "t.litmus:7:2: error: expected 2 columns, found 3"
    );
    assert_eq!(parse_err(&mp_with("   | ld.weak r1, x  ;", " ;")), "t.litmus:8:2: error: expected 2 columns, found 1");
}

#[test]
fn reports_unterminated_comments_and_strings() {
    assert_eq!(
        parse_err(&mp_with("x=0;", "x=0; (* no end")),
        "t.litmus:3:6: error: expected `*)` to close this comment, found end of file"
    );
    assert_eq!(
        parse_err(&mp_with("{", "\"a comment\n{")),
        "t.litmus:2:1: error: expected a closing `\"` for this string, found end of file"
    );
}

#[test]
fn reports_missing_closing_brace() {
    assert_eq!(parse_err(&mp_with("}\n", "")), "t.litmus:5:2: error: expected `}` to close the init block, found `P0`");
    let file = SourceFile::new("t.litmus", mp_with("}\n", ""));
    let d = parse(&file).expect_err("error");
    assert_eq!(d.notes, vec!["the init block opens at line 2, column 1".to_string()]);
}

#[test]
fn reports_condition_syntax_errors() {
    assert_eq!(
        parse_err(&mp_with("P1:r1 == 0)", "P1:r1 == )")),
        "t.litmus:9:32: error: expected a register like `P0:r0`, a location or an integer, found `)`"
    );
    assert_eq!(parse_err(&mp_with("P1:r1 == 0)", "P1:r1 == 0")), "t.litmus:9:33: error: expected `)`, `/\\` or `\\/`, found end of file");
    assert_eq!(
        parse_err(&mp_with("P1:r1 == 0", "P1:r1 0")),
        "t.litmus:9:29: error: expected a comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`), found `0`"
    );
    assert_eq!(parse_err(&mp_with("exists", "~forall")), "t.litmus:9:2: error: expected `exists` after `~`, found `forall`");
    assert_eq!(parse_err(&mp_with("== 0)", "== 0) x")), "t.litmus:9:35: error: expected end of file, found `x`");
}

#[test]
fn reports_header_errors() {
    assert_eq!(
        parse_err(&mp_with("PTX", "X86")),
        "t.litmus:1:1: error: expected the architecture `PTX` at the start of the file, found `X86`"
    );
    assert_eq!(parse_err("PTX  \n{}"), "t.litmus:1:4: error: expected a test name after `PTX`, found end of line");
    assert_eq!(parse_err(&mp_with("{", "Hash=1\n{")), "t.litmus:2:1: error: expected `{` to open the init block, found `Hash`");
}

#[test]
fn reports_init_errors() {
    assert_eq!(
        parse_err(&mp_with("y=0;", "y @ shared aliases x;")),
        "t.litmus:4:12: error: expected `cta` (as in `@ shared cta 0`), found `aliases`"
    );
    assert_eq!(
        parse_err(&mp_with("y=0;", "y @ local x;")),
        "t.litmus:4:5: error: expected a state space (`global`, `shared cta N`) or a proxy alias (`generic aliases x`), found `local`"
    );
    assert_eq!(parse_err(&mp_with("x=0;", "x=0")), "t.litmus:4:1: error: expected `;` or `}` after an init item, found `y`");
    assert_eq!(
        parse_err(&mp_with("x=0", "x=99999999999999999999")),
        "t.litmus:3:3: error: expected an integer that fits in 64 bits, found `99999999999999999999`"
    );
}

#[test]
fn reports_thread_and_instruction_errors() {
    assert_eq!(parse_err(&mp_with("P1@cta", "P2@cta")), "t.litmus:6:19: error: expected thread `P1`, found `P2`");
    assert_eq!(parse_err(&mp_with("st.weak x, 1", "st.weak x, ")), "t.litmus:7:16: error: expected an operand, found `|`");
    assert_eq!(parse_err(&mp_with("ld.weak r0, y", "ld.weak [r0+], y")), "t.litmus:7:31: error: expected an integer offset, found `]`");
    assert_eq!(parse_err(&mp_with("st.weak x, 1", "st.weak {x, 1")), "t.litmus:7:18: error: expected `,` or `}`, found `|`");
    assert_eq!(
        parse_err(&mp_with("st.weak x, 1", "@ st.weak x, 1")),
        "t.litmus:7:4: error: expected a predicate register after `@`, found `st.weak`"
    );
}

#[test]
fn hints_misspelt_condition_keyword() {
    let file = SourceFile::new("t.litmus", mp_with("exists", "exsits"));
    let d = parse(&file).expect_err("error");
    assert_eq!(d.one_line(&file), "t.litmus:9:8: error: expected an operand, `|` or `;`, found `(`");
    assert_eq!(d.notes.last().map(String::as_str), Some("if this line starts the condition, did you mean `exists`?"));
}

#[test]
fn survives_deep_nesting() {
    for depth in [63, 64, 10_000] {
        let cond = format!("{}x=1{}", "(".repeat(depth), ")".repeat(depth));
        let _ = parse(&SourceFile::new("t", mp_with("(P1:r0 == 1 /\\ P1:r1 == 0)", &cond)));
        let tildes = format!("{}x=1", "~".repeat(depth));
        let _ = parse(&SourceFile::new("t", mp_with("(P1:r0 == 1 /\\ P1:r1 == 0)", &tildes)));
        let vector = format!("st.weak x, {}1{}", "{".repeat(depth), "}".repeat(depth));
        let _ = parse(&SourceFile::new("t", mp_with("st.weak x, 1", &vector)));
    }
    let chain = vec!["x=1"; 100_000].join(" /\\ ");
    let d = parse(&SourceFile::new("t", mp_with("(P1:r0 == 1 /\\ P1:r1 == 0)", &chain))).expect_err("error");
    assert!(d.message.contains("at most 4096 logical operators"), "{}", d.message);
}

/// Parses `text` and, on error, renders the diagnostic (which slices the source at its span).
fn parse_and_render(text: &str) {
    let file = SourceFile::new("fuzz.litmus", text);
    if let Err(d) = parse(&file) {
        let _ = d.one_line(&file);
        assert!(d.span.start <= d.span.end && d.span.end <= text.len(), "{d:?} for {text:?}");
        assert!(text.is_char_boundary(d.span.start) && text.is_char_boundary(d.span.end), "{d:?}");
    }
}

#[test]
fn never_panics_on_truncated_or_garbled_input() {
    let text = RICH;
    let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
    for &cut in &boundaries {
        parse_and_render(&text[..cut]);
        parse_and_render(&text[cut..]);
    }
    let garbage = [";", "|", "(", "*", "\"", "{", "}", "[", "#", "é", "\n", "-", "@", ":", "0x", "~", "P9", " "];
    for w in boundaries.windows(2) {
        let (at, next) = (w[0], w[1]);
        parse_and_render(&format!("{}{}", &text[..at], &text[next..]));
        for g in garbage {
            parse_and_render(&format!("{}{}{}", &text[..at], g, &text[next..]));
            parse_and_render(&format!("{}{}{}", &text[..at], g, &text[at..]));
        }
    }
    // Renders of a few real diagnostics go through codespan-reporting too.
    for cut in boundaries.iter().step_by(37) {
        let file = SourceFile::new("fuzz.litmus", &text[..*cut]);
        if let Err(d) = parse(&file) {
            assert!(d.render(&file, false).contains("fuzz.litmus:"));
        }
    }
}

#[test]
fn reports_thread_header_errors() {
    assert_eq!(parse_err(&mp_with("P0@cta 0,gpu 0", "P0 cta 0,gpu 0")), "t.litmus:6:5: error: expected `@`, `|` or `;`, found `cta`");
    assert_eq!(
        parse_err(&mp_with(" P0@cta 0,gpu 0 |", " st.weak x, 1 |")),
        "t.litmus:6:2: error: expected the thread header row (e.g. `P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;`), found `st.weak`"
    );
}

#[test]
fn hints_missing_quantifier() {
    let file = SourceFile::new("t.litmus", mp_with("exists ", ""));
    let d = parse(&file).expect_err("error");
    assert_eq!(d.one_line(&file), "t.litmus:9:1: error: expected an instruction, a label, `|` or `;`, found `(`");
    assert_eq!(d.notes.last().map(String::as_str), Some("a condition starts with `exists`, `~exists`, `not exists` or `forall`"));
    assert_eq!(parse_err(&mp_with("P1@cta 1", "P1@cta -1")), "t.litmus:6:26: error: expected an integer (the `cta` index), found `-1`");
}

#[test]
fn hex_float_literals_are_bit_patterns() {
    use super::parser::hex_float_bits;
    assert_eq!(hex_float_bits("0f3FC00000"), Some(0x3FC0_0000));
    assert_eq!(hex_float_bits("0d3FF8000000000000"), Some(0x3FF8_0000_0000_0000));
    assert_eq!(hex_float_bits("0f3FC0"), None);
    assert_eq!(hex_float_bits("0x10"), None);
}

// ---- code blocks and PTX declarations (issue 22) ----------------------------------------------

/// A kernel block as nvcc prints it: declarations, comments, labels, a nested scope.
const KERNEL: &str = r#"PTX kernel
{ .shared .align 8 .b8 full[16]; .global .align 4 .b32 g[4] = {1, 2, -3, 0x4}; .visible .global .u32 x = 5; .param .u64 p = &g; P0:%r9 = 1; }
P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
{
	.reg .pred 	%p<5>;
	.reg .b32 	%r<15>, %q;
	// demoted variable
	.shared .align 128 .b8 buf[16];
	.local .align 4 .b8 depot[8];
	.pragma "nounroll";
	.loc	1 7 3
	.loc 1 8 3;
	ld.param.u64 	%rd2, [p]; /* a
	   multi-line comment */ mov.u32 	%r1, full;
$L__BB0_2: bar.sync 	0;
	{
	.reg .pred P_OUT;
	mbarrier.try_wait.parity.shared::cta.b64 P_OUT, [%r1], 0;
	}
	@%p1 bra.uni 	$L__BB0_2;
	ret;
}
exists (s@cta1 == 1 /\ s@cta1+4 == 2 /\ buf@P0 == 0 /\ [x@cta0] == 5)
"#;

#[test]
fn parses_a_kernel_block() {
    let t = parse_ok(KERNEL);
    assert_eq!(t.form, CodeForm::Kernel);
    assert_eq!(t.code.len(), 1, "a kernel block is stored once");
    assert_eq!(t.column(1), t.column(0));
    let kinds: Vec<&str> = t
        .column(0)
        .iter()
        .map(|s| match &s.node {
            Statement::Label(_) => "label",
            Statement::Instr(_) => "instr",
            Statement::Decl(_) => "decl",
            Statement::Open => "{",
            Statement::Close => "}",
        })
        .collect();
    // `.pragma`, `.loc` and comments leave nothing.
    assert_eq!(kinds, ["decl", "decl", "decl", "decl", "instr", "instr", "label", "instr", "{", "decl", "instr", "}", "instr", "instr"]);
    let Statement::Decl(regs) = &t.column(0)[1].node else { panic!() };
    assert_eq!(regs.space.node, DeclSpace::Reg);
    assert_eq!(regs.ty.node, "b32");
    assert_eq!(regs.names[0].name.node, "%r");
    assert_eq!(regs.names[0].range.as_ref().map(|r| r.node), Some(15));
    assert_eq!(regs.names[1].name.node, "%q");
    let Statement::Decl(buf) = &t.column(0)[2].node else { panic!() };
    assert_eq!((buf.space.node, buf.align.as_ref().map(|a| a.node), buf.ty.node.as_str()), (DeclSpace::Shared, Some(128), "b8"));
    assert_eq!(buf.names[0].dims.iter().map(|d| d.node).collect::<Vec<_>>(), [16]);
    let Statement::Instr(ld) = &t.column(0)[4].node else { panic!() };
    assert_eq!(ld.mnemonic(), "ld.param.u64");
    let Statement::Instr(bra) = &t.column(0)[12].node else { panic!() };
    assert_eq!(bra.guard.as_ref().map(|(p, n)| (p.node.as_str(), *n)), Some(("%p1", false)));
    let Statement::Instr(ret) = &t.column(0)[13].node else { panic!() };
    assert!(ret.mnemonic() == "ret" && ret.operands.is_empty());
}

#[test]
fn parses_ptx_declarations_in_the_init_block() {
    let t = parse_ok(KERNEL);
    let decls: Vec<&Declaration> = t
        .init
        .iter()
        .filter_map(|i| match &i.node {
            InitItem::Declaration(d) => Some(d),
            _ => None,
        })
        .collect();
    assert_eq!(decls.len(), 4);
    assert_eq!((decls[0].space.node, decls[0].names[0].name.node.as_str()), (DeclSpace::Shared, "full"));
    assert_eq!(decls[1].init.as_ref().map(|i| i.node.clone()), Some(DeclInit::Values(vec![1, 2, -3, 4])));
    assert_eq!((decls[2].space.node, decls[2].ty.node.as_str()), (DeclSpace::Global, "u32"));
    assert_eq!(decls[2].init.as_ref().map(|i| i.node.clone()), Some(DeclInit::Values(vec![5])));
    assert_eq!(decls[3].init.as_ref().map(|i| i.node.clone()), Some(DeclInit::AddressOf("g".into())));
    assert!(matches!(t.init[4].node, InitItem::Register { .. }));
}

#[test]
fn conditions_name_instances() {
    let t = parse_ok(KERNEL);
    let mut names = Vec::new();
    fn walk(p: &Prop, out: &mut Vec<String>) {
        match p {
            Prop::And(a, b) => {
                walk(&a.node, out);
                walk(&b.node, out);
            }
            Prop::Cmp(a, _, _) => {
                if let CondValue::Location(l) = &a.node {
                    out.push(l.clone());
                }
            }
            _ => {}
        }
    }
    walk(&t.condition.unwrap().prop.node, &mut names);
    assert_eq!(names, ["s@cta1", "s@cta1+4", "buf@P0", "x@cta0"]);
}

#[test]
fn parses_per_thread_blocks() {
    let t = parse_ok("PTX b\n{ x = 0; }\nP0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\nP0 {\n st.relaxed.gpu.u32 [x], 1;\n}\nP1 { L: ld.relaxed.gpu.u32 %r1, [x]; };\nexists (P1:%r1 == 1)\n");
    assert_eq!(t.form, CodeForm::Blocks);
    assert_eq!(t.code.len(), 2);
    assert_eq!(t.column(0).len(), 1);
    assert!(matches!(&t.column(1)[0].node, Statement::Label(l) if l == "L"));
    // Tables are unchanged.
    assert_eq!(parse_ok(MP).form, CodeForm::Table);
}

#[test]
fn reports_block_errors() {
    let kernel = |body: &str| format!("PTX k\n{{ x = 0; }}\nP0@cta 0,gpu 0 ;\n{{\n{body}\n}}\nexists (x == 1)\n");
    assert_eq!(
        parse_err(&kernel(" st.relaxed.gpu.u32 [x], 1\n ld.relaxed.gpu.u32 %r1, [x];")),
        "t.litmus:6:2: error: expected `,` or `;` after an operand, found `ld.relaxed.gpu.u32`"
    );
    assert_eq!(parse_err(&kernel(" ret")), "t.litmus:6:1: error: expected an operand or `;`, found `}`");
    assert_eq!(
        parse_err("PTX k\n{ x = 0; }\nP0@cta 0,gpu 0 ;\n{\n {\n st.relaxed.gpu.u32 [x], 1;\n}\n"),
        "t.litmus:7:2: error: expected `}` to close this block, found end of file"
    );
    assert_eq!(
        parse_err(&kernel(" .global .u32 y;")),
        "t.litmus:5:2: error: expected `.reg`, `.shared` or `.local` (the declarations of a code block), found `.global`"
    );
    assert_eq!(
        parse_err(&kernel(" .reg %r<4>;")),
        "t.litmus:5:7: error: expected a type (`.b8`, `.u32`, `.s64`, `.f32`, `.pred`, ...), found `%r`"
    );
    assert_eq!(
        parse_err(&kernel(" .reg .b32 %r<;")),
        "t.litmus:5:15: error: expected the number of registers (`%r<15>` declares %r0 to %r14), found `;`"
    );
    assert_eq!(
        parse_err(&kernel(" .maxntid 128, 1, 1;")),
        "t.litmus:5:2: error: expected a state space (`.shared`, `.global`, `.local`, `.param` or `.reg`), found `.maxntid`"
    );
    assert_eq!(parse_err(&kernel(" .shared .b32 s[];")), "t.litmus:5:17: error: expected the number of elements (`buf[16]`), found `]`");
    assert_eq!(parse_err(&kernel(" .shared .u32 s = 1;")), "t.litmus:5:19: error: a `.shared` declaration takes no initialiser");
    assert_eq!(
        parse_err(&kernel(" .pragma nounroll;")),
        "t.litmus:5:10: error: expected a quoted pragma string (`.pragma \"nounroll\";`), found `nounroll`"
    );
    assert_eq!(parse_err(&kernel(" /* never closed")), "t.litmus:5:2: error: expected `*/` to close this comment, found end of file");
    assert_eq!(parse_err(&kernel(" | st.relaxed.gpu.u32 [x], 1;")), "t.litmus:5:2: error: expected a statement (an instruction, a label, `.reg`/`.shared`/`.local`, `{`, or `}` to close the block), found `|`");
}

#[test]
fn reports_thread_block_errors() {
    let blocks = |rest: &str| format!("PTX b\n{{ x = 0; }}\nP0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n{rest}\nexists (x == 1)\n");
    assert_eq!(parse_err(&blocks("P1 { }\nP0 { }")), "t.litmus:4:1: error: expected thread `P0` and its block `P0 { ... }`, found `P1`");
    assert_eq!(parse_err(&blocks("P0 { }")), "t.litmus:5:1: error: expected thread `P1` and its block `P1 { ... }`, found `exists`");
    assert_eq!(
        parse_err(&blocks("P0 { } P1 { } P2 { }")),
        "t.litmus:4:15: error: expected the end of the program (`exists`, `~exists`, `forall`, `locations` or `filter`), found `P2`"
    );
    assert_eq!(
        parse_err(&blocks("P0 { } P1 st.relaxed.gpu.u32 [x], 1;")),
        "t.litmus:4:11: error: expected `{` to open the block of P1, found `st.relaxed.gpu.u32`"
    );
}

#[test]
fn reports_declaration_and_instance_errors() {
    let init = |items: &str| format!("PTX d\n{{ {items} }}\nP0@cta 0,gpu 0 ;\n st.relaxed.gpu x, 1 ;\nexists (x == 1)\n");
    assert_eq!(
        parse_err(&init(".shared .align .b8 s[4];")),
        "t.litmus:2:18: error: expected an alignment in bytes after `.align`, found `.b8`"
    );
    assert_eq!(parse_err(&init(".global .v4 .b32 v;")), "t.litmus:2:11: error: vector declarations (`.v4`) are not supported");
    assert_eq!(
        parse_err(&init(".global .u32 x = ;")),
        "t.litmus:2:20: error: expected an initial value (an integer, `{v0, v1, ...}` or `&variable`), found `;`"
    );
    assert_eq!(
        parse_err(&init(".global .u32 x = {1, 2;")),
        "t.litmus:2:25: error: expected `,` or `}` in the list of element values, found `;`"
    );
    assert_eq!(
        parse_err(&init(".shared .u32 x .global .u32 y;")),
        "t.litmus:2:18: error: expected `;` or `}` after an init item, found `.global`"
    );
    assert_eq!(
        parse_err("PTX d\n{ x = 0; }\nP0@cta 0,gpu 0 ;\n st.relaxed.gpu x, 1 ;\nexists (x@gpu0 == 1)\n"),
        "t.litmus:5:11: error: expected an instance (`cta1` for a CTA's, `P0` for a thread's) after `@`, found `gpu0`"
    );
}

/// The instructions of column 0, in order.
fn instructions(t: &LitmusTest) -> Vec<Instruction> {
    t.column(0).iter().filter_map(|s| if let Statement::Instr(i) = &s.node { Some(i.clone()) } else { None }).collect()
}

fn pct(s: &str) -> Operand {
    Operand::PercentName(s.to_string())
}

#[test]
fn parses_pair_destinations_and_negated_predicates() {
    // In a code block: `d|p` after any first operand, with or without spaces.
    let t = parse_ok(
        "PTX t\n{ }\nP0@cta 0,gpu 0 ;\n{\n shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31, -1;\n shfl.sync.idx.b32 %r1 | %p1, %r2, 0, 31, -1;\n \
         setp.lt.s32 p|q, a, b;\n lop3.and.b32 _|%p3, %r1, %r2, %r3, 0x3f, %p2;\n match.all.sync.b64 %r5|%p2, %rd4, -1;\n \
         vote.sync.all.pred %p2, !%p1, -1;\n vote.sync.ballot.b32 %r4, %p1, -1;\n match.any.sync.b32 %r5, %r4, -1;\n \
         redux.sync.add.u32 %r6, %r5, -1;\n activemask.b32 %r7;\n}\nexists (true)\n",
    );
    let ins = instructions(&t);
    let pair = |i: &Instruction| match &i.operands[0].node {
        Operand::Vector(v) => nodes(v),
        other => panic!("no pair: {other:?}"),
    };
    assert_eq!(pair(&ins[0]), vec![pct("%r1"), pct("%p1")]);
    assert_eq!(ins[0].operands.len(), 5);
    assert_eq!(pair(&ins[1]), vec![pct("%r1"), pct("%p1")]);
    assert_eq!(pair(&ins[2]), vec![name("p"), name("q")]);
    assert_eq!(pair(&ins[3]), vec![Operand::Sink, pct("%p3")]);
    assert_eq!(pair(&ins[4]), vec![pct("%r5"), pct("%p2")]);
    let Operand::Negated(p) = &ins[5].operands[1].node else { panic!("{:?}", ins[5].operands[1]) };
    assert_eq!(p.node, pct("%p1"));
    assert_eq!(ins.len(), 10);
    assert_eq!(ins[9].operands.len(), 1);
    // In a row, `|` joins only without spaces and before more operands: otherwise it separates
    // the columns (`bra L1|bra L2` is two cells).
    let t = parse_ok(
        "PTX t\n{ }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n setp.eq.s32 p|q, r1, 0 | ;\n bra L1|bra L2 ;\n L1: | L2: ;\nexists (true)\n",
    );
    assert_eq!(pair(&instructions(&t)[0]), vec![name("p"), name("q")]);
    assert_eq!(instructions(&t)[1].operands, vec![Spanned::new(name("L1"), instructions(&t)[1].operands[0].span)]);
    assert_eq!(t.column(1).len(), 2);
    assert!(parse_err("PTX t\n{ }\n P0@cta 0,gpu 0 ;\n vote.sync.all.pred p, ![x], 1 ;\nexists (true)\n")
        .contains("expected a predicate register after `!`"));
}

#[test]
fn parses_one_element_braces() {
    let t = parse_ok("PTX t\n{ }\nP0@cta 0,gpu 0 ;\n{\n st.shared.u32 [s], {%r1};\n st.shared.u32 [s], { %r1 };\n}\nexists (true)\n");
    for i in instructions(&t) {
        let Operand::Vector(v) = &i.operands[1].node else { panic!() };
        assert_eq!(nodes(v), vec![pct("%r1")]);
    }
}
