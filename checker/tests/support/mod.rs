//! A tiny IR builder for the checker's tests: a program with a Stripe-like
//! keyed provider, a GitHub-like unkeyed one, `ai`, and helpers to write
//! action bodies as IR nodes without the front end.
#![allow(dead_code)]

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::*;
use jadpo_compiler::manifest::NewKeyOn;
use jadpo_compiler::source::{Files, Unit};
use jadpo_compiler::span::{FileId, Span};

pub struct B {
    pub p: Program,
    pub files: Files,
    pub app: FileId,
    pub pkg: FileId,
    next: u32,
    next_pkg: u32,
}

fn blank(lines: usize) -> String {
    let line = format!("{}\n", " ".repeat(79));
    line.repeat(lines)
}

impl B {
    pub fn new() -> B {
        let mut files = Files::new();
        let app = files.add("app.jadpo", blank(4000), Unit::App);
        let pkg = files.add(
            "<bundled>/stripe/stripe.jadpo",
            blank(400),
            Unit::Package("stripe".into()),
        );
        let mut b = B {
            p: Program::default(),
            files,
            app,
            pkg,
            next: 0,
            next_pkg: 0,
        };
        b.p.app.name = "test".into();
        b.package("stripe", true);
        b.package("github", false);
        b.package("ai", false);
        for (name, kind) in [
            ("Unavailable", FailureKind::Unavailable),
            ("RateLimited", FailureKind::RateLimited),
            ("stripe.CardDeclined", FailureKind::Rejected),
            ("stripe.ResourceMissing", FailureKind::NotFound),
            ("stripe.PriceMissing", FailureKind::NotFound),
            ("PaymentRefused", FailureKind::Rejected),
            ("Duplicate", FailureKind::Conflict),
        ] {
            b.p.failures.push(Failure {
                owner: Owner::App,
                qualified: name.into(),
                kind,
                span: None,
                code: String::new(),
                fields: Vec::new(),
            });
        }
        let declined = b.failure("stripe.CardDeclined");
        let missing = b.failure("stripe.ResourceMissing");
        let price = b.failure("stripe.PriceMissing");
        b.operation(
            0,
            "customers.create",
            true,
            true,
            true,
            vec![declined],
            vec![],
            false,
            5000,
            2,
        );
        b.operation(
            0,
            "payment_methods.attach",
            true,
            true,
            true,
            vec![declined, missing],
            vec![],
            false,
            5000,
            2,
        );
        b.operation(
            0,
            "subscriptions.create",
            true,
            true,
            true,
            vec![declined, price],
            vec![],
            false,
            5000,
            2,
        );
        b.operation(
            0,
            "charges.create",
            true,
            true,
            true,
            vec![declined],
            vec![],
            false,
            5000,
            2,
        );
        b.operation(
            0,
            "customers.delete",
            true,
            true,
            false,
            vec![missing],
            vec![missing],
            false,
            5000,
            2,
        );
        b.operation(
            0,
            "prices.retrieve",
            false,
            false,
            false,
            vec![price],
            vec![],
            false,
            5000,
            2,
        );
        b.operation(
            0,
            "invoices.list",
            false,
            false,
            false,
            vec![],
            vec![],
            true,
            30000,
            1,
        );
        b.operation(
            1,
            "issues.create",
            true,
            false,
            false,
            vec![],
            vec![],
            false,
            10000,
            1,
        );
        b.operation(
            2,
            "generate",
            false,
            false,
            false,
            vec![],
            vec![],
            false,
            60000,
            2,
        );
        b.p.entities.push(Entity {
            owner: Owner::App,
            qualified: "Invoice".into(),
            store: Some(Name::new("primary")),
            span: Span::new(app, 0, 1),
            ty: jadpo_compiler::ir::TypeId(0),
        });
        b.p.entities.push(Entity {
            owner: Owner::App,
            qualified: "Note".into(),
            store: None,
            span: Span::new(app, 0, 1),
            ty: jadpo_compiler::ir::TypeId(0),
        });
        b.p.events.push(Event {
            owner: Owner::App,
            qualified: "Done".into(),
            fields: vec![],
            span: Span::new(app, 0, 1),
            ty: jadpo_compiler::ir::TypeId(0),
        });
        b
    }

    fn package(&mut self, name: &str, keys: bool) {
        self.p.packages.push(Package {
            name: Name::new(name),
            version: "1.0.0".into(),
            manifest_span: Span::new(self.pkg, 0, 1),
            idempotency: keys.then(|| IdempotencyFacts {
                header: "Idempotency-Key".into(),
                window_ms: 86_400_000,
                replays_failures: true,
                new_key_on: NewKeyOn::None,
                in_use: None,
                mismatch: None,
            }),
            timeout_ms: 5000,
            attempts: 2,
            http: None,
            has_errors: false,
        });
    }

