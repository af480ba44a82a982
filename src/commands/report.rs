//! A check's findings, ready to print in any format: the one place the
//! command line turns diagnostics into its output.

use crate::check::Outcome;
use crate::cli::Format;
use crate::render::{self, Summary};
use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::source::Files;

/// A check's findings and what to say about them.
pub struct Report<'a> {
    pub files: &'a Files,
    pub diagnostics: &'a [Diagnostic],
    pub summary: Summary,
    /// The checked folder as the user named it: human paths start there.
    pub dir: &'a str,
    /// Whether the project could be checked at all.
    pub checked: bool,
    /// Where the diagnostic pages are served, for SARIF's `helpUri`.
    pub docs_url: Option<&'a str>,
}

impl<'a> Report<'a> {
    pub fn of_app(outcome: &'a Outcome, dir: &'a str) -> Self {
        let stats = &outcome.stats;
        Report {
            files: &outcome.files,
            diagnostics: &outcome.diagnostics,
            summary: Summary::new(stats.files, stats.packages, &outcome.diagnostics),
            dir,
            checked: outcome.program.is_some(),
            docs_url: None,
        }
    }

    /// The human output's last line for an app.
    pub fn app_closing(&self) -> String {
        if self.checked {
            self.summary.closing_line()
        } else {
            "could not check this project".to_string()
        }
    }

    /// The JSON document of `--format json` with one more member (`build`,
    /// `publish`): what the command did after checking.
    pub fn json_with(&self, key: &str, value: serde_json::Value) -> String {
        let (shown, omitted) = render::shown(self.diagnostics);
        let summary = self.summary.with_omitted(omitted);
        render::json::render_with(self.files, &shown, summary, key, value)
    }

    /// The output in `format`: at most `render::MAX_PER_FILE` diagnostics
    /// per file, saying how many were left out; `closing` ends the human
    /// output.
    pub fn render(&self, format: Format, color: bool, closing: &str) -> String {
        let (shown, omitted) = render::shown(self.diagnostics);
        let summary = self.summary.with_omitted(omitted);
        let notes: Vec<String> = summary.omitted_line().into_iter().collect();
        let files = self.files;
        let ci = || crate::locate::ci_root(self.dir);
        match format {
            Format::Json => render::json::render(files, &shown, summary),
            Format::Sarif => render::sarif::render_with_notes(
                files,
                &shown,
                &ci(),
                self.checked,
                &notes,
                self.docs_url,
            ),
            Format::Github => {
                let mut out = render::github::render(files, &shown, &ci());
                for note in &notes {
                    out.push_str(&format!(
                        "::notice::{}\n",
                        render::github::escape_data(note)
                    ));
                }
                out
            }
            Format::Human => {
                let mut out = render::human::render_all_from(files, &shown, color, self.dir);
                for note in &notes {
                    out.push_str(&format!("{note}\n"));
                }
                out.push_str(&format!("{closing}\n"));
                out
            }
        }
    }

    /// Prints [`Report::render`] to stdout.
    pub fn print(&self, format: Format, color: bool, closing: &str) {
        super::say(&self.render(format, color, closing));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jadpo_compiler::span::{FileId, Span};

    fn files() -> (Files, FileId) {
        let mut files = Files::new();
        let file = files.add(
            "src/a.jadpo",
            "action a() {}\n",
            jadpo_compiler::source::Unit::App,
        );
        (files, file)
    }

    fn report<'a>(files: &'a Files, diagnostics: &'a [Diagnostic]) -> Report<'a> {
        Report {
            files,
            diagnostics,
            summary: Summary::new(1, 0, diagnostics),
            dir: "app",
            checked: true,
            docs_url: None,
        }
    }

    fn finding(file: FileId) -> Diagnostic {
        Diagnostic::error("name.unknown", Span::new(file, 7, 8), "`a` is unknown")
    }

    #[test]
    fn the_human_output_ends_with_the_closing_line_and_says_what_was_left_out() {
        let (files, file) = files();
        let many: Vec<Diagnostic> = (0..render::MAX_PER_FILE + 2)
            .map(|_| finding(file))
            .collect();
        let out = report(&files, &many).render(Format::Human, false, "CLOSING-LINE");
        assert!(out.ends_with("\nCLOSING-LINE\n"), "{out}");
        let omitted = report(&files, &many)
            .summary
            .with_omitted(2)
            .omitted_line()
            .expect("an omitted line");
        assert!(out.contains(&omitted), "{out}");
    }

    #[test]
    fn machine_formats_are_one_document_without_the_closing_line() {
        let (files, file) = files();
        let found = [finding(file)];
        for format in [Format::Json, Format::Sarif] {
            let out = report(&files, &found).render(format, false, "CLOSING-LINE");
            let doc: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
            assert!(doc.is_object());
            assert!(!out.contains("CLOSING-LINE"));
        }
        let github = report(&files, &found).render(Format::Github, false, "CLOSING-LINE");
        assert!(github.starts_with("::error "), "{github}");
    }

    #[test]
    fn json_with_adds_the_commands_member() {
        let (files, _) = files();
        let out = report(&files, &[]).json_with("build", serde_json::json!({"outcome": "x"}));
        let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        assert_eq!(doc["build"]["outcome"], "x");
    }

    #[test]
    fn a_project_that_could_not_be_checked_says_so_last() {
        let (files, _) = files();
        let mut r = report(&files, &[]);
        r.checked = false;
        assert_eq!(r.app_closing(), "could not check this project");
    }
}
