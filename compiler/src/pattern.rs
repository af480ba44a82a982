//! `pattern:` and `format: email` constraints: regular expressions in the `regex` crate's
//! syntax, matched with search semantics (as JSON Schema: the pattern may
//! match anywhere unless anchored with `^` and `$`). Compilation is bounded,
//! so a hostile pattern is refused rather than built.

/// The most memory a compiled pattern may use.
const SIZE_LIMIT: usize = 1 << 20;

/// A compiled pattern, or why it is not one.
pub fn compile(pattern: &str) -> Result<regex::Regex, String> {
    regex::RegexBuilder::new(pattern)
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => "the pattern is too large".to_string(),
            other => first_line(&other.to_string()),
        })
}

/// Whether `pattern` matches somewhere in `text`; `None` when the pattern
/// is not a valid one (reported where it is declared).
pub fn matches(pattern: &str, text: &str) -> Option<bool> {
    compile(pattern).ok().map(|re| re.is_match(text))
}

/// `format: email`: one `@`, a non-empty local part, and a domain with a
/// dot that neither starts nor ends it, no whitespace.
pub fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !s.chars().any(char::is_whitespace)
}

/// The regex crate's message without its drawing of the pattern.
fn first_line(message: &str) -> String {
    message
        .lines()
        .rev()
        .find(|l| l.starts_with("error:"))
        .map_or_else(
            || message.to_string(),
            |l| l.trim_start_matches("error: ").to_string(),
        )
}
