//! Parses the design's complete example (declarations, the `subscribe`
//! action, the entry points and the emit-with example) with no diagnostics,
//! and checks the shapes later phases rely on.

use jadpo_compiler::ast::*;
use jadpo_compiler::parser::parse_file;
use jadpo_compiler::span::FileId;

const DESIGN: &str = include_str!("parser_inputs/design.jadpo");
const TESTING_DESIGN: &str = include_str!("parser_inputs/testing_design.jadpo");

fn parse_clean(text: &str) -> Vec<Item> {
    let (ast, diags) = parse_file(FileId(0), text);
    assert!(diags.is_empty(), "unexpected diagnostics: {diags:#?}");
    ast.items
}

fn action<'a>(items: &'a [Item], name: &str) -> &'a ActionDecl {
    items
        .iter()
        .find_map(|i| match i {
            Item::Action(a) if a.name.name.as_str() == name => Some(a),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no action {name}"))
}

#[test]
fn design_example_parses_without_diagnostics() {
    let items = parse_clean(DESIGN);
    let kinds: Vec<&str> = items
        .iter()
        .map(|i| match i {
            Item::Application(_) => "application",
            Item::Config(_) => "config",
            Item::Store(_) => "store",
            Item::Type(_) => "type",
            Item::Entity(_) => "entity",
            Item::Failure(_) => "failure",
            Item::Event(_) => "event",
            Item::Action(_) => "action",
            Item::Function(_) => "function",
            Item::Route(_) => "route",
            Item::Subscriber(_) => "subscriber",
            Item::Schedule(_) => "schedule",
            Item::Fixture(_) => "fixture",
            Item::Test(_) => "test",
            Item::Error(_) => "error",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "application",
            "config",
            "store",
            "type",
            "type",
            "type",
            "type",
            "type",
            "entity",
            "failure",
            "event",
            "event",
            "action",
            "route",
            "subscriber",
            "schedule",
            "action"
        ]
    );
}

#[test]
fn subscribe_header_and_body_have_the_expected_shape() {
    let items = parse_clean(DESIGN);
    let subscribe = action(&items, "subscribe");
    let fails: Vec<String> = subscribe
        .fails
        .as_ref()
        .map(|f| f.failures.iter().map(Path::text).collect())
        .unwrap_or_default();
    assert_eq!(
        fails,
        [
            "PaymentRefused",
            "stripe.CardDeclined",
            "stripe.InvalidEmail",
            "stripe.PriceMissing"
        ]
    );
    assert!(
        matches!(&subscribe.returns.kind, TypeExprKind::Named { path, .. } if path.text() == "stripe.SubscriptionId")
    );
    let stmts = &subscribe.body.stmts;
    assert_eq!(stmts.len(), 7);
    assert!(matches!(
        &stmts[0].kind,
        StmtKind::Var {
            value: Expr {
                kind: ExprKind::Attempt(_),
                ..
            },
            ..
        }
    ));
    assert!(matches!(
        &stmts[2].kind,
        StmtKind::Expr(Expr {
            kind: ExprKind::Attempt(_),
            ..
        })
    ));
    let StmtKind::Var { value, .. } = &stmts[3].kind else {
        panic!("statement 4 is not a var");
    };
    let ExprKind::Match { arms, .. } = &value.kind else {
        panic!("subscription is not a match");
    };
    assert!(matches!(&arms[0].pattern, Pattern::Success(v) if v.name.as_str() == "created"));
    assert!(matches!(&arms[1].pattern, Pattern::Failure(p) if p.text() == "stripe.CardDeclined"));
    assert!(
        matches!(&arms[1].body.kind, ExprKind::Reject(r) if r.failure.text() == "PaymentRefused")
    );
    let StmtKind::Expr(Expr {
        kind: ExprKind::Attempt(create),
        ..
    }) = &stmts[4].kind
    else {
        panic!("statement 5 is not attempt create");
    };
    assert!(
        matches!(&create.kind, ExprKind::Create { fields, conflict: None, .. } if fields.len() == 3)
    );
    assert!(matches!(&stmts[5].kind, StmtKind::Emit(e) if e.event.text() == "SubscriptionStarted"));
    assert!(matches!(&stmts[6].kind, StmtKind::Return(Some(_))));
}

#[test]
fn entry_points_have_the_expected_shape() {
    let items = parse_clean(DESIGN);
    let route = items.iter().find_map(|i| match i {
        Item::Route(r) => Some(r),
        _ => None,
    });
    let route = route.unwrap_or_else(|| panic!("no route"));
    assert_eq!(route.method.name.as_str(), "POST");
    assert_eq!(route.path, "/subscriptions");
    let keys: Vec<&str> = route.settings.iter().map(|s| s.key.name.as_str()).collect();
    assert_eq!(
        keys,
        [
            "auth",
            "idempotency_key",
            "deadline",
            "input",
            "output",
            "run"
        ]
    );
    let schedule = items.iter().find_map(|i| match i {
        Item::Schedule(s) => Some(s),
        _ => None,
    });
    let schedule = schedule.unwrap_or_else(|| panic!("no schedule"));
    assert!(matches!(
        schedule.every.kind,
        ExprKind::Duration(1, DurationUnit::H)
    ));
    let subscriber = items.iter().find_map(|i| match i {
        Item::Subscriber(s) => Some(s),
        _ => None,
    });
    assert!(subscriber.is_some_and(|s| s.event.text() == "SubscriptionRequested"));
}

#[test]
fn emit_with_options_keeps_records_and_lists() {
    let items = parse_clean(DESIGN);
    let remind = action(&items, "remind");
    let StmtKind::Emit(emit) = &remind.body.stmts[0].kind else {
        panic!("not an emit");
    };
    let options = emit
        .options
        .as_ref()
        .unwrap_or_else(|| panic!("no with block"));
    let keys: Vec<&str> = options.iter().map(|s| s.key.name.as_str()).collect();
    assert_eq!(
        keys,
        [
            "queue",
            "priority",
            "max_attempts",
            "tags",
            "run_at",
            "unique"
        ]
    );
    assert!(
        matches!(&options[3].value, SettingValue::Expr(Expr { kind: ExprKind::List(l), .. }) if l.len() == 2)
    );
    assert!(matches!(
        &options[4].value,
        SettingValue::Expr(Expr {
            kind: ExprKind::Binary(BinOp::Add, ..),
            ..
        })
    ));
    assert!(matches!(&options[5].value, SettingValue::Record(r, _) if r.len() == 1));
}

#[test]
fn declarations_keep_types_and_constraints() {
    let items = parse_clean(DESIGN);
    let types: Vec<&TypeDecl> = items
        .iter()
        .filter_map(|i| match i {
            Item::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    assert!(
        matches!(&types[0].def.kind, TypeExprKind::Named { constraints, .. } if constraints.len() == 1)
    );
    assert!(matches!(&types[3].def.kind, TypeExprKind::Enum(v) if v.len() == 2));
    let TypeExprKind::Object(fields) = &types[4].def.kind else {
        panic!("Seats is not an object");
    };
    assert!(fields[2].optional);
    assert!(matches!(fields[2].ty.kind, TypeExprKind::Optional(_)));
    let config = items.iter().find_map(|i| match i {
        Item::Config(c) => Some(c),
        _ => None,
    });
    let config = config.unwrap_or_else(|| panic!("no config"));
    assert!(
        matches!(&config.fields[0].ty.kind, TypeExprKind::Named { constraints, .. } if constraints.len() == 2)
    );
}

#[test]
fn testing_design_example_parses_into_fixtures_and_tests() {
    let items = parse_clean(TESTING_DESIGN);
    let fixtures: Vec<&FixtureDecl> = items
        .iter()
        .filter_map(|i| match i {
            Item::Fixture(f) => Some(f),
            _ => None,
        })
        .collect();
    let tests: Vec<&TestDecl> = items
        .iter()
        .filter_map(|i| match i {
            Item::Test(t) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(fixtures.len(), 2);
    assert_eq!(tests.len(), 2);
    let declined = fixtures[0];
    let keys: Vec<&str> = declined
        .settings
        .iter()
        .map(|s| s.key.name.as_str())
        .collect();
    assert_eq!(keys, ["clock", "config", "retry_after", "attempts"]);
    let answers = &declined.fakes[0].answers;
    assert_eq!(answers.len(), 3);
    assert!(matches!(answers[2].answer.kind, AnswerKind::Fail { .. }));
    let lost = &fixtures[1].fakes[0].answers[3].answer.kind;
    assert!(matches!(lost, AnswerKind::Lost(inner) if matches!(inner.kind, AnswerKind::Value(_))));
    let first = &tests[0].body;
    assert_eq!(first.len(), 4);
    assert!(matches!(
        &first[0].kind,
        TestStmtKind::Delivery(DeliveryStmt {
            bind: None,
            expect: Expect::Fails(_),
            ..
        })
    ));
    assert!(matches!(
        &first[1].kind,
        TestStmtKind::Assert(Expr { kind: ExprKind::Binary(BinOp::Eq, count, _), .. })
            if matches!(count.kind, ExprKind::Count { kind: CountKind::Stored, .. })
    ));
    let second = &tests[1].body;
    assert!(matches!(
        &second[0].kind,
        TestStmtKind::Delivery(DeliveryStmt {
            bind: Some(_),
            expect: Expect::Complete,
            ..
        })
    ));
}
