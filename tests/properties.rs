//! Property tests (proptest):
//! - printing an AST (`jadpo_compiler::printer`) and parsing the text back
//!   gives the same AST up to spans, for generated ASTs and for every source
//!   file of the repository that parses cleanly;
//! - the step-shape digest of every action in the plan
//!   (`actions[].step_shape_digest`) does not change when spaces, blank
//!   lines and comments are inserted between the tokens of
//!   `examples/billing`.

use jadpo::check::check_app;
use jadpo_compiler::ast::*;
use jadpo_compiler::intern::Name;
use jadpo_compiler::lexer;
use jadpo_compiler::load::MemLoader;
use jadpo_compiler::parser::parse_file;
use jadpo_compiler::printer::{format_source, print_file};
use jadpo_compiler::span::{FileId, Span};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path as FsPath, PathBuf};

fn repo() -> &'static FsPath {
    FsPath::new(env!("CARGO_MANIFEST_DIR"))
}

// ------------------------------------------------------ span erasure ---

/// The tree's `Debug` text with every span replaced by `_`: two trees are
/// equal up to spans exactly when these strings are equal.
fn shape(ast: &SourceFileAst) -> String {
    erase_spans(&format!("{:?}", ast.items))
}

fn erase_spans(debug: &str) -> String {
    const START: &str = "Span { file: FileId(";
    let mut out = String::with_capacity(debug.len());
    let mut rest = debug;
    while let Some(at) = rest.find(START) {
        out.push_str(&rest[..at]);
        out.push('_');
        let after = &rest[at..];
        // A span's Debug text holds no nested braces: it ends at the first `}`.
        let end = after.find('}').map_or(after.len(), |i| i + 1);
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Parses `text`, requiring no diagnostics.
fn parse_clean(text: &str) -> Result<SourceFileAst, String> {
    let (ast, diags) = parse_file(FileId(0), text);
    if diags.is_empty() {
        Ok(ast)
    } else {
        let found: Vec<String> = diags
            .iter()
            .map(|d| {
                format!(
                    "[{}] {} at {}..{}",
                    d.code, d.summary, d.span.start, d.span.end
                )
            })
            .collect();
        Err(format!("{found:#?}\n--- text\n{text}"))
    }
}

#[test]
fn erasing_spans_keeps_everything_else() {
    let a = parse_clean("action a(x: Int) -> Int {\n    return x + 1\n}\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let b =
        parse_clean("action  a( x :Int )->Int{\n return x+1 }").unwrap_or_else(|e| panic!("{e}"));
    let c = parse_clean("action a(x: Int) -> Int {\n    return x + 2\n}\n")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(shape(&a), shape(&b));
    assert_ne!(
        shape(&a),
        shape(&c),
        "a different literal must change the shape"
    );
    assert!(!shape(&a).contains("FileId"), "{}", shape(&a));
}

// ------------------------------------------- round trip: real sources ---

fn sources(dir: &FsPath, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "jadpo") {
            out.push(path);
        }
    }
}

#[test]
fn every_clean_source_in_the_repository_round_trips() {
    let mut files = Vec::new();
    for dir in ["examples", "packages", "stdlib/lib", "tests/fixtures"] {
        sources(&repo().join(dir), &mut files);
    }
    files.sort();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let Ok(ast) = parse_clean(&text) else {
            continue; // fixtures of syntax errors
        };
        let printed = print_file(&ast);
        let again = parse_clean(&printed)
            .unwrap_or_else(|e| panic!("{}: printed text does not parse: {e}", file.display()));
        assert_eq!(
            shape(&ast),
            shape(&again),
            "{}: printing and parsing back changed the tree\n--- printed\n{printed}",
            file.display()
        );
        assert_eq!(
            printed,
            print_file(&again),
            "{}: printing is not stable",
            file.display()
        );
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} clean sources were found");
}

// --------------------------------------------- round trip: generated ---

fn span() -> Span {
    Span::default()
}

fn id(text: &str) -> Ident {
    Ident {
        name: Name::new(text),
        span: span(),
    }
}

