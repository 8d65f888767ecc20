//! Lowering: syntax tree → [`Program`], giving every instruction its PTX meaning.
//!
//! Every rejection names the instruction or qualifier with its span, says what is accepted, and
//! never guesses: an instruction or qualifier the model does not cover is an error, not a no-op.
//!
//! Files, each using only those listed before it (`async_ops` and `tensor_ops` use each other):
//! `special` (each thread's tid, warp and special registers), `state` (the tables being filled,
//! registers and their scopes), `declarations` (PTX declarations: instances per CTA and per
//! thread, arrays of mbarriers, kernel parameters),
//! `locations` (the init block), `operands` (one instruction's qualifiers and operands),
//! `memory`, `local`, `async_ops`, `tensor_ops`, `fences` and `params` (`ld.param`) (the
//! instructions by kind), `threads` (each thread, its code blocks' scopes, `ret`/`exit`, and the
//! dispatch of its instructions), `condition` (the condition and filter), and this file, the
//! driver.

use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::{self, InitItem};
use crate::program::*;
use condition::{format_prop, CondResolver};
use declarations::DeclPlan;
use locations::type_words;
use state::{Lowerer, RegTable};
use std::collections::HashMap;
use threads::resolve_mapa;

mod async_ops;
mod bits;
mod condition;
mod declarations;
mod exchange;
mod fences;
mod hints;
mod labels;
mod local;
mod locations;
mod memory;
mod opaque;
mod operands;
mod params;
mod special;
mod state;
mod tensor_ops;
mod tensormap;
mod threads;
mod warp;

/// Lower a parsed litmus test (its memory charged to the default `--max-memory`).
pub fn lower(test: &ast::LitmusTest, source: &SourceFile) -> Result<Program, Diagnostic> {
    lower_within(test, source, crate::config::InputLimits::default().max_memory_mib)
}

/// Lower a parsed litmus test whose declared variables may cost at most `max_memory_mib` MiB
/// (`--max-memory`), at [`BYTES_PER_WORD`] a word.
pub fn lower_within(test: &ast::LitmusTest, source: &SourceFile, max_memory_mib: u64) -> Result<Program, Diagnostic> {
    Lowerer {
        max_words: max_memory_mib.saturating_mul(1 << 20) / BYTES_PER_WORD,
        source,
        variables: Vec::new(),
        locations: Vec::new(),
        physical: Vec::new(),
        by_name: HashMap::new(),
        tensor_maps: Vec::new(),
        mapa_sites: Default::default(),
        params: HashMap::new(),
        views: vec![Vec::new(); test.threads.len()],
        instances: HashMap::new(),
        specials: Default::default(),
        special_reads: Default::default(),
        abstracts: test.form == ast::CodeForm::Kernel,
        unknowns: Default::default(),
        unknown_index: Default::default(),
        condition_error: None,
        warnings: Vec::new(),
    }
    .run(test)
}

