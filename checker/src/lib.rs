//! Jadpo step analyzer: per-action control flow and call graph, summaries
//! computed once bottom-up, the rules of design sections 5 and 6, the plan
//! and step-shape digests. Sees only the IR, never tokens or the AST.

pub mod rules;

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::ir::Program;

/// The checker's answer for one program.
pub struct Analysis {
    pub diagnostics: Vec<Diagnostic>,
    /// The plan as JSON (`jadpo build`).
    pub plan: serde_json::Value,
}

pub fn check(program: &Program) -> Analysis {
    let _ = program;
    Analysis {
        diagnostics: Vec::new(),
        plan: serde_json::Value::Null,
    }
}