fn path_of(parts: &[&str]) -> Path {
    Path {
        segments: parts.iter().map(|p| id(p)).collect(),
        span: span(),
    }
}

fn ex(kind: ExprKind) -> Expr {
    Expr { kind, span: span() }
}

const LOWER: &[&str] = &[
    "a", "b", "x", "item", "count", "price_id", "customer", "total",
];
const UPPER: &[&str] = &["Foo", "Bar", "Req", "Customer", "Thing"];

fn lower() -> impl Strategy<Value = &'static str> {
    prop::sample::select(LOWER)
}

fn upper() -> impl Strategy<Value = &'static str> {
    prop::sample::select(UPPER)
}

/// `a`, `a.b`, `stripe.a.b`: a value path, lowercase throughout.
fn value_path() -> impl Strategy<Value = Path> {
    prop::collection::vec(lower(), 1..4).prop_map(|parts| path_of(&parts))
}

/// `Foo`, `stripe.Foo`: a type, failure, event or entity name.
fn type_path() -> impl Strategy<Value = Path> {
    (prop::option::of(lower()), upper()).prop_map(|(pkg, name)| match pkg {
        Some(pkg) => path_of(&[pkg, name]),
        None => path_of(&[name]),
    })
}

fn string_value() -> impl Strategy<Value = String> {
    "[a-z \"\\\\\n\té€\u{1}]{0,8}"
}

fn leaf_expr() -> impl Strategy<Value = Expr> {
    let unit = prop::sample::select(vec![
        DurationUnit::Ms,
        DurationUnit::S,
        DurationUnit::M,
        DurationUnit::H,
        DurationUnit::D,
    ]);
    prop_oneof![
        (0i64..1_000_000).prop_map(|v| ex(ExprKind::Int(v))),
        prop::sample::select(vec!["1.5", "0.25", "12.50"])
            .prop_map(|d| ex(ExprKind::Decimal(d.to_string()))),
        string_value().prop_map(|s| ex(ExprKind::Str(s))),
        any::<bool>().prop_map(|b| ex(ExprKind::Bool(b))),
        Just(ex(ExprKind::None)),
        (0u64..10_000, unit).prop_map(|(n, u)| ex(ExprKind::Duration(n, u))),
        value_path().prop_map(|p| ex(ExprKind::Path(p))),
    ]
}

fn field_inits(expr: BoxedStrategy<Expr>) -> impl Strategy<Value = Vec<FieldInit>> {
    prop::collection::vec((lower(), expr), 0..3).prop_map(|fields| {
        fields
            .into_iter()
            .map(|(name, value)| FieldInit {
                name: id(name),
                value,
                span: span(),
            })
            .collect()
    })
}

fn binop() -> impl Strategy<Value = BinOp> {
    prop::sample::select(vec![
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::And,
        BinOp::Or,
    ])
}

fn expr() -> BoxedStrategy<Expr> {
    leaf_expr()
        .prop_recursive(4, 48, 4, |inner| {
            let inner = inner.boxed();
            prop_oneof![
                (inner.clone(), lower()).prop_map(|(e, f)| ex(ExprKind::Field(Box::new(e), id(f)))),
                (value_path(), prop::collection::vec(inner.clone(), 0..3)).prop_map(
                    |(p, args)| ex(ExprKind::Call {
                        callee: Box::new(ex(ExprKind::Path(p))),
                        args
                    })
                ),
                (type_path(), field_inits(inner.clone())).prop_map(|(ty, fields)| ex(
                    ExprKind::Construct {
                        ty: Box::new(ty),
                        fields
                    }
                )),
                prop::collection::vec(inner.clone(), 0..3)
                    .prop_map(|items| ex(ExprKind::List(items))),
                (any::<bool>(), inner.clone()).prop_map(|(not, e)| {
                    let op = if not { UnOp::Not } else { UnOp::Neg };
                    ex(ExprKind::Unary(op, Box::new(e)))
                }),
                (binop(), inner.clone(), inner.clone())
                    .prop_map(|(op, l, r)| ex(ExprKind::Binary(op, Box::new(l), Box::new(r)))),
                inner
                    .clone()
                    .prop_map(|e| ex(ExprKind::Attempt(Box::new(e)))),
                (
                    inner.clone(),
                    prop::collection::vec(arm(inner.clone()), 0..3)
                )
                    .prop_map(|(s, arms)| ex(ExprKind::Match {
                        scrutinee: Box::new(s),
                        arms
                    })),
                write(inner),
            ]
        })
        .boxed()
}

