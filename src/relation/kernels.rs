//! The word-parallel kernels of the relation operators, written for any row width and
//! instantiated for widths of 1 to 8 words: composition, transitive closures (Warshall on one
//! word, forward-only relations, Tarjan's components), the acyclicity search, and the
//! transposition of 64 × 64 blocks.

use super::words::{clear_bit, set_bit, zip_assign};

/// Calls `$body` with `$w` bound to a compile-time constant equal to the row width `$width` when
/// it is 1 to 8 words, and to the runtime value beyond. The kernels are `#[inline(always)]`
/// functions of the width, so each arm is a copy specialised (unrolled, vectorised) for it.
macro_rules! with_width {
    ($width:expr, |$w:ident| $body:expr) => {
        match $width {
            1 => {
                const $w: usize = 1;
                $body
            }
            2 => {
                const $w: usize = 2;
                $body
            }
            3 => {
                const $w: usize = 3;
                $body
            }
            4 => {
                const $w: usize = 4;
                $body
            }
            5 => {
                const $w: usize = 5;
                $body
            }
            6 => {
                const $w: usize = 6;
                $body
            }
            7 => {
                const $w: usize = 7;
                $body
            }
            8 => {
                const $w: usize = 8;
                $body
            }
            #[allow(non_snake_case)]
            $w => $body,
        }
    };
}
pub(super) use with_width;

/// Row `a ; o` for one row `a` of the left operand: the OR of the rows of `o` its bits select.
/// `acc` has the row width `w`.
#[inline(always)]
fn seq_row(w: usize, row: &[u64], o: &[u64], acc: &mut [u64]) {
    acc.fill(0);
    for (wi, &word) in row[..w].iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            let b = wi * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            zip_assign(&mut acc[..w], &o[b * w..b * w + w], |x, y| x | y);
        }
    }
}

/// `out = a ; o` over all rows (`out` distinct from both operands); whether the result has
/// any pair.
#[inline(always)]
pub(super) fn seq_kernel(w: usize, a: &[u64], o: &[u64], out: &mut [u64]) -> bool {
    if w == 0 {
        return false;
    }
    let mut any = 0;
    for (row, dst) in a.chunks_exact(w).zip(out.chunks_exact_mut(w)) {
        seq_row(w, row, o, dst);
        any |= dst.iter().fold(0, |x, y| x | y);
    }
    any != 0
}

/// `a = a ; o`, in place: row `x` of the result depends only on row `x` of `a`. Whether the
/// result has any pair.
#[inline(always)]
pub(super) fn seq_kernel_in_place(w: usize, a: &mut [u64], o: &[u64]) -> bool {
    if w == 0 {
        return false;
    }
    let mut small = [0u64; 8];
    let mut large = Vec::new();
    let acc: &mut [u64] = if w <= 8 {
        &mut small[..w]
    } else {
        large.resize(w, 0);
        &mut large
    };
    let mut any = 0;
    for row in a.chunks_exact_mut(w) {
        if row.iter().all(|x| *x == 0) {
            continue;
        }
        seq_row(w, row, o, acc);
        row.copy_from_slice(acc);
        any |= acc.iter().fold(0, |x, y| x | y);
    }
    any != 0
}

/// Transitive closure in place by Warshall's algorithm on one-word rows, branch-free: the
/// fastest closure at up to 64 events.
pub(super) fn warshall1(rows: &mut [u64]) {
    for k in 0..rows.len() {
        let krow = rows[k];
        if krow == 0 {
            continue;
        }
        for row in rows.iter_mut() {
            *row |= krow & 0u64.wrapping_sub((*row >> k) & 1);
        }
    }
}

/// Whether every pair `(a, b)` has `a < b` (so index order is a topological order).
#[inline(always)]
pub(super) fn forward(w: usize, bits: &[u64]) -> bool {
    bits.chunks_exact(w).enumerate().all(|(v, row)| {
        // Columns 0..=v: the words before v's, and the low bits of v's word.
        let (wv, bv) = (v / 64, v % 64);
        row[..wv].iter().all(|x| *x == 0) && row[wv] & (u64::MAX >> (63 - bv)) == 0
    })
}

