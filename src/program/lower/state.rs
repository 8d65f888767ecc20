//! The lowering's state: the program-wide tables filled from the init block (variables,
//! locations by name, tensor maps) and each thread's registers.

use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::Declaration;
use crate::program::*;
use std::collections::HashMap;

/// The lowering of one test: the program-wide tables, filled from the init block and read by
/// the lowering of every instruction.
pub(super) struct Lowerer<'a> {
    pub(super) source: &'a SourceFile,
    pub(super) variables: Vec<Variable>,
    pub(super) locations: Vec<Location>,
    pub(super) physical: Vec<PhysicalLocation>,
    pub(super) by_name: HashMap<String, usize>,
    pub(super) tensor_maps: Vec<TensorMap>,
    /// `mapa` instructions of the thread being lowered (code index, span): their result needs
    /// the cluster ranks, known once every thread is placed (`resolve_mapa`).
    pub(super) mapa_sites: std::cell::RefCell<Vec<(usize, Span)>>,
    /// Kernel parameters (`.param` in the init block) by name: their variables (of the
    /// parameter space), read by `ld.param`.
    pub(super) params: HashMap<String, usize>,
    /// For each thread (by index), the names its code uses for the instances it sees of
    /// declarations instantiated per CTA or per thread (`s` for `s@cta1`), with their locations.
    pub(super) views: Vec<Vec<(String, usize)>>,
    /// The most words (locations) the test's variables may have together (`--max-memory`).
    pub(super) max_words: u64,
    /// The instances of each PTX `.shared`/`.local` declaration: (`cta1` or `P0`, instance name).
    pub(super) instances: HashMap<String, Vec<(String, String)>>,
    /// The special registers of the thread being lowered.
    pub(super) specials: super::special::Specials,
    /// The special registers the thread being lowered reads, with their values.
    pub(super) special_reads: std::cell::RefCell<std::collections::BTreeMap<String, i64>>,
    /// Whether register-only instructions the model rejects are abstracted (`opaque`): in the
    /// kernel form of a test.
    pub(super) abstracts: bool,
    /// The origins of the program's unknown values (`Program::unknowns`), each once (a kernel's
    /// instruction is lowered once per thread).
    pub(super) unknowns: std::cell::RefCell<Vec<crate::program::unknown::UnknownOrigin>>,
    /// The index of each origin in `unknowns`, by its span and text (a kernel's threads share them).
    pub(super) unknown_index: std::cell::RefCell<HashMap<(Span, String, String), u32>>,
    /// In a kernel, a condition naming nothing of it (`declare_implicit`), reported once the
    /// threads are lowered.
    pub(super) condition_error: Option<Diagnostic>,
    /// Warnings for the program (`Program::warnings`).
    pub(super) warnings: Vec<Diagnostic>,
}

impl Lowerer<'_> {
    /// The origin number of an unknown value's origin, registered once per place.
    pub(super) fn unknown_origin(&self, o: crate::program::unknown::UnknownOrigin) -> u32 {
        let mut all = self.unknowns.borrow_mut();
        let mut index = self.unknown_index.borrow_mut();
        let next = all.len() as u32;
        let k = *index.entry((o.span, o.what.clone(), o.why.clone())).or_insert(next);
        if k == next {
            all.push(o);
        }
        k
    }
}

/// Most registers a parameterized name may declare in a nested scope (`%r<N>`).
pub(super) const MAX_REG_RANGE: i64 = 1 << 16;

/// The shape of a variable: its size in bytes, state space, alignment and kind.
pub(super) struct VariableShape {
    pub(super) size: i64,
    pub(super) space: Space,
    pub(super) align: i64,
    pub(super) kind: VariableKind,
}

/// Per-thread register bookkeeping during lowering.
#[derive(Default)]
pub(super) struct RegTable {
    pub(super) names: Vec<String>,
    pub(super) index: HashMap<String, Reg>,
    pub(super) init: HashMap<Reg, i64>,
    pub(super) written: Vec<bool>,
    /// First read of each register, to report reads of registers that are never defined.
    pub(super) first_read: HashMap<Reg, Span>,
    /// The type of the last instruction (in program text) writing each register: how a
    /// condition compares it.
    pub(super) types: HashMap<Reg, Option<Ty>>,
    /// For each open nested scope of a code block, innermost last: the names it declares with
    /// the register each shadowed (restored when the scope closes).
    scopes: Vec<Vec<(String, Option<Reg>)>>,
}

