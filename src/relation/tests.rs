//! Tests of the relation operators, against their definitions on random relations of every
//! shape the kernels distinguish.

use super::*;

/// Deterministic xorshift, so that failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The shapes the kernels are exercised on: sparse (cyclic or not, at random), dense (about
/// a quarter of all pairs), program-order chains with forward cross edges (acyclic), the
/// same with a few backward edges (cyclic), and random forward edges (acyclic).
fn shapes(n: usize, rng: &mut Rng) -> Vec<(&'static str, Relation)> {
    let mut sparse = Relation::empty(n);
    for _ in 0..(2 * n) {
        sparse.insert(rng.below(n), rng.below(n));
    }
    let mut dense = Relation::empty(n);
    for a in 0..n {
        for b in 0..n {
            if rng.next().is_multiple_of(4) {
                dense.insert(a, b);
            }
        }
    }
    let threads = 1 + n / 40;
    let mut chains = Relation::from_fn(n, |a, b| a < b && a % threads == b % threads);
    for _ in 0..(n / 3) {
        let (a, b) = (rng.below(n), rng.below(n));
        if a / threads < b / threads {
            chains.insert(a, b);
        }
    }
    let mut cyclic = chains.clone();
    for _ in 0..3 {
        let (a, b) = (rng.below(n), rng.below(n));
        cyclic.insert(a.max(b), a.min(b));
    }
    let mut forward = Relation::empty(n);
    for _ in 0..(3 * n) {
        let (a, b) = (rng.below(n), rng.below(n));
        if a < b {
            forward.insert(a, b);
        }
    }
    vec![("sparse", sparse), ("dense", dense), ("chains", chains), ("cyclic", cyclic), ("forward", forward)]
}

/// About two thirds of the events, at random.
fn random_set(n: usize, rng: &mut Rng) -> EventSet {
    let mut s = EventSet::empty(n);
    for i in 0..n {
        if !rng.next().is_multiple_of(3) {
            s.insert(i);
        }
    }
    s
}

/// Reference composition, from the pairs of the left operand.
fn ref_seq(a: &Relation, b: &Relation) -> Relation {
    let n = a.universe();
    let mut r = Relation::empty(n);
    for (x, y) in a.pairs() {
        for z in 0..n {
            if b.contains(y, z) {
                r.insert(x, z);
            }
        }
    }
    r
}

/// Reference transitive closure: a breadth-first search from every event.
fn ref_plus(a: &Relation) -> Relation {
    let n = a.universe();
    let mut succ = vec![Vec::new(); n];
    for (x, y) in a.pairs() {
        succ[x].push(y);
    }
    let mut r = Relation::empty(n);
    for src in 0..n {
        let mut seen = vec![false; n];
        let mut queue: Vec<usize> = succ[src].clone();
        while let Some(x) = queue.pop() {
            if seen[x] {
                continue;
            }
            seen[x] = true;
            r.insert(src, x);
            queue.extend(succ[x].iter().copied().filter(|&y| !seen[y]));
        }
    }
    r
}

fn ref_inverse(a: &Relation) -> Relation {
    Relation::from_pairs(a.universe(), a.pairs().map(|(x, y)| (y, x)))
}

