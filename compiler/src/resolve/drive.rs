//! The parallel phases: action and function headers, then bodies. Each item
//! is checked by its own [`Resolver`] reading the shared tables; results and
//! diagnostics are applied in item order, so the output (IR, diagnostics and
//! their order) is the same whatever the number of threads.

use rayon::prelude::*;

use crate::ast;
use crate::diag::Diagnostic;
use crate::ir::{self, ActionId, FailureId};
use crate::span::Span;

use super::body::Header;
use super::{Builder, Resolver, Tables};

/// Items per rayon task: bodies are small, so a task takes a batch.
const BATCH: usize = 32;

/// One body to check.
enum Job<'a> {
    Action(ActionId, &'a ast::ActionDecl),
    Route(&'a ast::RouteDecl, ActionId),
    Function(usize),
}

/// What checking one body produced.
enum Done {
    Action(ActionId, ir::Block),
    Route(ActionId, Option<(ir::Block, Vec<(FailureId, Span)>)>),
    Function,
}

/// Runs `f` on each item in parallel with a resolver of its own; returns the
/// results in item order with each item's diagnostics.
fn par_resolve<'a, T: Sync, R: Send>(
    t: &Tables<'a>,
    items: &[T],
    f: impl Fn(&mut Resolver<'_, 'a>, &T) -> R + Sync,
) -> Vec<(R, Vec<Diagnostic>)> {
    items
        .par_iter()
        .with_min_len(BATCH)
        .map(|item| {
            let mut diags = Vec::new();
            let out = f(&mut Resolver::new(t, &mut diags), item);
            (out, diags)
        })
        .collect()
}

impl<'a> Builder<'a> {
    /// Action and function headers: parameters, results and `fails`.
    pub(super) fn resolve_headers(&mut self) {
        let actions: Vec<(usize, &'a ast::ActionDecl)> = self
            .actions
            .iter()
            .enumerate()
            .filter_map(|(i, a)| a.decl.map(|d| (i, d)))
            .collect();
        let done = par_resolve(&self.t, &actions, |r, (i, decl)| {
            let unit = r.actions[*i].unit;
            r.action_header(unit, decl)
        });
        for ((i, _), (header, mut diags)) in actions.iter().zip(done) {
            self.diags.append(&mut diags);
            self.set_header(*i, header);
        }
        for (route, id) in self.route_actions.clone() {
            let (params, ret) = self.rx().route_action_header(route);
            let sig = &mut self.actions[id.0 as usize];
            sig.params = params;
            sig.ret = ret;
        }
        let functions: Vec<usize> = (0..self.functions.len()).collect();
        let done = par_resolve(&self.t, &functions, |r, i| {
            let sig = &r.functions[*i];
            let (unit, decl) = (sig.unit, sig.decl);
            let params = r.params(unit, &decl.params);
            let ret = r.resolve_type(unit, &decl.returns);
            (params, ret)
        });
        for (i, ((params, ret), mut diags)) in done.into_iter().enumerate() {
            self.diags.append(&mut diags);
            self.functions[i].params = params;
            self.functions[i].ret = ret;
        }
    }

    fn set_header(&mut self, i: usize, h: Header) {
        let sig = &mut self.actions[i];
        sig.params = h.params;
        sig.ret = h.ret;
        sig.fails = h.fails.iter().map(|(f, _)| *f).collect();
        sig.fails_unknown = h.unknown;
        self.prog.actions[i].fails = h.fails;
    }

    /// Checks and lowers every body: actions, routes' inline actions, then
    /// functions.
    pub(super) fn check_bodies(&mut self) {
        let mut jobs: Vec<Job<'a>> = Vec::new();
        for (i, a) in self.actions.iter().enumerate() {
            if let Some(decl) = a.decl {
                jobs.push(Job::Action(ActionId(i as u32), decl));
            }
        }
        for (route, id) in &self.route_actions {
            jobs.push(Job::Route(route, *id));
        }
        jobs.extend((0..self.functions.len()).map(Job::Function));
        let done = par_resolve(&self.t, &jobs, |r, job| match job {
            Job::Action(id, decl) => Done::Action(*id, r.action_body(*id, decl)),
            Job::Route(route, id) => Done::Route(*id, r.route_action_body(route, *id)),
            Job::Function(i) => {
                r.function_body(*i);
                Done::Function
            }
        });
        for (done, mut diags) in done {
            self.diags.append(&mut diags);
            match done {
                Done::Action(id, body) => self.prog.actions[id.0 as usize].body = body,
                Done::Route(id, Some((body, fails))) => {
                    let action = &mut self.prog.actions[id.0 as usize];
                    action.body = body;
                    action.fails = fails;
                }
                Done::Route(_, None) | Done::Function => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::load::MemLoader;

    /// An app with many actions, functions and entry points, most with
    /// mistakes: enough bodies that several threads share the work.
    fn app(n: usize) -> MemLoader {
        let mut src = String::from(
            "failure Refused { kind: Rejected }\nfailure Gone { kind: NotFound }\n\
             type Small = Int { min: 1 max: 5 }\nevent Done { n: Small }\n",
        );
        for i in 0..n {
            src.push_str(&format!(
                "action a{i}(x: Small) fails Refused, Refused -> Int {{\n\
                 \x20   var y = x + missing{i}\n\
                 \x20   emit Done {{ n: 9 }}\n\
                 \x20   if y > 2 {{ reject Gone }}\n\
                 }}\n\
                 function f{i}(x: Smal) -> Int {{\n    var z = a{i}(1)\n}}\n\
                 subscriber s{i} on Done {{\n    run: a{i}(event.m)\n}}\n"
            ));
        }
        MemLoader::new()
            .with("app/jadpo.yaml", "app: many\n")
            .with("app/app.jadpo", src)
    }

    /// Diagnostics and lowered program, compiled on `threads` threads.
    fn compiled(loader: &MemLoader, threads: usize) -> String {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
        let Ok(pool) = pool else {
            return String::from("no pool");
        };
        pool.install(|| {
            let c = crate::compile(loader, "app");
            let actions = c.program.map(|p| (p.actions, p.entries));
            format!("{:?}\n{:?}", c.diagnostics, actions)
        })
    }

    #[test]
    fn same_output_whatever_the_thread_count() {
        let loader = app(300);
        let one = compiled(&loader, 1);
        assert!(one.matches("name.unknown_variable").count() >= 300);
        assert_eq!(one, compiled(&loader, 4));
        assert_eq!(one, compiled(&loader, 3));
    }
}
