//! The files of one check: every `.jadpo` source and manifest, by [`FileId`].

use crate::span::{FileId, Span};

/// Which unit a file belongs to; used for scoping and to decide where a
/// finding is reported.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Unit {
    App,
    Stdlib,
    /// A package, by its name.
    Package(String),
}

#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Path shown to the user, with `/` separators, relative to the checked folder
    /// where possible (`src/billing.jadpo`, `packages/stripe/package.yaml`,
    /// `<bundled>/stripe/stripe.jadpo`).
    pub path: String,
    pub text: String,
    pub unit: Unit,
}

/// All files of one check. Files are added in a deterministic order (sorted by
/// unit, then path) by the loader, so `FileId`s are stable across runs.
#[derive(Clone, Debug, Default)]
pub struct Files {
    files: Vec<SourceFile>,
}

impl Files {
    pub fn new() -> Self {
        Files::default()
    }

    pub fn add(&mut self, path: impl Into<String>, text: impl Into<String>, unit: Unit) -> FileId {
        let id = FileId(self.files.len() as u32);
        self.files.push(SourceFile {
            path: path.into(),
            text: text.into(),
            unit,
        });
        id
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (FileId(i as u32), f))
    }

    /// The source text under a span.
    pub fn slice(&self, span: Span) -> &str {
        let text = &self.get(span.file).text;
        text.get(span.range()).unwrap_or("")
    }
}
