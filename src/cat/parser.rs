//! Parser for cat models (Dat3M's `Cat.g4`, plus a few herd conveniences).
//!
//! Expressions are parsed by precedence climbing with the binding powers below, which reproduce
//! the precedence that ANTLR derives from the order of the alternatives in `Cat.g4`:
//!
//! | operator            | binding power | notes                                   |
//! |---------------------|---------------|-----------------------------------------|
//! | `e1 * e2`           | 7             | binary cartesian product, left-assoc    |
//! | `e*` `e+` `e^-1` `e?` | 6           | postfix                                 |
//! | `~e`                | 5             | prefix; its operand absorbs ops ≥ 6     |
//! | `&`                 | 4             | left-assoc                              |
//! | `\`                 | 3             | left-assoc                              |
//! | `;`                 | 2             | left-assoc                              |
//! | `|`                 | 1             | left-assoc                              |
//!
//! A `*` is the binary product when the token after it can start an expression, and the
//! postfix reflexive-transitive closure otherwise (`r*; s` vs `A * B`).

use super::ast::*;
use super::lexer::{lex, Keyword, Tok, Token};
use crate::diag::{Diagnostic, Span};

const BP_UNION: u8 = 1;
const BP_SEQ: u8 = 2;
const BP_DIFF: u8 = 3;
const BP_INTER: u8 = 4;
const BP_PREFIX: u8 = 5;
const BP_POSTFIX: u8 = 6;
const BP_PRODUCT: u8 = 7;

/// Parses one file whose spans start at global offset `base`.
pub fn parse_file(text: &str, base: usize) -> Result<ParsedFile, Diagnostic> {
    let tokens = lex(text, base)?;
    let mut p = Parser { tokens, pos: 0, depth: 0 };
    p.model()
}

/// Parses a single expression (used by tests and by tools that evaluate ad-hoc expressions).
pub fn parse_expr(text: &str, base: usize) -> Result<Expr, Diagnostic> {
    let tokens = lex(text, base)?;
    let mut p = Parser { tokens, pos: 0, depth: 0 };
    let e = p.expr(0)?;
    p.expect(&Tok::Eof, "end of expression")?;
    Ok(e)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    /// Current expression nesting, bounded so hostile input cannot overflow the stack.
    depth: usize,
}

/// Budget for expression depth: each nested sub-expression, each parenthesis/bracket/prefix
/// level and each operator in a chain costs one unit. Real models stay well under 50; 256 keeps
/// the recursive parser and the later tree walks within a 2 MiB thread stack even in debug
/// builds (see the `deep_expressions_*` test).
const MAX_NESTING: usize = 256;

impl Parser {
    fn peek(&self) -> &Tok {
        &self.tokens[self.pos].tok
    }

    fn peek_at(&self, k: usize) -> &Tok {
        let i = (self.pos + k).min(self.tokens.len() - 1);
        &self.tokens[i].tok
    }

    fn span(&self) -> Span {
        self.tokens[self.pos].span
    }

    /// The span of the most recently consumed token.
    fn prev_span(&self) -> Span {
        self.tokens[self.pos.saturating_sub(1)].span
    }

    fn bump(&mut self) -> Token {
        let t = self.tokens[self.pos].clone();
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == t {
            self.bump();
            true
        } else {
            false
        }
    }

    fn unexpected(&self, what: &str) -> Diagnostic {
        Diagnostic::expected(self.span(), what, self.peek())
    }

    fn expect(&mut self, t: &Tok, what: &str) -> Result<Span, Diagnostic> {
        if self.peek() == t {
            Ok(self.bump().span)
        } else {
            Err(self.unexpected(what))
        }
    }

    fn name(&mut self, what: &str) -> Result<(String, Span), Diagnostic> {
        match self.peek().clone() {
            Tok::Name(n) => {
                let s = self.bump().span;
                Ok((n, s))
            }
            Tok::Kw(k) => Err(Diagnostic::error(self.span(), format!("expected {what}, found keyword `{}`", k.as_str()))
                .with_note("keywords cannot be used as names")),
            _ => Err(self.unexpected(what)),
        }
    }

