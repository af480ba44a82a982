//! The bound on how deep one statement's tree may nest. Each chain of
//! operators and each bracket level has its own limit (`MAX_CHAIN`,
//! `lexer::MAX_DEPTH`), but they multiply: 30 parentheses each holding 250
//! `-` build a tree 7,500 levels deep, and every later phase (resolution,
//! the interpreter, the formatter, the language server) walks it
//! recursively. A statement (or a setting's value, a test statement, a
//! fixture's answer) whose tree is deeper than [`MAX_TREE_DEPTH`] is
//! reported once as `syntax.too_deep` and replaced by an error node, here
//! on the parser's big-stack thread, so no later phase sees it.
//!
//! The walk keeps its own stack: it never recurses on the tree it measures.

use crate::ast::{
    AnswerKind, Block, DeliveryTarget, Expr, ExprKind, Item, Setting, SettingValue, Stmt, StmtKind,
    TestStmt, TestStmtKind,
};
use crate::diag::Diagnostic;
use crate::span::Span;

/// The deepest statement tree read: nested statements, expressions and
/// the blocks of `match` arms, counted together. Four times the longest
/// chain, so any one chain fits inside ordinary nesting.
pub const MAX_TREE_DEPTH: u32 = 1024;

/// Replaces every tree deeper than [`MAX_TREE_DEPTH`] in `items` with an
/// error node, with one `syntax.too_deep` each.
pub fn bound(items: &mut [Item], diags: &mut Vec<Diagnostic>) {
    for item in items {
        bound_item(item, diags);
    }
}

fn bound_item(item: &mut Item, diags: &mut Vec<Diagnostic>) {
    match item {
        Item::Action(a) => bound_block(&mut a.body, 1, diags),
        Item::Function(f) => bound_block(&mut f.body, 1, diags),
        Item::Application(a) => bound_settings(&mut a.settings, diags),
        Item::Store(s) => bound_settings(&mut s.settings, diags),
        Item::Route(r) => bound_settings(&mut r.settings, diags),
        Item::Subscriber(s) => bound_settings(&mut s.settings, diags),
        Item::Schedule(s) => {
            bound_expr(&mut s.every, diags);
            bound_settings(&mut s.settings, diags);
        }
        Item::Fixture(f) => {
            bound_settings(&mut f.settings, diags);
            for answer in f.fakes.iter_mut().flat_map(|fake| &mut fake.answers) {
                let mut kind = &mut answer.answer.kind;
                while let AnswerKind::Lost(inner) = kind {
                    kind = &mut inner.kind;
                }
                if let AnswerKind::Value(e) = kind {
                    bound_expr(e, diags);
                }
            }
        }
        Item::Test(t) => {
            for s in &mut t.body {
                bound_test_stmt(s, diags);
            }
        }
        // Types, entities, failures, events and config hold type
        // expressions, whose `<` nesting the lexer bounds.
        Item::Config(_)
        | Item::Type(_)
        | Item::Entity(_)
        | Item::Failure(_)
        | Item::Event(_)
        | Item::Error(_) => {}
    }
}

/// Bounds each statement of a block at `depth` (the block's own nesting).
/// An `if` or `for` bounds its blocks one level deeper and its condition
/// or list on its own, so each node is walked once and what is replaced is
/// the innermost part that is too deep.
fn bound_block(block: &mut Block, depth: u32, diags: &mut Vec<Diagnostic>) {
    for stmt in &mut block.stmts {
        match &mut stmt.kind {
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                bound_expr_at(cond, depth + 1, diags);
                bound_block(then_block, depth + 1, diags);
                if let Some(b) = else_block {
                    bound_block(b, depth + 1, diags);
                }
            }
            StmtKind::For { iterable, body, .. } => {
                bound_expr_at(iterable, depth + 1, diags);
                bound_block(body, depth + 1, diags);
            }
            _ => {
                if let Some(at) = too_deep(Node::Stmt(stmt), depth) {
                    diags.push(diagnostic(at));
                    stmt.kind = StmtKind::Error;
                }
            }
        }
    }
}

fn bound_settings(settings: &mut [Setting], diags: &mut Vec<Diagnostic>) {
    for s in settings {
        match &mut s.value {
            SettingValue::Expr(e) => bound_expr(e, diags),
            SettingValue::Record(inner, _) => bound_settings(inner, diags),
            SettingValue::Block(b) => bound_block(b, 1, diags),
        }
    }
}

fn bound_expr(e: &mut Expr, diags: &mut Vec<Diagnostic>) {
    bound_expr_at(e, 1, diags);
}

fn bound_expr_at(e: &mut Expr, depth: u32, diags: &mut Vec<Diagnostic>) {
    if let Some(at) = too_deep(Node::Expr(e), depth) {
        diags.push(diagnostic(at));
        e.kind = ExprKind::Error;
    }
}

fn bound_test_stmt(s: &mut TestStmt, diags: &mut Vec<Diagnostic>) {
    let mut deepest = None;
    {
        let mut check = |e: &Expr| {
            if deepest.is_none() {
                deepest = too_deep(Node::Expr(e), 1);
            }
        };
        match &s.kind {
            TestStmtKind::Var { value, .. } => check(value),
            TestStmtKind::Assert(e) | TestStmtKind::Advance(e) => check(e),
            TestStmtKind::Delivery(d) => match &d.target {
                DeliveryTarget::Call { args, .. } => args.iter().for_each(&mut check),
                DeliveryTarget::Deliver { event, .. } => check(event),
            },
            TestStmtKind::Error => {}
        }
    }
    if let Some(at) = deepest {
        diags.push(diagnostic(at));
        s.kind = TestStmtKind::Error;
    }
}