/// Every operation agrees with its definition (or with its out-of-place form), on relations
/// of every size class around the word boundaries and of every shape.
#[test]
fn seq_and_plus_match_their_definitions() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for n in [1, 5, 63, 64, 65, 100, 128, 129, 150, 200, 257, 400] {
        let shapes = shapes(n, &mut rng);
        let set = random_set(n, &mut rng);
        let other = random_set(n, &mut rng);
        let id = Relation::identity(n);
        for (i, (name, a)) in shapes.iter().enumerate() {
            let (_, b) = &shapes[(i + 1) % shapes.len()];
            let ctx = format!("n={n} {name}");
            // Composition, in all three forms.
            let seq = ref_seq(a, b);
            assert_eq!(a.seq(b), seq, "seq {ctx}");
            let mut out = Relation::identity(n);
            assert_eq!(a.seq_into(b, &mut out), !seq.is_empty(), "seq_into's emptiness {ctx}");
            assert_eq!(out, seq, "seq_into {ctx}");
            let mut in_place = a.clone();
            assert_eq!(in_place.seq_with(b), !seq.is_empty(), "seq_with's emptiness {ctx}");
            assert_eq!(in_place, seq, "seq_with {ctx}");
            assert_eq!(a.seq_checked(b), (seq.clone(), !seq.is_empty()), "seq_checked {ctx}");
            assert_eq!(a.seq(&Relation::empty(n)), Relation::empty(n), "seq empty {ctx}");
            // Closures.
            let plus = ref_plus(a);
            assert_eq!(a.plus(), plus, "plus {ctx}");
            let mut p = a.clone();
            p.plus_in_place();
            assert_eq!(p, plus, "plus_in_place {ctx}");
            assert_eq!(a.star(), plus.union(&id), "star {ctx}");
            let mut s = a.clone();
            s.star_in_place();
            assert_eq!(s, plus.union(&id), "star_in_place {ctx}");
            assert_eq!(a.optional(), a.union(&id), "optional {ctx}");
            let mut o = a.clone();
            o.optional_in_place();
            assert_eq!(o, a.union(&id), "optional_in_place {ctx}");
            // Acyclicity and reflexivity.
            let acyclic = (0..n).all(|x| !plus.contains(x, x));
            assert_eq!(a.is_acyclic(), acyclic, "is_acyclic {ctx}");
            assert_eq!(a.is_irreflexive(), (0..n).all(|x| !a.contains(x, x)), "is_irreflexive {ctx}");
            assert_eq!(plus.is_acyclic(), acyclic, "is_acyclic of the closure {ctx}");
            // Inverse, on the relation and on its (denser) closure.
            assert_eq!(a.inverse(), ref_inverse(a), "inverse {ctx}");
            assert_eq!(plus.inverse(), ref_inverse(&plus), "inverse of the closure {ctx}");
            // Complement.
            let complement = Relation::from_fn(n, |x, y| !a.contains(x, y));
            assert_eq!(a.complement(), complement, "complement {ctx}");
            let mut c = a.clone();
            c.complement_in_place();
            assert_eq!(c, complement, "complement_in_place {ctx}");
            assert_eq!(complement.len() + a.len(), n * n, "complement keeps bits beyond n clear {ctx}");
            // Boolean operations in place.
            let mut u = a.clone();
            u.union_with(b);
            assert_eq!(u, Relation::from_fn(n, |x, y| a.contains(x, y) || b.contains(x, y)), "union_with {ctx}");
            let mut it = a.clone();
            let inter = Relation::from_fn(n, |x, y| a.contains(x, y) && b.contains(x, y));
            assert_eq!(it.intersect_with(b), !inter.is_empty(), "intersect_with's emptiness {ctx}");
            assert_eq!(it, inter, "intersect_with {ctx}");
            assert_eq!(a.intersection_checked(b), (inter.clone(), !inter.is_empty()), "intersection_checked {ctx}");
            let diff = Relation::from_fn(n, |x, y| a.contains(x, y) && !b.contains(x, y));
            let mut d = a.clone();
            assert_eq!(d.difference_with(b), !diff.is_empty(), "difference_with's emptiness {ctx}");
            assert_eq!(d, diff, "difference_with {ctx}");
            assert_eq!(a.difference_checked(b), (diff.clone(), !diff.is_empty()), "difference_checked {ctx}");
            let mut d = b.clone();
            assert_eq!(d.subtract_from(a), !diff.is_empty(), "subtract_from's emptiness {ctx}");
            assert_eq!(d, diff, "subtract_from {ctx}");
            let mut d = a.clone();
            assert!(!d.difference_with(a), "a \\ a {ctx}");
            let minus_converse = a.difference(&ref_inverse(b));
            let mut d = a.clone();
            assert_eq!(d.difference_with_inverse(b), !minus_converse.is_empty(), "difference_with_inverse's emptiness {ctx}");
            assert_eq!(d, minus_converse, "difference_with_inverse {ctx}");
            let mut d = minus_converse.clone();
            d.difference_with_inverse(b);
            assert_eq!(d, minus_converse, "difference_with_inverse, sparse {ctx}");
            // Restrictions and products.
            let restricted = Relation::from_fn(n, |x, y| set.contains(x) && a.contains(x, y) && other.contains(y));
            assert_eq!(a.restrict(&set, &other), restricted, "restrict {ctx}");
            let mut r = a.clone();
            let rows = Relation::from_fn(n, |x, y| set.contains(x) && a.contains(x, y));
            assert_eq!(r.restrict_domain(&set), !rows.is_empty(), "restrict_domain's emptiness {ctx}");
            assert_eq!(r, rows, "restrict_domain {ctx}");
            assert_eq!(r.restrict_range(&other), !restricted.is_empty(), "restrict_range's emptiness {ctx}");
            assert_eq!(r, restricted, "restrict_domain/range {ctx}");
            let mut r = a.clone();
            assert!(!r.restrict_range(&EventSet::empty(n)), "restrict_range to nothing {ctx}");
            assert!(!r.restrict_domain(&EventSet::empty(n)) && r.is_empty(), "restrict_domain to nothing {ctx}");
            assert_eq!(Relation::of_set(&set).seq(a).seq(&Relation::of_set(&other)), restricted, "[S];r;[T] {ctx}");
            let product = Relation::product(&set, &other);
            assert_eq!(product, Relation::from_fn(n, |x, y| set.contains(x) && other.contains(y)), "product {ctx}");
            assert_eq!(a.domain(), EventSet::from_fn(n, |x| (0..n).any(|y| a.contains(x, y))), "domain {ctx}");
            assert_eq!(a.range(), EventSet::from_fn(n, |y| (0..n).any(|x| a.contains(x, y))), "range {ctx}");
        }
        // Sets.
        assert_eq!(EventSet::full(n), EventSet::from_fn(n, |_| true), "full n={n}");
        assert_eq!(set.complement(), EventSet::from_fn(n, |i| !set.contains(i)), "set complement n={n}");
        let mut s = set.clone();
        s.union_with(&other);
        assert_eq!(s, set.union(&other), "set union_with n={n}");
        let mut s = set.clone();
        s.intersect_with(&other);
        assert_eq!(s, set.intersection(&other), "set intersect_with n={n}");
        let mut s = set.clone();
        s.difference_with(&other);
        assert_eq!(s, set.difference(&other), "set difference_with n={n}");
        let mut s = other.clone();
        s.subtract_from(&set);
        assert_eq!(s, set.difference(&other), "set subtract_from n={n}");
        let mut s = set.clone();
        s.complement_in_place();
        assert_eq!(s, set.complement(), "set complement_in_place n={n}");
    }
}