    fn model(&mut self) -> Result<ParsedFile, Diagnostic> {
        // Header: `NAME* QUOTED_STRING?`, e.g. `PTX` or `"ARMv8 AArch64"`.
        let mut names = Vec::new();
        while let Tok::Name(n) = self.peek() {
            names.push(n.clone());
            self.bump();
        }
        let mut quoted = None;
        if let Tok::Str(s) = self.peek() {
            quoted = Some(s.clone());
            self.bump();
        }
        let title = if !names.is_empty() { Some(names.join(" ")) } else { quoted };
        let mut items = Vec::new();
        while *self.peek() != Tok::Eof {
            if let Some(item) = self.item()? {
                items.push(item);
            }
        }
        Ok(ParsedFile { title, items })
    }

    /// One top-level item; `None` for the ones without effect (`show`, `unshow`, `cut`).
    fn item(&mut self) -> Result<Option<Item>, Diagnostic> {
        match self.peek() {
            Tok::Kw(Keyword::Let) => self.let_item().map(Some),
            Tok::Kw(Keyword::Include) => {
                let start = self.bump().span;
                match self.peek().clone() {
                    Tok::Str(path) => {
                        let end = self.bump().span;
                        Ok(Some(Item::Include { path, span: start.to(end) }))
                    }
                    _ => Err(self.unexpected("a quoted file name after `include`")),
                }
            }
            Tok::Kw(Keyword::Show) => {
                self.bump();
                loop {
                    self.expr(0)?;
                    if self.eat(&Tok::Kw(Keyword::As)) {
                        self.name("a name after `as`")?;
                    }
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                Ok(None)
            }
            Tok::Kw(Keyword::Unshow) => {
                self.bump();
                loop {
                    self.name("a name after `unshow`")?;
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                Ok(None)
            }
            Tok::Kw(Keyword::Cut) => {
                self.bump();
                self.name("a name after `cut`")?;
                Ok(None)
            }
            Tok::Kw(Keyword::Flag | Keyword::UndefinedUnless | Keyword::Acyclic | Keyword::Irreflexive | Keyword::Empty) | Tok::Not => {
                self.check().map(Some)
            }
            // herd7's `procedure NAME(PARAMS) = ITEMS end` and `call NAME(ARGS) [as NAME]`; the
            // words are names elsewhere, so they are recognised only where an item starts.
            Tok::Name(n) if n == "procedure" => self.procedure().map(Some),
            Tok::Name(n) if n == "call" => self.call().map(Some),
            _ => {
                Err(self
                    .unexpected("a definition (`let`, `acyclic`, `irreflexive`, `empty`, `flag`, `include`, `show`, `procedure`, `call`)"))
            }
        }
    }

    /// After `(`: the parameter names, `)` and `=` (of a function or a procedure).
    fn params_then_eq(&mut self) -> Result<Vec<(String, Span)>, Diagnostic> {
        let mut params = Vec::new();
        if *self.peek() != Tok::RPar {
            loop {
                params.push(self.name("a parameter name")?);
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        self.expect(&Tok::RPar, "`,` or `)` in the parameter list")?;
        self.expect(&Tok::Eq, "`=`")?;
        Ok(params)
    }

    fn procedure(&mut self) -> Result<Item, Diagnostic> {
        let start = self.bump().span; // `procedure`
        let (name, name_span) = self.name("a procedure name after `procedure`")?;
        self.expect(&Tok::LPar, "`(` and the parameters")?;
        let params = self.params_then_eq()?;
        let mut body = Vec::new();
        loop {
            match self.peek() {
                Tok::Name(n) if n == "end" => {
                    self.bump();
                    break;
                }
                Tok::Eof => {
                    return Err(Diagnostic::error(start, format!("procedure `{name}` has no `end`"))
                        .with_note("a procedure body is a list of definitions and checks closed by `end`"));
                }
                Tok::Name(n) if n == "procedure" => {
                    return Err(Diagnostic::error(self.span(), "a procedure cannot be defined inside another"));
                }
                _ => {
                    if let Some(item) = self.item()? {
                        body.push(item);
                    }
                }
            }
        }
        Ok(Item::Procedure { name, name_span, params, body })
    }

    /// After `(`: the argument expressions and `)` (whose span is returned).
    fn args_then_rpar(&mut self) -> Result<(Vec<Expr>, Span), Diagnostic> {
        let mut args = Vec::new();
        if *self.peek() != Tok::RPar {
            loop {
                args.push(self.expr(0)?);
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        let end = self.expect(&Tok::RPar, "`,` or `)` in the argument list")?;
        Ok((args, end))
    }

    fn call(&mut self) -> Result<Item, Diagnostic> {
        let start = self.bump().span; // `call`
        let (name, name_span) = self.name("a procedure name after `call`")?;
        self.expect(&Tok::LPar, "`(` and the arguments")?;
        let (args, mut end) = self.args_then_rpar()?;
        let as_name = if self.eat(&Tok::Kw(Keyword::As)) {
            let (n, s) = self.name("a name after `as`")?;
            end = s;
            Some(n)
        } else {
            None
        };
        Ok(Item::Call { name, name_span, args, as_name, span: start.to(end) })
    }

    fn let_item(&mut self) -> Result<Item, Diagnostic> {
        self.bump(); // `let`
        let rec = self.eat(&Tok::Kw(Keyword::Rec));
        let (name, name_span) = self.name("a name after `let`")?;
        if !rec && *self.peek() == Tok::LPar {
            self.bump();
            let params = self.params_then_eq()?;
            let body = self.expr(0)?;
            return Ok(Item::LetFun { name, name_span, params, body });
        }
        if rec && *self.peek() == Tok::LPar {
            return Err(Diagnostic::error(self.span(), "recursive functions (`let rec f(x) = ...`) are not supported"));
        }
        self.expect(&Tok::Eq, "`=`")?;
        let body = self.expr(0)?;
        let mut bindings = vec![Binding { name, name_span, body }];
        while self.eat(&Tok::Kw(Keyword::And)) {
            let (name, name_span) = self.name("a name after `and`")?;
            self.expect(&Tok::Eq, "`=`")?;
            let body = self.expr(0)?;
            bindings.push(Binding { name, name_span, body });
        }
        Ok(Item::Let { rec, bindings })
    }

    fn check(&mut self) -> Result<Item, Diagnostic> {
        let start = self.span();
        let flag = match self.peek() {
            Tok::Kw(Keyword::Flag) => Some(FlagKind::Flag),
            Tok::Kw(Keyword::UndefinedUnless) => Some(FlagKind::UndefinedUnless),
            _ => None,
        };
        if flag.is_some() {
            self.bump();
        }
        let negated = self.eat(&Tok::Not);
        let kind = match self.peek() {
            Tok::Kw(Keyword::Acyclic) => CheckKind::Acyclic,
            Tok::Kw(Keyword::Irreflexive) => CheckKind::Irreflexive,
            Tok::Kw(Keyword::Empty) => CheckKind::Empty,
            _ => return Err(self.unexpected("`acyclic`, `irreflexive` or `empty`")),
        };
        self.bump();
        let expr = self.expr(0)?;
        let mut end = expr.span;
        let name = if self.eat(&Tok::Kw(Keyword::As)) {
            let (n, s) = self.name("a check name after `as`")?;
            end = s;
            Some(n)
        } else {
            None
        };
        Ok(Item::Check { flag, negated, kind, expr, name, span: start.to(end) })
    }

    /// Whether the current token can begin an expression; decides binary vs postfix `*`.
    fn at_expr_start(&self) -> bool {
        match self.peek() {
            Tok::Name(_)
            | Tok::LPar
            | Tok::LBrack
            | Tok::Kw(Keyword::Domain | Keyword::Range | Keyword::ToId | Keyword::NewSet | Keyword::NewRelation) => true,
            // `r* ~empty x` would otherwise swallow the next (negated) check.
            Tok::Not => !matches!(self.peek_at(1), Tok::Kw(Keyword::Acyclic | Keyword::Irreflexive | Keyword::Empty)),
            _ => false,
        }
    }

    fn expr(&mut self, min_bp: u8) -> Result<Expr, Diagnostic> {
        if self.depth >= MAX_NESTING {
            return Err(Diagnostic::error(self.span(), "expression nested too deeply"));
        }
        let outer = self.depth;
        self.depth += 1;
        let e = self.expr_inner(min_bp);
        self.depth = outer;
        e
    }

    fn expr_inner(&mut self, min_bp: u8) -> Result<Expr, Diagnostic> {
        let mut lhs = self.prefix()?;
        loop {
            // Postfix operators, optionally introduced by `^` (`r^+`, `r^*`, `r^-1`).
            let postfix = match self.peek() {
                Tok::Pow => match self.peek_at(1) {
                    Tok::Star => Some((UnOp::Star, 2)),
                    Tok::Plus => Some((UnOp::Plus, 2)),
                    Tok::Inv => Some((UnOp::Inverse, 2)),
                    _ => {
                        self.bump();
                        return Err(self.unexpected("`*`, `+` or `-1` after `^`"));
                    }
                },
                Tok::Plus => Some((UnOp::Plus, 1)),
                Tok::Inv => Some((UnOp::Inverse, 1)),
                Tok::Opt => Some((UnOp::Opt, 1)),
                Tok::Star => {
                    // Peek past the `*` to classify it.
                    self.pos += 1;
                    let binary = self.at_expr_start();
                    self.pos -= 1;
                    if binary {
                        None
                    } else {
                        Some((UnOp::Star, 1))
                    }
                }
                _ => None,
            };
            if let Some((op, ntoks)) = postfix {
                if BP_POSTFIX < min_bp {
                    break;
                }
                self.deepen()?;
                for _ in 0..ntoks {
                    self.bump();
                }
                let span = lhs.span.to(self.prev_span());
                lhs = Expr { kind: ExprKind::Unary(op, Box::new(lhs)), span };
                continue;
            }
            let (op, bp) = match self.peek() {
                Tok::Star => (BinOp::Product, BP_PRODUCT),
                Tok::Amp => (BinOp::Inter, BP_INTER),
                Tok::Backslash => (BinOp::Diff, BP_DIFF),
                Tok::Semi => (BinOp::Seq, BP_SEQ),
                Tok::Bar => (BinOp::Union, BP_UNION),
                _ => break,
            };
            if bp < min_bp {
                break;
            }
            self.deepen()?;
            self.bump();
            let rhs = self.expr(bp + 1)?;
            let span = lhs.span.to(rhs.span);
            lhs = Expr { kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span };
        }
        Ok(lhs)
    }

    /// Accounts for one more level of tree depth. Operator chains (`a | b | c ...`) deepen the
    /// tree without recursing here, but later passes recurse over the tree, so they share the
    /// nesting budget; `expr` restores the depth when the chain's expression is complete.
    fn deepen(&mut self) -> Result<(), Diagnostic> {
        self.depth += 1;
        if self.depth >= MAX_NESTING {
            return Err(Diagnostic::error(self.span(), "expression nested too deeply"));
        }
        Ok(())
    }

    /// Atoms and the prefix complement.
    fn prefix(&mut self) -> Result<Expr, Diagnostic> {
        let start = self.span();
        // Every form below except a plain name recurses into `expr`; charging for it here keeps
        // the budget proportional to the parser's real stack use.
        let recursive = match self.peek() {
            Tok::Name(_) => matches!(self.peek_at(1), Tok::LPar),
            Tok::Kw(Keyword::NewSet | Keyword::NewRelation) => false,
            _ => true,
        };
        if recursive {
            self.deepen()?;
        }
        match self.peek().clone() {
            Tok::Not => {
                self.bump();
                let e = self.expr(BP_PREFIX)?;
                let span = start.to(e.span);
                Ok(Expr { kind: ExprKind::Unary(UnOp::Complement, Box::new(e)), span })
            }
            Tok::LPar => {
                self.bump();
                let mut e = self.expr(0)?;
                let end = self.expect(&Tok::RPar, "`)`")?;
                e.span = start.to(end);
                Ok(e)
            }
            Tok::LBrack => {
                self.bump();
                let e = self.expr(0)?;
                let end = self.expect(&Tok::RBrack, "`]`")?;
                Ok(Expr { kind: ExprKind::Unary(UnOp::ToId, Box::new(e)), span: start.to(end) })
            }
            Tok::Kw(k @ (Keyword::Domain | Keyword::Range | Keyword::ToId)) => {
                self.bump();
                self.expect(&Tok::LPar, &format!("`(` after `{}`", k.as_str()))?;
                let e = self.expr(0)?;
                let end = self.expect(&Tok::RPar, "`)`")?;
                let op = match k {
                    Keyword::Domain => UnOp::Domain,
                    Keyword::Range => UnOp::Range,
                    _ => UnOp::ToId,
                };
                Ok(Expr { kind: ExprKind::Unary(op, Box::new(e)), span: start.to(end) })
            }
            Tok::Kw(k @ (Keyword::NewSet | Keyword::NewRelation)) => {
                self.bump();
                self.expect(&Tok::LPar, &format!("`(` after `{}`", k.as_str()))?;
                let end = self.expect(&Tok::RPar, "`)`")?;
                let kind = if k == Keyword::NewSet { ExprKind::NewSet } else { ExprKind::NewRelation };
                Ok(Expr { kind, span: start.to(end) })
            }
            Tok::Name(name) => {
                self.bump();
                if *self.peek() != Tok::LPar {
                    return Ok(Expr { kind: ExprKind::Name(name), span: start });
                }
                self.bump();
                let (args, end) = self.args_then_rpar()?;
                Ok(Expr { kind: ExprKind::Call { name, name_span: start, args }, span: start.to(end) })
            }
            _ => Err(self.unexpected("an expression")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders an expression fully parenthesised, to compare parse trees compactly.
    fn show(e: &Expr) -> String {
        match &e.kind {
            ExprKind::Name(n) => n.clone(),
            ExprKind::Binary(op, a, b) => format!("({} {} {})", show(a), op.symbol(), show(b)),
            ExprKind::Unary(UnOp::Complement, a) => format!("~{}", show(a)),
            ExprKind::Unary(op @ (UnOp::Domain | UnOp::Range), a) => {
                format!("{}({})", op.symbol(), show(a))
            }
            ExprKind::Unary(UnOp::ToId, a) => format!("[{}]", show(a)),
            ExprKind::Unary(op, a) => format!("{}{}", show(a), op.symbol()),
            ExprKind::Call { name, args, .. } => {
                format!("{name}({})", args.iter().map(show).collect::<Vec<_>>().join(", "))
            }
            ExprKind::NewSet => "newSet()".into(),
            ExprKind::NewRelation => "newRelation()".into(),
        }
    }

    fn p(s: &str) -> String {
        show(&parse_expr(s, 0).unwrap_or_else(|d| panic!("{s}: {}", d.message)))
    }

    #[test]
    fn precedence() {
        assert_eq!(p("a | b ; c"), "(a | (b ; c))");
        assert_eq!(p("a & b ; c"), "((a & b) ; c)");
        assert_eq!(p("a ; b & c"), "(a ; (b & c))");
        assert_eq!(p("a \\ b ; c"), "((a \\ b) ; c)");
        assert_eq!(p("a & b \\ c"), "((a & b) \\ c)");
        assert_eq!(p("a \\ b & c"), "(a \\ (b & c))");
        assert_eq!(p("A * B | C * D"), "((A * B) | (C * D))");
        assert_eq!(p("a ; b ; c"), "((a ; b) ; c)");
        assert_eq!(p("a \\ b \\ c"), "((a \\ b) \\ c)");
        assert_eq!(p("~a & b"), "(~a & b)");
        assert_eq!(p("~r*"), "~r*");
        assert_eq!(p("~A * B"), "~(A * B)");
        assert_eq!(p("r^-1 ; s^+ | t^*"), "((r^-1 ; s+) | t*)");
        assert_eq!(p("(po?; ((s | f); po?)+) | po"), "((po? ; ((s | f) ; po?)+) | po)");
        assert_eq!(p("vloc & (cb & (pfo^-1); cb; [GEN])"), "(vloc & (((cb & pfo^-1) ; cb) ; [GEN]))");
        assert_eq!(p("((M * M) & loc) | ((_ * _) \\ (M * M))"), "(((M * M) & loc) | ((_ * _) \\ (M * M)))");
        assert_eq!(p("domain(r) | range(r) | toid(S)"), "((domain(r) | range(r)) | [S])");
        assert_eq!(p("f(a | b, c)"), "f((a | b), c)");
    }

    #[test]
    fn star_is_postfix_unless_an_expression_follows() {
        assert_eq!(p("r*"), "r*");
        assert_eq!(p("r* ; s"), "(r* ; s)");
        assert_eq!(p("(r*)"), "r*");
        assert_eq!(p("A * B"), "(A * B)");
        assert_eq!(p("A * [B]"), "(A * [B])");
        assert_eq!(p("A * B+"), "(A * B)+");
        assert_eq!(p("r* * S"), "(r* * S)");
        // A postfix star at the end of a definition must not eat a following negated check.
        let f = parse_file("let a = r*\n~empty a", 0).unwrap();
        assert_eq!(f.items.len(), 2);
    }

    #[test]
    fn header_items_and_ignored_forms() {
        let src = "PTX \"title\" (* c *)\nlet a = b and c = d\nlet rec x = x ; y and y = x\n\
                   let f(p, q) = p ; q\nshow a, c as z\nunshow a\ncut a\n\
                   flag ~empty a as F\nundefined_unless empty a\nacyclic a\ninclude \"x.cat\"";
        let f = parse_file(src, 0).unwrap();
        assert_eq!(f.title.as_deref(), Some("PTX"));
        assert_eq!(f.items.len(), 7);
        assert!(matches!(&f.items[0], Item::Let { rec: false, bindings } if bindings.len() == 2));
        assert!(matches!(&f.items[1], Item::Let { rec: true, bindings } if bindings.len() == 2));
        assert!(matches!(&f.items[2], Item::LetFun { params, .. } if params.len() == 2));
        assert!(matches!(
            &f.items[3],
            Item::Check { flag: Some(FlagKind::Flag), negated: true, kind: CheckKind::Empty, name: Some(n), .. } if n == "F"
        ));
        assert!(matches!(&f.items[4], Item::Check { flag: Some(FlagKind::UndefinedUnless), negated: false, .. }));
        assert!(matches!(&f.items[6], Item::Include { path, .. } if path == "x.cat"));
        let f = parse_file("\"ARMv8 AArch64\"\nacyclic po", 0).unwrap();
        assert_eq!(f.title.as_deref(), Some("ARMv8 AArch64"));
    }

    #[test]
    fn syntax_errors_point_at_the_offending_token() {
        let e = parse_file("let a = b |\nlet c = d", 0).unwrap_err();
        assert_eq!(e.span.start, 12);
        assert!(e.message.contains("expected an expression"), "{}", e.message);
        let e = parse_file("let a = (b | c", 0).unwrap_err();
        assert!(e.message.contains("`)`"), "{}", e.message);
        let e = parse_file("acyclic", 0).unwrap_err();
        assert!(e.message.contains("end of file"), "{}", e.message);
        let e = parse_file("let let = a", 0).unwrap_err();
        assert!(e.message.contains("keyword `let`"), "{}", e.message);
        let e = parse_file("foo bar = x", 0).unwrap_err();
        assert!(e.message.contains("expected a definition"), "{}", e.message);
        assert!(parse_expr("r^x", 0).is_err());
        let deep = format!("{}r{}", "(".repeat(100_000), ")".repeat(100_000));
        let e = parse_expr(&deep, 0).unwrap_err();
        assert!(e.message.contains("nested too deeply"));
    }
}
