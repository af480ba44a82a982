//! # provider.missing_setting: the app calls a package over HTTP without a setting its binding needs
//!
//! ## What it checks
//!
//! For every package whose `provider:` has `http:` and whose operations the
//! app's actions call (directly or through the package's actions), each
//! setting its `settings:` declares must be given in the application's
//! `providers:` (from a config entry). Tests run on fakes and need none.
//! Reported once per package, on its `providers:` entry, else on the
//! application, else on the first action that calls it. An app rule.
//!
//! ## Why it matters
//!
//! The settings are the provider's credentials and account ids. Without one,
//! no real call could be sent; the app would pass its tests on fakes and fail
//! on its first request in production.
//!
//! ## Failing example
//!
//! ```yaml jadpo.yaml
//! app: example
//! packages:
//!   mailer: { path: packages/mailer }
//! ```
//!
//! ```yaml packages/mailer/package.yaml
//! package: mailer
//! version: 1.0.0
//! provider:
//!   http:
//!     base_url: https://api.mailer.example
//!     auth: { scheme: bearer, token: api_key }
//!     settings: { api_key: { secret: true } }
//! operations:
//!   email.send:
//!     request: Address
//!     changes: true
//!     http: { method: POST, path: /email }
//! ```
//!
//! ```jadpo packages/mailer/mailer.jadpo
//! type Address = Object { to: Text }
//! ```
//!
//! ```jadpo app.jadpo
//! application Example {
//! }
//!
//! action notify() -> Unit {
//!     attempt mailer.email.send(mailer.Address { to: "a@example.com" })
//! }
//! ```
//!
//! ## Fixed example
//!
//! ```yaml jadpo.yaml
//! app: example
//! packages:
//!   mailer: { path: packages/mailer }
//! ```
//!
//! ```yaml packages/mailer/package.yaml
//! package: mailer
//! version: 1.0.0
//! provider:
//!   http:
//!     base_url: https://api.mailer.example
//!     auth: { scheme: bearer, token: api_key }
//!     settings: { api_key: { secret: true } }
//! operations:
//!   email.send:
//!     request: Address
//!     changes: true
//!     http: { method: POST, path: /email }
//! ```
//!
//! ```jadpo packages/mailer/mailer.jadpo
//! type Address = Object { to: Text }
//! ```
//!
//! ```jadpo app.jadpo
//! application Example {
//!     providers: { mailer: { api_key: config.mailer_key } }
//! }
//!
//! config ExampleConfig {
//!     mailer_key: Text { binding: "MAILER_KEY" secret: true }
//! }
//!
//! action notify() -> Unit {
//!     attempt mailer.email.send(mailer.Address { to: "a@example.com" })
//! }
//! ```
//!
//! ## Related
//!
//! `provider.not_secret`, `provider.no_binding`, `name.unknown_setting`.

use jadpo_compiler::http::HttpSetting;
use jadpo_compiler::ir::{ActionId, Node, Owner, PkgId, Program, Target};

use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "provider",
    "missing_setting",
    Error,
    "the app calls a package over HTTP without a setting its binding needs"
);

pub fn check(cx: &Cx, out: &mut Vec<Finding>) {
    if !cx.is_app() {
        return;
    }
    let program = cx.program;
    // Which callers are found only matters for a package missing a
    // setting; finding them reads every app action's body.
    if program
        .packages
        .ids()
        .all(|p| missing(program, p).is_empty())
    {
        return;
    }
    for (p, caller) in called_packages(program) {
        let pkg = program.package(p);
        let missing = missing(program, p);
        if missing.is_empty() {
            continue;
        }
        let given = program.app.providers.iter().find(|s| s.package == p);
        let action = program.action(caller);
        let at = given
            .map(|g| g.span)
            .or(program.app.span)
            .unwrap_or(action.name_span);
        let list = (missing.iter())
            .map(|s| format!("`{}`", s.name))
            .collect::<Vec<_>>()
            .join(", ");
        let example = (missing.iter())
            .map(|s| format!("{}: config.{}_{}", s.name, pkg.name, s.name))
            .collect::<Vec<_>>()
            .join("  ");
        let fix = match given {
            Some(_) => format!("add `{example}` to `{}`'s settings", pkg.name),
            None => format!(
                "add `providers: {{ {}: {{ {example} }} }}` to the application, each from a config entry (a credential from a `secret: true` one)",
                pkg.name
            ),
        };
        let plural = if missing.len() == 1 { "" } else { "s" };
        let mut d = INFO
            .report(
                at,
                format!(
                    "the app calls `{}` over HTTP without the setting{plural} {list}",
                    pkg.name
                ),
            )
            .with_label(format!("{list} not given"));
        if at != action.name_span {
            d = d.with_related(action.name_span, format!("`{}` calls it", action.qualified));
        }
        let d = d
            .with_reason("a real call is sent with these settings (the provider's credentials and ids); without them it could never be sent, though tests on fakes pass")
            .with_fix(fix);
        out.push(Finding::of(caller, d));
    }
}

/// The settings package `p`'s HTTP binding declares that the application
/// does not give, in the binding's order.
fn missing(program: &Program, p: PkgId) -> Vec<&HttpSetting> {
    let Some(binding) = &program.package(p).http else {
        return Vec::new();
    };
    let given = program.app.providers.iter().find(|s| s.package == p);
    binding
        .settings
        .iter()
        .filter(|s| given.is_none_or(|g| !g.given.iter().any(|v| v.name == s.name)))
        .collect()
}

/// Each package whose operations the app's actions reach, with the first
/// app action (in declaration order) that reaches it; each action is read
/// once.
fn called_packages(program: &Program) -> Vec<(PkgId, ActionId)> {
    let mut seen = vec![false; program.actions.len()];
    let mut found: Vec<(PkgId, ActionId)> = Vec::new();
    for (i, action) in program.actions.iter().enumerate() {
        if action.owner != Owner::App {
            continue;
        }
        let root = ActionId(i as u32);
        let mut stack = vec![root];
        while let Some(a) = stack.pop() {
            match seen.get_mut(a.0 as usize) {
                Some(slot) if !*slot => *slot = true,
                _ => continue,
            }
            program.action(a).body.for_each_node(&mut |node| {
                let Node::Effect(e) = node else { return };
                match e.target {
                    Target::Op(op) => {
                        let p = program.op(op).package;
                        if !found.iter().any(|(q, _)| *q == p) {
                            found.push((p, root));
                        }
                    }
                    Target::Action(callee) => stack.push(callee),
                    _ => {}
                }
            });
        }
    }
    found.sort_by_key(|(p, _)| *p);
    found
}
