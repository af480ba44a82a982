//! The standard library and the bundled first-party packages, embedded in the
//! binary so an installed `jadpo` works from any folder.

use include_dir::{include_dir, Dir};

/// `stdlib/lib`: prelude, standard failures, `clock`, and the `ai` package.
pub static STDLIB: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/lib");

/// The repository's `packages/` folder: first-party provider packages.
pub static PACKAGES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../packages");
