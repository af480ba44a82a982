//! Reading manifest values out of the spanned YAML tree: known keys with
//! "did you mean" help, typed values, durations, names. Every diagnostic made
//! here carries a span into the manifest.

use super::yaml::{Node, Value};
use crate::diag::{nearest, Diagnostic};
use crate::span::{FileId, Span, Spanned};

/// One manifest being read, and the diagnostics found in it.
pub struct Reader<'t> {
    pub file: FileId,
    pub text: &'t str,
    pub diags: Vec<Diagnostic>,
}

/// The checked entries of one YAML mapping.
pub struct Fields<'n> {
    entries: Vec<(&'n str, &'n Node, &'n Node)>,
    /// The mapping itself.
    pub node: &'n Node,
}

impl<'n> Fields<'n> {
    pub fn get(&self, key: &str) -> Option<&'n Node> {
        self.entry(key).map(|(_, v)| v)
    }

    /// The key node and the value node.
    pub fn entry(&self, key: &str) -> Option<(&'n Node, &'n Node)> {
        self.entries
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, k, v)| (*k, *v))
    }
}

impl<'t> Reader<'t> {
    pub fn new(file: FileId, text: &'t str) -> Self {
        Reader {
            file,
            text,
            diags: Vec::new(),
        }
    }

    pub fn span(&self, node: &Node) -> Span {
        node.span(self.file)
    }

