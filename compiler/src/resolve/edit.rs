//! What an edit changed, as the language server's next resolution sees it
//! (`jadpo check` resolves once and keeps nothing): which files changed
//! since the last resolution, their text and action bodies then, and the
//! *context*: the same files by id and path, the same tokens outside
//! action bodies in every source (a body edit, a comment or a blank line
//! do not change it; a new declaration, a changed header, test or route,
//! or a changed manifest do), and the same files with syntax errors. In
//! the same context every id the tables hand out means what it meant, and
//! `patch.rs` moves the last resolution with the edit; in another, the
//! app is resolved afresh.
//!
//! A file with syntax errors also counts how the parser read it (each
//! item's kind and the tokens it spans): its recovery may let a damaged
//! body swallow or drop what follows. `compiler/tests/resolve_incremental.rs`
//! compares moved resolutions with fresh ones after edits to every fixture.

use crate::ast::{Item, SourceFileAst};
use crate::intern::Name;
use crate::lexer::{self, Token, TokenKind};
use crate::load::LoadedProject;
use crate::span::{FileId, Span};
use std::collections::HashSet;

/// The files and the context as the last resolution saw them.
#[derive(Default)]
pub(super) struct Seen {
    files: Vec<FileState>,
    context: Option<blake3::Hash>,
}

/// A file as the last resolution saw it.
struct FileState {
    path: String,
    text: std::sync::Arc<str>,
    /// The file's part of the context.
    context: blake3::Hash,
    /// Its action bodies' spans (start, end), when read from its syntax
    /// tree (none for a file counted whole).
    bodies: Box<[(u32, u32)]>,
    /// The names written in each of its bodies, in the same order.
    names: Box<[Box<[Name]>]>,
    /// The names written outside its bodies (declarations, headers, entry
    /// points).
    outside: Box<[Name]>,
    /// Whether it declares an application, a config or a store, or is
    /// read without a syntax tree (a manifest: operations, packages).
    settings: bool,
}

/// A changed file's last text and bodies, as the last resolution saw it.
pub(super) struct Replaced {
    pub file: FileId,
    pub path: String,
    pub text: std::sync::Arc<str>,
    pub bodies: Box<[(u32, u32)]>,
    /// Whether it declared an application, a config or a store, or was
    /// read without a syntax tree.
    pub settings: bool,
}

/// What changed since the last resolution.
pub(super) struct Edit {
    /// Whether the context is the one the last resolution was made in.
    pub same_context: bool,
    /// The changed files, as they were.
    pub replaced: Vec<Replaced>,
    /// Whether the files are the last resolution's, by id and path.
    pub same_files: bool,
}

impl Seen {
    /// Notes which files changed since the last resolution (`last`: there
    /// is one to move) and whether the context is the same.
    pub(super) fn begin(
        &mut self,
        last: bool,
        project: &LoadedProject,
        asts: &[SourceFileAst],
        syntax_files: &HashSet<FileId>,
    ) -> Edit {
        let before = self.files.len();
        let (context, replaced) = self.refresh(project, asts, syntax_files);
        let same_context = last && self.context == Some(context);
        self.context = Some(context);
        let same_files = before == self.files.len()
            && replaced.iter().all(|r| {
                self.files
                    .get(r.file.0 as usize)
                    .is_some_and(|f| f.path == r.path)
            });
        Edit {
            same_context,
            replaced,
            same_files,
        }
    }

    /// How many files the last resolution saw.
    pub(super) fn files(&self) -> usize {
        self.files.len()
    }

    /// The names written in the body of `file` that starts at `start`.
    pub(super) fn body_names(&self, file: FileId, start: u32) -> Option<&[Name]> {
        let f = self.files.get(file.0 as usize)?;
        let at = f.bodies.binary_search_by_key(&start, |b| b.0).ok()?;
        f.names.get(at).map(|n| &n[..])
    }

    /// The names written outside the bodies of `file` (all of them for a
    /// file read without a syntax tree: `None`).
    pub(super) fn outside_names(&self, file: FileId) -> Option<&[Name]> {
        let f = self.files.get(file.0 as usize)?;
        (!f.settings).then_some(&f.outside[..])
    }

