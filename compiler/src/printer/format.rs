//! `jadpo fmt`: a file's canonical layout, with its comments, or the reason
//! it is left as it is. The result is checked before it is given out: it
//! must parse to the same tree (spans aside) and keep every comment, so a
//! mistake in the printer leaves a file untouched instead of changing it.

use super::Printer;
use crate::diag::Diagnostic;
use crate::parser::parse_with_comments;
use crate::span::FileId;

/// Lines are broken past this many characters.
pub const WIDTH: usize = 100;

/// Why a file is left as it is.
#[derive(Debug)]
pub enum FormatError {
    /// It does not parse: the syntax errors, with spans into the file.
    Syntax(Vec<Diagnostic>),
    /// The printed layout would not read back the same (a formatter bug,
    /// reported rather than written).
    Unstable(String),
}

/// The canonical layout of `text`, worked out on the parser's big-stack
/// threads (printing recurses once per level, as parsing does).
pub fn format_source(text: &str) -> Result<String, FormatError> {
    crate::parser::install(|| format_here(text, true))
}

/// [`format_source`] without checking a changed result: for `jadpo fmt
/// --check`, which writes nothing (a write always checks).
pub fn format_unchecked(text: &str) -> Result<String, FormatError> {
    crate::parser::install(|| format_here(text, false))
}

fn format_here(text: &str, check: bool) -> Result<String, FormatError> {
    let (ast, diags, comments) = parse_with_comments(FileId(0), text);
    if !diags.is_empty() {
        return Err(FormatError::Syntax(diags));
    }
    let mut p = Printer::new(text, comments);
    p.file(&ast);
    let comments = std::mem::take(&mut p.comments);
    let out = tidy(p.out);
    // Unchanged text needs no check: it is the input.
    if check && out != text {
        // The tree goes before the result is parsed: a large file's two
        // trees never live at once.
        let plain = super::print_file(&ast);
        drop(ast);
        verify(text, &plain, &comments, &out)?;
    }
    Ok(out)
}

/// No trailing spaces, no blank lines at the end, one final newline (none
/// for an empty file).
fn tidy(out: String) -> String {
    let mut s = String::with_capacity(out.len());
    for line in out.lines() {
        s.push_str(line.trim_end());
        s.push('\n');
    }
    let kept = s.trim_end_matches('\n').len();
    s.truncate(kept);
    if !s.is_empty() {
        s.push('\n');
    }
    s
}

/// Whether `after` is `before` laid out differently: both parse, to the
/// same tree (spans aside), with the same comments in the same order. For
/// an editor applying part of a file's formatting (range formatting).
pub fn same_program(before: &str, after: &str) -> bool {
    crate::parser::install(|| {
        let (ast, diags, comments) = parse_with_comments(FileId(0), before);
        diags.is_empty() && verify(before, &super::print_file(&ast), &comments, after).is_ok()
    })
}

fn verify(text: &str, plain: &str, comments: &[(u32, u32)], out: &str) -> Result<(), FormatError> {
    let (again, diags, out_comments) = parse_with_comments(FileId(0), out);
    if let Some(d) = diags.first() {
        return Err(FormatError::Unstable(format!(
            "the formatted text does not parse ({}: {})",
            d.code, d.summary
        )));
    }
    // The plain printer is a function of the tree alone (spans aside), and
    // parsing its text gives the tree back (the round-trip property of
    // tests/properties.rs): equal prints mean equal trees. It costs a
    // fraction of comparing the trees' `Debug` text.
    if plain != super::print_file(&again) {
        return Err(FormatError::Unstable(
            "the formatted text reads back as a different program".into(),
        ));
    }
    let texts = |src: &str, list: &[(u32, u32)]| -> Vec<String> {
        list.iter()
            .map(|&(s, e)| {
                src.get(s as usize..e as usize)
                    .unwrap_or("")
                    .trim_end()
                    .to_string()
            })
            .collect()
    };
    if texts(text, comments) != texts(out, &out_comments) {
        return Err(FormatError::Unstable(
            "the formatted text would lose or reorder a comment".into(),
        ));
    }
    Ok(())
}