    #[allow(clippy::too_many_arguments)]
    fn operation(
        &mut self,
        pkg: u32,
        name: &str,
        changes: bool,
        idempotent: bool,
        keyed: bool,
        failures: Vec<FailureId>,
        already_undone: Vec<FailureId>,
        large_output: bool,
        timeout_ms: u64,
        attempts: u32,
    ) {
        let pkg_name = self.p.packages[PkgId(pkg)].name.as_str();
        self.p.operations.push(Operation {
            package: PkgId(pkg),
            name: name.into(),
            qualified: format!("{pkg_name}.{name}"),
            span: Span::new(self.pkg, 0, 1),
            changes,
            idempotent,
            keyed,
            failures,
            already_undone,
            large_output,
            timeout_ms,
            attempts,
            http: None,
            window_ms: self.p.packages[PkgId(pkg)]
                .idempotency
                .as_ref()
                .filter(|_| keyed)
                .map(|i| i.window_ms),
            check: None,
            request: jadpo_compiler::ir::Ty::Error,
            answer: jadpo_compiler::ir::Ty::Error,
        });
    }

    pub fn failure(&self, name: &str) -> FailureId {
        let i = self
            .p
            .failures
            .iter()
            .position(|f| f.qualified == name)
            .expect("failure");
        FailureId(i as u32)
    }

    pub fn op_id(&self, name: &str) -> OpId {
        let i = self
            .p
            .operations
            .iter()
            .position(|o| o.qualified == name)
            .expect("op");
        OpId(i as u32)
    }

    /// A fresh span in the app file (each on its own line).
    pub fn span(&mut self) -> Span {
        self.next += 1;
        let start = self.next * 80 + 4;
        Span::new(self.app, start, start + 10)
    }

    fn pkg_span(&mut self) -> Span {
        self.next_pkg += 1;
        let start = self.next_pkg * 80 + 4;
        Span::new(self.pkg, start, start + 10)
    }

    fn fresh(&mut self, in_pkg: bool) -> Span {
        if in_pkg {
            self.pkg_span()
        } else {
            self.span()
        }
    }

    /// `attempt <op>(...)`
    pub fn call(&mut self, op: &str) -> Node {
        let target = Target::Op(self.op_id(op));
        let s = self.span();
        Node::Effect(Effect {
            span: s,
            target,
            handling: Handling::Attempt(s),
        })
    }

    /// `attempt <op>(...)` inside the stripe package's files.
    pub fn pkg_call(&mut self, op: &str) -> Node {
        let target = Target::Op(self.op_id(op));
        let s = self.pkg_span();
        Node::Effect(Effect {
            span: s,
            target,
            handling: Handling::Attempt(s),
        })
    }

    /// `match <op>(...) { success => value, failure F => end ... }`
    pub fn call_match(&mut self, op: &str, arms: Vec<(Option<&str>, Vec<Node>, &str)>) -> Node {
        let target = Target::Op(self.op_id(op));
        self.matched(target, arms)
    }

    pub fn action_match(
        &mut self,
        a: ActionId,
        arms: Vec<(Option<&str>, Vec<Node>, &str)>,
    ) -> Node {
        self.matched(Target::Action(a), arms)
    }

    /// Arms: (failure name or None for success, body, end: "value" |
    /// "propagate" | "reject <Failure>").
    fn matched(&mut self, target: Target, arms: Vec<(Option<&str>, Vec<Node>, &str)>) -> Node {
        let s = self.span();
        let arms = arms
            .into_iter()
            .map(|(f, body, end)| {
                let span = self.span();
                let end = match end {
                    "value" => ArmEnd::Value,
                    "propagate" => ArmEnd::Propagate(span),
                    other => ArmEnd::Reject(Reject {
                        span,
                        failure: self.failure(other.trim_start_matches("reject ")),
                    }),
                };
                Arm {
                    span,
                    pattern: match f {
                        None => ArmPattern::Success,
                        Some(name) => ArmPattern::Failure(self.failure(name)),
                    },
                    body: Block { nodes: body },
                    end,
                }
            })
            .collect();
        Node::Effect(Effect {
            span: s,
            target,
            handling: Handling::Match(arms),
        })
    }

    /// `attempt a(...)` of an action.
    pub fn run(&mut self, a: ActionId) -> Node {
        let in_pkg = false;
        let s = self.fresh(in_pkg);
        Node::Effect(Effect {
            span: s,
            target: Target::Action(a),
            handling: Handling::Attempt(s),
        })
    }

    /// `attempt create Invoice { }` (store `primary`), naming `failures`.
    pub fn write(&mut self, entity: &str, failures: &[&str]) -> Node {
        let e = self
            .p
            .entities
            .iter()
            .position(|e| e.qualified == entity)
            .expect("entity");
        let s = self.span();
        let failures = failures.iter().map(|f| (self.failure(f), s)).collect();
        Node::Effect(Effect {
            span: s,
            target: Target::Write(Write {
                kind: WriteKind::Create,
                entity: EntityId(e as u32),
                failures,
                keyed_by_input: false,
                read_first: false,
            }),
            handling: Handling::Attempt(s),
        })
    }

