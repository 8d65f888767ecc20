//! Tests of the lowering of code blocks and PTX declarations (issue 22): scoped registers,
//! `ret`/`exit`, `ld.param`, per-CTA and per-thread instances, arrays of mbarriers.

use super::*;

fn lower_str(src: &str) -> Result<Program, String> {
    let file = SourceFile::new("t.litmus", src);
    let ast = crate::litmus::parse(&file).map_err(|d| d.one_line(&file))?;
    lower(&ast, &file).map_err(|d| d.one_line(&file))
}

fn var(p: &Program, name: &str) -> usize {
    p.variables.iter().position(|v| v.name == name).unwrap_or_else(|| panic!("no variable `{name}`"))
}

#[test]
fn every_thread_runs_the_kernel_block() {
    let p = lower_str(
        "PTX k\n{ x = 0; P0:%r9 = 0; P1:%r9 = 1; }\nP0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n{\n .reg .b32 %r<10>;\n setp.ne.s32 %p1, %r9, 0;\n @%p1 ret;\n st.relaxed.gpu.u32 [x], 1;\n exit;\n}\nexists (x == 1)\n",
    )
    .unwrap();
    assert_eq!(p.threads.len(), 2);
    assert_eq!(p.threads[0].code.len(), 4);
    assert_eq!(p.threads[0].code, p.threads[1].code);
    // `@%p1 ret` and `exit` jump to the end of the thread.
    let end = p.threads[0].code.len();
    assert!(
        matches!(p.threads[0].code[1].op, Op::Branch { cond: Some((CmpOp::Ne, Value::Reg(_), Value::Const(0))), target } if target == end)
    );
    assert!(matches!(p.threads[0].code[3].op, Op::Branch { cond: None, target } if target == end));
}

#[test]
fn nested_scopes_get_their_own_registers() {
    let p = lower_str(
        "PTX k\n{ x = 0; }\nP0@cta 0,gpu 0 ;\n{\n .reg .pred P_OUT;\n mov.u32 P_OUT, 7;\n {\n .reg .pred P_OUT;\n mov.u32 P_OUT, 1;\n mov.u32 %r1, P_OUT;\n }\n {\n .reg .pred P_OUT;\n mov.u32 P_OUT, 2;\n }\n mov.u32 %r2, P_OUT;\n}\nexists (P0:%r1 == 1 /\\ P0:%r2 == 7)\n",
    )
    .unwrap();
    let t = &p.threads[0];
    let dst = |k: usize| match t.code[k].op {
        Op::Local { dst, .. } => dst,
        _ => panic!(),
    };
    let src = |k: usize| match t.code[k].op {
        Op::Local { a: Value::Reg(r), .. } => r,
        _ => panic!(),
    };
    let (outer, inner1, inner2) = (dst(0), dst(1), dst(3));
    assert!(outer != inner1 && inner1 != inner2 && outer != inner2);
    assert_eq!(src(2), inner1, "inside its scope, P_OUT is the scope's register");
    assert_eq!(src(4), outer, "after the scopes close, P_OUT is the outer register again");
    assert_eq!(t.registers.iter().filter(|r| *r == "P_OUT").count(), 3, "reports still print P_OUT");
    // A scoped register read before any write in its scope is undefined there.
    let e =
        lower_str("PTX k\n{ }\nP0@cta 0,gpu 0 ;\n{\n mov.u32 P, 1;\n {\n .reg .pred P;\n mov.u32 %r1, P;\n }\n}\nexists (P0:%r1 == 1)\n")
            .unwrap_err();
    assert!(e.contains("t.litmus:8:15") && e.contains("undefined register `P`"), "{e}");
}

#[test]
fn ld_param_reads_the_bound_value() {
    let p = lower_str(
        "PTX k\n{ .global .align 4 .b32 g[2] = {7, 8}; .param .u64 out = &g; .param .u32 n = 0x10002; }\nP0@cta 0,gpu 0 ;\n{\n ld.param.u64 %rd1, [out];\n ld.param.u16 %rs1, [n+2];\n ld.param.u32 %r1, [n];\n}\nexists (P0:%r1 == 65538)\n",
    )
    .unwrap();
    let g = p.address(var(&p, "g"), 0);
    let c = &p.threads[0].code;
    assert!(matches!(c[0].op, Op::Local { op: LocalOp::Mov, a: Value::Const(v), .. } if v == g));
    assert!(matches!(c[1].op, Op::Local { op: LocalOp::Mov, a: Value::Const(1), .. }));
    assert!(matches!(c[2].op, Op::Local { op: LocalOp::Mov, a: Value::Const(0x10002), .. }));
    assert_eq!(p.physical[p.locations[p.variables[var(&p, "g")].first_location + 1].physical].init, 8);
    let bad = |body: &str| {
        lower_str(&format!("PTX k\n{{ .param .u32 n = 1; }}\nP0@cta 0,gpu 0 ;\n{{\n {body}\n}}\nexists (0 == 0)\n")).unwrap_err()
    };
    assert!(bad("ld.param.u32 %r1, [m];").contains("unknown kernel parameter `m`"));
    assert!(bad("ld.param.u32 %r1, [n+4];").contains("is not inside the 4-byte parameter `n`"));
    assert!(bad("ld.param %r1, [n];").contains("`ld.param` needs a type"));
}

