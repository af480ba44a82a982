//! `emit Event { fields } with { options }`: the event, its fields (checked
//! like a construction) and the known options with their types. Range checks
//! on literal options belong to the `follow_up.*` rules.

use crate::ast::{self, ExprKind, SettingValue};
use crate::diag::Diagnostic;
use crate::ir::{self, OptionValue};

use super::body::Cx;
use super::tables::{Prim, Ty};
use super::Resolver;
use crate::intern::Name;
use crate::ir::code;
use crate::span::Span;

pub const OPTIONS: [&str; 7] = [
    "queue",
    "priority",
    "max_attempts",
    "tags",
    "run_at",
    "unique",
    "metadata",
];
const UNIQUE: [&str; 2] = ["by_args", "states"];

impl<'a> Resolver<'_, 'a> {
    pub(super) fn emit_stmt(
        &mut self,
        cx: &mut Cx,
        e: &ast::EmitStmt,
        out: &mut ir::Block,
    ) -> Option<code::Emit> {
        let impure = self.impure(cx, "purity.emit", e.span, "emit an event");
        let found = self.find_event(cx.unit, &e.event);
        let field_code = match found.and_then(|(_, t)| self.record_of(t).map(|d| (t, d))) {
            Some((t, defs)) => {
                self.check_inits(cx, e.event.span, &Ty::Named(t), defs, &e.fields, out)
            }
            None => {
                self.field_values_only(cx, &e.fields, out);
                Vec::new()
            }
        };
        let (options, option_code) =
            self.emit_options(cx, e.options.as_deref().unwrap_or(&[]), out);
        let (Some((event, _)), false) = (found, impure) else {
            return None;
        };
        let fields = e
            .fields
            .iter()
            .map(|f| ir::EmitField {
                name: f.name.name,
                span: f.span,
                value_span: f.value.span,
                literal: match &f.value.kind {
                    ExprKind::Str(s) => Some(s.clone()),
                    _ => None,
                },
            })
            .collect();
        out.nodes.push(ir::Node::Emit(ir::Emit {
            span: e.span,
            head: Span::new(e.span.file, e.span.start, e.event.span.end),
            event,
            fields,
            options,
        }));
        Some(code::Emit {
            event,
            fields: field_code,
            options: option_code,
            span: e.span,
        })
    }

    fn emit_options(
        &mut self,
        cx: &mut Cx,
        settings: &[ast::Setting],
        out: &mut ir::Block,
    ) -> (Vec<ir::EmitOption>, Vec<(Name, code::OptionCode)>) {
        let mut lowered = Vec::new();
        let mut code = Vec::new();
        for (i, s) in settings.iter().enumerate() {
            let key = s.key.name.as_str();
            if let Some(first) = settings[..i].iter().find(|o| o.key.name == s.key.name) {
                self.report_duplicate("option", s.key, first.key.span);
                continue;
            }
            if !OPTIONS.contains(&key) {
                self.report_unknown_key(s.key, "emit option", &OPTIONS);
                continue;
            }
            if let Some(c) = self.check_option(cx, key, &s.value, out) {
                if self.code {
                    code.push((s.key.name, c));
                }
            }
            lowered.push(ir::EmitOption {
                key: s.key.name,
                key_span: s.key.span,
                value: option_value(&s.value),
                span: s.span,
                value_span: s.value.span(),
            });
        }
        (lowered, code)
    }

    fn check_option(
        &mut self,
        cx: &mut Cx,
        key: &str,
        value: &SettingValue,
        out: &mut ir::Block,
    ) -> Option<code::OptionCode> {
        let text = Ty::Prim(Prim::Text);
        let expected = match key {
            "queue" => Some(text),
            "priority" | "max_attempts" => Some(Ty::Prim(Prim::Int)),
            "tags" => Some(Ty::List(Box::new(text))),
            "run_at" => Some(Ty::Prim(Prim::Instant)),
            _ => None,
        };
        match (value, expected) {
            (SettingValue::Expr(e), Some(t)) => {
                Some(code::OptionCode::Expr(self.expr(cx, e, Some(&t), out).code))
            }
            (SettingValue::Record(items, _), None) if key == "unique" => {
                Some(self.unique_option(cx, items, out))
            }
            (SettingValue::Record(items, _), None) => {
                let mut fields = Vec::new();
                for item in items {
                    if let Some(c) = self.check_option(cx, "metadata", &item.value, out) {
                        fields.push((item.key.name, c));
                    }
                }
                Some(code::OptionCode::Record(fields))
            }
            (SettingValue::Expr(e), None) if key == "metadata" => {
                Some(code::OptionCode::Expr(self.expr(cx, e, None, out).code))
            }
            (v, _) => {
                self.report_option_shape(key, v);
                None
            }
        }
    }

    fn unique_option(
        &mut self,
        cx: &mut Cx,
        items: &[ast::Setting],
        out: &mut ir::Block,
    ) -> code::OptionCode {
        let mut fields = Vec::new();
        for item in items {
            let expected = match item.key.name.as_str() {
                "by_args" => Ty::Prim(Prim::Bool),
                "states" => Ty::List(Box::new(Ty::Prim(Prim::Text))),
                _ => {
                    self.report_unknown_key(item.key, "`unique` option", &UNIQUE);
                    continue;
                }
            };
            match &item.value {
                SettingValue::Expr(e) => {
                    let c = self.expr(cx, e, Some(&expected), out).code;
                    fields.push((item.key.name, code::OptionCode::Expr(c)));
                }
                v => self.report_option_shape(item.key.name.as_str(), v),
            }
        }
        code::OptionCode::Record(fields)
    }

    fn report_option_shape(&mut self, key: &str, v: &SettingValue) {
        let wanted = match key {
            "queue" => "a Text value",
            "priority" | "max_attempts" => "an Int value",
            "tags" | "states" => "a list of Text",
            "run_at" => "an Instant, such as `clock.now + 1h`",
            "by_args" => "`true` or `false`",
            "unique" => "a record such as `{ by_args: true }`",
            _ => "a value or a record",
        };
        let d = Diagnostic::error("type.option", v.span(), format!("`{key}` needs {wanted}"))
            .with_fix(format!("write {wanted} after `{key}:`"));
        self.error(d);
    }
}

/// An option's value as the follow-up rules judge it.
fn option_value(v: &SettingValue) -> OptionValue {
    match v {
        SettingValue::Expr(e) => expr_option(e),
        SettingValue::Record(items, _) => OptionValue::Record(
            items
                .iter()
                .map(|s| (s.key.name, option_value(&s.value), s.value.span()))
                .collect(),
        ),
        SettingValue::Block(_) => OptionValue::Computed,
    }
}

fn expr_option(e: &ast::Expr) -> OptionValue {
    match &e.kind {
        ExprKind::Int(n) => OptionValue::Int(*n),
        ExprKind::Unary(ast::UnOp::Neg, inner) => match inner.kind {
            ExprKind::Int(n) => OptionValue::Int(n.saturating_neg()),
            _ => OptionValue::Computed,
        },
        ExprKind::Str(s) => OptionValue::Str(s.clone()),
        ExprKind::Bool(b) => OptionValue::Bool(*b),
        ExprKind::List(items) => {
            OptionValue::List(items.iter().map(|i| (expr_option(i), i.span)).collect())
        }
        _ => OptionValue::Computed,
    }
}