fn arm(expr: BoxedStrategy<Expr>) -> impl Strategy<Value = MatchArm> {
    let pattern = prop_oneof![
        lower().prop_map(|v| Pattern::Success(id(v))),
        type_path().prop_map(Pattern::Failure),
    ];
    let body = prop_oneof![
        expr.clone(),
        Just(ex(ExprKind::Propagate)),
        (type_path(), prop::option::of(field_inits(expr.clone()))).prop_map(
            |(failure, fields)| ex(ExprKind::Reject(Box::new(RejectExpr {
                failure,
                fields,
                span: span()
            })))
        ),
        expr.clone().prop_map(|e| ex(ExprKind::Block(Block {
            stmts: vec![Stmt {
                kind: StmtKind::Return(Some(e)),
                span: span()
            }],
            span: span()
        }))),
    ];
    (pattern, body).prop_map(|(pattern, body)| MatchArm {
        pattern,
        pattern_span: span(),
        body,
        span: span(),
    })
}

fn write(expr: BoxedStrategy<Expr>) -> impl Strategy<Value = Expr> {
    let filter = (lower(), expr.clone())
        .prop_map(|(field, value)| {
            Box::new(WhereClause {
                field: id(field),
                value,
                span: span(),
            })
        })
        .boxed();
    let failure = || prop::option::of(type_path().prop_map(Box::new));
    prop_oneof![
        (type_path(), field_inits(expr.clone()), failure()).prop_map(
            |(entity, fields, conflict)| {
                ex(ExprKind::Create {
                    entity: Box::new(entity),
                    fields,
                    conflict,
                })
            }
        ),
        (
            type_path(),
            filter.clone(),
            field_inits(expr),
            failure(),
            failure()
        )
            .prop_map(
                |(entity, filter, set, missing, conflict)| ex(ExprKind::Update {
                    entity: Box::new(entity),
                    filter,
                    set,
                    missing,
                    conflict
                })
            ),
        (type_path(), filter, failure()).prop_map(|(entity, filter, missing)| ex(
            ExprKind::Delete {
                entity: Box::new(entity),
                filter,
                missing
            }
        )),
    ]
}

/// A type; `constraints` where `{ ... }` after a name is read as constraints.
fn type_expr(constraints: bool) -> BoxedStrategy<TypeExpr> {
    let named_leaf = type_path().prop_map(|path| TypeExpr {
        kind: TypeExprKind::Named {
            path,
            args: Vec::new(),
            constraints: Vec::new(),
        },
        span: span(),
    });
    named_leaf
        .prop_recursive(3, 12, 3, move |inner| {
            let settings = if constraints {
                settings(expr_small(), 0).boxed()
            } else {
                Just(Vec::new()).boxed()
            };
            prop_oneof![
                (
                    type_path(),
                    prop::collection::vec(inner.clone(), 0..2),
                    settings
                )
                    .prop_map(|(path, args, constraints)| TypeExpr {
                        kind: TypeExprKind::Named {
                            path,
                            args,
                            constraints
                        },
                        span: span()
                    }),
                prop::collection::vec(lower(), 0..3).prop_map(|names| TypeExpr {
                    kind: TypeExprKind::Enum(names.into_iter().map(id).collect()),
                    span: span()
                }),
                prop::collection::vec((lower(), inner.clone(), any::<bool>()), 0..3).prop_map(
                    |fields| TypeExpr {
                        kind: TypeExprKind::Object(field_decls(fields)),
                        span: span()
                    }
                ),
                inner.prop_map(|t| TypeExpr {
                    kind: TypeExprKind::Optional(Box::new(t)),
                    span: span()
                }),
            ]
        })
        .boxed()
}

