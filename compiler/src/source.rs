//! The files of one check: every `.jadpo` source and manifest, by [`FileId`].

use crate::index::IndexVec;
use crate::span::{FileId, Span};
use std::sync::Arc;

/// Which unit a file belongs to; used for scoping and to decide where a
/// finding is reported.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Unit {
    App,
    Stdlib,
    /// A package, by its name.
    Package(String),
}

/// Whether two file texts are equal: the same shared text (a loader that
/// keeps texts hands out the one it keeps) without reading it.
pub fn same_text(a: &Arc<str>, b: &Arc<str>) -> bool {
    Arc::ptr_eq(a, b) || a == b
}

#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Path shown to the user, with `/` separators, relative to the checked folder
    /// where possible (`src/billing.jadpo`, `packages/stripe/package.yaml`,
    /// `<bundled>/stripe/stripe.jadpo`).
    pub path: String,
    /// Shared with the loader that read it and the caches that keep it: an
    /// edit copies no unchanged file, and comparing a kept text with the
    /// same one read again is a pointer comparison.
    pub text: Arc<str>,
    pub unit: Unit,
    /// Built on the first position asked for (most files never need one).
    lines: std::sync::OnceLock<LineIndex>,
}

impl SourceFile {
    /// The file's line index.
    pub fn lines(&self) -> &LineIndex {
        self.lines.get_or_init(|| LineIndex::new(&self.text))
    }

    /// The 1-based position of a byte offset (see [`LineIndex::position`]).
    pub fn position(&self, offset: usize) -> Position {
        self.lines().position(&self.text, offset)
    }
}

/// A 1-based line and column; the column counts characters, not bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// Where each line of a text starts: the one conversion from byte offsets
/// to lines and columns (the renderers, the plan's sites and, by UTF-16
/// columns, the language server all use it). A position costs a binary
/// search and a count within its line.
#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Lines end at a line feed, and at a carriage return that is not the
    /// first half of a CR LF (as every editor and the language server
    /// protocol count them; the lexer reports such a lone one).
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        let bytes = text.as_bytes();
        if !bytes.contains(&b'\r') {
            starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
            return LineIndex { starts };
        }
        for (i, b) in bytes.iter().enumerate() {
            let lone_cr = *b == b'\r' && bytes.get(i + 1) != Some(&b'\n');
            if *b == b'\n' || lone_cr {
                starts.push(i + 1);
            }
        }
        LineIndex { starts }
    }

    /// The 0-based line holding byte `offset`.
    pub fn line(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    /// The byte offset where 0-based `line` starts (the text's end past the
    /// last line).
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.starts.get(line).copied()
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The 1-based position of byte `offset` in `text` (the text this index
    /// was built from), clamped into it and moved back to a character
    /// boundary.
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line(offset);
        let start = self.line_start(line).unwrap_or(0).min(offset);
        Position {
            line: line + 1,
            column: text.get(start..offset).map_or(0, |t| t.chars().count()) + 1,
        }
    }
}

/// All files of one check. Files are added in a deterministic order (sorted by
/// unit, then path) by the loader, so `FileId`s are stable across runs.
#[derive(Clone, Debug, Default)]
pub struct Files {
    files: IndexVec<FileId, SourceFile>,
}

impl Files {
    pub fn new() -> Self {
        Files::default()
    }

    pub fn add(
        &mut self,
        path: impl Into<String>,
        text: impl Into<Arc<str>>,
        unit: Unit,
    ) -> FileId {
        self.files.push(SourceFile {
            path: path.into(),
            text: text.into(),
            unit,
            lines: std::sync::OnceLock::new(),
        })
    }

    /// Drops a file's text, keeping its entry (for the spans of the
    /// diagnostics about it).
    pub fn clear_text(&mut self, id: FileId) {
        if let Some(f) = self.files.get_mut(id) {
            f.text = Arc::from("");
            f.lines = std::sync::OnceLock::new();
        }
    }

    /// An id this set of files gave out is in range; one from elsewhere
    /// is read with [`Files::try_get`].
    #[allow(clippy::indexing_slicing)]
    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id]
    }

    /// The file `id`, or `None` for an id from another set of files.
    pub fn try_get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id)
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files.iter_enumerated()
    }

    /// The 1-based position of a span's start; `None` for a bad id.
    pub fn position(&self, span: Span) -> Option<Position> {
        let file = self.files.get(span.file)?;
        Some(file.position(span.start as usize))
    }

    /// The source text under a span.
    pub fn slice(&self, span: Span) -> &str {
        let text = &self.get(span.file).text;
        text.get(span.range()).unwrap_or("")
    }
}
