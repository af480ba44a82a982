//! Shared helpers for the resolver tests: an in-memory app with a local copy
//! of the stripe package (so these tests do not depend on the bundled one),
//! and a plain rendering of diagnostics for snapshots.
//!
//! The local stripe's `payment_methods.attach` and `subscriptions.create`
//! fail only with `CardDeclined`: with the exhaustive `match` and exact
//! `fails` rules, that is what the design's complete example implies (its
//! `match` on `subscriptions.create` names only `CardDeclined`, and its
//! `fails` has no `ResourceMissing`).

#![allow(dead_code)]

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::ir::Program;
use jadpo_compiler::load::MemLoader;
use jadpo_compiler::source::Files;

pub const STRIPE_YAML: &str = r#"package: stripe
version: 3.1.0
provider:
  idempotency:
    header: Idempotency-Key
    window: 24h
    replays_failures: true
    new_key_on: none
    in_use: { status: 409 }
    mismatch: { status: 400, code: idempotency_error }
  timeout: 5s
  attempts: 2
operations:
  customers.create:
    request: CustomerCreate
    answer: Customer
    changes: true
    idempotent: true
    failures: [CardDeclined, InvalidEmail]
  customers.delete:
    request: CustomerRef
    answer: DeletedCustomer
    changes: true
    idempotent: true
    keyed: false
    failures: [ResourceMissing]
    already_undone: [ResourceMissing]
  payment_methods.attach:
    request: AttachRequest
    answer: PaymentMethod
    changes: true
    idempotent: true
    failures: [CardDeclined]
  subscriptions.create:
    request: SubscriptionCreate
    answer: Subscription
    changes: true
    idempotent: true
    failures: [CardDeclined]
  prices.retrieve:
    request: PriceRef
    answer: Price
    changes: false
    failures: [PriceMissing]
"#;

pub const STRIPE_JADPO: &str = r#"
type Email = Text { format: email max_length: 512 }
type CustomerId = Text { max_length: 255 }
type PriceId = Text { max_length: 255 }
type PaymentMethodId = Text { max_length: 255 }
type SubscriptionId = Text { max_length: 255 }
type Amount = Int { min: 1 }
type Currency = Text { max_length: 3 }

type CustomerCreate = Object {
    email: Email
    name: Text? optional
}
type Customer = Object {
    id: CustomerId
    email: Email
}
type CustomerRef = Object { id: CustomerId }
type DeletedCustomer = Object { id: CustomerId }
type AttachRequest = Object {
    customer: CustomerId
    payment_method: PaymentMethodId
}
type PaymentMethod = Object { id: PaymentMethodId }
type SubscriptionCreate = Object {
    customer: CustomerId
    price: PriceId
}
type Subscription = Object {
    id: SubscriptionId
    customer: CustomerId
    status: Text
}
type PriceRef = Object { id: PriceId }
type Price = Object {
    id: PriceId
    amount: Amount
    currency: Currency
}
type SubscribeCustomer = Object {
    email: Email
    price: PriceId
    payment_method: PaymentMethodId
}

failure CardDeclined { kind: Rejected code: "card_declined" }
failure InvalidEmail { kind: InvalidValue code: "invalid_email" }
failure PriceMissing { kind: NotFound code: "price_missing" }
failure ResourceMissing { kind: NotFound code: "resource_missing" }

public action subscribe_customer(request: SubscribeCustomer)
    fails CardDeclined, InvalidEmail
    -> Subscription
{
    var customer = attempt stripe.customers.create(CustomerCreate { email: request.email })
    attempt stripe.payment_methods.attach(AttachRequest { customer: customer.id payment_method: request.payment_method })
    return attempt stripe.subscriptions.create(SubscriptionCreate { customer: customer.id price: request.price })
}

action internal_helper(id: CustomerId) -> Unit {
}
"#;

/// The design's complete example: sections 2, 3 and 4.
pub const DESIGN_EXAMPLE: &str = r#"// app.jadpo
application Billing {
    steps: { encryption_key: config.steps_key }   // answers of recorded steps are encrypted
    events: { store: primary }                     // records and outbox of actions that write no store
}

config BillingConfig {
    steps_key: StepsKey { binding: "STEPS_KEY" secret: true }
}

store primary { kind: postgres }

type StepsKey = Text { max_length: 128 }
type PlanCode = Text { max_length: 64 }
type Quantity = Int { min: 1 max: 100 }
type Tier = Enum { basic pro }
type Seats = Object {
    plan: PlanCode
    count: Quantity
    note: Text? optional
}

entity Subscription {
    store: primary
    id: stripe.SubscriptionId
    customer: stripe.CustomerId
    plan: stripe.PriceId
}

failure PaymentRefused {
    kind: Rejected
    code: "payment_refused"
}

event SubscriptionRequested {
    email: stripe.Email
    price: stripe.PriceId
    payment_method: stripe.PaymentMethodId
}

event SubscriptionStarted {
    id: stripe.SubscriptionId
}

