//! Values: their canonical encoding, fingerprints and the one written
//! form of decimals, instants and durations.

use jadpo_compiler::intern::Name;
use jadpo_runtime::value::{instant_text, parse_instant, Instant, Value};
use rust_decimal::Decimal;
use serde_json::Value as Json;

#[test]
fn canonical_bytes_sort_members_and_omit_absent_fields() {
    let v = Value::record(vec![
        (Name::new("b"), Value::Int(2)),
        (Name::new("a"), Value::text("x\u{1}\"")),
        (Name::new("c"), Value::None),
    ]);
    let text = String::from_utf8(v.canonical()).unwrap_or_default();
    assert_eq!(text, r#"{"a":"x\u0001\"","b":2,"c":null}"#);
}

#[test]
fn decimals_instants_and_durations_have_one_form() {
    let d: Decimal = "12.500".parse().unwrap_or_default();
    assert_eq!(Value::Decimal(d).to_json(), Json::String("12.5".into()));
    let at = parse_instant("2026-01-15T12:00:00Z").unwrap_or(Instant(0));
    assert_eq!(instant_text(at), "2026-01-15T12:00:00.000000000Z");
    assert_eq!(Value::Duration(3_600_000).to_json(), Json::from(3_600_000));
    assert_eq!(Value::Duration(90_000).as_text(), "90s");
    assert_eq!(Value::Duration(1_500).as_text(), "1500ms");
}

/// The direct encoder and the `serde_jcs` crate agree on every shape
/// of value, strings with every escape included.
#[test]
fn agrees_with_serde_jcs() {
    let texts = [
        "",
        "plain",
        "quote\" back\\ slash",
        "\u{1}\u{8}\t\n\u{c}\r\u{1f}",
        "é ü 😀 /",
        "\u{7f}",
    ];
    let mut values: Vec<Value> = texts.iter().map(|t| Value::text(t)).collect();
    values.extend([
        Value::Int(0),
        Value::Int(-17),
        Value::Int(i64::MIN),
        Value::Int(i64::MAX),
        Value::Int(9_007_199_254_740_991),
        Value::Bool(true),
        Value::None,
        Value::Duration(1500),
        Value::Decimal("10.250".parse().unwrap_or_default()),
        Value::Instant(Instant(1_768_478_400_123_456_789)),
        Value::Uuid(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef),
    ]);
    let list = Value::List(values.clone().into());
    let nested = Value::record(vec![
        (Name::new("zeta"), list.clone()),
        (
            Name::new("alpha"),
            Value::record(vec![
                (Name::new("b"), Value::Int(1)),
                (Name::new("a"), Value::text("x")),
            ]),
        ),
        (Name::new("Upper"), Value::Bool(false)),
        (Name::new("_under"), Value::None),
    ]);
    values.push(list);
    values.push(nested);
    for v in &values {
        let reference = serde_jcs::to_vec(&v.to_json()).unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&v.canonical()),
            String::from_utf8_lossy(&reference),
            "{v:?}"
        );
    }
}

#[test]
fn field_order_does_not_change_a_fingerprint() {
    let a = Value::record(vec![
        (Name::new("x"), Value::Int(1)),
        (Name::new("y"), Value::Int(2)),
    ]);
    let b = Value::record(vec![
        (Name::new("y"), Value::Int(2)),
        (Name::new("x"), Value::Int(1)),
    ]);
    assert_eq!(a.fingerprint(), b.fingerprint());
    assert_ne!(a.fingerprint(), Value::Int(1).fingerprint());
}
