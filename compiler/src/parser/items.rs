//! Grammar for declarations (application, config, store, type, entity,
//! failure, event, action, function, route, subscriber, schedule) and the
//! whole file. A broken declaration skips to the next declaration word at the
//! start of a line and becomes [`Item::Error`].

use super::common::{
    error_item, exact, ident, path, punct, skip_item, tag, word, Error, Extra, Present, Src, Tokens,
};
use super::exprs;
use super::stmts::{self, Parts};
use super::types::{field_entry, fields_block, settings_block, type_expr, P};
use crate::ast::{
    ActionDecl, Application, Block, ConfigDecl, Decline, EntityDecl, EventDecl, FailsClause,
    FailureDecl, FailureEntry, FunctionDecl, Ident, Item, Param, RouteDecl, ScheduleDecl, Setting,
    SettingValue, StoreDecl, StringLit, SubscriberDecl, TypeDecl, TypeExpr, TypeExprKind,
};

use crate::lexer::TokenKind;
use crate::span::Span;
use chumsky::prelude::*;

/// The parser for a whole file.
///
/// Expressions and blocks are mutually recursive. Each is built with
/// chumsky's `recursive`, whose self-reference is weak: declaring them with
/// `Recursive::declare` made a reference cycle, and every parse leaked its
/// whole parser graph (about 40 KB), which a long editor session noticed.
pub fn file<'src, I: Tokens<'src>>(src: Src<'src>) -> impl Parser<'src, I, Vec<Item>, Extra<'src>> {
    let block: P<'src, I, Block> = recursive(|block| {
        let block: P<'src, I, Block> = block.boxed();
        let expr: P<'src, I, crate::ast::Expr> =
            recursive(|expr| exprs::expr(src, expr.boxed(), block.clone())).boxed();
        let settings = settings_block(src, expr.clone(), block.clone());
        let bare_type = type_expr(src, settings.clone(), false);
        stmts::block(
            src,
            Parts {
                expr,
                block,
                settings,
                bare_type,
            },
        )
    })
    .boxed();
    let expr: P<'src, I, crate::ast::Expr> =
        recursive(|expr| exprs::expr(src, expr.boxed(), block.clone())).boxed();
    let settings = settings_block(src, expr.clone(), block.clone());
    let full_type = type_expr(src, settings.clone(), true);
    let bare_type = type_expr(src, settings.clone(), false);
    let g = Grammar {
        src,
        expr,
        block,
        settings,
        full_type,
        bare_type,
    };
    g.item()
        .recover_with(via_parser(skip_item(src).map(Item::Error)))
        .repeated()
        .collect::<Vec<_>>()
        .map(exact)
        .then_ignore(end())
}

struct Grammar<'src, I: Tokens<'src>> {
    src: Src<'src>,
    expr: P<'src, I, crate::ast::Expr>,
    block: P<'src, I, Block>,
    settings: P<'src, I, Vec<crate::ast::Setting>>,
    full_type: P<'src, I, TypeExpr>,
    bare_type: P<'src, I, TypeExpr>,
}

/// What an action or function header says it returns; a missing `-> R` is
/// reported at the body's `{` and read as an error type.
fn returns_or_missing(returns: Option<TypeExpr>, body: &Block) -> Result<TypeExpr, Span> {
    let at = Span::new(
        body.span.file,
        body.span.start,
        body.span
            .start
            .saturating_add(1)
            .min(body.span.end.max(body.span.start)),
    );
    returns.ok_or(at)
}