action subscribe(request: SubscriptionRequested)
    fails PaymentRefused, stripe.CardDeclined, stripe.InvalidEmail, stripe.PriceMissing
    -> stripe.SubscriptionId
{
    var price = attempt stripe.prices.retrieve(stripe.PriceRef { id: request.price })  // a read before the first changing call: not a step
    var customer = attempt stripe.customers.create(stripe.CustomerCreate { email: request.email })  // step 1
    attempt stripe.payment_methods.attach(stripe.AttachRequest {                      // step 2; a discarded answer
        customer: customer.id
        payment_method: request.payment_method
    })
    var subscription = match stripe.subscriptions.create(stripe.SubscriptionCreate {  // step 3
        customer: customer.id
        price: price.id
    }) {
        success(created) => created
        failure stripe.CardDeclined => reject PaymentRefused     // a late point: warned
    }
    attempt create Subscription { id: subscription.id customer: customer.id plan: price.id }  // writes come after the last call
    emit SubscriptionStarted { id: subscription.id }             // staged; inserted only if this action commits
    return subscription.id
}

route POST /subscriptions {
    auth: none
    idempotency_key: required        // the route's API requires Idempotency-Key
    deadline: 60s                    // optional; without it the budget is not checked
    input: SubscriptionRequested
    output: stripe.SubscriptionId
    run: subscribe(input)
}

subscriber start_subscription on SubscriptionRequested {
    run: subscribe(event)
}

schedule nightly_reconcile every 1h {
    run: reconcile()
}

action reconcile() -> Unit {
}
"#;

pub struct Checked {
    pub files: Files,
    pub diagnostics: Vec<Diagnostic>,
    pub program: Option<Program>,
}

/// Compiles an app made of `app.jadpo` with the local stripe package.
pub fn check_app(source: &str) -> Checked {
    check_files(&[("app.jadpo", source)])
}

/// Compiles an app of several files with the local stripe package.
pub fn check_files(sources: &[(&str, &str)]) -> Checked {
    let mut loader = MemLoader::new()
        .with(
            "app/jadpo.yaml",
            "app: billing\npackages:\n  stripe: \"3\"\n",
        )
        .with("app/packages/stripe/package.yaml", STRIPE_YAML)
        .with("app/packages/stripe/stripe.jadpo", STRIPE_JADPO);
    for (path, text) in sources {
        loader.insert(format!("app/{path}"), text.as_bytes().to_vec());
    }
    let compiled = jadpo_compiler::compile(&loader, "app");
    Checked {
        files: compiled.files,
        diagnostics: compiled.diagnostics,
        program: compiled.program,
    }
}

/// Compiles an app against the bundled packages (no local copy).
pub fn check_bundled(source: &str) -> Checked {
    let loader = MemLoader::new()
        .with(
            "app/jadpo.yaml",
            "app: billing\npackages:\n  stripe: \"3\"\n",
        )
        .with("app/app.jadpo", source);
    let compiled = jadpo_compiler::compile(&loader, "app");
    Checked {
        files: compiled.files,
        diagnostics: compiled.diagnostics,
        program: compiled.program,
    }
}

/// One line per diagnostic: code, location, the text under the span, the
/// summary, related labels and fixes. Sorted in the fixed output order.
pub fn render(c: &Checked) -> String {
    let mut diags = c.diagnostics.clone();
    jadpo_compiler::diag::sort_diagnostics(&mut diags);
    let mut out = String::new();
    for d in &diags {
        let file = c.files.get(d.span.file);
        let (line, col) = line_col(&file.text, d.span.start);
        out.push_str(&format!(
            "{} {} {}:{}:{} `{}`: {}\n",
            d.severity.as_str(),
            d.code,
            file.path,
            line,
            col,
            c.files.slice(d.span),
            d.summary
        ));
        for r in &d.related {
            let (l, col) = line_col(&c.files.get(r.span.file).text, r.span.start);
            out.push_str(&format!("    related {l}:{col}: {}\n", r.message));
        }
        for f in &d.fixes {
            let edits: Vec<String> = f
                .edits
                .iter()
                .map(|e| format!("{:?}", e.replacement))
                .collect();
            out.push_str(&format!("    fix: {} {}\n", f.message, edits.join(" ")));
        }
    }
    out
}

fn line_col(text: &str, offset: u32) -> (usize, usize) {
    let before = text.get(..offset as usize).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Codes of all diagnostics, sorted.
pub fn codes(c: &Checked) -> Vec<&'static str> {
    let mut codes: Vec<&'static str> = c.diagnostics.iter().map(|d| d.code).collect();
    codes.sort_unstable();
    codes
}

