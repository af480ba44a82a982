//! One test per language form: each parses without diagnostics into the
//! expected AST shape.

use jadpo_compiler::ast::*;
use jadpo_compiler::parser::parse_file;
use jadpo_compiler::span::FileId;

fn parse_clean(text: &str) -> Vec<Item> {
    let (ast, diags) = parse_file(FileId(0), text);
    assert!(
        diags.is_empty(),
        "unexpected diagnostics for {text}: {diags:#?}"
    );
    ast.items
}

/// The statements of a one-action file.
fn body(stmts: &str) -> Vec<Stmt> {
    let text = format!("action a() -> Unit {{\n{stmts}\n}}\n");
    match parse_clean(&text).into_iter().next() {
        Some(Item::Action(a)) => a.body.stmts,
        other => panic!("not an action: {other:?}"),
    }
}

fn expr(text: &str) -> Expr {
    match body(&format!("var x = {text}")).into_iter().next() {
        Some(Stmt {
            kind: StmtKind::Var { value, .. },
            ..
        }) => value,
        other => panic!("not a var: {other:?}"),
    }
}

#[test]
fn generic_list_with_constraint_and_optional() {
    let items = parse_clean("type Tags = List<Text> { max_length: 20 }?\n");
    let Some(Item::Type(t)) = items.first() else {
        panic!("not a type");
    };
    let TypeExprKind::Optional(inner) = &t.def.kind else {
        panic!("not optional");
    };
    assert!(
        matches!(&inner.kind, TypeExprKind::Named { args, constraints, .. } if args.len() == 1 && constraints.len() == 1)
    );
}

#[test]
fn public_action_with_declines_and_empty_body() {
    let items = parse_clean(
        "decline step.late_failure \"refunds are checked first\"\npublic action refund(a: Int, b: stripe.ChargeId) -> Unit {\n}\n",
    );
    let Some(Item::Action(a)) = items.first() else {
        panic!("not an action");
    };
    assert!(a.public.is_some());
    assert_eq!(a.declines.len(), 1);
    assert_eq!(a.declines[0].code.text(), "step.late_failure");
    assert_eq!(a.declines[0].reason.value, "refunds are checked first");
    assert_eq!(a.params.len(), 2);
    assert!(a.fails.is_none());
}

#[test]
fn function_declaration() {
    let items = parse_clean("function double(x: Int) -> Int {\n    return x * 2\n}\n");
    assert!(matches!(items.first(), Some(Item::Function(f)) if f.params.len() == 1));
}

#[test]
fn route_with_path_parameter_and_inline_action() {
    let items = parse_clean(
        "route POST /subscriptions/{id} {\n    auth: none\n    action: {\n        var x = 1\n        return\n    }\n}\n",
    );
    let Some(Item::Route(r)) = items.first() else {
        panic!("not a route");
    };
    assert_eq!(r.path, "/subscriptions/{id}");
    assert!(matches!(&r.settings[1].value, SettingValue::Block(b) if b.stmts.len() == 2));
}

#[test]
fn var_forms_and_assignment() {
    let stmts = body("var x = 1\nvar x: Int = 2\nvar mut y = 3\ny = 4");
    assert!(matches!(
        &stmts[1].kind,
        StmtKind::Var {
            ty: Some(_),
            mutable: false,
            ..
        }
    ));
    assert!(matches!(
        &stmts[2].kind,
        StmtKind::Var { mutable: true, .. }
    ));
    assert!(
        matches!(&stmts[3].kind, StmtKind::Assign { target, .. } if target.name.as_str() == "y")
    );
}

#[test]
fn if_else_if_else() {
    let stmts = body("if a {\n} else if b {\n} else {\n    return\n}");
    let StmtKind::If {
        else_block: Some(else_block),
        ..
    } = &stmts[0].kind
    else {
        panic!("no else");
    };
    assert!(matches!(
        &else_block.stmts[0].kind,
        StmtKind::If {
            else_block: Some(_),
            ..
        }
    ));
}

