//! Reuse of the matrices of dropped relations, per thread.

use std::cell::RefCell;

/// Matrices of dropped relations, kept per thread for the next ones: evaluating a model
/// creates and drops many matrices of one size, and handing them back to the allocator makes it
/// return the memory to the system and fault it in again for the next candidate (at a few
/// hundred events, that was half of the evaluation time).
struct Spare {
    buffers: Vec<Vec<u64>>,
    /// Words held in `buffers`.
    words: usize,
}

/// At most this many matrices, and this many words (4 MiB), are kept per thread.
const SPARE_BUFFERS: usize = 256;
const SPARE_WORDS: usize = 1 << 19;

thread_local! {
    static SPARE: RefCell<Spare> = const { RefCell::new(Spare { buffers: Vec::new(), words: 0 }) };
}

/// A buffer of `len` words whose contents are unspecified (the caller overwrites them all).
pub(super) fn take_words(len: usize) -> Vec<u64> {
    if len == 0 {
        return Vec::new();
    }
    let spare = SPARE.try_with(|s| {
        let mut s = s.borrow_mut();
        let b = s.buffers.pop()?;
        s.words -= b.capacity();
        Some(b)
    });
    match spare {
        Ok(Some(mut b)) if b.capacity() >= len => {
            if b.len() >= len {
                b.truncate(len);
            } else {
                b.resize(len, 0);
            }
            b
        }
        _ => vec![0; len],
    }
}

/// A buffer of `len` zero words.
pub(super) fn zeroed_words(len: usize) -> Vec<u64> {
    let mut b = take_words(len);
    b.fill(0);
    b
}

/// Keeps a dropped matrix for reuse, within the limits.
pub(super) fn give_words(b: Vec<u64>) {
    if b.capacity() == 0 {
        return;
    }
    let _ = SPARE.try_with(|s| {
        let mut s = s.borrow_mut();
        if s.buffers.len() < SPARE_BUFFERS && s.words + b.capacity() <= SPARE_WORDS {
            s.words += b.capacity();
            s.buffers.push(b);
        }
    });
}
