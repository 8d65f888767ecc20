//! The layers values are looked up in, besides the static one's values: the per-call cells,
//! the [`Stage`] shared by the calls that keep some dynamic names fixed, and the bit sets of
//! units they use.

use super::value::Val;
use crate::cat::resolve::SlotSet;
use std::sync::atomic::AtomicBool;
use std::sync::OnceLock;

/// Values of definitions and environment names of the static layer, indexed by slot.
#[derive(Clone, Debug, Default)]
pub(super) struct Layer {
    pub(super) defs: Vec<Option<Val>>,
    pub(super) env: Vec<Option<Val>>,
}

impl Layer {
    pub(super) fn new(defs: usize, env: usize) -> Self {
        Layer { defs: vec![None; defs], env: vec![None; env] }
    }
}

/// The per-call layer: values of the dynamic environment names and definitions, indexed by
/// cell (see [`Prepared::env_cell`] and [`Prepared::def_cell`]).
///
/// [`Prepared::env_cell`]: super::Prepared::env_cell
/// [`Prepared::def_cell`]: super::Prepared::def_cell
pub(super) struct Call {
    pub(super) cells: Vec<Option<Val>>,
    /// The units known evaluated, in `cells` or in the stage, as a bit set.
    pub(super) done: Vec<u64>,
    /// Every dynamic environment value fetched into `cells` is a relation.
    pub(super) dyn_rel: bool,
}

pub(super) fn set_bit(words: &mut [u64], i: usize) {
    words[i / 64] |= 1 << (i % 64);
}

/// The bit set of `items`, over `0..universe`.
pub(super) fn bit_set(items: impl IntoIterator<Item = u32>, universe: usize) -> Vec<u64> {
    let mut words = vec![0u64; universe.div_ceil(64)];
    for i in items {
        set_bit(&mut words, i as usize);
    }
    words
}

/// Marks cells and slots that have none.
pub(super) const NO_CELL: u32 = u32::MAX;

/// Dynamic definitions evaluated once for a partial environment, reused by later calls.
///
/// Made by [`Prepared::stage`] for a set of dynamic names the caller keeps fixed (the
/// *available* names, say `rf` and `sync_fence` while it enumerates `co`). A staged unit is a
/// dynamic definition (or `let rec` group) whose dynamic dependencies are all available, such
/// as `cause` in `ptx.cat`. The `_on` methods of [`Prepared`] evaluate each staged unit at most
/// once for the whole stage, the first time one of them needs it, and keep its value (and the
/// values of the available names) here; everything else is evaluated per call, as without a
/// stage. Values are looked up in the static layer, then the stage, then the call's own.
///
/// Contract: every environment passed with a stage gives the same values for the available
/// names (they may differ in every other dynamic name). A stage belongs to the preparation
/// that made it; other preparations reject it. It is `Send + Sync`: calls on several threads
/// may share it.
///
/// [`Prepared`]: super::Prepared
/// [`Prepared::stage`]: super::Prepared::stage
#[derive(Debug)]
pub struct Stage {
    /// The preparation the stage belongs to.
    pub(super) owner: u64,
    /// Dynamic environment slots the stage assumes fixed.
    pub(super) available: SlotSet,
    /// Per unit: staged (all its dynamic environment dependencies are available).
    pub(super) staged: std::sync::Arc<Vec<bool>>,
    /// Values of the available dynamic names and of the staged units, by cell, once computed.
    pub(super) cells: Vec<OnceLock<Val>>,
    /// Some available name's value is not a relation.
    pub(super) not_rel: AtomicBool,
}

impl Stage {
    /// Number of definition units the stage evaluates (at most once each, on demand).
    pub fn staged_units(&self) -> usize {
        self.staged.iter().filter(|s| **s).count()
    }
}