#[test]
fn for_loops_with_and_without_max() {
    let stmts = body(
        "for item in items {\n}\nfor item in items max 10 {\n    emit Done { id: item.id }\n}",
    );
    assert!(matches!(&stmts[0].kind, StmtKind::For { max: None, .. }));
    assert!(matches!(
        &stmts[1].kind,
        StmtKind::For {
            max: Some(IntLit { value: 10, .. }),
            ..
        }
    ));
}

#[test]
fn return_forms() {
    let stmts = body("return attempt f(x)");
    assert!(matches!(
        &stmts[0].kind,
        StmtKind::Return(Some(Expr {
            kind: ExprKind::Attempt(_),
            ..
        }))
    ));
    let stmts = body("if a {\n    return\n}\nx = 1");
    assert_eq!(stmts.len(), 2);
}

#[test]
fn reject_with_and_without_fields() {
    let stmts = body("reject Refused\nreject Refused { reason: \"late\" }");
    assert!(matches!(&stmts[0].kind, StmtKind::Reject(r) if r.fields.is_none()));
    assert!(
        matches!(&stmts[1].kind, StmtKind::Reject(r) if r.fields.as_ref().is_some_and(|f| f.len() == 1))
    );
}

#[test]
fn match_arms_with_every_body_kind() {
    let e = expr("match f(x) {\n    success(v) => v\n    failure A => reject G { code: 1 },\n    failure B => propagate\n    failure C => {\n        return 1\n    }\n}");
    let ExprKind::Match { arms, .. } = &e.kind else {
        panic!("not a match");
    };
    assert_eq!(arms.len(), 4);
    assert!(matches!(arms[1].body.kind, ExprKind::Reject(_)));
    assert!(matches!(arms[2].body.kind, ExprKind::Propagate));
    assert!(matches!(arms[3].body.kind, ExprKind::Block(_)));
}

#[test]
fn writes_create_update_delete() {
    let stmts = body(
        "attempt create E { id: x } conflict: Taken\nattempt update E { where: id == x set: { plan: p } missing: Gone conflict: Taken }\nattempt delete E { where: id == x missing: Gone }",
    );
    let inner = |s: &Stmt| match &s.kind {
        StmtKind::Expr(Expr {
            kind: ExprKind::Attempt(e),
            ..
        }) => e.kind.clone(),
        other => panic!("not attempt: {other:?}"),
    };
    assert!(matches!(
        inner(&stmts[0]),
        ExprKind::Create {
            conflict: Some(_),
            ..
        }
    ));
    assert!(
        matches!(inner(&stmts[1]), ExprKind::Update { missing: Some(_), conflict: Some(_), ref set, .. } if set.len() == 1)
    );
    assert!(matches!(
        inner(&stmts[2]),
        ExprKind::Delete {
            missing: Some(_),
            ..
        }
    ));
}

#[test]
fn precedence_of_operators() {
    // not a == b or c and d  =>  (not (a == b)) or (c and d)
    let e = expr("not a == b or c and d");
    let ExprKind::Binary(BinOp::Or, lhs, rhs) = &e.kind else {
        panic!("or is not at the top: {e:?}");
    };
    assert!(
        matches!(&lhs.kind, ExprKind::Unary(UnOp::Not, inner) if matches!(inner.kind, ExprKind::Binary(BinOp::Eq, ..)))
    );
    assert!(matches!(rhs.kind, ExprKind::Binary(BinOp::And, ..)));
    // -a * b + c  =>  ((-a) * b) + c
    let e = expr("-a * b + c");
    let ExprKind::Binary(BinOp::Add, lhs, _) = &e.kind else {
        panic!("+ is not at the top");
    };
    assert!(
        matches!(&lhs.kind, ExprKind::Binary(BinOp::Mul, neg, _) if matches!(neg.kind, ExprKind::Unary(UnOp::Neg, _)))
    );
}

