//! GitHub Actions workflow-command annotations (`jadpo check --format
//! github`): one line per diagnostic, such as
//! `::error file=src/a.jadpo,line=3,col=5,endLine=3,endColumn=9,title=step.unkeyed::message`.
//!
//! GitHub takes `col` and `endColumn` only on a one-line range, so a span
//! over several lines gives `line` and `endLine` alone. `endColumn` is the
//! column of the span's last character (GitHub counts it inclusively).

use super::{repo_path, span_positions};
use jadpo_compiler::diag::{Diagnostic, Severity};
use jadpo_compiler::source::Files;

/// One annotation line per diagnostic. `root` is the checked folder as
/// given on the command line, put in front of relative paths.
pub fn render(files: &Files, diagnostics: &[Diagnostic], root: &str) -> String {
    diagnostics
        .iter()
        .map(|d| annotation(files, d, root) + "\n")
        .collect()
}

fn annotation(files: &Files, d: &Diagnostic, root: &str) -> String {
    let command = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let file = repo_path(root, super::file_path(files, d.span));
    let (start, end) = span_positions(files, d.span);
    let mut props = vec![
        format!("file={}", escape_property(&file)),
        format!("line={}", start.line),
    ];
    if start.line == end.line {
        let last = end.column.saturating_sub(1).max(start.column);
        props.push(format!("col={}", start.column));
        props.push(format!("endLine={}", end.line));
        props.push(format!("endColumn={last}"));
    } else {
        props.push(format!("endLine={}", end.line));
    }
    props.push(format!("title={}", escape_property(d.code)));
    format!(
        "::{command} {}::{}",
        props.join(","),
        escape_data(&message(d))
    )
}

/// The summary, then the reason and fixes on their own lines (GitHub shows
/// the newlines).
fn message(d: &Diagnostic) -> String {
    let mut text = d.summary.clone();
    if let Some(reason) = &d.reason {
        text.push_str(&format!("\nreason: {reason}"));
    }
    for fix in &d.fixes {
        text.push_str(&format!("\nfix: {}", fix.message));
    }
    if let Some(help) = &d.help {
        text.push_str(&format!("\nhelp: {help}"));
    }
    text
}

/// Escaping of a command's message: `%`, CR and LF as the runner reads
/// them, and any other character a terminal would obey (an escape) as
/// `\u{1b}`, since the runner's log is shown in a terminal.
pub fn escape_data(text: &str) -> String {
    let data = text
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    super::escape_hostile(&data).into_owned()
}

/// Escaping of a property value: as data, plus `:` and `,`.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_escapes_percent_first_then_newlines() {
        assert_eq!(escape_data("50%\r\nnext"), "50%25%0D%0Anext");
    }

    #[test]
    fn a_span_over_several_lines_gives_no_columns() {
        use jadpo_compiler::source::Unit;
        use jadpo_compiler::span::{FileId, Span};
        let mut files = Files::new();
        files.add("src/a,b.jadpo", "one\ntwo\nthree\n", Unit::App);
        let many = Diagnostic::warning("step.late_failure", Span::new(FileId(0), 1, 9), "50% done");
        let one = Diagnostic::error("name.unknown", Span::new(FileId(0), 4, 7), "x:y");
        assert_eq!(
            render(&files, &[many, one], "app"),
            "::warning file=app/src/a%2Cb.jadpo,line=1,endLine=3,title=step.late_failure::50%25 done\n\
             ::error file=app/src/a%2Cb.jadpo,line=2,col=1,endLine=2,endColumn=3,title=name.unknown::x:y\n"
        );
    }

    #[test]
    fn properties_also_escape_colon_and_comma() {
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
    }
}
