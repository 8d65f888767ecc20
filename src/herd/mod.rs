//! herdtools7's conventions: its command-line options (`options`), the logs of herd7, litmus7
//! and ptxmm that mcompare7 reads (`log`), and `ptxmm compare` over them (`compare`). The names
//! a report gives observables in herd7's lexicon are the program's (`program::naming`).

pub mod compare;
pub mod log;
pub mod options;