impl<'src, I: Tokens<'src>> Grammar<'src, I> {
    fn item(&self) -> P<'src, I, Item> {
        choice((
            self.application(),
            self.config(),
            self.store(),
            self.type_decl(),
            self.entity(),
            self.failure(),
            self.event(),
            self.action(),
            self.function(),
            self.route(),
            self.subscriber(),
            self.schedule(),
            error_item(self.src).map(Item::Error),
        ))
        .labelled("a declaration")
        .boxed()
    }

    fn name(&self, what: &'static str) -> impl Parser<'src, I, Ident, Extra<'src>> + Clone {
        ident().labelled(what)
    }

    fn application(&self) -> P<'src, I, Item> {
        word("application")
            .ignore_then(self.name("the application's name"))
            .then(self.settings.clone())
            .map_with(|(name, settings), e| {
                Item::Application(Application {
                    name,
                    settings,
                    span: e.span(),
                })
            })
            .boxed()
    }

    fn config(&self) -> P<'src, I, Item> {
        word("config")
            .ignore_then(self.name("the config's name"))
            .then(fields_block(self.src, self.full_type.clone()))
            .map_with(|(name, fields), e| {
                Item::Config(ConfigDecl {
                    name,
                    fields,
                    span: e.span(),
                })
            })
            .boxed()
    }

    fn store(&self) -> P<'src, I, Item> {
        word("store")
            .ignore_then(self.name("the store's name"))
            .then(self.settings.clone())
            .map_with(|(name, settings), e| {
                Item::Store(StoreDecl {
                    name,
                    settings,
                    span: e.span(),
                })
            })
            .boxed()
    }

    fn type_decl(&self) -> P<'src, I, Item> {
        word("type")
            .ignore_then(self.name("the type's name"))
            .then_ignore(just(TokenKind::Assign))
            .then(self.full_type.clone())
            .map_with(|(name, def), e| {
                Item::Type(TypeDecl {
                    name,
                    def,
                    span: e.span(),
                })
            })
            .boxed()
    }

    fn entity(&self) -> P<'src, I, Item> {
        word("entity")
            .ignore_then(self.name("the entity's name"))
            .then(fields_block(self.src, self.full_type.clone()))
            .map_with(|(name, fields), e| {
                Item::Entity(EntityDecl {
                    name,
                    fields,
                    span: e.span(),
                })
            })
            .boxed()
    }

    fn failure(&self) -> P<'src, I, Item> {
        let src = self.src;
        let setting = choice((word("kind"), word("code")))
            .map_with(|_, e| e.span())
            .then_ignore(just(TokenKind::Colon))
            .then(self.expr.clone())
            .map_with(move |(key_span, value), e| {
                let key = Ident {
                    name: crate::intern::Name::new(src.slice(key_span)),
                    span: key_span,
                };
                FailureEntry::Setting(Setting {
                    key,
                    value: SettingValue::Expr(value),
                    span: e.span(),
                })
            });
        let entries = setting
            .map(Some)
            .or(field_entry(self.src, self.full_type.clone()).map(|f| f.map(FailureEntry::Field)))
            .then_ignore(just(TokenKind::Comma).or_not())
            .repeated()
            .collect::<Present<_>>()
            .map(|present| exact(present.0))
            .delimited_by(just(TokenKind::LBrace), just(TokenKind::RBrace));
        word("failure")
            .ignore_then(self.name("the failure's name"))
            .then(entries)
            .map_with(|(name, entries), e| {
                Item::Failure(FailureDecl {
                    name,
                    entries,
                    span: e.span(),
                })
            })
            .boxed()
    }

    fn event(&self) -> P<'src, I, Item> {
        word("event")
            .ignore_then(self.name("the event's name"))
            .then(fields_block(self.src, self.full_type.clone()))
            .map_with(|(name, fields), e| {
                Item::Event(EventDecl {
                    name,
                    fields,
                    span: e.span(),
                })
            })
            .boxed()
    }

    fn params(&self) -> P<'src, I, Vec<Param>> {
        let param = ident()
            .labelled("a parameter")
            .then_ignore(just(TokenKind::Colon))
            .then(self.full_type.clone())
            .map_with(|(name, ty), e| Param {
                name,
                ty,
                span: e.span(),
            });
        param
            .separated_by(just(TokenKind::Comma))
            .allow_trailing()
            .collect::<Vec<_>>()
            .map(exact)
            .delimited_by(just(TokenKind::LParen), just(TokenKind::RParen))
            .recover_with(via_parser(nested_delimiters(
                TokenKind::LParen,
                TokenKind::RParen,
                [
                    (TokenKind::LBrace, TokenKind::RBrace),
                    (TokenKind::LBracket, TokenKind::RBracket),
                ],
                |_| Vec::new(),
            )))
            .labelled("the parameters in `( )`")
            .boxed()
    }

    fn returns(&self) -> P<'src, I, Option<TypeExpr>> {
        punct(TokenKind::Arrow)
            .ignore_then(self.bare_type.clone().labelled("the return type"))
            .or_not()
            .boxed()
    }

    fn decline(&self) -> P<'src, I, Decline> {
        let src = self.src;
        let reason = select! { TokenKind::Str(value) = e => StringLit { value: src.string(value, e.span()), span: e.span() } }
            .labelled("the reason, as a string");
        word("decline")
            .ignore_then(path().labelled("the code to decline"))
            .then(reason)
            .map_with(|(code, reason), e| Decline {
                code,
                reason,
                span: e.span(),
            })
            .boxed()
    }

    fn action(&self) -> P<'src, I, Item> {
        let fails = word("fails")
            .ignore_then(
                path()
                    .labelled("a failure")
                    .separated_by(just(TokenKind::Comma))
                    .at_least(1)
                    .collect::<Vec<_>>()
                    .map(exact),
            )
            .map_with(|failures, e| FailsClause {
                failures,
                span: e.span(),
            });
        self.decline()
            .repeated()
            .collect::<Vec<_>>()
            .map(exact)
            .then(word("public").or_not())
            .then_ignore(word("action"))
            .then(self.name("the action's name"))
            .then(self.params())
            .then(fails.or_not())
            .then(self.returns())
            .then(self.block.clone())
            .validate(
                |((((((declines, public), name), params), fails), returns), body), e, emitter| {
                    let returns = returns_or_missing(returns, &body).unwrap_or_else(|at| {
                        emitter.emit(Error::custom(at, tag::MISSING_RETURN));
                        error_type(at)
                    });
                    Item::Action(ActionDecl {
                        declines,
                        public,
                        name,
                        params,
                        fails,
                        returns,
                        body,
                        span: e.span(),
                    })
                },
            )
            .boxed()
    }

    fn function(&self) -> P<'src, I, Item> {
        word("function")
            .ignore_then(self.name("the function's name"))
            .then(self.params())
            .then(self.returns())
            .then(self.block.clone())
            .validate(|(((name, params), returns), body), e, emitter| {
                let returns = returns_or_missing(returns, &body).unwrap_or_else(|at| {
                    emitter.emit(Error::custom(at, tag::MISSING_RETURN_FUNCTION));
                    error_type(at)
                });
                Item::Function(FunctionDecl {
                    name,
                    params,
                    returns,
                    body,
                    span: e.span(),
                })
            })
            .boxed()
    }

    fn route(&self) -> P<'src, I, Item> {
        let src = self.src;
        let route_path =
            select! { TokenKind::RoutePath = e => (src.slice(e.span()).to_string(), e.span()) }
                .labelled("the route's path, starting with `/`");
        word("route")
            .ignore_then(self.name("the HTTP method"))
            .then(route_path)
            .then(self.settings.clone())
            .map_with(|((method, (path, path_span)), settings), e| {
                Item::Route(RouteDecl {
                    method,
                    path,
                    path_span,
                    settings,
                    span: e.span(),
                })
            })
            .boxed()
    }

    fn subscriber(&self) -> P<'src, I, Item> {
        word("subscriber")
            .ignore_then(self.name("the subscriber's name"))
            .then_ignore(word("on"))
            .then(path().labelled("the event"))
            .then(self.settings.clone())
            .map_with(|((name, event), settings), e| {
                Item::Subscriber(SubscriberDecl {
                    name,
                    event,
                    settings,
                    span: e.span(),
                })
            })
            .boxed()
    }

    fn schedule(&self) -> P<'src, I, Item> {
        word("schedule")
            .ignore_then(self.name("the schedule's name"))
            .then_ignore(word("every"))
            .then(self.expr.clone().labelled("how often it runs, e.g. `1h`"))
            .then(self.settings.clone())
            .map_with(|((name, every), settings), e| {
                Item::Schedule(ScheduleDecl {
                    name,
                    every,
                    settings,
                    span: e.span(),
                })
            })
            .boxed()
    }
}

fn error_type(span: Span) -> TypeExpr {
    TypeExpr {
        kind: TypeExprKind::Error,
        span,
    }
}
