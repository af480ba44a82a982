//! Grammar for types (`Text { max_length: 64 }`, `List<T>`, `T?`, `Enum { }`,
//! `Object { }`), field declarations and `name: value` settings.

use super::common::{
    any_word, exact, ident, path, punct, rest_of_line, skip_line, tag, word, Error, Extra, Present,
    Src, Tokens, MAX_CHAIN,
};
use crate::ast::{
    Block, Expr, ExprKind, FieldDecl, Ident, Setting, SettingValue, TypeExpr, TypeExprKind,
};
use crate::intern::Name;
use crate::lexer::TokenKind;
use chumsky::prelude::*;

pub type P<'src, I, O> = Boxed<'src, 'src, I, O, Extra<'src>>;

/// `{ key: value ... }` with optional commas. A broken setting keeps its key
/// with an error value when the key was readable, else it is left out.
pub fn settings_block<'src, I: Tokens<'src>>(
    src: Src<'src>,
    expr: P<'src, I, Expr>,
    block: P<'src, I, Block>,
) -> P<'src, I, Vec<Setting>> {
    recursive(|settings| {
        let record = settings
            .clone()
            .map_with(|s, e| SettingValue::Record(s, e.span()));
        let inline_action = word("action")
            .then_ignore(just(TokenKind::Colon))
            .then(block.clone())
            .map_with(|(key_span, body), e| Setting {
                key: Ident {
                    name: Name::new("action"),
                    span: key_span,
                },
                value: SettingValue::Block(body),
                span: e.span(),
            });
        let plain = any_word()
            .then_ignore(just(TokenKind::Colon))
            .then(choice((record, expr.clone().map(SettingValue::Expr))))
            .map_with(|(key, value), e| Setting {
                key,
                value,
                span: e.span(),
            });
        let keyed_error = any_word()
            .then_ignore(just(TokenKind::Colon))
            .then(rest_of_line(src))
            .map_with(|(key, rest), e| {
                Some(Setting {
                    key,
                    value: SettingValue::Expr(Expr {
                        kind: ExprKind::Error,
                        span: rest,
                    }),
                    span: e.span(),
                })
            });
        let setting = choice((inline_action, plain))
            .map(Some)
            .labelled("a setting")
            .recover_with(via_parser(keyed_error))
            .recover_with(via_parser(skip_line(src).to(None)));
        setting
            .then_ignore(just(TokenKind::Comma).or_not())
            .repeated()
            .collect::<Present<_>>()
            .map(|present| exact(present.0))
            .delimited_by(just(TokenKind::LBrace), just(TokenKind::RBrace))
    })
    .boxed()
}

/// A type. With `constraints`, a `{ ... }` after a named type is read as its
/// constraints; without, it is left alone (it opens a body, as after `->`).
pub fn type_expr<'src, I: Tokens<'src>>(
    src: Src<'src>,
    settings: P<'src, I, Vec<Setting>>,
    constraints: bool,
) -> P<'src, I, TypeExpr> {
    recursive(|ty| {
        let enum_type = word("Enum")
            .ignore_then(
                ident()
                    .then_ignore(just(TokenKind::Comma).or_not())
                    .repeated()
                    .collect::<Vec<_>>()
                    .map(exact)
                    .delimited_by(just(TokenKind::LBrace), just(TokenKind::RBrace)),
            )
            .map(TypeExprKind::Enum);
        let object_type = word("Object")
            .ignore_then(fields_block(src, ty.clone()))
            .map(TypeExprKind::Object);
        let args = ty
            .clone()
            .separated_by(just(TokenKind::Comma))
            .at_least(1)
            .allow_trailing()
            .collect::<Vec<_>>()
            .map(exact)
            .delimited_by(just(TokenKind::Lt), just(TokenKind::Gt))
            .or_not()
            .map(Option::unwrap_or_default);
        let constraint_block = if constraints {
            settings
                .clone()
                .or_not()
                .map(Option::unwrap_or_default)
                .boxed()
        } else {
            empty().map(|_| Vec::new()).boxed()
        };
        let named = path()
            .then(args)
            .then(constraint_block)
            .map(|((path, args), constraints)| TypeExprKind::Named {
                path,
                args,
                constraints,
            });
        let error = just(TokenKind::Error).to(TypeExprKind::Error);
        let base = choice((enum_type, object_type, named, error)).map_with(|kind, e| TypeExpr {
            kind,
            span: e.span(),
        });
        base.then(punct(TokenKind::Question).repeated().collect::<Vec<_>>())
            .validate(|(inner, marks), _, emitter| {
                if marks.len() > MAX_CHAIN {
                    if let Some(first) = marks.first() {
                        emitter.emit(Error::custom(*first, tag::TOO_DEEP));
                    }
                    return TypeExpr {
                        kind: TypeExprKind::Error,
                        span: inner.span,
                    };
                }
                marks.into_iter().fold(inner, |inner, mark| TypeExpr {
                    span: inner.span.to(mark),
                    kind: TypeExprKind::Optional(Box::new(inner)),
                })
            })
            .labelled("a type")
    })
    .boxed()
}

/// `{ name: Type [optional] ... }`. A broken field keeps its name with an
/// error type when the name was readable, else it is left out.
pub fn fields_block<'src, I: Tokens<'src>>(
    src: Src<'src>,
    ty: impl Parser<'src, I, TypeExpr, Extra<'src>> + Clone + 'src,
) -> impl Parser<'src, I, Vec<FieldDecl>, Extra<'src>> + Clone {
    field_entry(src, ty)
        .then_ignore(just(TokenKind::Comma).or_not())
        .repeated()
        .collect::<Present<_>>()
        .map(|present| exact(present.0))
        .delimited_by(just(TokenKind::LBrace), just(TokenKind::RBrace))
}

/// One `name: Type [optional]` field; a broken one is kept with an error
/// type (`None` when its line is skipped).
pub fn field_entry<'src, I: Tokens<'src>>(
    src: Src<'src>,
    ty: impl Parser<'src, I, TypeExpr, Extra<'src>> + Clone + 'src,
) -> impl Parser<'src, I, Option<FieldDecl>, Extra<'src>> + Clone {
    let field = any_word()
        .then_ignore(just(TokenKind::Colon))
        .then(ty)
        .then(word("optional").or_not())
        .map_with(|((name, ty), optional), e| {
            Some(FieldDecl {
                name,
                ty,
                optional: optional.is_some(),
                span: e.span(),
            })
        })
        .labelled("a field");
    let keyed_error = any_word()
        .then_ignore(just(TokenKind::Colon))
        .then(rest_of_line(src))
        .map_with(|(name, rest), e| {
            Some(FieldDecl {
                name,
                ty: TypeExpr {
                    kind: TypeExprKind::Error,
                    span: rest,
                },
                optional: false,
                span: e.span(),
            })
        });
    field
        .recover_with(via_parser(keyed_error))
        .recover_with(via_parser(skip_line(src).to(None)))
}
