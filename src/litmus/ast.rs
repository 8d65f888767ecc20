//! Syntax tree of a PTX litmus test (the Dat3M dialect plus real PTX spellings).
//!
//! The tree is deliberately close to the text: instructions keep their opcode as the list of
//! dot-separated parts (`st.relaxed.gpu` → `["st", "relaxed", "gpu"]`) and their operands as
//! written. Giving meaning to opcodes and operands (which qualifiers are legal, which operand is a
//! register, a location or a constant) is the job of `program::lower`, which reports its errors on
//! the spans kept here.

use crate::diag::{Span, Spanned};

/// One parsed litmus file.
#[derive(Clone, Debug)]
pub struct LitmusTest {
    /// The architecture keyword of the header line (`PTX`).
    pub arch: Spanned<String>,
    /// Test name (the rest of the header line).
    pub name: Spanned<String>,
    /// Quoted strings between the header and the init block.
    pub comments: Vec<String>,
    pub init: Vec<Spanned<InitItem>>,
    pub threads: Vec<ThreadHeader>,
    /// How the program is written: a table of rows, one kernel block, or one block per thread.
    pub form: CodeForm,
    /// `code[t]` is the code of thread `t`, top to bottom (empty cells of a table are omitted).
    /// A kernel block ([`CodeForm::Kernel`]) is stored once, as `code[0]`: read a thread's code
    /// with [`LitmusTest::column`].
    pub code: Vec<Vec<Spanned<Statement>>>,
    /// `locations [x; P0:r0;]`, if present.
    pub locations: Vec<Spanned<CondValue>>,
    pub filter: Option<Spanned<Prop>>,
    pub condition: Option<Condition>,
}

impl LitmusTest {
    /// The code thread `t` runs: its column, or the kernel block every thread runs.
    pub fn column(&self, t: usize) -> &[Spanned<Statement>] {
        let index = if self.form == CodeForm::Kernel { 0 } else { t };
        self.code.get(index).map_or(&[], Vec::as_slice)
    }
}

/// The three ways to write the program after the thread header row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeForm {
    /// Rows of cells separated by `|`, one column per thread, each row ending at `;`.
    Table,
    /// One block `{ ... }` of PTX statements that every thread runs (SPMD).
    Kernel,
    /// One block per thread, in order: `P0 { ... } P1 { ... }`.
    Blocks,
}

/// An item of the init block `{ ... }`.
#[derive(Clone, Debug, PartialEq)]
pub enum InitItem {
    /// `x = 0;` or `x = -1;` (a new location with an initial value). A C-style type prefix
    /// (`int x = 0;`, `uint32_t x = 0;`) is accepted by the parser and not kept.
    Location { name: Spanned<String>, value: Spanned<i64> },
    /// `y = x;` / `y = &x;`: a new location whose initial value is copied from `x`
    /// (`address_of` is true for `&x`, which makes y hold the address of x).
    LocationFromLocation { name: Spanned<String>, source: Spanned<String>, address_of: bool },
    /// `P0:r0 = 1;` or `0:r0 = 1;` (`P1.7:r0 = 1;`: lane 7 of warp column P1; `P1:r0` there
    /// stands for every lane).
    Register { thread: Spanned<usize>, lane: Option<usize>, reg: Spanned<String>, value: Spanned<i64> },
    /// `P0:r1 = x;` / `P0:r1 = &x;`: the register holds the address of location x.
    RegisterAddress { thread: Spanned<usize>, lane: Option<usize>, reg: Spanned<String>, location: Spanned<String> },
    /// `y @ generic aliases x;` (proxy ∈ generic | surface | texture | constant).
    Alias { name: Spanned<String>, proxy: Spanned<String>, target: Spanned<String> },
    /// A variable with a size, a state space or an mbarrier type:
    /// `g[16] = 1;`, `s[16] @ shared cta 0 align 16 = {1,2,3,4};`, `bar @ shared cta 0 mbarrier(2);`.
    Variable(VariableDecl),
    /// `tmap @ tensormap { base = g; dims = {8, 4}; box = {4, 2}; ... }`: a tensor map (a
    /// `CUtensorMap`) describing a tensor in the global variable `base` (see `program::tensor`).
    TensorMap(TensorMapDecl),
    /// `kernel @ launch { block = {64, 2, 1}; grid = {2, 2, 1}; cluster = {2, 1, 1};
    /// dynamic_smem = 4096; }`: the launch the threads belong to (`%ntid`, `%nctaid`, the
    /// components of `%tid`/`%ctaid`, `%dynamic_smem_size`), with the fields of a tensor map's
    /// syntax. Without it, the launch is what the threads' placements make it (one dimension).
    Launch(TensorMapDecl),
    /// A PTX-spelled declaration: `.shared .align 8 .b64 bar;`, `.global .u32 x = 5;`,
    /// `.param .u64 p = &g;`.
    Declaration(Declaration),
}

