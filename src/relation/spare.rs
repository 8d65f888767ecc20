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
    reuse_words(len).unwrap_or_else(|| vec![0; len])
}

/// A spare buffer resized to `len` words (contents unspecified), if one is kept.
fn reuse_words(len: usize) -> Option<Vec<u64>> {
    if len == 0 {
        return Some(Vec::new());
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
            Some(b)
        }
        _ => None,
    }
}

/// A buffer of `len` zero words. A fresh one is not written: the allocator hands out zeroed
/// memory (for a large matrix, pages the system maps only once they are written), so a
/// relation that stays nearly empty costs little resident memory.
pub(super) fn zeroed_words(len: usize) -> Vec<u64> {
    match reuse_words(len) {
        Some(mut b) => {
            b.fill(0);
            b
        }
        None => vec![0; len],
    }
}

/// A copy of `words`. A matrix too large to be kept spare is copied into fresh zeroed memory
/// word by nonzero word, so that the pages of its empty rows are never written (a copy of a
/// nearly empty relation of thousands of events stays nearly free).
pub(super) fn copied_words(words: &[u64]) -> Vec<u64> {
    if words.len() > SPARE_WORDS {
        let mut b = vec![0; words.len()];
        for (to, &from) in b.iter_mut().zip(words) {
            if from != 0 {
                *to = from;
            }
        }
        return b;
    }
    let mut b = take_words(words.len());
    b.copy_from_slice(words);
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
