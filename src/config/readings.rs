//! Readings of the places where the PTX text is ambiguous (digest §14.10, the ambiguity
//! register). Each has a recommended default; the alternative is selected by a flag and the report
//! names every reading in effect. `docs/async-model.md` gives the spec sentences behind each.
//!
//! One reading changes how events are built (who performs an async signal). The others are read
//! by the cat model: the engine defines, for each, a set
//! named `ALT-…` that holds every event when the alternative is selected and is empty otherwise,
//! so a model switches a clause with `(ALT-… * _)`.

/// The reading of every ambiguity ptxmm exposes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Readings {
    /// AMBIG-1: a `fence.proxy.async` anywhere on the path orders generic and async accesses
    /// (default: only a fence executed in the CTA of the async access, as ISCA'22's proxy fences).
    pub proxy_fence_anywhere: bool,
    /// AMBIG-3: the complete-tx / arrive-on is performed by the issuing thread (default: by a
    /// virtual thread of the CTA that owns the mbarrier).
    pub signal_by_issuer: bool,
    /// AMBIG-7: a waiter sees a bulk copy only if, besides the complete-tx, the phase also has a
    /// release arrive of the issuing thread (default: the complete-tx alone suffices).
    pub ct_needs_release_arrive: bool,
    /// AMBIG-13: completing `cp.async.bulk.wait_group.read` implies no generic-async proxy fence
    /// (default: it does, for the source reads).
    pub read_wait_without_fence: bool,
    /// AMBIG-14: observation through an mbarrier needs every link of the RMW chain to be morally
    /// strong (default: only the endpoints).
    pub mbarrier_chain_strict: bool,
    /// AMBIG-17: `wgmma.mma_async` is ordered after prior instructions only through fences
    /// (`wgmma.fence`, thread and proxy fences) and completed waits (default: after all prior
    /// instructions, for memory).
    pub wgmma_issue_fences: bool,
    /// AMBIG-18: async copies of earlier-committed groups are ordered before those of later groups
    /// of the same thread (default: no order, a write-write race).
    pub commit_order: bool,
    /// AMBIG-24: an mbarrier hand-off (a release arrive read by an acquire wait) orders a generic
    /// read before a later async write of the same location without a `fence.proxy.async`, as
    /// CUTLASS's `PipelineTmaAsync` relies on (default: the text's cross-proxy fence is needed).
    pub mbarrier_handoff: bool,
    /// AMBIG-25: f32 bulk reductions flush subnormal inputs and results to sign-preserving zero,
    /// as the text says of "the current implementation" (default: they keep them, as an H200
    /// did in every run; `docs/divergences.md`).
    pub f32_reduce_flushes: bool,
    /// AMBIG-26: Dat3M's meaning of `bar.cta.sync N`: the threads whose code reaches barrier N
    /// participate, and with a thread count any set of at least that many arrivals completes it
    /// (default: PTX's, every thread of the CTA participates when no count is given, and arrivals
    /// complete a counted barrier `count` at a time).
    pub dat3m_barriers: bool,
}

/// One ambiguity: its id, flag, and the two readings.
pub struct Ambiguity {
    pub id: &'static str,
    pub flag: &'static str,
    pub default: &'static str,
    pub alternative: &'static str,
    /// The `ALT-…` set a cat model reads, for model-level readings.
    pub cat_set: Option<&'static str>,
    /// A reading of the engine that every model expresses (barrier matching), rather than one
    /// of asynchronous operations that only a model with async events can.
    pub any_model: bool,
    /// Why the ambiguity matters, in one line: what the text says against what practice
    /// relies on. Printed with every finding that depends on the reading.
    pub reason: &'static str,
    /// Where production code meets the ambiguity, and what is known of it (library patterns,
    /// hardware runs, the ISA's own examples): printed once in a kernel check's summary when a
    /// finding depends on the reading.
    pub in_practice: Option<&'static str>,
    pub get: fn(&Readings) -> bool,
    pub set: fn(&mut Readings),
}