/// A PTX declaration (PTX ISA §5.4): `[.visible|.extern] .SPACE [.align N] .TYPE NAME[[N]...]
/// [= init]`, or `.reg .TYPE NAME, %r<N>, ...` for registers. Checked when lowered.
#[derive(Clone, Debug, PartialEq)]
pub struct Declaration {
    pub space: Spanned<DeclSpace>,
    pub align: Option<Spanned<i64>>,
    /// The type without its dot: `b8`, `u64`, `pred`.
    pub ty: Spanned<String>,
    pub names: Vec<DeclName>,
    pub init: Option<Spanned<DeclInit>>,
}

/// The state space of a [`Declaration`] (PTX ISA §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeclSpace {
    Reg,
    Shared,
    Global,
    Local,
    Param,
}

impl DeclSpace {
    pub fn keyword(self) -> &'static str {
        match self {
            DeclSpace::Reg => ".reg",
            DeclSpace::Shared => ".shared",
            DeclSpace::Global => ".global",
            DeclSpace::Local => ".local",
            DeclSpace::Param => ".param",
        }
    }
}

/// One declared name: `x`, `buf[16]` (array dimensions, in elements), or `%r<15>` (a
/// parameterized name declaring `%r0` to `%r14`, PTX ISA §5.4.6).
#[derive(Clone, Debug, PartialEq)]
pub struct DeclName {
    pub name: Spanned<String>,
    pub dims: Vec<Spanned<i64>>,
    pub range: Option<Spanned<i64>>,
    /// `NAME+16`: a field at this byte offset of the variable NAME declared before (a litmus
    /// extension for the bytes of an aggregate kernel parameter: `.param .u32 p+16 = 128;`).
    pub offset: Option<Spanned<i64>>,
}

/// An initialiser: `= 5` or `= {1, 2, 3}` (element values), or `= &g` (the address of a variable;
/// kernel parameters).
#[derive(Clone, Debug, PartialEq)]
pub enum DeclInit {
    Values(Vec<i64>),
    AddressOf(String),
}

/// A tensor-map declaration: its name and its `key = value` fields as written (checked when
/// lowered).
#[derive(Clone, Debug, PartialEq)]
pub struct TensorMapDecl {
    pub name: Spanned<String>,
    pub fields: Vec<(Spanned<String>, Spanned<TensorMapValue>)>,
}

/// The value of a tensor-map field: a word (`g`, `u32`, `zero`, `none`, `128B`), an integer or a
/// list of integers.
#[derive(Clone, Debug, PartialEq)]
pub enum TensorMapValue {
    Word(String),
    Int(i64),
    List(Vec<i64>),
}

/// A declared variable (see [`InitItem::Variable`]).
#[derive(Clone, Debug, PartialEq)]
pub struct VariableDecl {
    pub name: Spanned<String>,
    /// `[16]`: the size in bytes.
    pub size: Option<Spanned<i64>>,
    /// `@ shared cta N` (Some(N)) or `@ global` / nothing (None).
    pub shared_cta: Option<Spanned<i64>>,
    pub align: Option<Spanned<i64>>,
    /// `mbarrier` (None: not initialised) or `mbarrier(count)`.
    pub mbarrier: Option<Spanned<Option<i64>>>,
    /// `= 5` (every word) or `= {1, 2}` (word by word).
    pub init: Option<Spanned<Vec<i64>>>,
    /// Whether `init` was a single value to repeat.
    pub init_repeats: bool,
}

/// `P0@cta 0,gpu 0`: thread id plus named placement levels in the order written
/// (`[("cta",0),("gpu",0)]`; later extensions add `cluster`).
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadHeader {
    pub id: Spanned<usize>,
    pub placement: Vec<(Spanned<String>, Spanned<i64>)>,
    pub span: Span,
    /// The lane, for a thread that a warp column (`P1@cta 0,warp 1`) stands for: the parser
    /// writes one header per lane (`litmus::warps`), each placed at its `tid`.
    pub lane: Option<usize>,
}