/// Transitive closure in place of a relation whose pairs all go forward in index order: rows
/// are closed from the last event back, each as its row plus the closed rows of its successors,
/// skipping successors already reached through an earlier one (on program-order chains, one OR
/// per event).
#[inline(always)]
pub(super) fn forward_closure_kernel(w: usize, bits: &mut [u64]) {
    let mut small = [0u64; 16];
    let mut large = Vec::new();
    let scratch: &mut [u64] = if 2 * w <= small.len() {
        &mut small[..2 * w]
    } else {
        large.resize(2 * w, 0);
        &mut large
    };
    let (acc, covered) = scratch.split_at_mut(w);
    let n = bits.len() / w;
    for v in (0..n).rev() {
        let (head, tail) = bits.split_at_mut((v + 1) * w);
        let row = &mut head[v * w..];
        if row.iter().all(|x| *x == 0) {
            continue;
        }
        acc.copy_from_slice(row);
        covered.fill(0);
        for wi in 0..w {
            let mut pending = row[wi];
            loop {
                let m = pending & !covered[wi];
                if m == 0 {
                    break;
                }
                let t = m.trailing_zeros() as usize;
                pending &= !(1u64 << t);
                // Successors come after v: their rows are closed, in `tail`.
                let x = wi * 64 + t - (v + 1);
                let reach = &tail[x * w..x * w + w];
                zip_assign(acc, reach, |a, b| a | b);
                zip_assign(covered, reach, |a, b| a | b);
            }
        }
        row.copy_from_slice(acc);
    }
}

/// Scratch space of the graph searches: per-vertex numbers and the bit masks of the search.
struct Search {
    /// Tarjan index of each vertex (`u32::MAX`: not visited).
    index: Vec<u32>,
    low: Vec<u32>,
    /// Tarjan's stack of vertices whose component is not yet known.
    stack: Vec<u32>,
    /// The depth-first path: `(vertex, word of its row the successor scan is at)`.
    frames: Vec<(u32, u32)>,
    visited: Vec<u64>,
    on_stack: Vec<u64>,
}

impl Search {
    fn new(n: usize, w: usize) -> Self {
        Search {
            index: vec![u32::MAX; n],
            low: vec![0; n],
            stack: Vec::new(),
            frames: Vec::new(),
            visited: vec![0; w],
            on_stack: vec![0; w],
        }
    }
}

/// Transitive closure in place: Tarjan's strongly connected components, with reachability
/// propagated as each component is completed (components complete in reverse topological order,
/// so every component the current one reaches already holds its closure row).
///
/// A component `C` reaches `R(C) = ⋃_{v∈C} row(v) ∪ ⋃ R(D)` over the components `D ≠ C` its
/// rows point into; every member of `C` gets `R(C)` (which contains `C` itself exactly when `C`
/// is a cycle, a self-loop included). Successors are visited in ascending order and skipped when
/// an earlier successor already reaches them, which on program-order chains leaves one OR per
/// event.
#[inline(always)]
pub(super) fn closure_kernel(w: usize, n: usize, bits: &mut [u64]) {
    let mut s = Search::new(n, w);
    // acc: the component's row; members: the component as a mask; covered: reached through a
    // successor already merged.
    let mut scratch = vec![0u64; 3 * w];
    // Events without successors are finished components already, with an empty row: marking
    // them visited (and never on the stack) keeps sparse relations cheap.
    for (v, row) in bits.chunks_exact(w).enumerate() {
        if row.iter().all(|x| *x == 0) {
            s.index[v] = 0;
            set_bit(&mut s.visited, v);
        }
    }
    let mut counter = 0u32;
    let enter = |s: &mut Search, v: usize, counter: &mut u32| {
        s.index[v] = *counter;
        s.low[v] = *counter;
        *counter += 1;
        set_bit(&mut s.visited, v);
        set_bit(&mut s.on_stack, v);
        s.stack.push(v as u32);
        s.frames.push((v as u32, 0));
    };
    for root in 0..n {
        if s.index[root] != u32::MAX {
            continue;
        }
        enter(&mut s, root, &mut counter);
        while let Some(&(v, wi)) = s.frames.last() {
            let v = v as usize;
            let row = &bits[v * w..v * w + w];
            let mut wi = wi as usize;
            let mut next = None;
            while wi < w {
                let m = row[wi] & !s.visited[wi];
                if m != 0 {
                    next = Some(wi * 64 + m.trailing_zeros() as usize);
                    break;
                }
                wi += 1;
            }
            s.frames.last_mut().expect("frame").1 = wi as u32;
            if let Some(x) = next {
                enter(&mut s, x, &mut counter);
                continue;
            }
            // All successors visited: edges to vertices still on the stack lower the link.
            let mut low = s.low[v];
            for (wi, (&r, &o)) in row.iter().zip(&s.on_stack).enumerate() {
                let mut m = r & o;
                while m != 0 {
                    let x = wi * 64 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    low = low.min(s.index[x]);
                }
            }
            s.low[v] = low;
            s.frames.pop();
            if let Some(&(p, _)) = s.frames.last() {
                let p = p as usize;
                s.low[p] = s.low[p].min(low);
            }
            if low != s.index[v] {
                continue;
            }
            // `v` roots a component: the stack from `v` up.
            let start = s.stack.iter().rposition(|&x| x as usize == v).expect("root on the stack");
            let (acc, rest) = scratch.split_at_mut(w);
            let (members, covered) = rest.split_at_mut(w);
            acc.fill(0);
            members.fill(0);
            covered.fill(0);
            for &x in &s.stack[start..] {
                let x = x as usize;
                clear_bit(&mut s.on_stack, x);
                set_bit(members, x);
                zip_assign(acc, &bits[x * w..x * w + w], |a, b| a | b);
            }
            for wi in 0..w {
                let mut pending = acc[wi] & !members[wi];
                loop {
                    let m = pending & !covered[wi];
                    if m == 0 {
                        break;
                    }
                    let t = m.trailing_zeros() as usize;
                    pending &= !(1u64 << t);
                    let x = wi * 64 + t;
                    let reach = &bits[x * w..x * w + w];
                    zip_assign(acc, reach, |a, b| a | b);
                    zip_assign(covered, reach, |a, b| a | b);
                }
            }
            for &x in &s.stack[start..] {
                let x = x as usize;
                bits[x * w..x * w + w].copy_from_slice(acc);
            }
            s.stack.truncate(start);
        }
    }
}

