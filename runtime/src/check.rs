//! Constraints checked when the code runs: a validated construction `T(e)`
//! of a computed value (which fails with `InvalidValue`), and the fields of
//! a construction (where a broken constraint is a fault). The same
//! constraints the compiler checks against literals: `min`, `max`,
//! `min_length`, `max_length`, `pattern`, `format: email`.

use jadpo_compiler::ir::{Ty, Types};
use rust_decimal::prelude::ToPrimitive;

use crate::value::Value;

/// Whether `v` fits every constraint of `ty`; the problem in words if not.
pub fn check_value(types: Types<'_>, ty: &Ty, v: &Value) -> Result<(), String> {
    if matches!(v, Value::None) {
        return Ok(());
    }
    for b in types.bounds_of(ty) {
        let number = match v {
            Value::Int(n) => Some(*n as f64),
            Value::Decimal(d) => d.to_f64(),
            _ => None,
        };
        if let Some(n) = number {
            if let Some(min) = b.min.filter(|m| n < *m) {
                return Err(format!("{n} is below the minimum {min}"));
            }
            if let Some(max) = b.max.filter(|m| n > *m) {
                return Err(format!("{n} is above the maximum {max}"));
            }
        }
        let length = match v {
            Value::Text(s) => Some(s.chars().count() as u64),
            Value::List(items) => Some(items.len() as u64),
            _ => None,
        };
        if let Some(len) = length {
            if let Some(max) = b.max_length.filter(|m| len > *m) {
                return Err(format!("its length {len} is more than max_length {max}"));
            }
            if let Some(min) = b.min_length.filter(|m| len < *m) {
                return Err(format!("its length {len} is less than min_length {min}"));
            }
        }
        if let Value::Text(s) = v {
            if b.email && !jadpo_compiler::pattern::is_email(s) {
                return Err("it is not an email address".to_string());
            }
            if let Some(p) = &b.pattern {
                if jadpo_compiler::pattern::matches(p, s) == Some(false) {
                    return Err(format!("it does not match the pattern `{p}`"));
                }
            }
        }
    }
    Ok(())
}
