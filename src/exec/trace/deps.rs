//! Dependency masks: which earlier events of a trace a value depends on.

/// Dependencies of a value on earlier events of the same trace: a set of trace event indices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DepMask(Vec<u64>);

impl DepMask {
    /// No dependency.
    pub fn none() -> Self {
        DepMask(Vec::new())
    }

    /// A dependency on trace event `i`.
    pub fn single(i: usize) -> Self {
        let mut words = vec![0; i / 64 + 1];
        words[i / 64] |= 1 << (i % 64);
        DepMask(words)
    }

    pub fn union(&self, o: &DepMask) -> DepMask {
        let mut out = self.clone();
        out.union_with(o);
        out
    }

    pub fn union_with(&mut self, o: &DepMask) {
        if self.0.len() < o.0.len() {
            self.0.resize(o.0.len(), 0);
        }
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }

    /// The trace event indices, ascending.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(wi, &w)| (0..64).filter(move |b| w & (1 << b) != 0).map(move |b| wi * 64 + b))
    }
}
