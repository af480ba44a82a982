//! Moved from `src/load/fields.rs`.

use jadpo_compiler::load::fields::*;

#[test]
fn durations() {
    assert_eq!(parse_duration("24h"), Some(86_400_000));
    assert_eq!(parse_duration("500ms"), Some(500));
    assert_eq!(parse_duration("1h30m"), Some(5_400_000));
    assert_eq!(parse_duration("5m"), Some(300_000));
    assert_eq!(parse_duration("banana"), None);
    assert_eq!(parse_duration("24"), None);
    assert_eq!(parse_duration("h"), None);
    assert_eq!(parse_duration("99999999999999999999h"), None);
}

#[test]
fn names() {
    assert!(is_package_name("stripe"));
    assert!(!is_package_name("Stripe"));
    assert!(!is_package_name("../x"));
    assert!(is_operation_name("customers.create"));
    assert!(!is_operation_name("customers..create"));
    assert!(is_identifier("CardDeclined"));
}