    /// Whether `file` declares an application, a config or a store, or
    /// has no syntax tree.
    pub(super) fn settings(&self, file: FileId) -> bool {
        self.files.get(file.0 as usize).is_some_and(|f| f.settings)
    }

    /// The action bodies' spans of `file` as the last refresh read them.
    pub(super) fn bodies_of(&self, file: FileId) -> Option<&[(u32, u32)]> {
        self.files.get(file.0 as usize).map(|f| &f.bodies[..])
    }

    /// Compares every file with the last resolution's, and returns the
    /// context hash and the changed files as they were.
    fn refresh(
        &mut self,
        project: &LoadedProject,
        asts: &[SourceFileAst],
        syntax_files: &HashSet<FileId>,
    ) -> (blake3::Hash, Vec<Replaced>) {
        let files = &project.files;
        self.files.truncate(files.len());
        let by_file: std::collections::HashMap<FileId, &SourceFileAst> =
            asts.iter().map(|a| (a.file, a)).collect();
        let mut all = blake3::Hasher::new();
        let mut replaced = Vec::new();
        all.update(&(files.len() as u64).to_le_bytes());
        for (id, file) in files.iter() {
            let index = id.0 as usize;
            let same = self.files.get(index).is_some_and(|f| {
                f.path == file.path && crate::source::same_text(&f.text, &file.text)
            });
            if !same {
                let ast = by_file.get(&id).copied();
                let read = file_context(id, &file.text, ast, syntax_files);
                let state = FileState {
                    path: file.path.clone(),
                    text: file.text.clone(),
                    context: read.context,
                    bodies: read.bodies,
                    names: read.names,
                    outside: read.outside,
                    settings: ast.is_none_or(declares_settings),
                };
                match self.files.get_mut(index) {
                    Some(slot) => {
                        let old = std::mem::replace(slot, state);
                        replaced.push(Replaced {
                            file: id,
                            path: old.path,
                            text: old.text,
                            bodies: old.bodies,
                            settings: old.settings,
                        });
                    }
                    None => self.files.push(state),
                }
            }
            let state = &self.files[index];
            all.update(&(file.path.len() as u64).to_le_bytes());
            all.update(file.path.as_bytes());
            all.update(format!("{:?}", file.unit).as_bytes());
            all.update(state.context.as_bytes());
        }
        let mut broken: Vec<u32> = syntax_files.iter().map(|f| f.0).collect();
        broken.sort_unstable();
        for f in broken {
            all.update(&f.to_le_bytes());
        }
        (all.finalize(), replaced)
    }
}

/// One piece of a file as the context reads it: a token outside the
/// action bodies, or a whole body.
#[derive(Clone, Copy)]
pub(super) struct Piece {
    pub start: u32,
    pub end: u32,
    /// A token's, whether it starts a line; `None` for a body.
    pub line: Option<bool>,
}

/// The pieces of `text`, whose action bodies are `bodies`, in order; each
/// token is given to `each` with the index of the body holding it.
pub(super) fn pieces(
    file: FileId,
    text: &str,
    bodies: &[(u32, u32)],
    each: &mut dyn FnMut(Option<usize>, &Token),
) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut next = bodies.iter().enumerate().peekable();
    for token in lexer::lex(file, text).tokens {
        let (start, end) = (token.span.start, token.span.end);
        while next.peek().is_some_and(|(_, (_, b_end))| *b_end <= start) {
            next.next();
        }
        match next.peek() {
            Some(&(i, &(b_start, b_end))) if b_start <= start && end <= b_end => {
                each(Some(i), &token);
                if b_start == start {
                    out.push(Piece {
                        start,
                        end: b_end,
                        line: None,
                    });
                }
            }
            _ => {
                each(None, &token);
                out.push(Piece {
                    start,
                    end,
                    line: Some(lexer::starts_line(text, start)),
                });
            }
        }
    }
    out
}

/// What a file's refresh reads of it.
struct Read {
    context: blake3::Hash,
    bodies: Box<[(u32, u32)]>,
    names: Box<[Box<[Name]>]>,
    outside: Box<[Name]>,
}

