//! The bundled provider packages' safety-relevant facts, pinned. Every step
//! rule and every runtime decision stands on these (which calls take a key,
//! how long a key lives, whether a 5xx is replayed, what "key in use" and
//! "different request" look like), and each was checked against the
//! provider's documentation (the package's README, "Facts and sources").
//! A later edit that weakens one must fail here and be argued for.

use jadpo_compiler::load::{load_project, LoadedPackage, LoadedProject, MemLoader};
use jadpo_compiler::manifest::{AnswerMatch, NewKeyOn, OperationDecl};

const HOUR: u64 = 3_600_000;

/// How an operation is sent: a read; under the provider's key, whose window
/// (hours) is given; safe to repeat as it is (`keyed: false`); or unkeyed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Sent {
    Read,
    Keyed(u64),
    Repeat,
    Unkeyed,
}

fn project() -> LoadedProject {
    let mem = MemLoader::new()
        .with("app/jadpo.yaml", "app: facts\npackages:\n  stripe: \"3\"\n  adyen: \"1\"\n  paypal: \"2\"\n  postmark: \"1\"\n  twilio: \"1\"\n  github: \"1\"\n")
        .with("app/src/app.jadpo", "type Unused = Int\n");
    let p = load_project(&mem, "app").expect("the bundled packages load");
    let errors: Vec<_> = p.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    p
}

fn package<'p>(p: &'p LoadedProject, name: &str) -> &'p LoadedPackage {
    p.packages
        .iter()
        .find(|k| k.manifest.name.node == name)
        .unwrap_or_else(|| panic!("{name} is bundled"))
}

fn sent(pkg: &LoadedPackage, op: &OperationDecl) -> Sent {
    let idem = pkg.manifest.provider.idempotency.as_ref();
    match (op.changes, op.idempotent, op.keyed, idem) {
        (false, ..) => Sent::Read,
        (true, true, true, Some(i)) => {
            Sent::Keyed(op.window_ms.as_ref().map_or(i.window_ms.node, |w| w.node) / HOUR)
        }
        (true, true, false, _) => Sent::Repeat,
        _ => Sent::Unkeyed,
    }
}

/// Every operation of `name`, as `(operation, how it is sent, failures)`.
fn operations(p: &LoadedProject, name: &str) -> Vec<(String, Sent, Vec<String>)> {
    let pkg = package(p, name);
    pkg.manifest
        .operations
        .iter()
        .map(|o| {
            let failures = o.failures.iter().map(|f| f.node.clone()).collect();
            (o.name.node.clone(), sent(pkg, o), failures)
        })
        .collect()
}

fn ops(list: &[(&str, Sent, &[&str])]) -> Vec<(String, Sent, Vec<String>)> {
    list.iter()
        .map(|(n, s, f)| (n.to_string(), *s, f.iter().map(|x| x.to_string()).collect()))
        .collect()
}

/// `(header, window hours, replays_failures, new_key_on, in_use, mismatch, max_key_length)`
type Provider = (
    String,
    u64,
    bool,
    NewKeyOn,
    Option<AnswerMatch>,
    Option<AnswerMatch>,
    Option<u64>,
);

fn provider(p: &LoadedProject, name: &str) -> Option<Provider> {
    let i = package(p, name).manifest.provider.idempotency.as_ref()?;
    Some((
        i.header.node.clone(),
        i.window_ms.node / HOUR,
        i.replays_failures,
        i.new_key_on,
        i.in_use.clone(),
        i.mismatch.clone(),
        i.max_key_length.as_ref().map(|n| n.node),
    ))
}

fn answer(status: &[u16], code: Option<&str>, error_type: Option<&str>) -> Option<AnswerMatch> {
    Some(AnswerMatch {
        status: status.to_vec(),
        code: code.map(str::to_string),
        error_type: error_type.map(str::to_string),
    })
}

#[test]
fn stripe() {
    let p = project();
    assert_eq!(
        provider(&p, "stripe"),
        Some((
            "Idempotency-Key".into(),
            24,
            true,
            NewKeyOn::None,
            answer(&[409], Some("idempotency_key_in_use"), None),
            answer(&[400], None, Some("idempotency_error")),
            Some(255),
        ))
    );
    assert_eq!(
        operations(&p, "stripe"),
        ops(&[
            ("charges.create", Sent::Keyed(24), &["CardDeclined"]),
            ("customers.create", Sent::Keyed(24), &["InvalidEmail"]),
            ("customers.delete", Sent::Repeat, &["ResourceMissing"]),
            ("invoices.finalize", Sent::Keyed(24), &["ResourceMissing"]),
            ("invoices.list", Sent::Read, &[]),
            ("payment_methods.attach", Sent::Keyed(24), &["CardDeclined"]),
            ("prices.retrieve", Sent::Read, &["PriceMissing"]),
            (
                "refunds.create",
                Sent::Keyed(24),
                &["ChargeAlreadyRefunded", "ResourceMissing"]
            ),
            ("subscriptions.cancel", Sent::Repeat, &["ResourceMissing"]),
            ("subscriptions.create", Sent::Keyed(24), &["CardDeclined"]),
        ])
    );
}

