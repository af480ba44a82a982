//! The local names in scope at a byte offset, read from the parsed file:
//! the parameters of the enclosing action or function, the `var`s declared
//! before the cursor in the blocks that enclose it (not those of a block
//! already closed), a `for` loop's item inside its body, a `success(v)`
//! arm's value inside the arm, and a test's `var`s above the cursor.

use jadpo_compiler::ast::{
    Block, Expr, ExprKind, Item, Pattern, SourceFileAst, StmtKind, TestStmtKind,
};
use jadpo_compiler::span::Span;

/// A name in scope and what it is (its written type, or how it is bound).
pub struct Local {
    pub name: String,
    pub detail: String,
}

/// The locals at `offset`, outermost first; `text` is the parsed text.
pub fn locals(ast: &SourceFileAst, text: &str, offset: u32) -> Vec<Local> {
    let mut found = Scope {
        text,
        at: offset,
        out: Vec::new(),
    };
    for item in &ast.items {
        match item {
            Item::Action(a) if contains(a.span, offset) => {
                found.params(&a.params);
                found.block(&a.body);
            }
            Item::Function(f) if contains(f.span, offset) => {
                found.params(&f.params);
                found.block(&f.body);
            }
            Item::Test(t) if contains(t.span, offset) => found.test(&t.body),
            _ => {}
        }
    }
    found.out
}

fn contains(span: Span, at: u32) -> bool {
    span.start <= at && at <= span.end
}

struct Scope<'t> {
    text: &'t str,
    at: u32,
    out: Vec<Local>,
}

impl Scope<'_> {
    fn add(&mut self, name: &str, detail: String) {
        self.out.push(Local {
            name: name.to_string(),
            detail,
        });
    }

    fn written(&self, span: Span) -> String {
        self.text
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
            .to_string()
    }

    fn params(&mut self, params: &[jadpo_compiler::ast::Param]) {
        for p in params {
            let ty = self.written(p.ty.span);
            self.add(p.name.name.as_str(), ty);
        }
    }

    fn block(&mut self, block: &Block) {
        if !contains(block.span, self.at) {
            return;
        }
        let at = self.at;
        for stmt in block.stmts.iter().take_while(|s| s.span.start < at) {
            let inside = contains(stmt.span, self.at);
            match &stmt.kind {
                StmtKind::Var { name, ty, .. } if !inside => {
                    let detail = ty.as_ref().map_or("var".into(), |t| self.written(t.span));
                    self.add(name.name.as_str(), detail);
                }
                StmtKind::Var { value, .. } | StmtKind::Assign { value, .. } => self.expr(value),
                StmtKind::If {
                    cond,
                    then_block,
                    else_block,
                } => {
                    self.expr(cond);
                    self.block(then_block);
                    if let Some(b) = else_block {
                        self.block(b);
                    }
                }
                StmtKind::For {
                    item,
                    iterable,
                    body,
                    ..
                } => {
                    self.expr(iterable);
                    if contains(body.span, self.at) {
                        self.add(item.name.as_str(), "for item".into());
                        self.block(body);
                    }
                }
                StmtKind::Return(Some(e)) | StmtKind::Expr(e) => self.expr(e),
                _ => {}
            }
        }
    }

    /// The bindings of the match arms and blocks inside `e` that hold the
    /// cursor.
    fn expr(&mut self, e: &Expr) {
        if !contains(e.span, self.at) {
            return;
        }
        match &e.kind {
            ExprKind::Match { scrutinee, arms } => {
                self.expr(scrutinee);
                let at = self.at;
                for arm in arms.iter().filter(|a| contains(a.span, at)) {
                    if let Pattern::Success(v) = &arm.pattern {
                        self.add(v.name.as_str(), "success value".into());
                    }
                    self.expr(&arm.body);
                }
            }
            ExprKind::Block(b) => self.block(b),
            ExprKind::Field(inner, _) | ExprKind::Attempt(inner) | ExprKind::Unary(_, inner) => {
                self.expr(inner);
            }
            ExprKind::Binary(_, l, r) => {
                self.expr(l);
                self.expr(r);
            }
            ExprKind::Call { callee, args } => {
                self.expr(callee);
                args.iter().for_each(|a| self.expr(a));
            }
            ExprKind::List(items) => items.iter().for_each(|a| self.expr(a)),
            ExprKind::Construct { fields, .. } | ExprKind::Create { fields, .. } => {
                fields.iter().for_each(|f| self.expr(&f.value));
            }
            ExprKind::Update { filter, set, .. } => {
                self.expr(&filter.value);
                set.iter().for_each(|f| self.expr(&f.value));
            }
            ExprKind::Delete { filter, .. } => self.expr(&filter.value),
            ExprKind::Query { settings, .. } => settings.iter().for_each(|f| self.expr(&f.value)),
            _ => {}
        }
    }

    fn test(&mut self, body: &[jadpo_compiler::ast::TestStmt]) {
        let at = self.at;
        for stmt in body.iter().take_while(|s| s.span.end <= at) {
            match &stmt.kind {
                TestStmtKind::Var { name, .. } => self.add(name.name.as_str(), "var".into()),
                TestStmtKind::Delivery(d) => {
                    if let Some(bind) = &d.bind {
                        self.add(bind.name.as_str(), "delivery result".into());
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jadpo_compiler::span::FileId;

    /// The names in scope at the `|` of `text`.
    fn names(text: &str) -> Vec<String> {
        let at = text.find('|').expect("a cursor");
        let text = text.replacen('|', "", 1);
        let (ast, _) = jadpo_compiler::parser::parse_file(FileId(0), &text);
        locals(&ast, &text, at as u32)
            .into_iter()
            .map(|l| l.name)
            .collect()
    }

    #[test]
    fn a_closed_block_s_vars_are_out_of_scope() {
        let text = "action a(n: Int) -> Int {\n    var x = 1\n    if n > 0 {\n        var inner = 2\n    }\n    |\n    var later = 3\n    return x\n}\n";
        assert_eq!(names(text), ["n", "x"]);
        let text = "action a(n: Int) -> Int {\n    if n > 0 {\n        var inner = 2\n        |\n    }\n    return n\n}\n";
        assert_eq!(names(text), ["n", "inner"]);
    }

    #[test]
    fn loop_items_and_success_values_inside_their_bodies() {
        let text = "action a(xs: List<Int>) -> Int {\n    for x in xs max 3 {\n        |\n    }\n    return 0\n}\n";
        assert_eq!(names(text), ["xs", "x"]);
        let text = "action a(id: Text) -> Int {\n    var r = match stripe.customers.get(id) {\n        success(c) => { |\n            1 }\n        failure stripe.Missing => 0\n    }\n    return r\n}\n";
        assert_eq!(names(text), ["id", "c"]);
    }

    #[test]
    fn a_var_is_not_in_scope_in_its_own_value() {
        let text = "function f(n: Int) -> Int {\n    var x = n + |1\n    return x\n}\n";
        assert_eq!(names(text), ["n"]);
    }
}