impl RegTable {
    pub(super) fn get(&mut self, name: &str) -> Reg {
        if let Some(r) = self.index.get(name) {
            return *r;
        }
        let r = self.names.len();
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), r);
        self.written.push(false);
        r
    }

    pub(super) fn def(&mut self, name: &str) -> Reg {
        let r = self.get(name);
        self.written[r] = true;
        r
    }

    pub(super) fn set_type(&mut self, r: Reg, ty: Option<Ty>) {
        self.types.insert(r, ty);
    }

    /// A nested scope of a code block opens: the registers it declares are its own.
    pub(super) fn open_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    /// The innermost scope closes: the names it declared mean what they meant before it.
    pub(super) fn close_scope(&mut self) {
        for (name, shadowed) in self.scopes.pop().unwrap_or_default().into_iter().rev() {
            match shadowed {
                Some(r) => self.index.insert(name, r),
                None => self.index.remove(&name),
            };
        }
    }

    /// `.reg .TYPE a, b, %r<N>;`. In the thread's outermost scope a declaration changes nothing
    /// (registers need no declaration, as in tables); in a nested scope each name becomes a new
    /// register on its first use there, distinct from any register of that name outside.
    pub(super) fn declare(&mut self, d: &Declaration) -> Result<(), Diagnostic> {
        let Some(frame) = self.scopes.last_mut() else { return Ok(()) };
        for n in &d.names {
            let names: Vec<String> = match &n.range {
                Some(count) if !(0..=MAX_REG_RANGE).contains(&count.node) => {
                    return Err(Diagnostic::expected(count.span, format!("at most {MAX_REG_RANGE} registers"), count.node));
                }
                Some(count) => (0..count.node).map(|k| format!("{}{k}", n.name.node)).collect(),
                None => vec![n.name.node.clone()],
            };
            for name in names {
                if !frame.iter().any(|(declared, _)| *declared == name) {
                    let shadowed = self.index.remove(&name);
                    frame.push((name, shadowed));
                }
            }
        }
        Ok(())
    }

    pub(super) fn use_(&mut self, name: &str, span: Span) -> Reg {
        let r = self.get(name);
        self.first_read.entry(r).or_insert(span);
        r
    }
}

/// Register spellings that are registers regardless of context: Dat3M's `r<digits>` and PTX `%name`.
pub(super) fn is_register_shaped(name: &str) -> bool {
    name.len() > 1 && name.starts_with('r') && name[1..].chars().all(|c| c.is_ascii_digit())
}

impl Lowerer<'_> {
    /// The location a name stands for: a declared name (`x`, `s`, `s@cta1`, `bar`), or a word
    /// of a declared variable at a byte offset (`s+4`, `s@cta1+8`, `bar+8` for an mbarrier
    /// array), which `by_name` does not hold: a variable of 200 KB has one name there, not one
    /// per word, so that declaring and viewing it costs its name, not its words.
    pub(super) fn lookup(&self, name: &str) -> Option<usize> {
        if let Some(&l) = self.by_name.get(name) {
            return Some(l);
        }
        let (base, digits) = name.rsplit_once('+')?;
        let first = *self.by_name.get(base)?;
        let var = &self.variables[self.locations[first].variable];
        // `base` names a variable (its first word), not a word of one.
        (var.first_location == first).then(|| word_of(var, digits)).flatten()
    }

    pub(super) fn location(&self, name: &Spanned<String>) -> Result<usize, Diagnostic> {
        self.lookup(&name.node).ok_or_else(|| {
            Diagnostic::error(name.span, format!("unknown location `{}`", name.node)).with_note("declare it in the init block, e.g. `x=0;`")
        })
    }

    pub(super) fn address_of(&self, loc: usize) -> i64 {
        let v = self.locations[loc].variable;
        self.variables[v].base + self.locations[loc].offset
    }
}