/// Closures of cyclic relations: strongly connected components of every size, self-loops,
/// and components that reach one another.
#[test]
fn closures_of_cycles() {
    for n in [3, 64, 65, 130, 300] {
        // A ring through every event: everything reaches everything.
        let ring = Relation::from_fn(n, |a, b| b == (a + 1) % n);
        assert_eq!(ring.plus(), Relation::from_fn(n, |_, _| true), "ring n={n}");
        assert!(!ring.is_acyclic());
        // Two-event cycles chained forward, and one self-loop.
        let mut r = Relation::from_fn(n, |a, b| (a / 2 == b / 2 && a != b) || b == a + 2);
        r.insert(n - 1, n - 1);
        let plus = Relation::from_fn(n, |a, b| {
            let has_partner = (a ^ 1) < n;
            b / 2 > a / 2 || (b / 2 == a / 2 && (a != b || has_partner || a == n - 1))
        });
        assert_eq!(ref_plus(&r), plus, "reference, pairs n={n}");
        assert_eq!(r.plus(), plus, "pairs n={n}");
        assert!(!r.is_acyclic());
    }
}

#[test]
fn closure_and_cycles() {
    let r = Relation::from_pairs(70, [(0, 1), (1, 65), (65, 2)]);
    let p = r.plus();
    assert!(p.contains(0, 2));
    assert!(p.contains(1, 2));
    assert!(!p.contains(2, 0));
    assert!(r.is_acyclic());
    let c = r.union(&Relation::from_pairs(70, [(2, 0)]));
    assert!(!c.is_acyclic());
    let cyc = c.find_cycle().unwrap();
    assert_eq!(cyc.len(), 4);
    for i in 0..cyc.len() {
        assert!(c.contains(cyc[i], cyc[(i + 1) % cyc.len()]));
    }
}