#[test]
fn postfix_calls_and_fields() {
    let e = expr("f(x).id");
    assert!(
        matches!(&e.kind, ExprKind::Field(inner, name) if name.name.as_str() == "id" && matches!(inner.kind, ExprKind::Call { .. }))
    );
}

#[test]
fn construction_only_for_upper_case_names() {
    assert!(matches!(
        expr("stripe.PriceRef { id: 1 }").kind,
        ExprKind::Construct { .. }
    ));
    let stmts = body("if x {\n    return\n}");
    assert!(matches!(
        &stmts[0].kind,
        StmtKind::If {
            cond: Expr {
                kind: ExprKind::Path(_),
                ..
            },
            ..
        }
    ));
}

#[test]
fn literals_and_durations() {
    assert!(
        matches!(expr("[1, 2.5, \"s\", true, false, none]").kind, ExprKind::List(ref l) if l.len() == 6)
    );
    assert!(matches!(
        expr("500ms").kind,
        ExprKind::Duration(500, DurationUnit::Ms)
    ));
    assert!(matches!(
        expr("7d").kind,
        ExprKind::Duration(7, DurationUnit::D)
    ));
}

#[test]
fn parse_files_keeps_the_given_order() {
    use jadpo_compiler::source::{Files, Unit};
    let mut files = Files::new();
    let ids: Vec<FileId> = (0..40)
        .map(|i| {
            files.add(
                format!("f{i}.jadpo"),
                format!("entity E{i} {{\n    id: Text\n}}\nbad{i} ;\n"),
                Unit::App,
            )
        })
        .collect();
    let reversed: Vec<FileId> = ids.iter().rev().copied().collect();
    let mut diags = Vec::new();
    let asts = jadpo_compiler::parser::parse_files(&files, &reversed, &mut diags);
    let order: Vec<FileId> = asts.iter().map(|a| a.file).collect();
    assert_eq!(order, reversed);
    let diag_files: Vec<FileId> = diags.iter().map(|d| d.span.file).collect();
    let mut expected_files = Vec::new();
    for id in &reversed {
        expected_files.extend(diags.iter().filter(|d| d.span.file == *id).map(|_| *id));
    }
    assert_eq!(
        diag_files, expected_files,
        "diagnostics follow the file order"
    );
    assert!(!diags.is_empty());
}

/// The reference says how operators group with sentences of the form
/// "`X` is `Y`" (spec/language.md §3.3); each pair must parse to the same
/// tree, which the formatter shows by printing both alike.
#[test]
fn the_precedence_the_reference_states_is_the_parsers() {
    let spec = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/language.md"),
    )
    .unwrap_or_default();
    let section = spec
        .split("### 3.3 Expressions")
        .nth(1)
        .and_then(|s| s.split("\n- **Calls**").next())
        .unwrap_or("");
    let prose = section.replace('\n', " ");
    let quoted: Vec<&str> = prose.split('`').collect();
    let mut pairs = Vec::new();
    for i in (1..quoted.len().saturating_sub(2)).step_by(2) {
        if quoted.get(i + 1).map(|s| s.trim()) == Some("is") {
            pairs.push((quoted[i], quoted[i + 2]));
        }
    }
    assert!(
        pairs.len() >= 2,
        "the section states its groupings: {pairs:?}"
    );
    let printed = |e: &str| {
        let text = format!(
            "function f(a: Bool, b: Bool, x: Bool, y: Bool) -> Bool {{\n    return {e}\n}}\n"
        );
        jadpo_compiler::printer::format_source(&text).unwrap_or_else(|_| panic!("`{e}` parses"))
    };
    for (written, meaning) in pairs {
        assert_eq!(
            printed(written),
            printed(meaning),
            "spec/language.md says `{written}` is `{meaning}`"
        );
    }
}