impl Lowerer<'_> {
    fn run(mut self, test: &ast::LitmusTest) -> Result<Program, Diagnostic> {
        if !test.arch.node.eq_ignore_ascii_case("ptx") {
            return Err(Diagnostic::expected(test.arch.span, "the architecture `PTX`", format!("`{}`", test.arch.node)));
        }
        // Threads, indexed by their header id.
        // A warp column's lanes share its id (`litmus::warps`).
        let mut thread_index: HashMap<(usize, Option<usize>), usize> = HashMap::new();
        for (i, h) in test.threads.iter().enumerate() {
            if thread_index.insert((h.id.node, h.lane), i).is_some() {
                return Err(Diagnostic::error(h.id.span, format!("thread P{} is declared twice", h.id.node)));
            }
        }
        let mut regs: Vec<RegTable> = test.threads.iter().map(|_| RegTable::default()).collect();

        // Locations first (aliases may refer to locations declared later), then kernel
        // parameters, then registers. A placement error is reported below, in header order.
        let placements = test.threads.iter().map(|h| self.placement(h).unwrap_or(Placement { cta: 0, cluster: -1, gpu: 0 })).collect();
        let plan = DeclPlan::new(test, self.source, placements)?;
        self.declare_locations(&test.init, &plan)?;
        self.declare_params(&test.init)?;
        self.declare_tensor_maps(&test.init)?;
        self.declare_implicit(test);
        self.init_registers(test, &thread_index, &mut regs)?;

        let mut threads = Vec::new();
        // A CTA (ids are per GPU, as in Dat3M) belongs to one cluster (PTX ISA §2.2.2).
        let mut seen: Vec<(Placement, &ast::ThreadHeader)> = Vec::new();
        for header in &test.threads {
            let p = self.placement(header)?;
            for (q, other) in &seen {
                if p.cta == q.cta && p.gpu == q.gpu && p.cluster != q.cluster {
                    return Err(Diagnostic::error(
                        header.span,
                        format!(
                            "P{} is in CTA {} of GPU {} like P{}, but in another cluster: a CTA belongs to one cluster",
                            header.id.node, p.cta, p.gpu, other.id.node
                        ),
                    )
                    .with_note(format!("P{} is `{}`", other.id.node, self.source.slice(other.span).trim()))
                    .with_note("give every thread of a CTA the same `cluster` (or none)"));
                }
            }
            seen.push((p, header));
        }
        let placements: Vec<Placement> = seen.iter().map(|(p, _)| *p).collect();
        let launch = special::LaunchShape::of(&test.init)?;
        let positions = special::positions(&test.threads, &placements, &self.variables, launch)?;
        let mut mapa = Vec::new();
        for (i, header) in test.threads.iter().enumerate() {
            let placement = placements[i];
            let warp = positions[i].warp;
            self.specials = positions[i].specials;
            let saved = self.enter_view(i);
            let code = self.lower_thread(test.column(i), &mut regs[i], warp);
            self.leave_view(saved);
            let code = code?;
            mapa.extend(self.mapa_sites.borrow_mut().drain(..).map(|(k, span)| (i, k, span)));
            let table = &regs[i];
            // A kernel's register starts with no value (PTX ISA §5.2.1: registers are not
            // initialised): a read before any write reads an unknown value, named at that read.
            let mut uninitialized = HashMap::new();
            // In register order: each unknown's number (and so the test's Hash=) is the same
            // run to run, which a hash map's order is not.
            let mut first_reads: Vec<(&Reg, &Span)> = table.first_read.iter().collect();
            first_reads.sort_unstable_by_key(|(r, _)| **r);
            for (r, span) in first_reads {
                if self.abstracts && !table.init.contains_key(r) {
                    let origin = self.unknown_origin(crate::program::unknown::UnknownOrigin {
                        line: self.source.line_col(span.start).0,
                        span: *span,
                        what: table.names[*r].clone(),
                        why: "a register has no value before an instruction writes it".to_string(),
                        kind: crate::program::unknown::UnknownKind::Uninitialized,
                    });
                    uninitialized.insert(*r, crate::program::unknown::encode(origin));
                    continue;
                }
                if !table.written[*r] && !table.init.contains_key(r) {
                    return Err(Diagnostic::error(*span, format!("undefined register `{}` in thread {}", table.names[*r], header.name()))
                        .with_note(format!(
                            "initialise it in the init block (`{}:{}=0;`) or write it before reading it",
                            header.name(),
                            table.names[*r]
                        )));
                }
            }
            let reg_init = (0..table.names.len()).map(|r| table.init.get(&r).or(uninitialized.get(&r)).copied().unwrap_or(0)).collect();
            let specials = std::mem::take(&mut *self.special_reads.borrow_mut());
            threads.push(Thread {
                id: header.id.node,
                lane: header.lane,
                placement,
                code,
                registers: table.names.clone(),
                reg_init,
                specials,
                span: header.span,
                warp: self.specials.read("%warpid").ok().flatten().unwrap_or(0),
            });
        }

        if let Some(e) = self.condition_error.take() {
            return Err(e);
        }
        let instances = std::mem::take(&mut self.instances);
        let mut program = Program {
            name: test.name.node.clone(),
            source: self.source.clone(),
            variables: self.variables,
            locations: self.locations,
            physical: self.physical,
            threads,
            condition: Condition { quantifier: ast::Quantifier::Exists, prop: Prop::True, text: "true".into() },
            filter: None,
            extra_observables: Vec::new(),
            tensor_maps: self.tensor_maps,
            unknowns: self.unknowns.into_inner(),
            warnings: self.warnings,
        };
        resolve_mapa(&mut program, &mapa)?;
        type_words(&mut program);
        let reg_types: Vec<HashMap<Reg, Option<Ty>>> = regs.iter().map(|t| t.types.clone()).collect();
        let resolver = CondResolver {
            program: &program,
            thread_index: &thread_index,
            source: self.source,
            reg_types: &reg_types,
            instances: &instances,
        };
        let condition = match &test.condition {
            Some(c) => {
                Condition { quantifier: c.quantifier.node, prop: resolver.prop(&c.prop)?, text: format_prop(&c.prop.node, &instances) }
            }
            None => Condition { quantifier: ast::Quantifier::Exists, prop: Prop::True, text: "true".into() },
        };
        let filter = test.filter.as_ref().map(|f| resolver.prop(f)).transpose()?;
        let mut extra = Vec::new();
        for v in &test.locations {
            if let CondTerm::Obs(o) = resolver.value(v)? {
                extra.push(o);
            }
        }
        program.condition = condition;
        program.filter = filter;
        program.extra_observables = extra;
        Ok(program)
    }

    /// The registers' initial values of the init block (`P0:r0 = 1;`, `P1:r1 = &s;`).
    fn init_registers(
        &mut self,
        test: &ast::LitmusTest,
        thread_index: &HashMap<(usize, Option<usize>), usize>,
        regs: &mut [RegTable],
    ) -> Result<(), Diagnostic> {
        for item in &test.init {
            match &item.node {
                InitItem::Register { thread, lane, reg, value } => {
                    let t = self.thread_of(thread_index, thread, *lane)?;
                    let r = regs[t].get(&reg.node);
                    regs[t].init.insert(r, value.node);
                }
                InitItem::RegisterAddress { thread, lane, reg, location } => {
                    let t = self.thread_of(thread_index, thread, *lane)?;
                    // `P1:r = &s` is the address of P1's own instance of `s`.
                    let saved = self.enter_view(t);
                    let loc = self.location(location);
                    self.leave_view(saved);
                    let r = regs[t].get(&reg.node);
                    regs[t].init.insert(r, self.address_of(loc?));
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn thread_of(
        &self,
        index: &HashMap<(usize, Option<usize>), usize>,
        t: &Spanned<usize>,
        lane: Option<usize>,
    ) -> Result<usize, Diagnostic> {
        index.get(&(t.node, lane)).copied().ok_or_else(|| {
            Diagnostic::error(t.span, format!("unknown thread {}", ast::thread_name(t.node, lane)))
                .with_note("threads are declared in the header row, e.g. `P0@cta 0,gpu 0`")
        })
    }
}

#[cfg(test)]
mod decl_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn lower_str(src: &str) -> Result<Program, String> {
        let file = SourceFile::new("t.litmus", src);
        let ast = crate::litmus::parse(&file).map_err(|d| d.one_line(&file))?;
        lower(&ast, &file).map_err(|d| d.one_line(&file))
    }

    #[test]
    fn qualifiers_become_semantics() {
        let p = lower_str(
            "PTX t\n{ x=0; y @ generic aliases x; s @ surface aliases x; }\n P0@cta 1,gpu 2 ;\n ld.volatile.global.u32 %r1, [x] ;\n atom.add r2, y, 1 ;\n membar.gl ;\n sust.weak s, 3 ;\nexists (P0:%r1 == 0)\n",
        )
        .unwrap();
        let t = &p.threads[0];
        assert_eq!(t.placement, Placement { cta: 1, cluster: -2, gpu: 2 });
        assert!(matches!(t.code[0].op, Op::Load { sem: Sem::Relaxed, scope: Some(Scope::Sys), proxy: Proxy::Generic, .. }));
        assert!(matches!(t.code[1].op, Op::Rmw { sem: Sem::Relaxed, scope: Scope::Gpu, op: RmwOp::Add, .. }));
        assert!(matches!(t.code[2].op, Op::Fence { kind: FenceKind::Sc, scope: Scope::Gpu, .. }));
        assert!(matches!(t.code[3].op, Op::Store { proxy: Proxy::Surface, .. }));
        // x and its aliases share a physical location; only the surface alias shares x's generic address.
        let (x, y, s) = (&p.locations[0], &p.locations[1], &p.locations[2]);
        assert_eq!(x.physical, y.physical);
        assert_eq!(x.physical, s.physical);
        assert_ne!(x.generic, y.generic);
        assert_eq!(x.generic, s.generic);
        assert_eq!(t.code[0].line, 4);
    }

    #[test]
    fn dat3m_ld_of_a_constant_is_a_move() {
        let p = lower_str("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld r0, 5 ;\n st.weak x, r0 ;\nexists (x == 5)\n").unwrap();
        assert!(matches!(p.threads[0].code[0].op, Op::Local { op: LocalOp::Mov, a: Value::Const(5), .. }));
    }

    #[test]
    fn barriers_in_both_spellings() {
        let p =
            lower_str("PTX t\n{ }\n P0@cta 0,gpu 0 ;\n bar.cta.sync 1, 2, 64 ;\n bar.sync 3, 64 ;\n bar.cta.arrive 4 ;\nexists (0 == 0)\n")
                .unwrap();
        let c = &p.threads[0].code;
        assert!(matches!(
            c[0].op,
            Op::Barrier { instance: 1, id: Some(Value::Const(2)), count: Some(Value::Const(64)), arrive: false, .. }
        ));
        assert!(matches!(
            c[1].op,
            Op::Barrier { instance: 3, id: Some(Value::Const(3)), count: Some(Value::Const(64)), arrive: false, .. }
        ));
        assert!(matches!(c[2].op, Op::Barrier { instance: 4, id: None, count: None, arrive: true, .. }));
    }

    #[test]
    fn rejections_name_the_problem() {
        let e = lower_str("PTX t\n{ x=0; }\n P0@cta 0,sm 0,gpu 0 ;\n st.weak x, 1 ;\nexists (x == 1)\n").unwrap_err();
        assert!(e.contains("t.litmus:3:11") && e.contains("`sm`"), "{e}");
        let e = lower_str("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n red.relaxed.gpu.cas x, 1, 2 ;\nexists (x == 1)\n").unwrap_err();
        assert!(e.contains("`red` has no `.cas` form"), "{e}");
        let e = lower_str("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n tcgen05.fence.sync.aligned ;\nexists (x == 1)\n").unwrap_err();
        assert!(e.contains("not supported"), "{e}");
    }
}
