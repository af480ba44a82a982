//! The binary operators on values: checked arithmetic (an overflow or a
//! division by zero is a fault, never a wrapped or rounded number),
//! `Instant` with `Duration`, `+` joining texts, and comparisons.

use std::cmp::Ordering;

use jadpo_compiler::ir::code::BinOp;
use rust_decimal::Decimal;

use crate::eval::{fault, R};
use crate::value::{Instant, Value};

pub fn binary(op: BinOp, a: &Value, b: &Value) -> R<Value> {
    match op {
        BinOp::Eq => Ok(Value::Bool(a == b)),
        BinOp::Ne => Ok(Value::Bool(a != b)),
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            let Some(order) = compare(a, b) else {
                return fault(format!("{a:?} and {b:?} cannot be ordered"));
            };
            Ok(Value::Bool(match op {
                BinOp::Lt => order == Ordering::Less,
                BinOp::Le => order != Ordering::Greater,
                BinOp::Gt => order == Ordering::Greater,
                _ => order != Ordering::Less,
            }))
        }
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => arithmetic(op, a, b),
        BinOp::And | BinOp::Or => Ok(Value::Bool(false)),
    }
}

fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    Some(match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Text(x), Value::Text(y)) => x.cmp(y),
        (Value::Instant(x), Value::Instant(y)) => x.cmp(y),
        (Value::Duration(x), Value::Duration(y)) => x.cmp(y),
        _ => decimal(a)?.cmp(&decimal(b)?),
    })
}

fn decimal(v: &Value) -> Option<Decimal> {
    match v {
        Value::Int(n) => Some(Decimal::from(*n)),
        Value::Decimal(d) => Some(*d),
        _ => None,
    }
}

fn arithmetic(op: BinOp, a: &Value, b: &Value) -> R<Value> {
    let overflow = || fault::<Value>(format!("{a:?} {} {b:?} overflows", symbol(op)));
    match (op, a, b) {
        (BinOp::Div, Value::Int(_) | Value::Decimal(_), Value::Int(0)) => fault("division by zero"),
        (_, Value::Int(x), Value::Int(y)) => {
            let r = match op {
                BinOp::Add => x.checked_add(*y),
                BinOp::Sub => x.checked_sub(*y),
                BinOp::Mul => x.checked_mul(*y),
                _ => x.checked_div(*y),
            };
            r.map(Value::Int).map_or_else(overflow, Ok)
        }
        (_, Value::Text(x), Value::Text(y)) if op == BinOp::Add => {
            Ok(Value::text(&format!("{x}{y}")))
        }
        (BinOp::Add | BinOp::Sub, Value::Instant(t), Value::Duration(ms)) => {
            let nanos = i128::from(*ms) * 1_000_000;
            let r = if op == BinOp::Add {
                t.0.checked_add(nanos)
            } else {
                t.0.checked_sub(nanos)
            };
            r.map(|n| Value::Instant(Instant(n)))
                .map_or_else(overflow, Ok)
        }
        (BinOp::Sub, Value::Instant(x), Value::Instant(y)) => {
            let ms = (x.0 - y.0) / 1_000_000;
            i64::try_from(ms)
                .map(Value::Duration)
                .map_or_else(|_| overflow(), Ok)
        }
        (BinOp::Add | BinOp::Sub, Value::Duration(x), Value::Duration(y)) => {
            let r = if op == BinOp::Add {
                x.checked_add(*y)
            } else {
                x.checked_sub(*y)
            };
            r.map(Value::Duration).map_or_else(overflow, Ok)
        }
        (BinOp::Mul | BinOp::Div, Value::Duration(x), Value::Int(y)) => {
            let r = if op == BinOp::Mul {
                x.checked_mul(*y)
            } else {
                x.checked_div(*y)
            };
            r.map(Value::Duration).map_or_else(overflow, Ok)
        }
        _ => {
            let (Some(x), Some(y)) = (decimal(a), decimal(b)) else {
                return fault(format!("`{}` cannot combine {a:?} and {b:?}", symbol(op)));
            };
            let r = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                _ if y.is_zero() => return fault("division by zero"),
                _ => x.checked_div(y),
            };
            r.map(Value::Decimal).map_or_else(overflow, Ok)
        }
    }
}

fn symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        _ => "/",
    }
}
