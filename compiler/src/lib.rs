//! Jadpo front end: source text to tokens to AST to resolved IR.
//!
//! Phases, each in its own module, each seeing only the previous phase's
//! output: [`load`] (project and package loading, no parsing), [`lexer`],
//! [`parser`] (tokens to [`ast`]), [`resolve`] (names, types, failures,
//! purity; lowers to [`ir`]). [`compile`] runs them in order.
//!
//! Indexing that can panic is denied outside the resolver: the lexer, the
//! parser, the loader and the printer read user input, and index it only
//! through `get` (or iterators). The resolver indexes its
//! own tables by ids it made itself ([`index::IndexVec`]), which are in
//! range by construction.
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod ast;
pub mod codes;
pub mod diag;
pub mod duration;
pub mod http;
pub mod index;
pub mod intern;
pub mod ir;
pub mod lexer;
pub mod load;
pub mod manifest;
pub mod parser;
pub mod pattern;
pub mod printer;
#[allow(clippy::indexing_slicing)]
pub mod resolve;
pub mod retire;
pub mod source;
pub mod span;

use diag::Diagnostic;
use source::Files;

/// What the front end produced for one project.
pub struct Compiled {
    pub files: Files,
    pub diagnostics: Vec<Diagnostic>,
    /// `None` when the project could not be loaded at all (exit status 2).
    pub program: Option<ir::Program>,
    /// Counts for the closing line of `jadpo check`.
    pub stats: Stats,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// App `.jadpo` files checked.
    pub files: usize,
    /// Packages loaded (not counting the standard library).
    pub packages: usize,
}

/// Loads, parses and resolves the app at `root`.
pub fn compile(loader: &dyn load::Loader, root: &str) -> Compiled {
    compile_with(loader, root, resolve::Lowering::Effects)
}

/// [`compile`], lowering bodies as `lowering` says: the runtime asks for
/// [`resolve::Lowering::Code`].
pub fn compile_with(
    loader: &dyn load::Loader,
    root: &str,
    lowering: resolve::Lowering,
) -> Compiled {
    let loaded = match load::load_project(loader, root) {
        Ok(loaded) => loaded,
        Err(fatal) => {
            return Compiled {
                files: fatal.files,
                diagnostics: fatal.diagnostics,
                program: None,
                stats: Stats::default(),
            }
        }
    };
    let mut diagnostics = loaded.diagnostics.clone();
    let asts = parser::parse_files(&loaded.files, &loaded.all_sources(), &mut diagnostics);
    let program = resolve::resolve_lowering(&loaded, &asts, &mut diagnostics, lowering);
    // Freeing the syntax trees costs a few percent of a large check and
    // nothing needs them any more: another thread frees them while the
    // caller goes on (with the step analyzer, say).
    rayon::spawn(move || drop(asts));
    let stats = Stats {
        files: loaded.app_sources.len(),
        packages: loaded.packages.len(),
    };
    Compiled {
        files: loaded.files,
        diagnostics,
        program: Some(program),
        stats,
    }
}
