//! Jadpo step analyzer: per-action control flow and call graph, summaries
//! computed once bottom-up, the rules of design sections 5 and 6, the plan
//! and step-shape digests. Sees only the IR, never tokens or the AST.

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

/// The diagnostics of [`check`] without building the plan.
pub fn diagnose(program: &Program, files: &Files, scope: Scope) -> Vec<Diagnostic> {
    with_analysis(program, files, &scope, rules::run)
}

/// Analyses every action once (bottom-up over the call graph), runs the
/// rules for `scope`, and builds the plan (or the package's surface).
pub fn check(program: &Program, files: &Files, scope: Scope) -> Analysis {
    with_analysis(program, files, &scope, |cx| {
        let (diagnostics, plan) = rayon::join(|| rules::run(cx), || plan::build(cx));
        Analysis { diagnostics, plan }
    })
}

/// [`check`] for `jadpo test`: the diagnostics, and the plan of the actions
/// in scope ([`plan::test_plan`]), a package's included.
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
