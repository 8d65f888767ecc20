//! The names in scope while a model is resolved: `let` names, functions and procedures.
//!
//! Procedures and functions are lexically scoped, so each one keeps the scope it was defined
//! in. A model with thousands of them must not copy the whole scope for each (quadratic time
//! and memory), so a [`Scope`] is a small mutable top over a chain of immutable, shared
//! frames: a snapshot seals the top into a frame and shares the chain. Frames are merged as in
//! a binary counter (a frame absorbs its parent while the parent is no larger), so a chain
//! holds O(log n) frames and each binding is copied O(log n) times in all.

use std::collections::HashMap;
use std::rc::Rc;

/// One sealed layer of bindings; newer than its parent.
struct Frame<B, P> {
    names: HashMap<String, B>,
    procs: HashMap<String, Rc<P>>,
    parent: Option<Rc<Frame<B, P>>>,
}

impl<B, P> Frame<B, P> {
    fn size(&self) -> usize {
        self.names.len() + self.procs.len()
    }
}

/// Bindings of names (`B`) and of procedure names (`P`, a namespace of its own).
pub(crate) struct Scope<B, P> {
    names: HashMap<String, B>,
    procs: HashMap<String, Rc<P>>,
    parent: Option<Rc<Frame<B, P>>>,
}

impl<B, P> Default for Scope<B, P> {
    fn default() -> Self {
        Scope { names: HashMap::new(), procs: HashMap::new(), parent: None }
    }
}

impl<B: Copy, P> Scope<B, P> {
    /// The binding of `name`, the newest first.
    pub fn get(&self, name: &str) -> Option<B> {
        if let Some(b) = self.names.get(name) {
            return Some(*b);
        }
        let mut frame = self.parent.as_deref();
        while let Some(f) = frame {
            if let Some(b) = f.names.get(name) {
                return Some(*b);
            }
            frame = f.parent.as_deref();
        }
        None
    }

    /// The procedure named `name`, the newest first.
    pub fn proc(&self, name: &str) -> Option<Rc<P>> {
        if let Some(p) = self.procs.get(name) {
            return Some(p.clone());
        }
        let mut frame = self.parent.as_deref();
        while let Some(f) = frame {
            if let Some(p) = f.procs.get(name) {
                return Some(p.clone());
            }
            frame = f.parent.as_deref();
        }
        None
    }

    pub fn insert(&mut self, name: String, b: B) {
        self.names.insert(name, b);
    }

    pub fn insert_proc(&mut self, name: String, p: P) {
        self.procs.insert(name, Rc::new(p));
    }

    /// The scope as it is now, sharing its bindings with `self`; later insertions into either
    /// do not show in the other.
    pub fn snapshot(&mut self) -> Scope<B, P> {
        if !self.names.is_empty() || !self.procs.is_empty() {
            let mut frame =
                Frame { names: std::mem::take(&mut self.names), procs: std::mem::take(&mut self.procs), parent: self.parent.take() };
            while let Some(p) = frame.parent.clone().filter(|p| p.size() <= frame.size()) {
                let mut names = p.names.clone();
                names.extend(frame.names.drain());
                let mut procs = p.procs.clone();
                procs.extend(frame.procs.drain());
                frame = Frame { names, procs, parent: p.parent.clone() };
            }
            self.parent = Some(Rc::new(frame));
        }
        Scope { names: HashMap::new(), procs: HashMap::new(), parent: self.parent.clone() }
    }

    /// Every name binding visible, as one map.
    pub fn flatten(&self) -> HashMap<String, B> {
        let mut frames = Vec::new();
        let mut frame = self.parent.as_deref();
        while let Some(f) = frame {
            frames.push(f);
            frame = f.parent.as_deref();
        }
        let mut out = HashMap::new();
        for f in frames.iter().rev() {
            out.extend(f.names.iter().map(|(k, v)| (k.clone(), *v)));
        }
        out.extend(self.names.iter().map(|(k, v)| (k.clone(), *v)));
        out
    }
}

impl<B, P> Clone for Scope<B, P>
where
    B: Clone,
{
    fn clone(&self) -> Self {
        Scope { names: self.names.clone(), procs: self.procs.clone(), parent: self.parent.clone() }
    }
}