fn field_decls(fields: Vec<(&'static str, TypeExpr, bool)>) -> Vec<FieldDecl> {
    fields
        .into_iter()
        .map(|(name, ty, optional)| FieldDecl {
            name: id(name),
            ty,
            optional,
            span: span(),
        })
        .collect()
}

/// Small expressions for settings and constraints.
fn expr_small() -> BoxedStrategy<Expr> {
    leaf_expr().boxed()
}

fn settings(expr: BoxedStrategy<Expr>, depth: u32) -> BoxedStrategy<Vec<Setting>> {
    let value = if depth == 0 {
        prop_oneof![
            3 => expr.clone().prop_map(SettingValue::Expr),
            1 => settings(expr.clone(), 1).prop_map(|s| SettingValue::Record(s, span())),
        ]
        .boxed()
    } else {
        expr.prop_map(SettingValue::Expr).boxed()
    };
    prop::collection::vec((lower(), value), 0..3)
        .prop_map(|items| {
            items
                .into_iter()
                .map(|(key, value)| Setting {
                    key: id(key),
                    value,
                    span: span(),
                })
                .collect()
        })
        .boxed()
}

fn stmt_leaf(expr: BoxedStrategy<Expr>) -> impl Strategy<Value = Stmt> {
    // Expression statements start with a name or a keyword, so they cannot
    // continue the previous line's expression.
    let expr_stmt = prop_oneof![
        (value_path(), prop::collection::vec(expr.clone(), 0..2)).prop_map(|(p, args)| ex(
            ExprKind::Call {
                callee: Box::new(ex(ExprKind::Path(p))),
                args
            }
        )),
        expr.clone()
            .prop_map(|e| ex(ExprKind::Attempt(Box::new(e)))),
    ];
    let kind = prop_oneof![
        (
            any::<bool>(),
            lower(),
            prop::option::of(type_expr(false)),
            expr.clone()
        )
            .prop_map(|(mutable, name, ty, value)| StmtKind::Var {
                mutable,
                name: id(name),
                ty,
                value
            }),
        (lower(), expr.clone()).prop_map(|(t, value)| StmtKind::Assign {
            target: id(t),
            value
        }),
        prop::option::of(expr.clone()).prop_map(StmtKind::Return),
        (type_path(), prop::option::of(field_inits(expr.clone()))).prop_map(|(failure, fields)| {
            StmtKind::Reject(RejectExpr {
                failure,
                fields,
                span: span(),
            })
        }),
        (
            type_path(),
            field_inits(expr.clone()),
            prop::option::of(settings(expr, 0))
        )
            .prop_map(|(event, fields, options)| StmtKind::Emit(EmitStmt {
                event,
                fields,
                options,
                span: span()
            })),
        expr_stmt.prop_map(StmtKind::Expr),
    ];
    kind.prop_map(|kind| Stmt { kind, span: span() })
}

fn block_of(stmts: Vec<Stmt>) -> Block {
    Block {
        stmts,
        span: span(),
    }
}

fn stmts() -> BoxedStrategy<Vec<Stmt>> {
    let leaf = stmt_leaf(expr());
    let nested = leaf.prop_recursive(3, 16, 3, |inner| {
        let body = prop::collection::vec(inner, 0..3);
        prop_oneof![
            (expr(), body.clone(), prop::option::of(body.clone())).prop_map(
                |(cond, then, other)| {
                    Stmt {
                        kind: StmtKind::If {
                            cond,
                            then_block: block_of(then),
                            else_block: other.map(block_of),
                        },
                        span: span(),
                    }
                }
            ),
            (lower(), expr(), prop::option::of(0i64..100), body).prop_map(
                |(item, iterable, max, b)| {
                    Stmt {
                        kind: StmtKind::For {
                            item: id(item),
                            iterable,
                            max: max.map(|value| IntLit {
                                value,
                                span: span(),
                            }),
                            body: block_of(b),
                        },
                        span: span(),
                    }
                }
            ),
        ]
    });
    prop::collection::vec(nested, 0..4).boxed()
}

fn params() -> impl Strategy<Value = Vec<Param>> {
    prop::collection::vec((lower(), type_expr(true)), 0..3).prop_map(|ps| {
        ps.into_iter()
            .map(|(name, ty)| Param {
                name: id(name),
                ty,
                span: span(),
            })
            .collect()
    })
}

fn item() -> impl Strategy<Value = Item> {
    let declines = prop::collection::vec(string_value(), 0..2).prop_map(|reasons| {
        reasons
            .into_iter()
            .map(|value| Decline {
                code: path_of(&["step", "late_failure"]),
                reason: StringLit {
                    value,
                    span: span(),
                },
                span: span(),
            })
            .collect::<Vec<_>>()
    });
    let fails = prop::option::of(prop::collection::vec(type_path(), 1..3)).prop_map(|f| {
        f.map(|failures| FailsClause {
            failures,
            span: span(),
        })
    });
    let action = (
        declines,
        any::<bool>(),
        lower(),
        params(),
        fails,
        type_expr(false),
        stmts(),
    )
        .prop_map(|(declines, public, name, params, fails, returns, body)| {
            Item::Action(ActionDecl {
                declines,
                public: public.then(span),
                name: id(name),
                params,
                fails,
                returns,
                body: block_of(body),
                span: span(),
            })
        });
    let function =
        (lower(), params(), type_expr(false), stmts()).prop_map(|(name, params, returns, body)| {
            Item::Function(FunctionDecl {
                name: id(name),
                params,
                returns,
                body: block_of(body),
                span: span(),
            })
        });
    let fields = prop::collection::vec((lower(), type_expr(true), any::<bool>()), 0..3)
        .prop_map(field_decls)
        .boxed();
    let route_path = prop::sample::select(vec!["/a", "/subscriptions/{id}", "/x/y_z"]);
    prop_oneof![
        3 => action,
        1 => function,
        1 => (upper(), type_expr(true)).prop_map(|(name, def)| Item::Type(TypeDecl {
            name: id(name),
            def,
            span: span()
        })),
        1 => (upper(), fields.clone()).prop_map(|(name, fields)| Item::Entity(EntityDecl {
            name: id(name),
            fields,
            span: span()
        })),
        1 => (upper(), fields.clone()).prop_map(|(name, fields)| Item::Event(EventDecl {
            name: id(name),
            fields,
            span: span()
        })),
        1 => (upper(), fields.clone()).prop_map(|(name, fields)| Item::Config(ConfigDecl {
            name: id(name),
            fields,
            span: span()
        })),
        1 => (upper(), prop::option::of(expr()), prop::option::of(expr()), fields.clone()).prop_map(
            |(name, kind, code, fields)| {
                let setting = |key: &'static str, value: Expr| FailureEntry::Setting(Setting {
                    key: id(key),
                    value: SettingValue::Expr(value),
                    span: span(),
                });
                let mut entries: Vec<FailureEntry> = Vec::new();
                entries.extend(kind.map(|k| setting("kind", k)));
                entries.extend(code.map(|c| setting("code", c)));
                entries.extend(
                    fields
                        .into_iter()
                        .filter(|f| !matches!(f.name.name.as_str(), "kind" | "code"))
                        .map(FailureEntry::Field),
                );
                Item::Failure(FailureDecl {
                    name: id(name),
                    entries,
                    span: span(),
                })
            }
        ),
        1 => (lower(), settings(expr(), 0)).prop_map(|(name, settings)| Item::Store(StoreDecl {
            name: id(name),
            settings,
            span: span()
        })),
        1 => (upper(), settings(expr(), 0)).prop_map(|(name, settings)| Item::Application(Application {
            name: id(name),
            settings,
            span: span()
        })),
        1 => (route_path, settings(expr(), 0)).prop_map(|(path, settings)| Item::Route(RouteDecl {
            method: id("POST"),
            path: path.to_string(),
            path_span: span(),
            settings,
            span: span()
        })),
        1 => (lower(), type_path(), settings(expr(), 0)).prop_map(|(name, event, settings)| {
            Item::Subscriber(SubscriberDecl {
                name: id(name),
                event,
                settings,
                span: span(),
            })
        }),
        1 => (lower(), 1u64..100, settings(expr(), 0)).prop_map(|(name, hours, settings)| {
            Item::Schedule(ScheduleDecl {
                name: id(name),
                every: ex(ExprKind::Duration(hours, DurationUnit::H)),
                settings,
                span: span(),
            })
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn printed_asts_parse_back_to_the_same_tree(items in prop::collection::vec(item(), 1..4)) {
        let ast = SourceFileAst { file: FileId(0), items };
        let printed = print_file(&ast);
        let again = parse_clean(&printed).map_err(TestCaseError::fail)?;
        prop_assert_eq!(shape(&ast), shape(&again), "printed:\n{}", printed);
    }
}

// ---------------------------------------------- digests vs whitespace ---

/// The billing example's files, by path relative to the app.
fn billing() -> BTreeMap<String, String> {
    let dir = repo().join("examples/billing");
    let mut files = BTreeMap::new();
    files.insert(
        "jadpo.yaml".to_string(),
        std::fs::read_to_string(dir.join("jadpo.yaml")).unwrap_or_default(),
    );
    let mut paths = Vec::new();
    sources(&dir, &mut paths);
    paths.sort();
    for p in paths {
        let rel = p
            .strip_prefix(&dir)
            .unwrap_or(&p)
            .to_string_lossy()
            .replace('\\', "/");
        files.insert(rel, std::fs::read_to_string(&p).unwrap_or_default());
    }
    files
}

/// Each action's step-shape digest, by action name.
fn digests(files: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut mem = MemLoader::new();
    for (path, text) in files {
        mem.insert(format!("app/{path}"), text.as_bytes());
    }
    let outcome = check_app(&mem, "app");
    let errors: Vec<String> = outcome
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("[{}] {}", d.code, d.summary))
        .collect();
    assert!(errors.is_empty(), "billing should check: {errors:?}");
    let mut out = BTreeMap::new();
    for action in outcome
        .plan
        .as_ref()
        .and_then(|p| p.app())
        .map_or(&[][..], |p| &p.actions)
    {
        out.insert(action.name.clone(), action.step_shape_digest.clone());
    }
    out
}

/// What to insert between two tokens. Newlines end statements in Jadpo, so
/// inserted line breaks (and comments, which run to the line end) go only
/// where a line already ends.
#[derive(Clone, Debug)]
enum Insert {
    Spaces(usize),
    Tab,
    TrailingComment,
    CommentLine,
    BlankLine,
}

fn insert() -> impl Strategy<Value = Insert> {
    prop_oneof![
        (1usize..4).prop_map(Insert::Spaces),
        Just(Insert::Tab),
        Just(Insert::TrailingComment),
        Just(Insert::CommentLine),
        Just(Insert::BlankLine),
    ]
}

/// Applies `edits` (a token index and what to insert after that token) to
/// one source file.
fn with_inserts(text: &str, edits: &[(usize, Insert)]) -> String {
    let tokens = lexer::lex(FileId(0), text).tokens;
    if tokens.is_empty() {
        return text.to_string();
    }
    let mut at: Vec<(usize, String)> = Vec::new();
    for (index, what) in edits {
        let end = tokens[index % tokens.len()].span.end as usize;
        let line_end = text[end..].find('\n').map(|i| end + i);
        let (pos, piece) = match what {
            Insert::Spaces(n) => (end, " ".repeat(*n)),
            Insert::Tab => (end, "\t".to_string()),
            // Before the line's own comment or end: a comment of our own.
            Insert::TrailingComment => match line_end {
                Some(le) if !text[end..le].contains("//") && next_token_after(&tokens, le) => {
                    (le, "  // inserted comment".to_string())
                }
                _ => (end, " ".to_string()),
            },
            Insert::CommentLine | Insert::BlankLine => match line_end {
                Some(le) => {
                    let piece = if matches!(what, Insert::CommentLine) {
                        "\n    // an inserted comment line"
                    } else {
                        "\n"
                    };
                    (le, piece.to_string())
                }
                None => (end, " ".to_string()),
            },
        };
        at.push((pos, piece));
    }
    // Apply from the end so earlier offsets stay valid.
    at.sort_by_key(|(pos, _)| std::cmp::Reverse(*pos));
    let mut out = text.to_string();
    for (pos, piece) in at {
        out.insert_str(pos, &piece);
    }
    out
}

/// Whether no token starts before `offset` on its line after the previous
/// token: the line break at `offset` is outside any string.
fn next_token_after(tokens: &[lexer::Token], offset: usize) -> bool {
    !tokens
        .iter()
        .any(|t| (t.span.start as usize) < offset && (t.span.end as usize) > offset)
}

#[test]
fn inserted_whitespace_changes_the_text_but_not_the_digests() {
    let files = billing();
    let base = digests(&files);
    assert!(
        base.len() >= 5,
        "expected billing's actions in the plan: {base:?}"
    );
    assert!(base.values().all(|d| d.len() == 64), "{base:?}");
    // Sanity: the edit machinery really edits.
    let text = files
        .get("src/subscribe.jadpo")
        .cloned()
        .unwrap_or_default();
    let edited = with_inserts(&text, &[(3, Insert::CommentLine), (10, Insert::Spaces(2))]);
    assert_ne!(text, edited);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn step_shape_digests_ignore_whitespace_and_comments(
        edits in prop::collection::vec((0usize..5, any::<usize>(), insert()), 1..24)
    ) {
        let files = billing();
        let base = digests(&files);
        let sources: Vec<String> = files.keys().filter(|k| k.ends_with(".jadpo")).cloned().collect();
        let mut edited = files.clone();
        for (i, path) in sources.iter().enumerate() {
            let mine: Vec<(usize, Insert)> = edits
                .iter()
                .filter(|(f, _, _)| f % sources.len() == i)
                .map(|(_, t, w)| (*t, w.clone()))
                .collect();
            if let Some(text) = edited.get_mut(path) {
                *text = with_inserts(text, &mine);
            }
        }
        prop_assert_eq!(base, digests(&edited));
    }
}

// ---------------------------------------------- formatting: properties ---

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Spaces, tabs, blank lines and comments inserted anywhere in the
    /// billing example: `format_source` still succeeds (it checks the tree
    /// and the comments itself), and its result is a fixed point.
    #[test]
    fn formatting_is_a_fixed_point_under_inserted_space_and_comments(
        file in 0usize..16,
        edits in prop::collection::vec((any::<usize>(), insert()), 1..16)
    ) {
        let files = billing();
        let sources: Vec<&String> = files.iter().filter(|(k, _)| k.ends_with(".jadpo")).map(|(_, v)| v).collect();
        let text = with_inserts(sources[file % sources.len()], &edits);
        let once = format_source(&text).map_err(|e| TestCaseError::fail(format!("{e:?}\n{text}")))?;
        let twice = format_source(&once).map_err(|e| TestCaseError::fail(format!("{e:?}\n{once}")))?;
        prop_assert_eq!(&once, &twice);
    }

    /// Generated programs, printed, then formatted: the same tree, a fixed point.
    #[test]
    fn formatting_generated_programs_keeps_their_tree(items in prop::collection::vec(item(), 1..4)) {
        let ast = SourceFileAst { file: FileId(0), items };
        let printed = print_file(&ast);
        let once = format_source(&printed).map_err(|e| TestCaseError::fail(format!("{e:?}\n{printed}")))?;
        let again = parse_clean(&once).map_err(TestCaseError::fail)?;
        prop_assert_eq!(shape(&ast), shape(&again));
        prop_assert_eq!(format_source(&once).ok(), Some(once.clone()));
    }
}
