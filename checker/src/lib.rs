//! Jadpo step analyzer: per-action control flow and call graph, summaries
//! computed once bottom-up, the rules of design sections 5 and 6, the plan
//! and step-shape digests. Sees only the IR, never tokens or the AST.

// Indexing that can panic is refused in the core: tables are indexed by
// their own ids (`IndexVec`), and anything else goes through `get`.
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod analysis;
mod cx;
pub mod plan;
mod pool;
pub mod registry;
pub mod rules;

pub use cx::Cx;

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::ir::Program;
use jadpo_compiler::source::Files;

/// Which unit is being checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The app: its actions are checked, app rules apply, findings are
    /// reported in app sources only.
    App,
    /// One package, by name (`jadpo publish`): its own actions are checked,
    /// app rules never apply.
    Package(String),
}

/// The checker's answer for one program.
pub struct Analysis {
    pub diagnostics: Vec<Diagnostic>,
    /// The plan (`jadpo build`); for a package, its surface.
    pub plan: plan::Built,
}

/// The checker's caches, kept by a workspace between runs of one app.
#[derive(Default)]
pub struct Caches {
    pub summaries: analysis::Cache,
    pub rules: rules::Cache,
}

/// One run of the checker: the analysis (kept by the editor, which plans
/// actions from it on demand), the rules' findings, and the plan when it
/// was asked for.
pub struct Checked {
    pub analysed: analysis::Analysed,
    pub diagnostics: Vec<Diagnostic>,
    pub plan: Option<plan::Built>,
}

/// Which plan a run builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    /// None (`jadpo check`, the editor).
    Nothing,
    /// The plan `jadpo build` writes; for a package, its surface.
    Whole,
    /// The plan of the checked unit's own actions, which `jadpo test` runs
    /// a package's tests on (as a `Built::App`).
    Tests,
}

/// Analyses `program` and runs the rules, reusing what `caches` kept where
/// its inputs are unchanged (and keeping this run's there), and builds the
/// plan `wanted`. A cached run gives exactly what a fresh one gives.
pub fn run(
    program: &Program,
    files: &Files,
    scope: &Scope,
    caches: Option<&mut Caches>,
    wanted: Wanted,
) -> Checked {
    pool::install(|| {
        let (summaries, rules_cache) = match caches {
            Some(c) => (Some(&mut c.summaries), Some(&mut c.rules)),
            None => (None, None),
        };
        let analysed = analysis::run(program, summaries);
        let cx = Cx {
            program,
            files,
            scope,
            analysed: &analysed,
        };
        let judge = || match rules_cache {
            Some(cache) => rules::run_cached(&cx, cache),
            None => rules::run(&cx),
        };
        let (diagnostics, plan) = match wanted {
            Wanted::Nothing => (judge(), None),
            Wanted::Whole => {
                let (d, p) = rayon::join(judge, || plan::build(&cx));
                (d, Some(p))
            }
            Wanted::Tests => {
                let (d, p) = rayon::join(judge, || plan::test_plan(&cx));
                (d, Some(plan::Built::App(p)))
            }
        };
        Checked {
            analysed,
            diagnostics,
            plan,
        }
    })
}

/// The diagnostics of [`check`] without building the plan.
pub fn diagnose(program: &Program, files: &Files, scope: Scope) -> Vec<Diagnostic> {
    with_analysis(program, files, &scope, rules::run)
}

pub fn check(program: &Program, files: &Files, scope: Scope) -> Analysis {
    with_analysis(program, files, &scope, |cx| {
        let (diagnostics, plan) = rayon::join(|| rules::run(cx), || plan::build(cx));
        Analysis { diagnostics, plan }
    })
}

pub fn check_for_tests(
    program: &Program,
    files: &Files,
    scope: Scope,
) -> (Vec<Diagnostic>, plan::Plan) {
    with_analysis(program, files, &scope, |cx| {
        rayon::join(|| rules::run(cx), || plan::test_plan(cx))
    })
}

/// Analyses every action on the checker's pool, runs `then` over the
/// result, and frees the summaries on all threads.
fn with_analysis<R: Send>(
    program: &Program,
    files: &Files,
    scope: &Scope,
    then: impl FnOnce(&Cx) -> R + Send,
) -> R {
    pool::install(|| {
        let analysed = analysis::analyse(program);
        let cx = Cx {
            program,
            files,
            scope,
            analysed: &analysed,
        };
        let result = then(&cx);
        analysed.release();
        result
    })
}