#[test]
fn adyen() {
    let p = project();
    assert_eq!(
        provider(&p, "adyen"),
        Some((
            "Idempotency-Key".into(),
            168,
            true,
            NewKeyOn::None,
            answer(&[409, 422], Some("704"), None),
            None,
            Some(64),
        ))
    );
    assert_eq!(
        operations(&p, "adyen"),
        ops(&[
            ("payments.cancel", Sent::Keyed(168), &[]),
            ("payments.capture", Sent::Keyed(168), &[]),
            ("payments.create", Sent::Keyed(168), &["InvalidCardNumber"]),
            ("payments.refund", Sent::Keyed(168), &[]),
        ])
    );
    let cancel = &package(&p, "adyen").manifest.operations[0];
    assert!(cancel.already_undone.is_empty(), "nothing documents it");
}

#[test]
fn paypal() {
    let p = project();
    assert_eq!(
        provider(&p, "paypal"),
        Some((
            "PayPal-Request-Id".into(),
            6,
            false,
            NewKeyOn::None,
            answer(
                &[409],
                Some("PREVIOUS_REQUEST_IN_PROGRESS"),
                Some("RESOURCE_CONFLICT")
            ),
            None,
            Some(108),
        ))
    );
    assert_eq!(
        operations(&p, "paypal"),
        ops(&[
            (
                "captures.refund",
                Sent::Keyed(45 * 24),
                &["CaptureMissing", "AlreadyRefunded"]
            ),
            (
                "orders.capture",
                Sent::Keyed(6),
                &["OrderMissing", "PayerActionRequired", "InstrumentDeclined"]
            ),
            ("orders.create", Sent::Keyed(6), &["InvalidOrder"]),
            ("orders.get", Sent::Read, &["OrderMissing"]),
        ])
    );
}

#[test]
fn providers_without_keys() {
    let p = project();
    for name in ["postmark", "twilio", "github"] {
        assert_eq!(provider(&p, name), None, "{name} takes no keys");
    }
    assert_eq!(
        operations(&p, "postmark"),
        ops(&[
            ("email.batch", Sent::Unkeyed, &[]),
            (
                "email.send",
                Sent::Unkeyed,
                &["InactiveRecipient", "InvalidEmailRequest"]
            ),
        ])
    );
    assert_eq!(
        operations(&p, "twilio"),
        ops(&[
            ("messages.create", Sent::Unkeyed, &["InvalidNumber"]),
            ("messages.get", Sent::Read, &["MessageMissing"]),
        ])
    );
    assert_eq!(
        operations(&p, "github"),
        ops(&[
            ("comments.create", Sent::Unkeyed, &["IssueMissing"]),
            (
                "issues.create",
                Sent::Unkeyed,
                &["RepositoryMissing", "ValidationFailed"]
            ),
            ("issues.get", Sent::Read, &["IssueMissing"]),
            (
                "labels.add",
                Sent::Repeat,
                &["IssueMissing", "ValidationFailed"]
            ),
        ])
    );
}

/// Every step key fits every bundled provider that states a limit.
#[test]
fn step_keys_fit_every_provider() {
    let p = project();
    for pkg in &p.packages {
        let limit = pkg
            .manifest
            .provider
            .idempotency
            .as_ref()
            .and_then(|i| i.max_key_length.as_ref());
        if let Some(n) = limit {
            assert!(
                n.node >= jadpo_compiler::manifest::STEP_KEY_LENGTH,
                "{}",
                pkg.manifest.name.node
            );
        }
    }
}

/// A step's window in the plan is its operation's own when the manifest
/// sets one (PayPal refunds 45 days), else the provider's (Orders 6 hours).
#[test]
fn a_step_window_is_its_operations_own_when_set() {
    let source = r#"
application Windows {
    steps: { encryption_key: config.steps_key }
    events: { store: primary }
    providers: { paypal: { client_id: config.paypal_id  client_secret: config.paypal_secret } }
}

config WindowsConfig {
    steps_key: StepsKey { binding: "STEPS_KEY" secret: true }
    paypal_id: StepsKey { binding: "PAYPAL_CLIENT_ID" }
    paypal_secret: StepsKey { binding: "PAYPAL_CLIENT_SECRET" secret: true }
}

store primary { kind: postgres }

type StepsKey = Text { max_length: 128 }

decline step.late_failure "a test of windows"
action pay_and_refund(captured: paypal.CaptureId) fails paypal.InvalidOrder, paypal.CaptureMissing, paypal.AlreadyRefunded -> Unit {
    attempt paypal.orders.create(paypal.OrderCreate { intent: CAPTURE purchase_units: [paypal.PurchaseUnit { amount: paypal.Money { currency_code: "EUR" value: "1.00" } }] })
    attempt paypal.captures.refund(paypal.RefundCreate { capture: captured })
}

subscriber pay_and_refund on Refund {
    run: pay_and_refund(event.capture)
}

event Refund {
    capture: paypal.CaptureId
}
"#;
    let mem = MemLoader::new()
        .with(
            "app/jadpo.yaml",
            "app: windows\npackages:\n  paypal: \"2\"\n",
        )
        .with("app/src/app.jadpo", source);
    let outcome = jadpo::check::check_app(&mem, "app");
    let errors: Vec<_> = outcome
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let plan = outcome.plan.expect("a plan").to_json();
    let steps = plan["actions"][0]["steps"]
        .as_array()
        .expect("steps")
        .clone();
    let window = |op: &str| {
        steps
            .iter()
            .find(|s| s["operation"] == op)
            .map(|s| (s["window_ms"].clone(), s["margin_ms"].clone()))
    };
    assert_eq!(
        window("paypal.orders.create"),
        Some(((6 * HOUR).into(), (36 * 60_000).into()))
    );
    assert_eq!(
        window("paypal.captures.refund"),
        Some(((1080 * HOUR).into(), HOUR.into()))
    );
}
