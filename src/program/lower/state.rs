//! The lowering's state: the program-wide tables filled from the init block (variables,
//! locations by name, tensor maps) and each thread's registers.

use crate::diag::{Diagnostic, Spanned};
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
    pub(super) fn location(&self, name: &Spanned<String>) -> Result<usize, Diagnostic> {
        self.by_name.get(&name.node).copied().ok_or_else(|| {
            Diagnostic::error(name.span, format!("unknown location `{}`", name.node)).with_note("declare it in the init block, e.g. `x=0;`")
        })
    }

    pub(super) fn address_of(&self, loc: usize) -> i64 {
        address(self.locations[loc].variable, self.locations[loc].offset)
    }
}
