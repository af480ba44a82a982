//! Shared checks for the fuzz targets: every span a diagnostic carries names
//! a file and lies inside its text on character boundaries.

// Each target uses only some of these.
#![allow(dead_code)]

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::source::Files;
use jadpo_compiler::span::Span;

/// Panics (a fuzz finding) when a span of `d` is out of its file.
pub fn assert_spans(files: &Files, d: &Diagnostic) {
    let mut spans = vec![d.span];
    spans.extend(d.related.iter().map(|r| r.span));
    spans.extend(d.fixes.iter().flat_map(|f| f.edits.iter().map(|e| e.span)));
    for span in spans {
        assert!((span.file.0 as usize) < files.len(), "span names no file: {d:?}");
        assert_in_text(&files.get(span.file).text, span, d);
    }
}

/// Panics when `span` is out of `text` or splits a character.
pub fn assert_in_text(text: &str, span: Span, d: &Diagnostic) {
    let (start, end) = (span.start as usize, span.end as usize);
    assert!(start <= end && end <= text.len(), "span out of its file: {d:?}");
    assert!(
        text.is_char_boundary(start) && text.is_char_boundary(end),
        "span splits a character: {d:?}"
    );
}