pub const AMBIGUITIES: &[Ambiguity] = &[
    Ambiguity {
        id: "AMBIG-1",
        flag: "proxy-fence-anywhere",
        default: "fence.proxy.async acts on async accesses of its own CTA",
        alternative: "fence.proxy.async anywhere on the path",
        any_model: false,
        cat_set: Some("ALT-PROXY-FENCE-ANYWHERE"),
        reason: "the text does not say which CTA's fence.proxy.async converts an async access; ISCA'22 takes the fence's own CTA",
        in_practice: None,
        get: |r| r.proxy_fence_anywhere,
        set: |r| r.proxy_fence_anywhere = true,
    },
    Ambiguity {
        id: "AMBIG-3",
        flag: "signal-by-issuer",
        default: "complete-tx/arrive-on performed in the mbarrier's CTA",
        alternative: "performed by the issuing thread",
        cat_set: None,
        any_model: false,
        reason: "the text does not say who performs a complete-tx or arrive-on, which decides whether it is morally strong with the waiter",
        in_practice: None,
        get: |r| r.signal_by_issuer,
        set: |r| r.signal_by_issuer = true,
    },
    Ambiguity {
        id: "AMBIG-7",
        flag: "ct-needs-release-arrive",
        default: "complete-tx alone publishes a bulk copy",
        alternative: "also needs a release arrive of the issuer in the phase",
        any_model: false,
        cat_set: Some("ALT-CT-NEEDS-RELEASE-ARRIVE"),
        reason: "the text says a complete-tx makes the copy visible, but not whether it releases without an arrive of the issuer",
        in_practice: None,
        get: |r| r.ct_needs_release_arrive,
        set: |r| r.ct_needs_release_arrive = true,
    },
    Ambiguity {
        id: "AMBIG-13",
        flag: "read-wait-without-fence",
        default: "wait_group.read completion implies the generic-async fence for source reads",
        alternative: "no implied fence after wait_group.read",
        any_model: false,
        cat_set: Some("ALT-READ-WAIT-WITHOUT-FENCE"),
        reason: "the text says .read waits for the source reads, not whether that completion carries the implicit proxy fence",
        in_practice: None,
        get: |r| r.read_wait_without_fence,
        set: |r| r.read_wait_without_fence = true,
    },
    Ambiguity {
        id: "AMBIG-14",
        flag: "mbarrier-chain-strict",
        default: "mbarrier RMW chain: only endpoints morally strong",
        alternative: "every link morally strong",
        any_model: false,
        cat_set: Some("ALT-MBARRIER-CHAIN-STRICT"),
        reason: "the text orders every update of one mbarrier, but does not say whether a chain through links that are not morally strong is observation",
        in_practice: None,
        get: |r| r.mbarrier_chain_strict,
        set: |r| r.mbarrier_chain_strict = true,
    },
    Ambiguity {
        id: "AMBIG-17",
        flag: "wgmma-issue-fences",
        default: "wgmma.mma_async is ordered after all prior instructions (for memory)",
        alternative: "wgmma.mma_async is ordered after prior fences and completed waits only",
        any_model: false,
        cat_set: Some("ALT-WGMMA-ISSUE-FENCES"),
        reason: "8.9.1.1 says wgmma.mma_async is not ordered after prior instructions, in a passage about registers",
        in_practice: None,
        get: |r| r.wgmma_issue_fences,
        set: |r| r.wgmma_issue_fences = true,
    },
    Ambiguity {
        id: "AMBIG-18",
        flag: "commit-order",
        default: "copies of different groups are unordered (WAW race)",
        alternative: "commit order orders their writes",
        any_model: false,
        cat_set: Some("ALT-COMMIT-ORDER"),
        reason: "the text orders the completion of bulk async-groups, not the writes of copies in different groups",
        in_practice: None,
        get: |r| r.commit_order,
        set: |r| r.commit_order = true,
    },
    Ambiguity {
        id: "AMBIG-24",
        flag: "mbarrier-handoff",
        default: "a generic read then an async write of the same location need fence.proxy.async, even after an mbarrier hand-off",
        alternative: "an mbarrier hand-off (release arrive, acquire wait) orders a generic read before a later async write (CUTLASS PipelineTmaAsync)",
        any_model: false,
        cat_set: Some("ALT-MBARRIER-HANDOFF"),
        reason: "the PTX text requires fence.proxy.async for a generic read followed by an async write; CUTLASS's PipelineTmaAsync relies on the mbarrier hand-off alone",
        in_practice: Some("every CUTLASS sm90 TMA pipeline (PipelineTmaAsync's consumer release: generic reads of a stage, an mbarrier arrive on its empty barrier, the producer's TMA overwrite, no fence.proxy.async), and DeepGEMM's and ThunderKittens' rings, rely on the hand-off; an H100 never showed the overwrite early in about 1.35e9 checks, while the PTX ISA's own cluster-launch-control example fences exactly this hand-off (fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster); ptxmm keeps the text's strict reading by default"),
        get: |r| r.mbarrier_handoff,
        set: |r| r.mbarrier_handoff = true,
    },
    Ambiguity {
        id: "AMBIG-25",
        flag: "f32-reduce-flushes",
        default: "an f32 bulk reduction keeps subnormal inputs and results (as an H200 did in every run)",
        alternative: "an f32 bulk reduction flushes subnormal inputs and results to sign-preserving zero",
        cat_set: None,
        any_model: false,
        reason: "the text says the current implementation of cp.reduce.async.bulk.add.f32 flushes subnormals; an H200 kept them in every run",
        in_practice: None,
        get: |r| r.f32_reduce_flushes,
        set: |r| r.f32_reduce_flushes = true,
    },
    Ambiguity {
        id: "AMBIG-26",
        flag: "dat3m-barriers",
        default: "bar.sync without a count: every thread of the CTA participates; with a count, arrivals complete it count at a time (PTX ISA 9.7.13.1)",
        alternative: "Dat3M's barriers: the threads that reach barrier N participate; with a count, any set of at least that many arrivals completes it",
        cat_set: None,
        any_model: true,
        reason: "PTX says all threads of the CTA participate when no count is given; Dat3M's tests count only the threads that reach the barrier",
        in_practice: None,
        get: |r| r.dat3m_barriers,
        set: |r| r.dat3m_barriers = true,
    },
];