/// A file's part of the context: the tokens outside action bodies, and
/// its bodies' spans. A file the parser had to recover adds how it read
/// it: each item's kind and the tokens it spans, since a recovered body can
/// swallow or drop what follows it. Without a syntax tree, the whole text.
/// Also the names written in each body.
fn file_context(
    id: FileId,
    text: &str,
    ast: Option<&SourceFileAst>,
    syntax_files: &HashSet<FileId>,
) -> Read {
    let Some(ast) = ast else {
        let mut h = blake3::Hasher::new();
        h.update(b"whole");
        h.update(text.as_bytes());
        return Read {
            context: h.finalize(),
            bodies: Box::default(),
            names: Box::default(),
            outside: Box::default(),
        };
    };
    let bodies = body_spans(ast);
    let mut names: Vec<Vec<Name>> = vec![Vec::new(); bodies.len()];
    let mut seen: HashSet<Name, crate::intern::NameHasher> = HashSet::default();
    let mut outside: HashSet<Name, crate::intern::NameHasher> = HashSet::default();
    let mut last = usize::MAX;
    let pieces = pieces(id, text, &bodies, &mut |i, token| {
        let TokenKind::Ident(name) = token.kind else {
            return;
        };
        match i.and_then(|i| Some((i, names.get_mut(i)?))) {
            Some((i, list)) => {
                if i != last {
                    (last, seen) = (i, HashSet::default());
                }
                if seen.insert(name) {
                    list.push(name);
                }
            }
            None => {
                outside.insert(name);
            }
        }
    });
    let mut h = blake3::Hasher::new();
    h.update(b"tokens");
    for piece in &pieces {
        if piece.line.is_none() {
            h.update(b"\x00body");
            continue;
        }
        let slice = text
            .get(piece.start as usize..piece.end as usize)
            .unwrap_or("");
        h.update(&(slice.len() as u64).to_le_bytes());
        h.update(slice.as_bytes());
    }
    if syntax_files.contains(&id) {
        recovered_items(&mut h, ast, &pieces);
    }
    Read {
        context: h.finalize(),
        bodies: bodies.into(),
        names: names.into_iter().map(Vec::into_boxed_slice).collect(),
        outside: outside.into_iter().collect(),
    }
}

fn declares_settings(ast: &SourceFileAst) -> bool {
    ast.items
        .iter()
        .any(|i| matches!(i, Item::Application(_) | Item::Config(_) | Item::Store(_)))
}

/// How the parser read a file it had to recover: each item's kind and the
/// first and last of its `pieces` it spans, by index: offsets move with
/// any edit, and a body's tokens with any edit inside it.
fn recovered_items(h: &mut blake3::Hasher, ast: &SourceFileAst, pieces: &[Piece]) {
    h.update(b"recovered");
    for item in &ast.items {
        let (kind, span) = item_kind_span(item);
        let first = pieces.partition_point(|p| p.start < span.start);
        let last = pieces.partition_point(|p| p.end <= span.end);
        h.update(&[kind]);
        h.update(&(first as u64).to_le_bytes());
        h.update(&(last as u64).to_le_bytes());
    }
}

/// An item's kind, as a tag, and its span.
fn item_kind_span(item: &Item) -> (u8, Span) {
    match item {
        Item::Application(a) => (0, a.span),
        Item::Config(c) => (1, c.span),
        Item::Store(s) => (2, s.span),
        Item::Type(t) => (3, t.span),
        Item::Entity(e) => (4, e.span),
        Item::Failure(f) => (5, f.span),
        Item::Event(e) => (6, e.span),
        Item::Action(a) => (7, a.span),
        Item::Function(f) => (8, f.span),
        Item::Route(r) => (9, r.span),
        Item::Subscriber(s) => (10, s.span),
        Item::Schedule(s) => (11, s.span),
        Item::Fixture(f) => (12, f.span),
        Item::Test(t) => (13, t.span),
        Item::Error(span) => (14, *span),
    }
}

/// The spans of a file's action bodies, in order.
fn body_spans(ast: &SourceFileAst) -> Vec<(u32, u32)> {
    ast.items
        .iter()
        .filter_map(|item| match item {
            Item::Action(a) => Some((a.body.span.start, a.body.span.end)),
            _ => None,
        })
        .collect()
}
