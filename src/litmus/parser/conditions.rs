//! The test's last part: `locations [...]`, `filter`, and the condition (`exists`, `~exists`,
//! `forall`, with `/\\`, `\\/`, `~`, `==`/`!=` of registers, locations and constants).

use super::*;

impl Parser<'_> {
    /// `locations [x; P0:r0;]`
    pub(super) fn locations(&mut self) -> PResult<Vec<Spanned<CondValue>>> {
        self.bump();
        self.expect(Tok::LBracket, "`[` after `locations`")?;
        let mut values = Vec::new();
        while self.eat(Tok::RBracket).is_none() {
            let value = self.cond_value()?;
            if let CondValue::Const(_) = value.node {
                return Err(Diagnostic::expected(
                    value.span,
                    "a location or a register like `P0:r0`",
                    format!("`{}`", &self.text[value.span.range()]),
                ));
            }
            values.push(value);
            if self.eat(Tok::Semi).is_none() {
                self.expect(Tok::RBracket, "`;` or `]`")?;
                break;
            }
        }
        Ok(values)
    }

    /// `filter <prop>` with an optional `;`.
    pub(super) fn filter(&mut self) -> PResult<Spanned<Prop>> {
        self.bump();
        let prop = self.prop()?;
        self.eat(Tok::Semi);
        Ok(prop)
    }

    pub(super) fn at_condition(&self) -> bool {
        self.at(Tok::Tilde) || ["exists", "forall", "not", "final"].iter().any(|w| self.at_word(w))
    }

    /// `exists P`, `~exists P`, `not exists P`, `forall P`, with an optional `;`.
    pub(super) fn condition(&mut self) -> PResult<Condition> {
        let start = self.tok();
        let quantifier = if self.at_word("exists") {
            Quantifier::Exists
        } else if self.at_word("forall") {
            Quantifier::Forall
        } else if self.at(Tok::Tilde) || self.at_word("not") {
            self.bump();
            if !self.at_word("exists") {
                return Err(self.unexpected(&format!("`exists` after `{}`", self.slice(start))));
            }
            Quantifier::NotExists
        } else {
            return Err(self
                .unexpected("a condition (`exists`, `~exists`, `not exists` or `forall`)")
                .with_note("herd's `final ... with ...` conditions are not supported"));
        };
        let end = self.bump();
        let quantifier = Spanned::new(quantifier, start.span.to(end.span));
        let prop = self.prop()?;
        self.eat(Tok::Semi);
        Ok(Condition { quantifier, prop })
    }

    /// A proposition: `\/` binds loosest, then `/\`, then `~`/`not`.
    fn prop(&mut self) -> PResult<Spanned<Prop>> {
        self.nested(Self::disjunction)
    }

    fn disjunction(&mut self) -> PResult<Spanned<Prop>> {
        let mut lhs = self.conjunction()?;
        while self.eat(Tok::Or).is_some() {
            let rhs = self.conjunction()?;
            lhs = self.binary(lhs, rhs, Prop::Or)?;
        }
        Ok(lhs)
    }

    fn conjunction(&mut self) -> PResult<Spanned<Prop>> {
        let mut lhs = self.unary()?;
        while self.eat(Tok::And).is_some() {
            let rhs = self.unary()?;
            lhs = self.binary(lhs, rhs, Prop::And)?;
        }
        Ok(lhs)
    }

    fn binary(
        &mut self,
        lhs: Spanned<Prop>,
        rhs: Spanned<Prop>,
        op: fn(Box<Spanned<Prop>>, Box<Spanned<Prop>>) -> Prop,
    ) -> PResult<Spanned<Prop>> {
        self.count_operator(rhs.span)?;
        let span = lhs.span.to(rhs.span);
        Ok(Spanned::new(op(Box::new(lhs), Box::new(rhs)), span))
    }

    fn count_operator(&mut self, span: Span) -> PResult<()> {
        self.prop_operators += 1;
        if self.prop_operators > MAX_PROP_OPERATORS {
            return Err(Diagnostic::expected(span, format!("at most {MAX_PROP_OPERATORS} logical operators in a proposition"), "more"));
        }
        Ok(())
    }

    fn unary(&mut self) -> PResult<Spanned<Prop>> {
        if self.at(Tok::Tilde) || self.at_word("not") {
            let op = self.bump();
            let inner = self.nested(Self::unary)?;
            self.count_operator(op.span)?;
            let span = op.span.to(inner.span);
            return Ok(Spanned::new(Prop::Not(Box::new(inner)), span));
        }
        self.atom()
    }

    /// `( P )`, `true`, `false`, or a comparison `value op value`.
    fn atom(&mut self) -> PResult<Spanned<Prop>> {
        if let Some(open) = self.eat(Tok::LParen) {
            let inner = self.prop()?;
            let close = self.expect(Tok::RParen, "`)`, `/\\` or `\\/`")?;
            return Ok(Spanned::new(inner.node, open.span.to(close.span)));
        }
        for (word, prop) in [("true", Prop::True), ("false", Prop::False)] {
            if self.at_word(word) {
                return Ok(Spanned::new(prop, self.bump().span));
            }
        }
        let lhs = self.cond_value()?;
        let op = match self.kind() {
            Tok::Eq | Tok::EqEq => CmpOp::Eq,
            Tok::Ne => CmpOp::Ne,
            Tok::Lt => CmpOp::Lt,
            Tok::Le => CmpOp::Le,
            Tok::Gt => CmpOp::Gt,
            Tok::Ge => CmpOp::Ge,
            _ => return Err(self.unexpected("a comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`)")),
        };
        self.bump();
        let rhs = self.cond_value()?;
        let span = lhs.span.to(rhs.span);
        Ok(Spanned::new(Prop::Cmp(lhs, op, rhs), span))
    }

    /// `P1:r0`, `1:r0`, `x`, `[x]`, or an integer.
    fn cond_value(&mut self) -> PResult<Spanned<CondValue>> {
        let expected = "a register like `P0:r0`, a location or an integer";
        let tok = self.tok();
        if self.at_thread_prefix() {
            let (thread, lane) = self.thread_ref()?;
            self.bump(); // `:`
            let reg = self.register("a register name after `:`")?;
            let value = CondValue::Register { thread: thread.node, lane, reg: reg.node };
            return Ok(Spanned::new(value, tok.span.to(reg.span)));
        }
        match tok.kind {
            Tok::Ident if self.raw(1).kind == Tok::Colon => Err(self.unexpected("a thread like `P0` before `:`")),
            Tok::Ident => {
                let name = self.word_in_variable(expected)?;
                // `g[3]`, as the state lines print the word at byte 12: the same as `g+12`.
                if self.kind() == Tok::LBracket && !name.node.contains('+') {
                    self.bump();
                    let index = self.int("a word index")?;
                    let close = self.expect(Tok::RBracket, "`]`")?;
                    let Some(bytes) = index.node.checked_mul(4).filter(|b| *b >= 0) else {
                        return Err(Diagnostic::expected(index.span, "a word index of 0 or more", index.node));
                    };
                    let word = match bytes {
                        0 => name.node,
                        b => format!("{}+{b}", name.node),
                    };
                    return Ok(Spanned::new(CondValue::Location(word), name.span.to(close.span)));
                }
                Ok(Spanned::new(CondValue::Location(name.node), name.span))
            }
            Tok::LBracket => {
                self.bump();
                let name = self.word_in_variable("a location")?;
                let close = self.expect(Tok::RBracket, "`]`")?;
                Ok(Spanned::new(CondValue::Location(name.node), tok.span.to(close.span)))
            }
            Tok::Int | Tok::Minus => {
                let value = self.int(expected)?;
                Ok(Spanned::new(CondValue::Const(value.node), value.span))
            }
            _ => Err(self.unexpected(expected)),
        }
    }
}