impl Readings {
    /// Select the alternative reading named by `flag` (`proxy-fence-anywhere`, or `AMBIG-1`);
    /// the ambiguity it belongs to.
    pub fn select(&mut self, flag: &str) -> Result<&'static Ambiguity, String> {
        let a = AMBIGUITIES.iter().find(|a| a.flag == flag || a.id.eq_ignore_ascii_case(flag)).ok_or_else(|| {
            format!("unknown reading `{flag}`; known: {}", AMBIGUITIES.iter().map(|a| a.flag).collect::<Vec<_>>().join(", "))
        })?;
        (a.set)(self);
        Ok(a)
    }

    /// One line per ambiguity: `AMBIG-1 default (…)` or `AMBIG-1 alternative proxy-fence-anywhere (…)`.
    pub fn describe(&self) -> Vec<String> {
        AMBIGUITIES
            .iter()
            .map(|a| {
                if (a.get)(self) {
                    format!("{} alternative --reading {}: {}", a.id, a.flag, a.alternative)
                } else {
                    format!("{} default: {}", a.id, a.default)
                }
            })
            .collect()
    }

    /// One entry per ambiguity, for JSON: its id, flag, which reading is in effect and the same
    /// prose as [`Readings::describe`].
    pub fn entries(&self) -> Vec<ReadingEntry> {
        AMBIGUITIES.iter().zip(self.describe()).map(|(a, description)| entry(a, (a.get)(self), description)).collect()
    }

    /// The `ALT-…` sets a model reads, with whether each is selected.
    pub fn cat_sets(&self) -> impl Iterator<Item = (&'static str, bool)> + '_ {
        AMBIGUITIES.iter().filter_map(|a| a.cat_set.map(|s| (s, (a.get)(self))))
    }
}

/// One ambiguity's reading in effect, as the JSON reports carry it (`docs/json.md`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ReadingEntry {
    /// `AMBIG-1`, …
    pub id: &'static str,
    /// The `--reading` flag that selects the alternative (`proxy-fence-anywhere`, …).
    pub name: &'static str,
    /// `default` or `alternative`.
    pub value: &'static str,
    /// The line of the text report (`AMBIG-1 default: …`).
    pub description: String,
}

fn entry(a: &Ambiguity, alternative: bool, description: String) -> ReadingEntry {
    ReadingEntry { id: a.id, name: a.flag, value: if alternative { "alternative" } else { "default" }, description }
}

/// The entries of readings already described by [`Readings::describe`] (as `decide::Outcome`
/// keeps them): each line names its ambiguity and whether the alternative is selected.
pub fn entries_of(described: &[String]) -> Vec<ReadingEntry> {
    described
        .iter()
        .filter_map(|line| {
            let a = AMBIGUITIES.iter().find(|a| line.strip_prefix(a.id).is_some_and(|rest| rest.starts_with(' ')))?;
            let alternative = line[a.id.len()..].starts_with(" alternative ");
            Some(entry(a, alternative, line.clone()))
        })
        .collect()
}

/// One reading a finding depends on (`decide::reading_notes`), as the text and JSON reports
/// print it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct ReadingDependence {
    /// `AMBIG-24`, …
    pub id: &'static str,
    /// The `--reading` flag of the alternative.
    pub flag: &'static str,
    /// `default` or `alternative`: the reading in effect, under which the model reports the
    /// finding.
    pub in_effect: &'static str,
    /// The reading in effect, in words.
    pub reading: &'static str,
    /// The other reading, under which the model does not report the finding.
    pub other: &'static str,
    /// Why the text leaves the question open, in one line.
    pub reason: &'static str,
}

impl ReadingDependence {
    /// The dependence on `a`, whose alternative is in effect or not.
    pub fn of(a: &Ambiguity, alternative_in_effect: bool) -> Self {
        let (in_effect, reading, other) =
            if alternative_in_effect { ("alternative", a.alternative, a.default) } else { ("default", a.default, a.alternative) };
        ReadingDependence { id: a.id, flag: a.flag, in_effect, reading, other, reason: a.reason }
    }

    /// The line the text report prints under the finding.
    pub fn line(&self) -> String {
        let switch = if self.in_effect == "alternative" {
            format!("without --reading {} (default: {})", self.flag, self.other)
        } else {
            format!("with --reading {} ({})", self.flag, self.other)
        };
        format!(
            "depends on the reading {} ({}: {}); {switch} it is not reported. Why: {}",
            self.id, self.in_effect, self.reading, self.reason
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_through_the_descriptions() {
        let mut r = Readings::default();
        r.select("commit-order").unwrap();
        assert_eq!(entries_of(&r.describe()), r.entries());
        let alt: Vec<_> = r.entries().into_iter().filter(|e| e.value == "alternative").collect();
        assert_eq!(alt.len(), 1);
        assert_eq!((alt[0].id, alt[0].name), ("AMBIG-18", "commit-order"));
        assert_eq!(Readings::default().entries().len(), AMBIGUITIES.len());
    }
}