#[test]
fn shared_declarations_have_one_instance_per_cta() {
    let p = lower_str(
        "PTX k\n{ .shared .align 16 .b32 s[2]; }\nP0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 | P2@cta 1,cluster 0,gpu 0 ;\n{\n .shared .align 4 .b32 t;\n mov.u32 %r1, s;\n mov.u32 %r2, t;\n st.shared.u32 [s+4], 1;\n}\nexists (s@cta1+4 == 1 /\\ t@cta0 == 0)\n",
    )
    .unwrap();
    let names: Vec<&str> = p.variables.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["s@cta0", "s@cta1", "t@cta0", "t@cta1"]);
    assert_eq!(p.variables[1].space, Space::Shared { cta: 1 });
    for (t, cta) in [(0, 0), (1, 1), (2, 1)] {
        let code = &p.threads[t].code;
        let s = p.address(var(&p, &format!("s@cta{cta}")), 0);
        assert!(matches!(code[0].op, Op::Local { a: Value::Const(a), .. } if a == s), "P{t} sees its CTA's `s`");
        let word = p.variables[var(&p, &format!("s@cta{cta}"))].first_location + 1;
        assert!(matches!(code[2].op, Op::Store { addr: Address::Location(l), .. } if l == word));
    }
    // Each CTA's window has the same layout, so `mapa` finds the same offset.
    assert_eq!(p.window_offset(var(&p, "t@cta0")), p.window_offset(var(&p, "t@cta1")));
    assert_eq!(p.condition.text, "s@cta1+4=1 /\\ t@cta0=0");
    let e = lower_str("PTX k\n{ .shared .b32 s; }\nP0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n{\n st.shared.u32 [s], 1;\n}\nexists (s == 1)\n")
        .unwrap_err();
    assert!(e.contains("t.litmus:7:9") && e.contains("`s` does not name one instance of `s`"), "{e}");
}

#[test]
fn one_instance_keeps_the_plain_name() {
    let p = lower_str(
        "PTX k\n{ .shared .b32 s; }\nP0@cta 3,gpu 0 | P1@cta 3,gpu 0 ;\n{\n .local .b32 buf[2];\n st.shared.u32 [s], 1;\n st.u32 [buf], 2;\n}\nexists (s@cta3 == 1 /\\ buf@P1 == 2 /\\ buf@P0+4 == 0)\n",
    )
    .unwrap();
    let names: Vec<&str> = p.variables.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["s", "buf@P0", "buf@P1"]);
    assert_eq!(p.condition.text, "s=1 /\\ buf@P1=2 /\\ buf@P0+4=0");
    let (b0, b1) = (var(&p, "buf@P0"), var(&p, "buf@P1"));
    assert!(matches!(p.threads[0].code[1].op, Op::Store { addr: Address::Location(l), .. } if l == p.variables[b0].first_location));
    assert!(matches!(p.threads[1].code[1].op, Op::Store { addr: Address::Location(l), .. } if l == p.variables[b1].first_location));
}

#[test]
fn an_array_used_by_mbarriers_holds_one_per_slot() {
    let p = lower_str(
        "PTX k\n{ .shared .align 8 .b8 full[16]; .global .align 4 .b8 bytes[6] = {1, 2, 3, 4, 5}; .global .s16 h[2] = {-1, 2}; }\nP0@cta 0,gpu 0 ;\n{\n mov.u32 %r1, full;\n add.s32 %r2, %r1, 8;\n mbarrier.init.shared::cta.b64 [%r2], 1;\n}\nexists (bytes == 0x04030201 /\\ bytes+4 == 5 /\\ h == 0x2ffff)\n",
    )
    .unwrap();
    let full = var(&p, "full");
    assert_eq!(p.variables[full].kind, VariableKind::Mbarrier);
    assert_eq!(p.variables[full].size, 16);
    let first = p.variables[full].first_location;
    assert_eq!(p.location_name(first + 1), "full+8");
    assert_eq!(p.location_at(p.address(full, 8)), Some(first + 1));
    assert_eq!(p.location_at(p.address(full, 4)), None);
    // Byte and 16-bit elements pack little-endian into words (the 6 bytes round up to 8).
    assert_eq!(p.variables[var(&p, "bytes")].size, 8);
    let bad = |decl: &str| {
        lower_str(&format!("PTX k\n{{ {decl} }}\nP0@cta 0,gpu 0 ;\n{{\n mov.u32 %r1, full;\n mbarrier.init.shared::cta.b64 [%r1], 1;\n}}\nexists (0 == 0)\n"))
            .unwrap_err()
    };
    assert!(bad(".shared .align 4 .b32 full[2];").contains("4-byte aligned"));
    assert!(bad(".shared .align 8 .b8 full[12];").contains("not whole 8-byte mbarrier objects"));
    assert!(bad(".global .align 8 .b64 full;").contains("mbarrier objects live in shared memory"));
}

