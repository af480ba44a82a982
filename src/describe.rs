//! What the program's declarations are, in Markdown for people: an
//! operation's facts (the language server's hover and `jadpo doc` say the
//! same thing the same way).

use jadpo_compiler::duration;
use jadpo_compiler::ir::{OpId, Program};

pub fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// An operation's facts as Markdown list items: whether it changes, is
/// idempotent and keyed (with the provider's header and window), its
/// timeout and attempts, its failures, and a large answer.
pub fn operation_facts(program: &Program, id: OpId) -> String {
    let op = program.op(id);
    let idem = program
        .packages
        .get(op.package)
        .and_then(|p| p.idempotency.as_ref());
    let keyed = match (idem, op.window_ms) {
        (Some(i), Some(w)) => format!(
            "yes (`{}`, provider window {})",
            i.header,
            duration::text(w)
        ),
        _ => "no".to_string(),
    };
    let mut failures: Vec<&str> = op
        .failures
        .iter()
        .map(|f| program.failure(*f).qualified.as_str())
        .collect();
    failures.sort();
    // A read changes nothing, so whether it is idempotent or keyed is no
    // question: it is safe to send again as it is.
    let mut lines = match op.changes {
        true => vec![
            "- changes: yes".to_string(),
            format!("- idempotent: {}", yes_no(op.idempotent)),
            format!("- keyed: {keyed}"),
        ],
        false => vec!["- changes: no (a read: safe to send again as it is)".to_string()],
    };
    lines.extend([format!(
        "- timeout {} x {} attempt{}",
        duration::text(op.timeout_ms),
        op.attempts,
        if op.attempts == 1 { "" } else { "s" }
    )]);
    if !failures.is_empty() {
        lines.push(format!("- fails: {}", failures.join(", ")));
    }
    if let Some(h) = &op.http {
        lines.push(format!(
            "- http: `{} {}`{}",
            h.method.as_str(),
            path_text(&h.path),
            match (h.method.has_body(), h.encoding) {
                (true, jadpo_compiler::http::Encoding::Form) => " (form body)",
                (true, jadpo_compiler::http::Encoding::Json) => " (JSON body)",
                (false, _) => " (fields in the query)",
            }
        ));
    }
    if op.large_output {
        lines.push("- large output (over 1 MB): cannot be a recorded step".to_string());
    }
    lines.join("\n")
}

/// A path template as the package writes it.
fn path_text(parts: &[jadpo_compiler::http::PathPart]) -> String {
    use jadpo_compiler::http::PathPart;
    parts
        .iter()
        .map(|p| match p {
            PathPart::Text(t) => t.clone(),
            PathPart::Field(f) => format!("{{{f}}}"),
            PathPart::Setting(s) => format!("{{${s}}}"),
        })
        .collect()
}