fn diagnostic(at: Span) -> Diagnostic {
    Diagnostic::error(
        "syntax.too_deep",
        at,
        format!("this statement nests more than {MAX_TREE_DEPTH} levels deep"),
    )
    .with_label("this part is nested too deep to read")
    .with_reason(format!(
        "Jadpo reads at most {MAX_TREE_DEPTH} nested operators, brackets and blocks in one statement, counted together"
    ))
    .with_fix("split the expression into several `var`s")
}

#[derive(Clone, Copy)]
enum Node<'a> {
    Stmt(&'a Stmt),
    Expr(&'a Expr),
}

/// The span of the first node deeper than [`MAX_TREE_DEPTH`] in the tree
/// under `root` (at `depth`), or `None` when the tree fits.
fn too_deep(root: Node<'_>, depth: u32) -> Option<Span> {
    let mut stack = vec![(root, depth)];
    while let Some((node, depth)) = stack.pop() {
        if depth > MAX_TREE_DEPTH {
            return Some(match node {
                Node::Stmt(s) => s.span,
                Node::Expr(e) => head(e),
            });
        }
        let next = depth + 1;
        match node {
            Node::Stmt(s) => push_stmt(s, next, &mut stack),
            Node::Expr(e) => push_expr(e, next, &mut stack),
        }
    }
    None
}

/// The smallest span that shows where a too-deep part starts: an operator
/// or `attempt` before its operand, else the part itself.
fn head(e: &Expr) -> Span {
    match &e.kind {
        ExprKind::Unary(_, inner) | ExprKind::Attempt(inner) if inner.span.start > e.span.start => {
            Span::new(e.span.file, e.span.start, inner.span.start)
        }
        _ => e.span,
    }
}

fn push_stmt<'a>(s: &'a Stmt, depth: u32, stack: &mut Vec<(Node<'a>, u32)>) {
    let mut expr = |e: &'a Expr| stack.push((Node::Expr(e), depth));
    match &s.kind {
        StmtKind::Var { value, .. } | StmtKind::Assign { value, .. } => expr(value),
        StmtKind::If {
            cond,
            then_block,
            else_block,
        } => {
            expr(cond);
            push_block(then_block, depth, stack);
            if let Some(b) = else_block {
                push_block(b, depth, stack);
            }
        }
        StmtKind::For { iterable, body, .. } => {
            expr(iterable);
            push_block(body, depth, stack);
        }
        StmtKind::Return(Some(e)) | StmtKind::Expr(e) => expr(e),
        StmtKind::Reject(r) => {
            for f in r.fields.iter().flatten() {
                expr(&f.value);
            }
        }
        StmtKind::Emit(e) => {
            for f in &e.fields {
                expr(&f.value);
            }
            for s in e.options.iter().flatten() {
                push_setting(s, depth, stack);
            }
        }
        StmtKind::Return(None) | StmtKind::Error => {}
    }
}

fn push_block<'a>(b: &'a Block, depth: u32, stack: &mut Vec<(Node<'a>, u32)>) {
    stack.extend(b.stmts.iter().map(|s| (Node::Stmt(s), depth)));
}

fn push_setting<'a>(s: &'a Setting, depth: u32, stack: &mut Vec<(Node<'a>, u32)>) {
    match &s.value {
        SettingValue::Expr(e) => stack.push((Node::Expr(e), depth)),
        SettingValue::Record(inner, _) => {
            for s in inner {
                push_setting(s, depth + 1, stack);
            }
        }
        SettingValue::Block(b) => push_block(b, depth, stack),
    }
}

fn push_expr<'a>(e: &'a Expr, depth: u32, stack: &mut Vec<(Node<'a>, u32)>) {
    let mut expr = |e: &'a Expr| stack.push((Node::Expr(e), depth));
    match &e.kind {
        ExprKind::Field(inner, _) | ExprKind::Unary(_, inner) | ExprKind::Attempt(inner) => {
            expr(inner)
        }
        ExprKind::Call { callee, args } => {
            expr(callee);
            args.iter().for_each(expr);
        }
        ExprKind::Construct { fields, .. }
        | ExprKind::Create { fields, .. }
        | ExprKind::Query {
            settings: fields, ..
        } => fields.iter().for_each(|f| expr(&f.value)),
        ExprKind::List(items) => items.iter().for_each(expr),
        ExprKind::Binary(_, l, r) => {
            expr(l);
            expr(r);
        }
        ExprKind::Match { scrutinee, arms } => {
            expr(scrutinee);
            arms.iter().for_each(|a| expr(&a.body));
        }
        ExprKind::Update { filter, set, .. } => {
            expr(&filter.value);
            set.iter().for_each(|f| expr(&f.value));
        }
        ExprKind::Delete { filter, .. } => expr(&filter.value),
        ExprKind::Reject(r) => {
            for f in r.fields.iter().flatten() {
                expr(&f.value);
            }
        }
        ExprKind::Block(b) => push_block(b, depth, stack),
        ExprKind::Int(_)
        | ExprKind::Decimal(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::None
        | ExprKind::Duration(..)
        | ExprKind::Path(_)
        | ExprKind::Count { .. }
        | ExprKind::Propagate
        | ExprKind::Error => {}
    }
}
