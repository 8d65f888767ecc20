//! Word elision: the words whose events would only mirror those of another word.

use crate::program::{Address, CopyKind, Op, Program, Value, VariableKind};
use std::collections::BTreeSet;

/// Words whose events would only mirror those of another word, and are therefore not generated.
///
/// A 16-byte bulk copy touches four words, but when every instruction that touches one of them
/// touches the others the same way, their events are interchangeable: the same reads-from and
/// coherence choices, the same races, the same undefined behaviour (findings name instructions,
/// not words). Such a word is elided when its value never matters (no thread reads it, no final
/// state shows it, and it is not the source of a copy into a word whose value matters), it has
/// no alias, no reduction touches it, and a kept word has the same set of accessing instructions. Words no instruction touches are elided too. Programs that address
/// memory through registers get no elision (the words an instruction touches are not static).
pub fn redundant_words(program: &Program) -> Vec<bool> {
    word_fates(program).into_iter().map(|f| f != WordFate::Kept).collect()
}

/// What word elision does with one word (see [`redundant_words`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordFate {
    /// Its events are generated.
    Kept,
    /// No instruction touches it: it has no events but its initial write.
    Untouched,
    /// Not generated: every instruction touching it touches the kept word named the same way,
    /// whose events stand for it (reports list it with that word's events).
    Mirrors(usize),
}

/// The fate of every word under elision, in location order.
pub fn word_fates(program: &Program) -> Vec<WordFate> {
    static_fates(program).unwrap_or_else(|| vec![WordFate::Kept; program.locations.len()])
}

/// The words never elided, whatever touches them: those a final state shows, mbarrier objects,
/// and words with an alias.
pub(super) fn always_kept(program: &Program) -> Vec<bool> {
    let mut shown = vec![false; program.physical.len()];
    for o in crate::program::naming::observables(program) {
        if let crate::program::Observable::Location(p) = o {
            shown[p] = true;
        }
    }
    let mut aliases = vec![0usize; program.physical.len()];
    for loc in &program.locations {
        aliases[loc.physical] += 1;
    }
    (0..program.locations.len())
        .map(|l| {
            let p = program.locations[l].physical;
            shown[p] || program.variable_of(l).kind == VariableKind::Mbarrier || aliases[p] > 1
        })
        .collect()
}

/// Whether the words each instruction touches are static (else the runs tell which words go
/// together: [`survey`](super::survey)).
pub fn words_are_static(program: &Program) -> bool {
    static_fates(program).is_some()
}

