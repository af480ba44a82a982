//! Grammar for declarations (application, config, store, type, entity,
//! failure, event, action, function, route, subscriber, schedule) and the
//! whole file. A broken declaration skips to the next declaration word at the
//! start of a line and becomes [`Item::Error`].

use super::common::{
    any_word, error_item, exact, ident, kw, path, punct, skip_item, skip_line, statement_end, tag,
    word, Error, Extra, Present, Src, Tokens,
};
use super::exprs;
use super::stmts::{self, Parts};
use super::types::{field_entry, fields_block, settings_block, type_expr, P};
use crate::ast::{
    ActionDecl, Answer, AnswerKind, Application, Block, ConfigDecl, Decline, DeliveryStmt,
    DeliveryTarget, EntityDecl, EventDecl, Expect, FailsClause, FailureDecl, FailureEntry,
    FakeAnswer, FakeDecl, FixtureDecl, FunctionDecl, Ident, Item, Param, RouteDecl, ScheduleDecl,
    Setting, SettingValue, StoreDecl, StringLit, SubscriberDecl, TestDecl, TestStmt, TestStmtKind,
    TypeDecl, TypeExpr, TypeExprKind,
};

use crate::lexer::{Keyword, TokenKind};
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
            self.fixture(),
            self.test(),
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

