//! Our own diagnostic data model. Renderers (ariadne, JSON, SARIF, GitHub)
//! consume it; nothing here knows how it is drawn.
//!
//! One root diagnostic per mistake: a `summary` in the author's terms, the
//! smallest `span`, labelled `related` spans (each step on an offending path),
//! the `reason`, and the `fixes`.

use crate::span::Span;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// A diagnostic code's registered definition: its code, default severity,
/// one-line summary and documentation (the text of `jadpo explain`, editor
/// help, SARIF rule help and the generated `spec/diagnostics/` page).
#[derive(Clone, Copy, Debug)]
pub struct CodeInfo {
    pub code: &'static str,
    pub severity: Severity,
    pub summary: &'static str,
    pub doc: &'static str,
}

impl CodeInfo {
    /// The code's family: `type` of `type.mismatch`.
    pub fn family(&self) -> &'static str {
        self.code.split_once('.').map_or(self.code, |(f, _)| f)
    }

    /// A finding of this code, with the code's own severity: a rule never
    /// writes its code or severity a second time.
    pub fn report(&self, span: Span, summary: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.code, self.severity, span, summary)
    }
}

/// A secondary location with its own message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// A mechanical text replacement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Edit {
    pub span: Span,
    pub replacement: String,
}

/// One way to fix the mistake; `edits` is empty when the fix is not mechanical.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fix {
    pub message: String,
    pub edits: Vec<Edit>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Stable code such as `syntax.expected`, `name.unknown`, `step.too_many`.
    pub code: &'static str,
    pub severity: Severity,
    /// The problem, in the author's terms.
    pub summary: String,
    /// Primary location: the smallest span that shows the mistake.
    pub span: Span,
    /// Short text drawn under the primary span.
    pub label: Option<String>,
    pub related: Vec<Label>,
    /// Why this is a problem.
    pub reason: Option<String>,
    pub fixes: Vec<Fix>,
    pub help: Option<String>,
}

/// `a` before a type name that starts with a vowel sound becomes `an`:
/// messages are written `a `{name}`` whatever the name, and `a `Int`` is
/// wrong. Only capitalised names are touched (`Int`, `Instant`, `Enum`,
/// `Object`, `Amount`); `Unit` and `Uuid` start with a consonant sound.
pub fn articles(text: String) -> String {
    if !text.contains("a `") {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 4);
    let mut rest = text.as_str();
    while let Some(at) = rest.find("a `") {
        let (before, after) = rest.split_at(at);
        let word_start = before.is_empty() || before.ends_with([' ', '(', '\n']);
        let vowel = after
            .get(3..)
            .and_then(|t| t.chars().next())
            .is_some_and(|c| matches!(c, 'A' | 'E' | 'I' | 'O'));
        out.push_str(before);
        out.push_str(if word_start && vowel { "an `" } else { "a `" });
        rest = after.get(3..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

impl Diagnostic {
    pub fn new(
        code: &'static str,
        severity: Severity,
        span: Span,
        summary: impl Into<String>,
    ) -> Self {
        Diagnostic {
            code,
            severity,
            summary: articles(summary.into()),
            span,
            label: None,
            related: Vec::new(),
            reason: None,
            fixes: Vec::new(),
            help: None,
        }
    }

    pub fn error(code: &'static str, span: Span, summary: impl Into<String>) -> Self {
        Self::new(code, Severity::Error, span, summary)
    }

    pub fn warning(code: &'static str, span: Span, summary: impl Into<String>) -> Self {
        Self::new(code, Severity::Warning, span, summary)
    }

    pub fn with_label(mut self, message: impl Into<String>) -> Self {
        self.label = Some(articles(message.into()));
        self
    }

    pub fn with_related(mut self, span: Span, message: impl Into<String>) -> Self {
        self.related.push(Label {
            span,
            message: articles(message.into()),
        });
        self
    }

    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(articles(reason.into()));
        self
    }

    pub fn with_fix(mut self, message: impl Into<String>) -> Self {
        self.fixes.push(Fix {
            message: articles(message.into()),
            edits: Vec::new(),
        });
        self
    }

    pub fn with_edit_fix(mut self, message: impl Into<String>, edits: Vec<Edit>) -> Self {
        self.fixes.push(Fix {
            message: articles(message.into()),
            edits,
        });
        self
    }

    /// The fix "did you mean `near`?", replacing `span` with `near`.
    pub fn with_did_you_mean(self, span: Span, near: &str) -> Self {
        let edit = Edit {
            span,
            replacement: near.to_string(),
        };
        self.with_edit_fix(format!("did you mean `{near}`?"), vec![edit])
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(articles(help.into()));
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The fixed order every output uses: file, position, code, summary.
    pub fn sort_key(&self) -> (u32, u32, u32, &'static str, &str) {
        (
            self.span.file.0,
            self.span.start,
            self.span.end,
            self.code,
            &self.summary,
        )
    }
}

/// Sorts diagnostics into the fixed output order and drops exact duplicates.
pub fn sort_diagnostics(diags: &mut Vec<Diagnostic>) {
    diags.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    diags.dedup();
}

/// The nearest name to `wanted` among `candidates`, for "did you mean" help.
pub fn nearest<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w: Vec<char> = wanted.chars().collect();
    let limit = (w.len() / 3).max(1);
    let mut rows = (Vec::new(), Vec::new(), Vec::new());
    candidates
        .into_iter()
        .filter_map(|c| within(&w, c, limit, &mut rows).map(|d| (d, c)))
        .min()
        .map(|(_, c)| c)
}

/// The edit distance of `a` and `b` when it is at most `limit`: the rows
/// are reused, and a row whose every entry is past the limit ends it.
fn within(
    a: &[char],
    b: &str,
    limit: usize,
    (bc, prev, cur): &mut (Vec<char>, Vec<usize>, Vec<usize>),
) -> Option<usize> {
    bc.clear();
    bc.extend(b.chars());
    if bc.len().abs_diff(a.len()) > limit {
        return None;
    }
    prev.clear();
    prev.extend(0..=bc.len());
    for (i, ca) in a.iter().enumerate() {
        cur.clear();
        let mut left = i + 1;
        cur.push(left);
        let mut best = left;
        for (j, cb) in bc.iter().enumerate() {
            let diagonal = prev.get(j).copied().unwrap_or(usize::MAX - 1);
            let up = prev.get(j + 1).copied().unwrap_or(usize::MAX - 1);
            left = (diagonal + usize::from(ca != cb)).min(up + 1).min(left + 1);
            best = best.min(left);
            cur.push(left);
        }
        if best > limit {
            return None;
        }
        std::mem::swap(prev, cur);
    }
    prev.last().copied().filter(|d| *d <= limit)
}

/// Levenshtein distance over chars.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = Vec::with_capacity(b.len() + 1);
        let mut left = i + 1;
        cur.push(left);
        // The previous row's entries above-left and above each of `b`.
        let above = prev.iter().zip(prev.iter().skip(1));
        for (cb, (diagonal, up)) in b.iter().zip(above) {
            left = (diagonal + usize::from(ca != *cb))
                .min(up + 1)
                .min(left + 1);
            cur.push(left);
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}