    /// Checks that `node` is a mapping whose keys are among `allowed`.
    /// `what` names the mapping for messages: "`provider`", "operation `x`".
    pub fn fields<'n>(&mut self, node: &'n Node, what: &str, allowed: &[&str]) -> Option<Fields<'n>>
    where
        't: 'n,
    {
        let Value::Map(map) = &node.value else {
            self.wrong_type(node, &format!("{what} to be a mapping of settings"));
            return None;
        };
        let mut entries: Vec<(&'n str, &'n Node, &'n Node)> = Vec::new();
        for (key, value) in map {
            // A bare `y` or `1` key is still the key the author wrote.
            let Some(name) = key.scalar_text(self.text) else {
                self.wrong_type(key, &format!("a setting name in {what}"));
                continue;
            };
            if let Some((_, first, _)) = entries.iter().find(|(k, _, _)| *k == name) {
                let first_span = self.span(first);
                self.push(
                    Diagnostic::error(
                        "manifest.duplicate_key",
                        self.span(key),
                        format!("`{name}` is set twice in {what}"),
                    )
                    .with_label("set again here")
                    .with_related(first_span, "first set here")
                    .with_reason("YAML keeps only one value per key, so one of the two would be silently lost")
                    .with_fix(format!("keep one `{name}:`")),
                );
                continue;
            }
            if !allowed.contains(&name) {
                self.unknown_key(key, name, what, allowed);
                continue;
            }
            entries.push((name, key, value));
        }
        Some(Fields { entries, node })
    }

    fn unknown_key(&mut self, key: &Node, name: &str, what: &str, allowed: &[&str]) {
        let span = self.span(key);
        let mut d = Diagnostic::error(
            "manifest.unknown_key",
            span,
            format!("`{name}` is not a setting of {what}"),
        )
        .with_label("unknown setting")
        .with_reason("a misspelt setting would otherwise be ignored and its default used");
        match nearest(name, allowed.iter().copied()) {
            Some(near) => {
                d = d.with_did_you_mean(span, near);
            }
            None => {
                d = d.with_fix(format!("remove `{name}`"));
            }
        }
        d = d.with_help(format!(
            "the settings of {what} are: {}",
            allowed.join(", ")
        ));
        self.push(d);
    }

    pub fn push(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// "expected X, found Y" at the node.
    pub fn wrong_type(&mut self, node: &Node, expected: &str) {
        let span = self.span(node);
        self.push(
            Diagnostic::error(
                "manifest.wrong_type",
                span,
                format!("expected {expected}, found {}", node.kind()),
            )
            .with_label(format!("this is {}", node.kind())),
        );
    }

    /// A required key is absent from a mapping.
    pub fn missing_key(&mut self, at: &Node, key: &str, what: &str, why: &str, example: &str) {
        let span = self.header_span(at);
        self.push(
            Diagnostic::error(
                "manifest.missing_key",
                span,
                format!("{what} has no `{key}:`"),
            )
            .with_label(format!("`{key}:` is required here"))
            .with_reason(why.to_string())
            .with_fix(format!("add `{example}`")),
        );
    }

    /// A mapping's span can cover many lines; point at its first line.
    pub fn header_span(&self, node: &Node) -> Span {
        let start = node.start as usize;
        let end = self
            .text
            .get(start..node.end as usize)
            .and_then(|s| s.find('\n'))
            .map_or(node.end as usize, |i| start + i);
        Span::new(self.file, node.start, end as u32)
    }

    /// A string value (numbers and booleans written bare count as their text).
    pub fn text(&mut self, node: &Node, expected: &str) -> Option<Spanned<String>> {
        match &node.value {
            Value::Str(s) => Some(Spanned::new(s.clone(), self.span(node))),
            _ => {
                self.wrong_type(node, expected);
                None
            }
        }
    }

    /// Scalar text, taking `3` or `3.1` as written.
    pub fn scalar(&mut self, node: &Node, expected: &str) -> Option<Spanned<String>> {
        match node.scalar_text(self.text) {
            Some(s) => Some(Spanned::new(s.to_string(), self.span(node))),
            None => {
                self.wrong_type(node, expected);
                None
            }
        }
    }

    pub fn bool(&mut self, node: &Node, what: &str) -> Option<bool> {
        match &node.value {
            Value::Bool(b) => Some(*b),
            Value::Str(s) => {
                self.wrong_type(node, &format!("true or false for `{what}`"));
                if let Some(meant) = yaml_1_1_bool(s) {
                    self.explain_yaml_1_1(s, meant);
                }
                None
            }
            _ => {
                self.wrong_type(node, &format!("true or false for `{what}`"));
                None
            }
        }
    }

    /// The reason and fix for `yes`, `off` and the other words YAML 1.1
    /// read as booleans, on the diagnostic just pushed.
    fn explain_yaml_1_1(&mut self, word: &str, meant: bool) {
        if let Some(d) = self.diags.pop() {
            self.diags.push(
                d.with_reason(format!(
                    "manifests are YAML 1.2, where `{word}` is text; only YAML 1.1 read it as {meant}"
                ))
                .with_fix(format!("write `{meant}`")),
            );
        }
    }

    /// A whole number in `min..=max`.
    pub fn int(&mut self, node: &Node, what: &str, min: i128, max: i128) -> Option<i128> {
        let Value::Int(n) = node.value else {
            self.wrong_type(node, &format!("a whole number for `{what}`"));
            return None;
        };
        if n < min || n > max {
            let span = self.span(node);
            self.push(
                Diagnostic::error(
                    "manifest.bad_value",
                    span,
                    format!("`{what}` must be between {min} and {max}, not {n}"),
                )
                .with_label("out of range"),
            );
            return None;
        }
        Some(n)
    }

    /// A duration such as `24h`, `500ms` or `1h30m`, in milliseconds, above zero.
    pub fn duration(&mut self, node: &Node, what: &str) -> Option<Spanned<u64>> {
        let span = self.span(node);
        let text = node.scalar_text(self.text).unwrap_or("");
        match parse_duration(text) {
            Some(ms) if ms > 0 => Some(Spanned::new(ms, span)),
            Some(_) => {
                self.push(
                    Diagnostic::error(
                        "manifest.bad_duration",
                        span,
                        format!("`{what}` must be longer than zero"),
                    )
                    .with_label("zero duration")
                    .with_reason(duration_reason(what)),
                );
                None
            }
            None => {
                let shown = if text.is_empty() {
                    node.kind().to_string()
                } else {
                    format!("`{text}`")
                };
                self.push(
                    Diagnostic::error(
                        "manifest.bad_duration",
                        span,
                        format!("expected a duration such as 24h or 500ms for `{what}`, found {shown}"),
                    )
                    .with_label("not a duration")
                    .with_reason(duration_reason(what))
                    .with_help("a duration is a whole number followed by ms, s, m or h; parts may be combined, as in 1h30m"),
                );
                None
            }
        }
    }

    /// A list of names (`[CardDeclined, InvalidEmail]`).
    pub fn name_list(&mut self, node: &Node, what: &str) -> Vec<Spanned<String>> {
        let Value::Seq(items) = &node.value else {
            self.wrong_type(
                node,
                &format!("a list of names for `{what}`, such as [CardDeclined]"),
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for item in items {
            if let Some(name) = self.type_name(item, what) {
                out.push(name);
            }
        }
        out
    }

    /// A type or failure name: `Customer`, `CardDeclined`.
    pub fn type_name(&mut self, node: &Node, what: &str) -> Option<Spanned<String>> {
        let name = self.text(node, &format!("a name for `{what}`"))?;
        if !is_identifier(&name.node) {
            self.push(
                Diagnostic::error(
                    "manifest.bad_name",
                    name.span,
                    format!("`{}` is not a name a `.jadpo` file can declare", name.node),
                )
                .with_label("not a name")
                .with_help("names are letters, digits and `_`, starting with a letter, such as CustomerCreate"),
            );
            return None;
        }
        Some(name)
    }
}

/// `500ms`, `10s`, `5m`, `24h`, `1h30m` to milliseconds.
pub fn parse_duration(text: &str) -> Option<u64> {
    let mut total: u64 = 0;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return None;
        }
        let (num, after) = rest.split_at(digits);
        let n: u64 = num.parse().ok()?;
        let (unit_ms, len) = if after.starts_with("ms") {
            (1, 2)
        } else if after.starts_with('s') {
            (1_000, 1)
        } else if after.starts_with('m') {
            (60_000, 1)
        } else if after.starts_with('h') {
            (3_600_000, 1)
        } else {
            return None;
        };
        total = total.checked_add(n.checked_mul(unit_ms)?)?;
        rest = after.get(len..)?;
    }
    Some(total)
}

/// Letters, digits and `_`, starting with a letter.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// lower_snake_case: a package name.
pub fn is_package_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// `customers.create`: lower_snake_case segments joined by dots.
pub fn is_operation_name(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(is_package_name)
}

/// The boolean YAML 1.1 gave a word that YAML 1.2 reads as text.
fn yaml_1_1_bool(word: &str) -> Option<bool> {
    match word.to_ascii_lowercase().as_str() {
        "yes" | "y" | "on" => Some(true),
        "no" | "n" | "off" => Some(false),
        _ => None,
    }
}

/// Why a manifest's duration must be exact: what the checker and the
/// runtime do with it.
fn duration_reason(what: &str) -> String {
    match what {
        "window" => "the window is how long the provider keeps an idempotency key: every \
                     retry of a keyed step must be sent within it, so a value that is not a \
                     duration is refused rather than guessed"
            .to_string(),
        "timeout" => "the timeout bounds every call of the operation, and routes' deadlines \
                      are checked against it, so a value that is not a duration is refused \
                      rather than guessed"
            .to_string(),
        other => format!(
            "`{other}` is a length of time the checker and the runtime rely on, so a value \
             that is not a duration is refused rather than guessed"
        ),
    }
}
