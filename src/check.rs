//! The check of an app, as every command and the tests run it (through
//! the workspace): compile, run the step analyzer, keep what the app's
//! author should see, sort.

use crate::workspace::{Snapshot, Workspace};
use jadpo_checker::Wanted;
use jadpo_compiler::diag::{Diagnostic, Severity};
use jadpo_compiler::ir::Program;
use jadpo_compiler::load::Loader;
use jadpo_compiler::resolve::Lowering;
use jadpo_compiler::source::Files;
use jadpo_compiler::Stats;
use std::path::PathBuf;

/// The result of checking one app.
pub struct Outcome {
    pub files: Files,
    /// What the app's author sees, sorted.
    pub diagnostics: Vec<Diagnostic>,
    /// `None` when the project could not be checked at all (exit status 2).
    pub program: Option<Program>,
    /// The plan, when the checker ran.
    pub plan: Option<jadpo_checker::plan::Built>,
    pub stats: Stats,
}

/// A run's snapshot, without what only the editor reads.
impl From<Snapshot> for Outcome {
    fn from(snapshot: Snapshot) -> Outcome {
        Outcome {
            files: snapshot.files,
            diagnostics: snapshot.diagnostics,
            program: snapshot.program,
            plan: snapshot.plan,
            stats: snapshot.stats,
        }
    }
}

impl Outcome {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    pub fn has_warnings(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Warning)
    }
}

/// Loads, compiles and checks the app at `root`, and builds its plan.
pub fn check_app(loader: &dyn Loader, root: &str) -> Outcome {
    check_app_with(loader, root, true)
}

/// Like [`check_app`]; the plan is built only when `want_plan` (a plain
/// `jadpo check` needs the diagnostics alone).
pub fn check_app_with(loader: &dyn Loader, root: &str, want_plan: bool) -> Outcome {
    let wanted = if want_plan {
        Wanted::Whole
    } else {
        Wanted::Nothing
    };
    check_app_lowering(loader, root, wanted, Lowering::Effects)
}

/// [`check_app_with`], lowering bodies as `lowering` says (`jadpo test`
/// needs their code).
pub fn check_app_lowering(
    loader: &dyn Loader,
    root: &str,
    wanted: Wanted,
    lowering: Lowering,
) -> Outcome {
    Workspace::once(PathBuf::from(root), lowering, wanted)
        .run(loader)
        .into()
}

/// The documentation of a diagnostic code, for `jadpo explain`.
pub fn rule_doc(code: &str) -> Option<&'static jadpo_compiler::diag::CodeInfo> {
    jadpo_checker::registry::lookup(code)
}

/// `jadpo explain --list`: every code with its severity and summary,
/// grouped by family.
pub fn code_list() -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut family = "";
    for info in jadpo_checker::registry::all() {
        if info.family() != family {
            family = info.family();
            if !out.is_empty() {
                out.push('\n');
            }
            let _ = writeln!(out, "{family}");
        }
        let _ = writeln!(
            out,
            "  {:<36} {:<7} {}",
            info.code,
            info.severity.as_str(),
            info.summary
        );
    }
    out
}

/// Every code with documentation, for "did you mean" suggestions.
pub fn rule_codes() -> Vec<&'static str> {
    jadpo_checker::registry::all()
        .iter()
        .map(|r| r.code)
        .collect()
}