#[test]
fn seq_inverse_product() {
    let a = Relation::from_pairs(4, [(0, 1), (2, 3)]);
    let b = Relation::from_pairs(4, [(1, 2), (3, 0)]);
    assert_eq!(a.seq(&b), Relation::from_pairs(4, [(0, 2), (2, 0)]));
    assert_eq!(a.inverse(), Relation::from_pairs(4, [(1, 0), (3, 2)]));
    let s = EventSet::from_fn(4, |i| i < 2);
    let t = EventSet::from_fn(4, |i| i == 3);
    assert_eq!(Relation::product(&s, &t), Relation::from_pairs(4, [(0, 3), (1, 3)]));
    assert_eq!(Relation::identity(4).complement().len(), 12);
    assert_eq!(a.domain().iter().collect::<Vec<_>>(), vec![0, 2]);
    assert_eq!(a.range().iter().collect::<Vec<_>>(), vec![1, 3]);
}

/// Matrices reuse the storage of dropped ones (of any size): fresh ones are still empty,
/// and copies and results still exact.
#[test]
fn reused_storage_is_reset() {
    for (first, second) in [(100, 64), (64, 100), (200, 130), (130, 200), (5, 5), (400, 1)] {
        let full = Relation::from_fn(first, |_, _| true);
        let copies: Vec<Relation> = (0..4).map(|_| full.clone()).collect();
        drop(copies);
        drop(full);
        for _ in 0..4 {
            assert!(Relation::empty(second).is_empty(), "{first} -> {second}");
            assert_eq!(Relation::identity(second).len(), second);
            let id = Relation::identity(second);
            assert_eq!(id.clone(), id);
            assert_eq!(id.seq(&id), id);
            assert_eq!(id.union(&Relation::empty(second)), id);
            assert_eq!(id.inverse(), id);
            assert_eq!(id.complement().len(), second * second - second);
        }
    }
}

#[test]
fn empty_universe() {
    let r = Relation::empty(0);
    assert_eq!(r.plus(), r);
    assert_eq!(r.star(), r);
    assert_eq!(r.inverse(), r);
    assert_eq!(r.complement(), r);
    assert_eq!(r.seq(&r), r);
    assert!(r.is_acyclic());
    assert!(EventSet::full(0).is_empty());
}

#[test]
fn the_next_and_previous_elements_skip_empty_words() {
    let s = EventSet::from_iter_in(300, [3, 64, 65, 200, 299]);
    let forward: Vec<usize> = std::iter::successors(s.next_from(0), |&i| s.next_from(i + 1)).collect();
    assert_eq!(forward, [3, 64, 65, 200, 299]);
    let backward: Vec<usize> = std::iter::successors(s.prev_from(usize::MAX), |&i| i.checked_sub(1).and_then(|j| s.prev_from(j))).collect();
    assert_eq!(backward, [299, 200, 65, 64, 3]);
    assert_eq!(s.next_from(66), Some(200));
    assert_eq!(s.next_from(300), None);
    assert_eq!(s.prev_from(63), Some(3));
    assert_eq!(s.prev_from(2), None);
    assert_eq!(EventSet::empty(0).prev_from(5), None);
    assert_eq!(EventSet::empty(0).next_from(0), None);
    assert!(s.len_exceeds(4) && !s.len_exceeds(5));
}
