//! Worst-case JSON size of a value, from its type's declared bounds (used for
//! `follow_up.too_large` on emitted events).
//!
//! The encoding, in bytes, of the largest value a type admits:
//!
//! | type | worst-case bytes |
//! |---|---|
//! | `Text { max_length: N }` | `2 + 6 * N`: two quotes, every character escaped as `\uXXXX` |
//! | `Int` | 20 (`-9223372036854775808`) |
//! | `Decimal` | 40 (sign, up to 38 digits, point) |
//! | `Bool` | 5 (`false`) |
//! | `Uuid` | 38 (36 characters and two quotes) |
//! | `Instant` | 32 (a quoted RFC 3339 timestamp with nanoseconds and offset) |
//! | `Duration` | 20 (milliseconds as an integer) |
//! | `Unit`, `none` | 4 (`null`) |
//! | `Enum { a bc }` | `2 + longest variant name` (a quoted string, no escapes needed) |
//! | `Object { f: T ... }` | `2 + sum of (2 + len(key) + 1 + size(T)) + commas between fields` |
//! | `List<T> { max_length: N }` | `2 + N * (size(T) + 1)` (brackets, elements, commas) |
//! | `T?` | `max(size(T), 4)` |
//!
//! A declared type has the size of its definition, with the smallest
//! `max_length` among its own and its base's bounds. The size is unknown
//! (`None`) when any part is unbounded: `Text` or `List` without `max_length`,
//! or a type that could not be resolved.

use super::tables::{Prim, Ty, TypeKind};
use super::Tables;

const NULL_BYTES: u64 = 4;

/// The worst-case JSON size of a field's value, or `None` when unbounded.
/// An `optional` field counts as present: its worst case includes it.
pub(crate) fn max_json_bytes(r: &Tables<'_>, ty: &Ty, optional: bool) -> Option<u64> {
    let _ = optional;
    size(r, ty, 0)
}

fn size(r: &Tables<'_>, ty: &Ty, depth: u32) -> Option<u64> {
    if depth > 16 {
        return None;
    }
    let max_length = r.bounds_of(ty).filter_map(|b| b.max_length).min();
    match r.base_of(ty) {
        Ty::Prim(p) => prim_size(*p, max_length),
        Ty::List(inner) => {
            let n = max_length?;
            let each = size(r, inner, depth + 1)?;
            Some(2 + n.saturating_mul(each + 1))
        }
        Ty::Optional(inner) => size(r, inner, depth + 1).map(|s| s.max(NULL_BYTES)),
        Ty::NoneValue => Some(NULL_BYTES),
        Ty::Named(t) => named_size(r, &r.types[*t].kind, depth),
        Ty::Error | Ty::Bounded(..) => None,
    }
}

fn prim_size(p: Prim, max_length: Option<u64>) -> Option<u64> {
    Some(match p {
        Prim::Text => 2 + 6 * max_length?,
        Prim::Int => 20,
        Prim::Decimal => 40,
        Prim::Bool => 5,
        Prim::Uuid => 38,
        Prim::Instant => 32,
        Prim::Duration => 20,
        Prim::Unit => NULL_BYTES,
    })
}

fn named_size(r: &Tables<'_>, kind: &TypeKind, depth: u32) -> Option<u64> {
    match kind {
        TypeKind::Enum(variants) => {
            let longest = variants.iter().map(|v| v.as_str().len() as u64).max()?;
            Some(2 + longest)
        }
        TypeKind::Record(fields) => {
            let mut total = 2 + (fields.len() as u64).saturating_sub(1);
            for f in fields {
                let value = size(r, &f.ty, depth + 1)?;
                total += 2 + f.name.as_str().len() as u64 + 1 + value;
            }
            Some(total)
        }
        TypeKind::Alias(_) | TypeKind::Pending => None,
    }
}
