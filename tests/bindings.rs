//! The bundled packages' HTTP bindings (design `server.md` sections 15 and
//! 25): a golden request for every operation (method, URL, headers except
//! auth, body bytes) built from a sample request of its type, snapshotted;
//! the answer a fake gives read back through the binding; and error bodies
//! as each provider documents them decoded to the package's failures.

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{OpId, Program, Ty, TypeKind};
use jadpo_compiler::load::loaders::MemLoader;
use jadpo_runtime::provider::Answer;
use jadpo_runtime::value::Value;
use jadpo_runtime::wire;

const MANIFEST: &str = "app: bindings
packages: { stripe: \"3\", github: \"1\", twilio: \"1\", postmark: \"1\", paypal: \"2\", adyen: \"1\" }
";

fn program() -> Program {
    let mem = MemLoader::new()
        .with("app/jadpo.yaml", MANIFEST)
        .with("app/src/app.jadpo", "type Nothing = Text\n");
    let outcome = jadpo::check::check_app(&mem, "app");
    outcome.program.expect("the bundled packages compile")
}

/// A sample value of a type: each text its field's name, numbers at their
/// least, one item per list, the first variant, every optional field.
fn sample(program: &Program, ty: &Ty, field: &str) -> Value {
    let types = program.type_table();
    if let Some((_, fields)) = types.record(ty) {
        return Value::record(
            fields
                .iter()
                .map(|f| (f.name, sample(program, &f.ty, f.name.as_str())))
                .collect(),
        );
    }
    if let Some((_, variants)) = types.variants(ty) {
        return variants.first().map_or(Value::None, |v| Value::Enum(*v));
    }
    match types.base_of(ty) {
        Ty::Optional(inner) => sample(program, inner, field),
        Ty::List(inner) => Value::List(vec![sample(program, inner, field)].into()),
        Ty::Named(t) => match types.def(*t).map(|d| &d.kind) {
            Some(TypeKind::Alias(inner)) => sample(program, inner, field),
            _ => Value::None,
        },
        Ty::Prim(p) => match p.as_str() {
            "Int" => Value::Int(1),
            "Bool" => Value::Bool(true),
            "Decimal" => Value::Decimal("1.50".parse().expect("a decimal")),
            "Unit" => Value::Unit,
            _ => Value::text(&format!("{field}_1")),
        },
        _ => Value::None,
    }
}

fn settings(program: &Program, op: OpId) -> wire::Settings {
    let p = program.package(program.op(op).package);
    p.http
        .iter()
        .flat_map(|h| h.settings.iter())
        .map(|s| (s.name.clone(), format!("{}_value", s.name)))
        .collect()
}

fn ops(program: &Program) -> Vec<OpId> {
    (0..program.operations.len() as u32)
        .map(OpId)
        .filter(|o| program.op(*o).http.is_some())
        .collect()
}

#[test]
fn every_bundled_operation_has_a_binding() {
    let program = program();
    let without: Vec<&str> = program
        .operations
        .iter()
        .filter(|o| o.http.is_none() && !o.qualified.starts_with("ai."))
        .map(|o| o.qualified.as_str())
        .collect();
    assert!(without.is_empty(), "{without:?}");
    assert_eq!(
        ops(&program).len(),
        26,
        "stripe 10, github 4, twilio 2, postmark 2, paypal 4, adyen 4"
    );
}

#[test]
fn golden_requests_of_every_bundled_operation() {
    let program = program();
    let mut out = String::new();
    for op in ops(&program) {
        let o = program.op(op);
        let request = sample(&program, &o.request, "request");
        let key = o.keyed.then_some("key_1");
        let r = wire::request(&program, op, &request, &settings(&program, op), key)
            .unwrap_or_else(|e| panic!("{}: {e}", o.qualified));
        out.push_str(&format!(
            "{}\n{} {}\n",
            o.qualified,
            r.method.as_str(),
            r.url
        ));
        for (name, value) in &r.headers {
            out.push_str(&format!("{name}: {value}\n"));
        }
        out.push_str(&String::from_utf8_lossy(&r.body));
        out.push_str("\n\n");
    }
    insta::assert_snapshot!(out);
}

/// A fake's answer is recorded as the body the binding carries, and that
/// body reads back as the same answer.
#[test]
fn every_answer_reads_back_through_its_binding() {
    let program = program();
    for op in ops(&program) {
        let o = program.op(op);
        let answer = sample(&program, &o.answer, "answer");
        let body = wire::answer_body(&program, op, &answer);
        let back = wire::decode_answer(&program, op, &body);
        assert_eq!(
            back.as_ref(),
            Ok(&answer),
            "{}: {}",
            o.qualified,
            String::from_utf8_lossy(&body)
        );
        for f in &o.failures {
            let fields = program
                .failure(*f)
                .fields
                .iter()
                .map(|d| (d.name, sample(&program, &d.ty, d.name.as_str())))
                .collect::<Vec<_>>();
            let fields = if fields.is_empty() {
                Value::Unit
            } else {
                Value::record(fields)
            };
            let (status, body) = wire::failure_body(&program, op, *f, &fields);
            let want = Answer::Failed {
                failure: *f,
                fields: fields.clone(),
            };
            let got = wire::classify(&program, op, status, &body);
            // Two failures of one operation may share a code (Stripe's
            // `resource_missing`); the first listed is the one read.
            let same_code = o
                .failures
                .iter()
                .find(|g| program.failure(**g).code == program.failure(*f).code);
            if same_code == Some(f) {
                assert_eq!(
                    got,
                    want,
                    "{} {}: {}",
                    o.qualified,
                    status,
                    String::from_utf8_lossy(&body)
                );
            }
        }
    }
}

fn op_named(program: &Program, name: &str) -> OpId {
    let i = program
        .operations
        .iter()
        .position(|o| o.qualified == name)
        .unwrap_or_else(|| panic!("no {name}"));
    OpId(i as u32)
}

fn failure_named(program: &Program, answer: &Answer) -> String {
    match answer {
        Answer::Failed { failure, .. } => program.failure(*failure).qualified.clone(),
        other => format!("{other:?}"),
    }
}

/// Error bodies as the providers' documentation shows them.
#[test]
fn documented_error_bodies_decode_to_the_packages_failures() {
    let program = program();
    let cases: &[(&str, u16, &str, &str)] = &[
        (
            "stripe.subscriptions.create",
            402,
            r#"{"error":{"code":"card_declined","decline_code":"insufficient_funds","message":"Your card has insufficient funds.","type":"card_error"}}"#,
            "stripe.CardDeclined",
        ),
        (
            "stripe.prices.retrieve",
            404,
            r#"{"error":{"code":"resource_missing","message":"No such price: 'price_x'","param":"id","type":"invalid_request_error"}}"#,
            "stripe.PriceMissing",
        ),
        (
            "stripe.customers.create",
            409,
            r#"{"error":{"code":"idempotency_key_in_use","message":"There is currently another in-progress request using this Idempotent Key","type":"invalid_request_error"}}"#,
            "InUse",
        ),
        (
            "stripe.customers.create",
            400,
            r#"{"error":{"message":"Keys for idempotent requests can only be used with the same parameters they were first used with.","type":"idempotency_error"}}"#,
            "Mismatch",
        ),
        (
            "github.issues.create",
            404,
            r#"{"message":"Not Found","documentation_url":"https://docs.github.com/rest/issues/issues#create-an-issue","status":"404"}"#,
            "github.RepositoryMissing",
        ),
        (
            "github.issues.create",
            422,
            r#"{"message":"Validation Failed","errors":[{"resource":"Issue","code":"missing_field","field":"title"}],"documentation_url":"https://docs.github.com/rest/issues/issues#create-an-issue","status":"422"}"#,
            "github.ValidationFailed",
        ),
        (
            "twilio.messages.create",
            400,
            r#"{"code":21211,"message":"The 'To' number +1555 is not a valid phone number.","more_info":"https://www.twilio.com/docs/errors/21211","status":400}"#,
            "twilio.InvalidNumber",
        ),
        (
            "postmark.email.send",
            422,
            r#"{"ErrorCode":406,"Message":"You tried to send to recipient(s) that have been marked as inactive."}"#,
            "postmark.InactiveRecipient",
        ),
        (
            "paypal.orders.capture",
            422,
            r#"{"name":"UNPROCESSABLE_ENTITY","details":[{"issue":"INSTRUMENT_DECLINED","description":"The instrument presented was either declined by the processor or bank, or it can't be used for this payment."}],"message":"The requested action could not be performed, semantically incorrect, or failed business validation.","debug_id":"90957fca61718"}"#,
            "paypal.InstrumentDeclined",
        ),
        (
            "paypal.orders.capture",
            409,
            r#"{"name":"RESOURCE_CONFLICT","details":[{"issue":"PREVIOUS_REQUEST_IN_PROGRESS","description":"A previous request on this resource is currently in progress."}],"debug_id":"1a2b3c"}"#,
            "InUse",
        ),
        (
            "adyen.payments.create",
            422,
            r#"{"status":422,"errorCode":"101","message":"Invalid card number","errorType":"validation","pspReference":"8816178914079738"}"#,
            "adyen.InvalidCardNumber",
        ),
        (
            "adyen.payments.capture",
            422,
            r#"{"status":422,"errorCode":"704","message":"request already processed or in progress","errorType":"validation"}"#,
            "InUse",
        ),
        (
            "stripe.customers.create",
            401,
            r#"{"error":{"message":"Invalid API Key provided: sk_test_****","type":"invalid_request_error"}}"#,
            "Misconfigured",
        ),
        // GitHub answers its rate limits 403 as well as 429: the primary
        // one's message and the secondary one's both say "rate limit".
        (
            "github.comments.create",
            403,
            r#"{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api","status":"403"}"#,
            "RateLimited",
        ),
        (
            "github.issues.get",
            403,
            r#"{"message":"API rate limit exceeded for installation ID 12345.","documentation_url":"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting","status":"403"}"#,
            "RateLimited",
        ),
        (
            "github.issues.create",
            403,
            r#"{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/issues/issues#create-an-issue","status":"403"}"#,
            "Misconfigured",
        ),
    ];
    for (op, status, body, want) in cases {
        let id = op_named(&program, op);
        let got = wire::classify(&program, id, *status, body.as_bytes());
        let name = failure_named(&program, &got);
        assert!(name.starts_with(want), "{op} {status}: {name}");
    }
}

#[test]
fn a_stripe_form_body_nests_and_renames_as_stripe_documents() {
    let program = program();
    let op = op_named(&program, "stripe.subscriptions.create");
    let request = Value::record(vec![
        (Name::new("customer"), Value::text("cus_1")),
        (Name::new("price"), Value::text("price_1")),
        (Name::new("default_payment_method"), Value::text("pm_1")),
        (
            Name::new("payment_behavior"),
            Value::Enum(Name::new("error_if_incomplete")),
        ),
    ]);
    let r = wire::request(&program, op, &request, &settings(&program, op), Some("k"))
        .expect("a request");
    assert_eq!(r.url, "https://api.stripe.com/v1/subscriptions");
    assert_eq!(
        String::from_utf8_lossy(&r.body),
        "customer=cus_1&default_payment_method=pm_1&payment_behavior=error_if_incomplete&items%5B0%5D%5Bprice%5D=price_1"
    );
}

/// Every bundled operation through the fake provider server over HTTP:
/// the request its binding writes is routed back to the same operation,
/// and the answer the fake gives reads back as the same value.
#[test]
fn every_bundled_operation_round_trips_through_the_fake_provider_server() {
    use jadpo_runtime::fake::{Script, Scripted};
    use jadpo_runtime::provider::Call;
    use jadpo_server::engine::Providers;
    use std::collections::BTreeMap;
    use std::sync::Arc;
    let program: &'static Program = Box::leak(Box::new(program()));
    let ids = ops(program);
    let answers: BTreeMap<OpId, Value> = ids
        .iter()
        .map(|op| (*op, sample(program, &program.op(*op).answer, "answer")))
        .collect();
    let scripts = answers
        .iter()
        .map(|(op, v)| {
            let script = Script {
                answers: vec![Scripted::Answer(v.clone())],
                replays_failures: false,
            };
            (*op, script)
        })
        .collect();
    let fake = Arc::new(jadpo_server::fakes::SharedFake::new(scripts));
    let server = jadpo_server::fake_server::start(fake, program).expect("the fake server");
    let providers = jadpo_server::http_provider::HttpProviders::new(BTreeMap::new())
        .with_fake_server(server.url());
    let mut sender = providers.provider(program);
    for op in ids {
        let o = program.op(op);
        let request = sample(program, &o.request, "request");
        // A key of its own: one key with two requests is a mismatch.
        let key = format!("key_{}", op.0);
        let call = Call {
            op,
            operation: &o.qualified,
            request: &request,
            fingerprint: request.fingerprint(),
            key: o.keyed.then_some(key.as_str()),
            repeat_safe: o.idempotent && !o.keyed,
            changes: o.changes,
            step: None,
        };
        let got = sender.send(&call);
        assert_eq!(got, Answer::Done(answers[&op].clone()), "{}", o.qualified);
    }
}

/// A failure is carried where the binding's pointer says, lists made for
/// index steps: PayPal's code sits in the `details` list, as PayPal
/// answers it.
#[test]
fn a_failure_body_follows_its_pointer_into_a_list() {
    let program = program();
    let op = op_named(&program, "paypal.orders.capture");
    let failure = program
        .op(op)
        .failures
        .iter()
        .copied()
        .find(|f| program.failure(*f).qualified == "paypal.InstrumentDeclined")
        .expect("the failure");
    let (status, body) = wire::failure_body(&program, op, failure, &Value::Unit);
    assert_eq!(status, 422);
    assert_eq!(body, br#"{"details":[{"issue":"INSTRUMENT_DECLINED"}]}"#);
}
