//! The HTTP binding's pure pieces: wire cases, path templates, base URLs.

use jadpo_compiler::http::{base_url_problem, parse_path, Case, PathPart};

#[test]
fn cases_write_snake_names() {
    assert_eq!(Case::Camel.apply("payment_method_id"), "paymentMethodId");
    assert_eq!(Case::Pascal.apply("to"), "To");
    assert_eq!(Case::Pascal.apply("message_stream"), "MessageStream");
    assert_eq!(Case::Snake.apply("a_b"), "a_b");
}

#[test]
fn paths_split_into_text_fields_and_settings() {
    assert_eq!(
        parse_path("/2010-04-01/Accounts/{$account_sid}/Messages.json").expect("a path"),
        vec![
            PathPart::Text("/2010-04-01/Accounts/".into()),
            PathPart::Setting("account_sid".into()),
            PathPart::Text("/Messages.json".into()),
        ]
    );
    assert_eq!(
        parse_path("/v1/payment_methods/{payment_method}/attach").expect("a path")[1],
        PathPart::Field("payment_method".into())
    );
    for bad in ["v1", "/a/{b", "/a/b}", "/a/{B}", "/a?x=1", "/{}"] {
        assert!(parse_path(bad).is_err(), "{bad}");
    }
}

#[test]
fn base_urls_are_https_except_on_loopback() {
    assert_eq!(base_url_problem("https://api.stripe.com"), None);
    assert_eq!(base_url_problem("http://127.0.0.1:9000"), None);
    assert_eq!(base_url_problem("http://localhost:9000/x"), None);
    assert_eq!(base_url_problem("http://[::1]:9000"), None);
    assert!(base_url_problem("http://api.stripe.com").is_some());
    assert!(base_url_problem("ftp://x").is_some());
    assert!(base_url_problem("https://u:p@x").is_some());
    assert!(base_url_problem("https://x/?a").is_some());
}
