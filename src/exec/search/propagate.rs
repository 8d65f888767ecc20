//! Forward checking: the options each read still has, given the choices so far and, when the
//! model has an acyclic `rf | ...` union (NoThinAir), the dependencies they already imply.

use super::engine::{Engine, Options};
use crate::relation::EventSet;

impl<'e, 'a, 'm, 's> Engine<'e, 'a, 'm, 's> {
    /// Forward checking with the model's acyclic `rf | ...` union (NoThinAir): the dependencies
    /// known so far are its static names, the reads-from chosen, and for each mbarrier read
    /// every update all of its remaining states include (the chain of read-modify-writes up to
    /// the write it reads is rf and data in every history). A read cannot read a write (or a
    /// state with an update) that depends on the read itself. Options are filtered until no
    /// read's set of certain updates grows; None when some read has no option left. Without
    /// such a union in the model, every option is kept.
    pub(super) fn propagate(&self) -> Option<Options> {
        let Some(base) = &self.deps else { return Some(self.options_without_dependencies()) };
        // Each object's options narrowed by the order of its reads, as remembered for its
        // choices (a choice on one object leaves the others' as they were); later rounds
        // narrow again only the objects the dependencies changed.
        let mut mb = Vec::with_capacity(self.objects.len());
        for o in 0..self.objects.len() {
            mb.push(self.narrowed_object_options(o)?.as_ref().clone());
        }
        let mut opts = Options { data: self.data_options(), mb };
        let mut dirty = vec![false; self.objects.len()];
        loop {
            let mut d = base.clone();
            d.union_with(&self.rf);
            for (k, &r) in self.reads.iter().enumerate() {
                if let [w] = opts.data[k].as_slice() {
                    d.insert(*w, r);
                }
            }
            for (o, g) in self.objects.iter().enumerate() {
                for (i, &r) in g.reads.iter().enumerate() {
                    // In place, and no further once empty: a read may have thousands of states.
                    let mut must: Option<EventSet> = None;
                    for &n in &opts.mb[o][i] {
                        let p = &g.nodes[n].placed;
                        match must.as_mut() {
                            None => must = Some(p.clone()),
                            Some(m) => m.intersect_with(p),
                        }
                        if must.as_ref().is_some_and(EventSet::is_empty) {
                            break;
                        }
                    }
                    for u in must.iter().flat_map(|m| m.iter()) {
                        d.insert(g.units[u].write, r);
                    }
                }
            }
            let dep = d.plus();
            let mut changed = false;
            // Reads of one object ordered in their threads see states in the same order.
            for (o, g) in self.objects.iter().enumerate() {
                if !std::mem::take(&mut dirty[o]) || g.reads_prev.iter().all(|p| p.is_empty()) {
                    continue;
                }
                let m = g.nodes.len();
                let mut sets: Vec<EventSet> = opts.mb[o].iter().map(|v| EventSet::from_iter_in(m, v.iter().copied())).collect();
                if g.narrow_by_read_order(&mut sets)? {
                    changed = true;
                    opts.mb[o] = sets.iter().map(|s| s.iter().collect()).collect();
                }
            }
            for (k, &r) in self.reads.iter().enumerate() {
                let before = opts.data[k].len();
                opts.data[k].retain(|&w| !dep.contains(r, w));
                if opts.data[k].is_empty() {
                    return None;
                }
                changed |= opts.data[k].len() != before;
            }
            for (o, g) in self.objects.iter().enumerate() {
                for (i, &r) in g.reads.iter().enumerate() {
                    let before = opts.mb[o][i].len();
                    // The updates whose write depends on the read.
                    let depending = EventSet::from_fn(g.units.len(), |u| dep.contains(r, g.units[u].write));
                    opts.mb[o][i].retain(|&n| g.nodes[n].placed.is_disjoint(&depending));
                    if opts.mb[o][i].is_empty() {
                        return None;
                    }
                    if opts.mb[o][i].len() != before {
                        changed = true;
                        dirty[o] = true;
                    }
                }
            }
            if !changed {
                return Some(opts);
            }
        }
    }

    /// The writes each data read may still read: its choice once decided, else its sources.
    fn data_options(&self) -> Vec<Vec<usize>> {
        (0..self.reads.len()).map(|k| if self.decided[k] { self.rf.predecessors(self.reads[k]) } else { self.sources[k].clone() }).collect()
    }

    /// The options every read still has: decided reads their choice, data reads their sources,
    /// mbarrier reads the states compatible with the chosen ones (one history through them, and
    /// coherent with the other reads of the object ordered before or after them).
    fn options_without_dependencies(&self) -> Options {
        Options { data: self.data_options(), mb: (0..self.objects.len()).map(|o| self.object_options(o)).collect() }
    }

    /// The states each read of object `o` may still read, given the object's choices.
    fn object_options(&self, o: usize) -> Vec<Vec<usize>> {
        let g = &self.objects[o];
        let st = &self.state[o];
        let chosen: Vec<usize> = st.chosen.iter().map(|c| c.0).collect();
        let mut node_of: Vec<Option<usize>> = vec![None; g.reads.len()];
        for c in &st.chosen {
            if let Some(j) = c.1.and_then(|r| g.read_index(r)) {
                node_of[j].get_or_insert(c.0);
            }
        }
        let read_node = |j: usize| node_of[j];
        let compatible = g.compatible_nodes(&chosen);
        g.reads
            .iter()
            .enumerate()
            .map(|(i, &r)| match read_node(i) {
                Some(n) => vec![n],
                None => g.read_options[i]
                    .iter()
                    .map(|opt| opt.node)
                    .filter(|&n| !self.goal.final_reads.contains(&r) || g.finals.contains(&n))
                    .filter(|&n| compatible.contains(n) && g.read_order_allows(i, n, &read_node))
                    .collect(),
            })
            .collect()
    }

    /// [`Engine::object_options`] narrowed by the order of the object's reads (None when some
    /// read has none left), remembered per object for its choices and learned orders: the
    /// search asks again for every object after each choice, and most objects' choices did not
    /// change.
    fn narrowed_object_options(&self, o: usize) -> super::engine::Narrowed {
        /// Entries kept before the memo starts over (each holds one object's options).
        const MEMO_ENTRIES: usize = 4096;
        let st = &self.state[o];
        let key = (o, st.chosen.iter().map(|c| (c.0, c.1)).collect::<Vec<_>>(), st.after.clone());
        if let Some(known) = self.narrowed_memo.borrow().get(&key) {
            return known.clone();
        }
        let g = &self.objects[o];
        let options = self.object_options(o);
        let narrowed = if g.reads_prev.iter().all(|p| p.is_empty()) {
            Some(options)
        } else {
            let m = g.nodes.len();
            let mut sets: Vec<EventSet> = options.iter().map(|v| EventSet::from_iter_in(m, v.iter().copied())).collect();
            g.narrow_by_read_order(&mut sets).map(|_| sets.iter().map(|s| s.iter().collect()).collect())
        };
        let narrowed = narrowed.map(std::rc::Rc::new);
        let mut memo = self.narrowed_memo.borrow_mut();
        if memo.len() >= MEMO_ENTRIES {
            memo.clear();
        }
        memo.insert(key, narrowed.clone());
        narrowed
    }
}