impl<'src, I: Tokens<'src>> Grammar<'src, I> {
    /// One `name: value` or `name: { ... }` setting.
    fn setting(&self) -> P<'src, I, Setting> {
        let record = self
            .settings
            .clone()
            .map_with(|s, e| SettingValue::Record(s, e.span()));
        any_word()
            .then_ignore(just(TokenKind::Colon))
            .then(choice((record, self.expr.clone().map(SettingValue::Expr))))
            .map_with(|(key, value), e| Setting {
                key,
                value,
                span: e.span(),
            })
            .boxed()
    }

    /// A fake's answer: a construction, `done`, `fail F [{ fields }]`,
    /// `lost ANSWER`, `in_use` or `server_error`. Any number of `lost` is
    /// read without recursion (only one can be right, which the resolver
    /// judges), so a long run of them cannot exhaust the stack.
    fn answer(&self) -> P<'src, I, Answer> {
        let src = self.src;
        let expr = self.expr.clone();
        let fail = word("fail")
            .ignore_then(path().labelled("the failure"))
            .then(exprs::field_inits(src, expr.clone()).or_not())
            .map(|(failure, fields)| AnswerKind::Fail { failure, fields });
        let base = choice((
            word("done").to(AnswerKind::Done),
            word("in_use").to(AnswerKind::InUse),
            word("server_error").to(AnswerKind::ServerError),
            fail,
            expr.map(AnswerKind::Value),
        ))
        .map_with(|kind, e| Answer {
            kind,
            span: e.span(),
        });
        word("lost")
            .repeated()
            .collect::<Vec<Span>>()
            .then(base)
            .map(|(losts, base)| nest_lost(&losts, base))
            .labelled("an answer")
            .boxed()
    }

    fn fake(&self) -> P<'src, I, FakeDecl> {
        let line = path()
            .labelled("an operation")
            .then_ignore(just(TokenKind::FatArrow))
            .then(self.answer())
            .map_with(|(op, answer), e| FakeAnswer {
                op,
                answer,
                span: e.span(),
            });
        word("fake")
            .ignore_then(self.name("the package to fake"))
            .then(
                line.repeated()
                    .collect::<Vec<_>>()
                    .map(exact)
                    .delimited_by(just(TokenKind::LBrace), just(TokenKind::RBrace)),
            )
            .map_with(|(package, answers), e| FakeDecl {
                package,
                answers,
                span: e.span(),
            })
            .boxed()
    }

    fn fixture(&self) -> P<'src, I, Item> {
        enum Entry {
            Setting(Setting),
            Fake(FakeDecl),
        }
        let entry = choice((
            self.fake().map(Entry::Fake),
            self.setting().map(Entry::Setting),
        ));
        word("fixture")
            .ignore_then(self.name("the fixture's name"))
            .then(
                entry
                    .repeated()
                    .collect::<Vec<_>>()
                    .delimited_by(just(TokenKind::LBrace), just(TokenKind::RBrace)),
            )
            .map_with(|(name, entries), e| {
                let mut settings = Vec::new();
                let mut fakes = Vec::new();
                for entry in entries {
                    match entry {
                        Entry::Setting(s) => settings.push(s),
                        Entry::Fake(f) => fakes.push(f),
                    }
                }
                Item::Fixture(FixtureDecl {
                    name,
                    settings,
                    fakes,
                    span: e.span(),
                })
            })
            .boxed()
    }

    /// `call f(args)`
    fn call_target(&self) -> P<'src, I, DeliveryTarget> {
        let args = self
            .expr
            .clone()
            .separated_by(just(TokenKind::Comma))
            .allow_trailing()
            .collect::<Vec<_>>()
            .map(exact)
            .delimited_by(just(TokenKind::LParen), just(TokenKind::RParen));
        word("call")
            .ignore_then(self.name("the action to call"))
            .then(args)
            .map(|(action, args)| DeliveryTarget::Call { action, args })
            .boxed()
    }

    fn expect(&self) -> P<'src, I, Expect> {
        choice((
            word("fails")
                .ignore_then(path().labelled("the failure"))
                .map(Expect::Fails),
            word("ends")
                .ignore_then(
                    ident().labelled("`outcome_unknown`, `diverged`, `retry_later` or `fault`"),
                )
                .map(Expect::Ends),
        ))
        .or_not()
        .map(|e| e.unwrap_or(Expect::Complete))
        .boxed()
    }

    fn test_statement(&self) -> P<'src, I, TestStmt> {
        let src = self.src;
        let deliver = word("deliver")
            .ignore_then(self.expr.clone().labelled("the event to deliver"))
            .then(word("to").ignore_then(ident()).or_not())
            .map(|(event, to)| DeliveryTarget::Deliver { event, to });
        let delivery = choice((self.call_target(), deliver))
            .then(self.expect())
            .map_with(|(target, expect), e| {
                TestStmtKind::Delivery(DeliveryStmt {
                    bind: None,
                    target,
                    expect,
                    span: e.span(),
                })
            });
        let bound_call = kw(Keyword::Var)
            .ignore_then(ident())
            .then_ignore(just(TokenKind::Assign))
            .then(self.call_target())
            .then(self.expect())
            .map_with(|((name, target), expect), e| {
                TestStmtKind::Delivery(DeliveryStmt {
                    bind: Some(name),
                    target,
                    expect,
                    span: e.span(),
                })
            });
        let var = kw(Keyword::Var)
            .ignore_then(ident())
            .then_ignore(just(TokenKind::Assign))
            .then(self.expr.clone())
            .map(|(name, value)| TestStmtKind::Var { name, value });
        let assert = word("assert")
            .ignore_then(self.expr.clone().labelled("what must hold"))
            .map(TestStmtKind::Assert);
        let advance = word("advance")
            .ignore_then(word("clock"))
            .ignore_then(word("by"))
            .ignore_then(self.expr.clone().labelled("a duration such as `1h`"))
            .map(TestStmtKind::Advance);
        choice((bound_call, var, delivery, assert, advance))
            .map_with(|kind, e| TestStmt {
                kind,
                span: e.span(),
            })
            .then_ignore(statement_end(src))
            .labelled("a test statement: `call`, `deliver`, `assert`, `advance clock by` or `var`")
            .recover_with(via_parser(skip_line(src).map(|span| TestStmt {
                kind: TestStmtKind::Error,
                span,
            })))
            .boxed()
    }

    fn test(&self) -> P<'src, I, Item> {
        let src = self.src;
        let name = select! { TokenKind::Str(value) = e => StringLit { value: src.string(value, e.span()), span: e.span() } }
            .labelled("the test's name, as a string");
        word("test")
            .ignore_then(name)
            .then(
                word("using")
                    .ignore_then(ident().labelled("a fixture"))
                    .or_not(),
            )
            .then(
                self.test_statement()
                    .repeated()
                    .collect::<Vec<_>>()
                    .map(exact)
                    .delimited_by(just(TokenKind::LBrace), just(TokenKind::RBrace)),
            )
            .map_with(|((name, using), body), e| {
                Item::Test(TestDecl {
                    name,
                    using,
                    body,
                    span: e.span(),
                })
            })
            .boxed()
    }
}

/// `lost lost ... ANSWER`: at most two levels are kept, enough for the
/// resolver to report `lost` around `lost` once.
fn nest_lost(losts: &[Span], base: Answer) -> Answer {
    let end = base.span.end;
    let mut answer = base;
    for at in losts.iter().take(2).rev() {
        answer = Answer {
            kind: AnswerKind::Lost(Box::new(answer)),
            span: Span { end, ..*at },
        };
    }
    answer
}

fn error_type(span: Span) -> TypeExpr {
    TypeExpr {
        kind: TypeExprKind::Error,
        span,
    }
}