impl ThreadHeader {
    /// `P1`, or `P1.7` for lane 7 of warp column P1.
    pub fn name(&self) -> String {
        thread_name(self.id.node, self.lane)
    }
}

/// `P1`, or `P1.7` for lane 7 of warp column P1.
pub fn thread_name(id: usize, lane: Option<usize>) -> String {
    match lane {
        Some(l) => format!("P{id}.{l}"),
        None => format!("P{id}"),
    }
}

/// One statement of a thread's code (a cell of a table, or a statement of a block).
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    /// `LC00:`
    Label(String),
    /// An instruction, optionally guarded by a predicate (`@p`, `@!p`).
    Instr(Instruction),
    /// A declaration inside a code block: `.reg`, `.shared` or `.local`.
    Decl(Declaration),
    /// `{`: a nested scope of a code block opens (its `.reg`s are local to it).
    Open,
    /// `}`: the innermost nested scope closes.
    Close,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    /// `@p` / `@!p` guard: (register name, negated).
    pub guard: Option<(Spanned<String>, bool)>,
    /// Dot-separated opcode parts; `::` stays inside a part (`shared::cta`).
    pub opcode: Vec<Spanned<String>>,
    pub operands: Vec<Spanned<Operand>>,
}

impl Instruction {
    /// The whole opcode as written (`st.relaxed.gpu`).
    pub fn mnemonic(&self) -> String {
        self.opcode.iter().map(|p| p.node.as_str()).collect::<Vec<_>>().join(".")
    }

    pub fn opcode_span(&self) -> Span {
        let first = self.opcode.first().map(|p| p.span).unwrap_or_default();
        let last = self.opcode.last().map(|p| p.span).unwrap_or_default();
        first.to(last)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A bare name: a register, a location, a label, or a keyword-like word.
    Name(String),
    /// `%name` (a PTX register spelling), kept with its `%` (`"%r1"`), as registers are spelt
    /// everywhere else in the tree (guards, init items, conditions).
    PercentName(String),
    /// An integer literal (decimal, negative, or hex).
    Int(i64),
    /// `[x]`, `[r1]`, `[x+4]`: an address expression.
    Address(Box<Spanned<Operand>>, i64),
    /// `_` (the sink operand of real PTX).
    Sink,
    /// `{a, b, c}` (vector operand).
    Vector(Vec<Spanned<Operand>>),
    /// `&x` (the address of a location).
    AddressOf(String),
    /// `[tmap, {c0, c1}]`: a tensor map and the coordinates of a box (tensor copies).
    TensorAddress(Box<Spanned<Operand>>, Vec<Spanned<Operand>>),
    /// `!p`: a negated predicate source (PTX's `{!}a` of `vote.sync`, `bar.red`, `setp`'s `c`).
    Negated(Box<Spanned<Operand>>),
}

/// `exists P`, `~exists P`, `forall P`.
#[derive(Clone, Debug)]
pub struct Condition {
    pub quantifier: Spanned<Quantifier>,
    pub prop: Spanned<Prop>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Quantifier {
    Exists,
    NotExists,
    Forall,
}

impl Quantifier {
    pub fn keyword(self) -> &'static str {
        match self {
            Quantifier::Exists => "exists",
            Quantifier::NotExists => "~exists",
            Quantifier::Forall => "forall",
        }
    }
}

/// A proposition over the final state.
#[derive(Clone, Debug, PartialEq)]
pub enum Prop {
    True,
    False,
    Not(Box<Spanned<Prop>>),
    And(Box<Spanned<Prop>>, Box<Spanned<Prop>>),
    Or(Box<Spanned<Prop>>, Box<Spanned<Prop>>),
    Cmp(Spanned<CondValue>, CmpOp, Spanned<CondValue>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

/// A value a condition can name.
#[derive(Clone, Debug, PartialEq)]
pub enum CondValue {
    /// `P1:r0` or `1:r0`; `P1.7:r0` names lane 7 of warp column P1.
    Register {
        thread: usize,
        lane: Option<usize>,
        reg: String,
    },
    /// `x` (final value of a location); `s+4` names the word at byte offset 4 of `s`.
    Location(String),
    Const(i64),
}