#[test]
fn declaration_errors_name_the_problem() {
    let bad = |init: &str| lower_str(&format!("PTX k\n{{ {init} }}\nP0@cta 0,gpu 0 ;\n{{\n ret;\n}}\nexists (0 == 0)\n")).unwrap_err();
    let e = bad(".global .b32 x; .global .b32 x;");
    assert!(e.contains("t.litmus:2:32") && e.contains("location `x` is declared twice"), "{e}");
    assert!(bad(".global .b32 a[2000000];").contains("`a` is 8000000 bytes, more than what ptxmm models per variable, 4194304 bytes"));
    assert!(bad(".shared .b32 a[60000];").contains("more than a CTA's shared memory (sm_90: 227 KiB), 232448 bytes"));
    assert!(bad(".global .b32 a[0];").contains("expected a positive number of elements"));
    assert!(bad(".global .b32 a[2] = {1, 2, 3};").contains("at most 2 element value(s) for the 8 bytes of `a`"));
    assert!(bad(".global .align 3 .b32 a;").contains("an alignment that is a power of two"));
    assert!(bad(".reg .b32 %r1;").contains("registers are declared in code blocks"));
    assert!(bad(".param .u32 n+4 = 1;").contains("`n+4`: no kernel parameter `n` is declared"));
    assert!(bad(".param .b8 P[8]; .param .u32 P+6 = 1;").contains("a 4-byte field at byte 6 is outside the 8 bytes of `P`"));
    // A parameter whose size is no whole number of words: its declared bytes bound the fields.
    assert!(bad(".param .b8 P[6]; .param .u32 P+4 = 1;").contains("a 4-byte field at byte 4 is outside the 6 bytes of `P`"));
    assert!(bad(".param .b8 P[8]; .param .u32 P+4;").contains("a field of a parameter needs a value"));
    assert!(bad(".param .u64 p = &nowhere;").contains("unknown location `nowhere`"));
    let e = bad(".shared .b32 s; .param .u64 p = &s;");
    assert!(e.contains("t.litmus:2:35") && e.contains("a kernel parameter is one value for the grid"), "{e}");
    assert!(bad(".global .pred p;").contains("a `.pred` variable has no memory form"));
    let e = lower_str("PTX k\n{ }\nP0@cta 0,gpu 0 ;\n{\n ret.uni.x;\n}\nexists (0 == 0)\n").unwrap_err();
    assert!(e.contains("unsupported qualifier `.x` on `ret`"), "{e}");
    let e =
        lower_str("PTX k\n{ }\nP0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\nP0 {\n .shared .b32 s;\n}\nP1 {\n .shared .b64 s;\n}\nexists (0 == 0)\n")
            .unwrap_err();
    assert!(e.contains("t.litmus:8:2") && e.contains("`s` is declared twice, differently"), "{e}");
}

#[test]
fn placement_tid_gives_special_registers_and_lanes() {
    let p = lower_str(
        "PTX k\n{ }\nP0@cta 0,gpu 0,tid 40 | P1@cta 0,gpu 0 ;\n{\n mov.u32 %r1, %tid.x;\n mov.u32 %r2, %laneid;\n mov.u32 %r3, %ntid.x;\n}\nexists (0 == 0)\n",
    )
    .unwrap();
    let consts = |t: usize| -> Vec<i64> {
        p.threads[t].code.iter().filter_map(|i| if let Op::Local { a: Value::Const(v), .. } = i.op { Some(v) } else { None }).collect()
    };
    // P1 takes its position among its CTA's threads by id (1); the CTA's threads go up to tid 40.
    assert_eq!(consts(0), vec![40, 8, 41]);
    assert_eq!(consts(1), vec![1, 1, 41]);
    assert_eq!(p.threads[0].specials.get("%tid.x"), Some(&40));
    let e = lower_str("PTX k\n{ }\nP0@cta 0,gpu 0,tid 3 | P1@cta 0,gpu 0,tid 3 ;\n{\n ret;\n}\nexists (0 == 0)\n").unwrap_err();
    assert!(e.contains("t.litmus:3:24") && e.contains("P0 and P1 are both thread 3 of CTA 0"), "{e}");
}