/// A compact, readable dump of the lowered program for snapshots.
pub fn dump_ir(c: &Checked) -> String {
    use jadpo_compiler::ir::{ArmEnd, ArmPattern, Block, Handling, Node, Target};
    let Some(p) = &c.program else {
        return "no program".to_string();
    };
    fn block(p: &Program, files: &Files, b: &Block, depth: usize, out: &mut String) {
        let pad = "  ".repeat(depth);
        for n in &b.nodes {
            match n {
                Node::Effect(e) => {
                    let target = match &e.target {
                        Target::Op(o) => format!("op {}", p.op(*o).qualified),
                        Target::Action(a) => format!("action {}", p.action(*a).qualified),
                        Target::Write(w) => {
                            let fs: Vec<&str> = w
                                .failures
                                .iter()
                                .map(|(f, _)| p.failure(*f).qualified.as_str())
                                .collect();
                            format!(
                                "{:?} {} names [{}]",
                                w.kind,
                                p.entity(w.entity).qualified,
                                fs.join(", ")
                            )
                        }
                        Target::Check(c) => format!(
                            "check {} fails {}",
                            c.query.map_or("value", |e| p.entity(e).qualified.as_str()),
                            p.failure(c.failure).qualified
                        ),
                    };
                    let handling = match &e.handling {
                        Handling::Attempt(_) => "attempt".to_string(),
                        Handling::Unhandled => "unhandled".to_string(),
                        Handling::Match(_) => "match".to_string(),
                    };
                    out.push_str(&format!(
                        "{pad}effect {target} ({handling}) `{}`\n",
                        first_line(files.slice(e.span))
                    ));
                    if let Handling::Match(arms) = &e.handling {
                        for arm in arms {
                            let pat = match arm.pattern {
                                ArmPattern::Success => "success".to_string(),
                                ArmPattern::Failure(f) => {
                                    format!("failure {}", p.failure(f).qualified)
                                }
                            };
                            let end = match &arm.end {
                                ArmEnd::Value => "value".to_string(),
                                ArmEnd::Reject(r) => {
                                    format!("reject {}", p.failure(r.failure).qualified)
                                }
                                ArmEnd::Propagate(_) => "propagate".to_string(),
                            };
                            out.push_str(&format!("{pad}  arm {pat} -> {end}\n"));
                            block(p, files, &arm.body, depth + 2, out);
                        }
                    }
                }
                Node::Emit(e) => {
                    let fields: Vec<&str> = e.fields.iter().map(|f| f.name.as_str()).collect();
                    let opts: Vec<String> = e
                        .options
                        .iter()
                        .map(|o| format!("{}={:?}", o.key, o.value))
                        .collect();
                    out.push_str(&format!(
                        "{pad}emit {} [{}] with [{}]\n",
                        p.event(e.event).qualified,
                        fields.join(", "),
                        opts.join(", ")
                    ));
                }
                Node::Reject(r) => {
                    out.push_str(&format!("{pad}reject {}\n", p.failure(r.failure).qualified))
                }
                Node::Return(_) => out.push_str(&format!("{pad}return\n")),
                Node::If {
                    then_block,
                    else_block,
                    ..
                } => {
                    out.push_str(&format!("{pad}if\n"));
                    block(p, files, then_block, depth + 1, out);
                    out.push_str(&format!("{pad}else\n"));
                    block(p, files, else_block, depth + 1, out);
                }
                Node::Loop { max, body, .. } => {
                    out.push_str(&format!("{pad}loop max {max:?}\n"));
                    block(p, files, body, depth + 1, out);
                }
            }
        }
    }
    let mut out = String::new();
    for pkg in &p.packages {
        out.push_str(&format!(
            "package {} {} timeout {}ms attempts {} errors {}\n",
            pkg.name, pkg.version, pkg.timeout_ms, pkg.attempts, pkg.has_errors
        ));
    }
    for op in &p.operations {
        let fs: Vec<&str> = op
            .failures
            .iter()
            .map(|f| p.failure(*f).qualified.as_str())
            .collect();
        out.push_str(&format!(
            "operation {} changes {} keyed {} timeout {}ms attempts {} fails [{}]\n",
            op.qualified,
            op.changes,
            op.keyed,
            op.timeout_ms,
            op.attempts,
            fs.join(", ")
        ));
    }
    for e in &p.events {
        let fs: Vec<String> = e
            .fields
            .iter()
            .map(|f| format!("{}:{:?}", f.name, f.max_json_bytes))
            .collect();
        out.push_str(&format!("event {} [{}]\n", e.qualified, fs.join(", ")));
    }
    for e in &p.entities {
        out.push_str(&format!(
            "entity {} store {:?}\n",
            e.qualified,
            e.store.map(|s| s.as_str())
        ));
    }
    out.push_str(&format!(
        "app {} events_store {:?} encryption_key secret {:?}\n",
        p.app.name,
        p.app.events_store.map(|s| s.0.as_str()),
        p.app.encryption_key.as_ref().map(|k| k.secret)
    ));
    for a in &p.actions {
        let fs: Vec<&str> = a
            .fails
            .iter()
            .map(|(f, _)| p.failure(*f).qualified.as_str())
            .collect();
        out.push_str(&format!(
            "action {} public {} fails [{}]\n",
            a.qualified,
            a.public,
            fs.join(", ")
        ));
        block(p, &c.files, &a.body, 1, &mut out);
    }
    for e in &p.entries {
        let action = e.action.map(|a| p.action(a).qualified.clone());
        out.push_str(&format!(
            "entry {} {:?} runs {:?}\n",
            e.label, e.kind, action
        ));
    }
    out
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}