    pub fn emit(&mut self) -> Node {
        let span = self.span();
        Node::Emit(Emit {
            span,
            head: span,
            event: EventId(0),
            fields: vec![],
            options: vec![],
        })
    }

    pub fn reject(&mut self, failure: &str) -> Node {
        Node::Reject(Reject {
            span: self.span(),
            failure: self.failure(failure),
        })
    }

    pub fn ret(&mut self) -> Node {
        Node::Return(self.span())
    }

    pub fn if_else(&mut self, then_nodes: Vec<Node>, else_nodes: Vec<Node>) -> Node {
        Node::If {
            span: self.span(),
            then_block: Block { nodes: then_nodes },
            else_block: Block { nodes: else_nodes },
        }
    }

    pub fn for_loop(&mut self, max: Option<u32>, body: Vec<Node>) -> Node {
        let span = self.span();
        Node::Loop {
            span,
            head: span,
            max,
            body: Block { nodes: body },
        }
    }

    pub fn action(&mut self, name: &str, body: Vec<Node>) -> ActionId {
        self.action_in(Owner::App, name, body, false)
    }

    /// A public action of the stripe package.
    pub fn pkg_action(&mut self, name: &str, body: Vec<Node>) -> ActionId {
        self.action_in(Owner::Package(PkgId(0)), name, body, true)
    }

    fn action_in(&mut self, owner: Owner, name: &str, body: Vec<Node>, public: bool) -> ActionId {
        let in_pkg = owner != Owner::App;
        let span = self.fresh(in_pkg);
        let id = ActionId(self.p.actions.len() as u32);
        let qualified = if in_pkg {
            format!("stripe.{name}")
        } else {
            name.to_string()
        };
        self.p.actions.push(Action {
            owner,
            name: Name::new(name),
            qualified,
            public,
            span,
            name_span: span,
            fails: vec![],
            declines: vec![],
            body: Block { nodes: body },
            revision: Default::default(),
            params: Vec::new(),
            ret: jadpo_compiler::ir::Ty::unit(),
            code: Default::default(),
            reads: Default::default(),
        });
        id
    }

    pub fn decline(&mut self, a: ActionId, code: &str) {
        let span = self.span();
        self.p.actions[a].declines.push(Decline {
            code: code.into(),
            reason: "tested".into(),
            span,
        });
    }

    pub fn subscriber(&mut self, a: ActionId) {
        let span = self.span();
        self.p.entries.push(Entry {
            kind: EntryKind::Subscriber {
                event: Some(EventId(0)),
            },
            label: "subscriber on_done".into(),
            span,
            run_span: span,
            action: Some(a),
            run_args: Vec::new(),
        });
    }

    pub fn route(&mut self, a: ActionId, key_required: bool, deadline_ms: Option<u64>) {
        let span = self.span();
        let key_span = self.span();
        let deadline_span = self.span();
        self.p.entries.push(Entry {
            kind: EntryKind::Route {
                method: "POST".into(),
                path: "/x".into(),
                key_required,
                key_span: Some(key_span),
                deadline_ms,
                deadline_span: Some(deadline_span),
                auth_required: false,
                input: None,
                path_values: None,
                output: None,
            },
            label: "route POST /x".into(),
            span,
            run_span: span,
            action: Some(a),
            run_args: Vec::new(),
        });
    }

    pub fn schedule(&mut self, a: ActionId) {
        let span = self.span();
        self.p.entries.push(Entry {
            kind: EntryKind::Schedule {
                every_ms: 3_600_000,
            },
            label: "schedule nightly".into(),
            span,
            run_span: span,
            action: Some(a),
            run_args: Vec::new(),
        });
    }

    /// An app with a secret steps key and an events store.
    pub fn configured(&mut self) {
        let span = self.span();
        self.p.app.span = Some(span);
        self.p.app.events_store = Some((Name::new("primary"), span));
        self.p.app.encryption_key = Some(EncryptionKey {
            span,
            name: jadpo_compiler::intern::Name::new("steps_key"),
            secret: true,
            config_span: None,
        });
    }

    pub fn check(&self) -> jadpo_checker::Analysis {
        jadpo_checker::check(&self.p, &self.files, jadpo_checker::Scope::App)
    }

    pub fn check_package(&self) -> jadpo_checker::Analysis {
        jadpo_checker::check(
            &self.p,
            &self.files,
            jadpo_checker::Scope::Package("stripe".into()),
        )
    }

    /// The codes reported, sorted.
    pub fn codes(&self) -> Vec<&'static str> {
        let mut codes: Vec<&'static str> =
            self.check().diagnostics.iter().map(|d| d.code).collect();
        codes.sort();
        codes
    }
}