/// Whether the graph has no cycle: a depth-first search that fails at the first edge back to
/// the current path (checked once per vertex, on entry, against the path as a mask).
#[inline(always)]
pub(super) fn acyclic_kernel(w: usize, n: usize, bits: &[u64]) -> bool {
    let mut visited = vec![0u64; w];
    let mut path = vec![0u64; w];
    let mut frames: Vec<(u32, u32)> = Vec::new();
    // Events without successors are on no cycle.
    for (v, row) in bits.chunks_exact(w).enumerate() {
        if row.iter().all(|x| *x == 0) {
            set_bit(&mut visited, v);
        }
    }
    for root in 0..n {
        if visited[root / 64] & (1 << (root % 64)) != 0 {
            continue;
        }
        let enter = |v: usize, visited: &mut [u64], path: &mut [u64], frames: &mut Vec<(u32, u32)>| -> bool {
            set_bit(visited, v);
            set_bit(path, v);
            frames.push((v as u32, 0));
            bits[v * w..v * w + w].iter().zip(path.iter()).all(|(r, p)| r & p == 0)
        };
        if !enter(root, &mut visited, &mut path, &mut frames) {
            return false;
        }
        while let Some(&(v, wi)) = frames.last() {
            let v = v as usize;
            let row = &bits[v * w..v * w + w];
            let mut wi = wi as usize;
            let mut next = None;
            while wi < w {
                let m = row[wi] & !visited[wi];
                if m != 0 {
                    next = Some(wi * 64 + m.trailing_zeros() as usize);
                    break;
                }
                wi += 1;
            }
            frames.last_mut().expect("frame").1 = wi as u32;
            match next {
                Some(x) => {
                    if !enter(x, &mut visited, &mut path, &mut frames) {
                        return false;
                    }
                }
                None => {
                    clear_bit(&mut path, v);
                    frames.pop();
                }
            }
        }
    }
    true
}

/// Transposes a 64 × 64 bit block in place (bit `j` of word `i` ↔ bit `i` of word `j`), by
/// swapping ever smaller off-diagonal sub-blocks.
pub(super) fn transpose64(a: &mut [u64; 64]) {
    let mut j = 32;
    let mut m: u64 = 0x0000_0000_ffff_ffff;
    while j != 0 {
        let mut k = 0;
        while k < 64 {
            let t = ((a[k] >> j) ^ a[k + j]) & m;
            a[k + j] ^= t;
            a[k] ^= t << j;
            k = (k + j + 1) & !j;
        }
        j >>= 1;
        m ^= m << j;
    }
}