/// [`word_fates`] where the words each instruction touches are static; None where they are not
/// (addresses in registers, tensor copies, 64-bit accesses): the runs tell
/// ([`survey`](super::survey)).
pub(super) fn static_fates(program: &Program) -> Option<Vec<WordFate>> {
    let n = program.locations.len();
    let all_kept = None;
    // A 64-bit access reads or writes two words as one: keep every word.
    let wide =
        |op: &Op| matches!(op, Op::Load { ty: Some(t), .. } | Op::Store { ty: Some(t), .. } | Op::Rmw { ty: Some(t), .. } if t.bits == 64);
    if program.threads.iter().any(|t| t.code.iter().any(|i| wide(&i.op))) {
        return all_kept;
    }
    let mut sig: Vec<BTreeSet<(usize, usize, u8)>> = vec![BTreeSet::new(); n];
    let mut keep = vec![false; n];
    // (source word, destination word) of every copy: a kept destination needs its source's value.
    let mut flows: Vec<(usize, usize)> = Vec::new();
    let words = |a: &Address, from: i64, bytes: i64| -> Option<Vec<usize>> {
        let (Address::Location(l) | Address::Byte(l, _)) = a else { return None };
        let var = program.variable_of(*l);
        let start = program.locations[*l].offset + from;
        // Only the words inside the variable count: a size near 2^63 (undefined behaviour the
        // trace reports) must not make this count to it.
        let inside = var.size.saturating_sub(start).max(0).saturating_add(3) / 4;
        Some(
            (0..(bytes.max(4).saturating_add(3) / 4).min(inside))
                .map(|k| start + 4 * k)
                .filter(|o| *o >= 0 && *o < var.size)
                .map(|o| var.first_location + (o / 4) as usize)
                .filter(|&l| l < n && program.locations[l].variable == program.locations[var.first_location].variable)
                .collect(),
        )
    };
    for (t, th) in program.threads.iter().enumerate() {
        for (i, ins) in th.code.iter().enumerate() {
            let mut touch = |ws: Option<Vec<usize>>, role: u8, read: bool| -> bool {
                let Some(ws) = ws else { return false };
                for w in ws {
                    sig[w].insert((t, i, role));
                    keep[w] |= read;
                }
                true
            };
            let ok = match &ins.op {
                Op::Load { addr, .. } | Op::Rmw { addr, .. } => touch(words(addr, 0, 4), 0, true),
                Op::LoadVector { addr, dsts, .. } => touch(words(addr, 0, 4 * dsts.len() as i64), 0, true),
                Op::Store { addr, .. } => touch(words(addr, 0, 4), 1, false),
                Op::StoreVector { addr, values, .. } => touch(words(addr, 0, 4 * values.len() as i64), 1, false),
                Op::AsyncCopy(c) => {
                    // A tensor copy's words are a box of its tensor map: no elision.
                    let (Value::Const(size), None) = (c.size, &c.tensor) else { return all_kept };
                    let reduce = matches!(c.kind, CopyKind::Reduce(..));
                    let mut dsts = vec![words(&c.dst, 0, size)];
                    if let Some(mask) = &c.multicast {
                        let (Value::Const(mask), Address::Location(d)) = (mask, &c.dst) else { return all_kept };
                        dsts.clear();
                        for rank in (0..16).filter(|r| mask & (1 << r) != 0) {
                            let mapped = program
                                .cta_of_rank(th.placement.cluster, rank)
                                .and_then(|cta| program.same_offset_in_cta(program.address_of(*d), cta))
                                .and_then(|a| program.location_at(a));
                            dsts.push(mapped.map(|l| words(&Address::Location(l), 0, size)).unwrap_or(Some(Vec::new())));
                        }
                    }
                    // The k-th source word feeds the k-th word of each destination.
                    if let Some(sw) = words(&c.src, 0, size) {
                        for d in dsts.iter().flatten() {
                            flows.extend(sw.iter().copied().zip(d.iter().copied()));
                        }
                    }
                    dsts.into_iter().all(|d| touch(d, 2, reduce)) && touch(words(&c.src, 0, size), 3, reduce)
                }
                Op::Mbarrier { bar, .. } | Op::CpAsyncArrive { bar, .. } => touch(words(bar, 0, 4), 4, true),
                // A lane's `ldmatrix`/`stmatrix` row: 16 bytes (a lane with no row touches nothing).
                Op::Matrix(m) => match &m.row {
                    Some(row) => touch(words(row, 0, crate::program::matrix::ROW_BYTES), u8::from(m.store), !m.store),
                    None => true,
                },
                Op::Wgmma { a, b, .. } => {
                    let rest = |x: &Address| -> Option<Vec<usize>> {
                        let Address::Location(l) = x else { return None };
                        let v = program.variable_of(*l);
                        words(x, 0, v.size - program.locations[*l].offset)
                    };
                    a.as_ref().is_none_or(|a| touch(rest(a), 3, false)) && touch(rest(b), 5, false)
                }
                _ => true,
            };
            if !ok {
                return all_kept;
            }
        }
    }
    for (k, always) in keep.iter_mut().zip(always_kept(program)) {
        *k |= always;
    }
    // A word whose value matters (read by a thread, shown, fed into such a word) is kept, and so
    // is every source word that feeds it, transitively through chains of copies.
    loop {
        let mut changed = false;
        for &(src, dst) in &flows {
            if keep[dst] && !keep[src] {
                keep[src] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // The first word not kept with a given set of accessing instructions stands for the others.
    let mut represented: std::collections::BTreeMap<&BTreeSet<(usize, usize, u8)>, usize> = Default::default();
    let mut out = vec![WordFate::Kept; n];
    for l in 0..n {
        if keep[l] {
            continue;
        }
        if sig[l].is_empty() {
            out[l] = WordFate::Untouched;
        } else if let Some(&first) = represented.get(&sig[l]) {
            out[l] = WordFate::Mirrors(first);
        } else {
            represented.insert(&sig[l], l);
        }
    }
    Some(out)
}
