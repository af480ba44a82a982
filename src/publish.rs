//! `jadpo publish`: checks a package on its own and stores it in a registry.

use crate::cli::PublishArgs;

/// Runs the command; returns the exit status.
pub fn run(_args: &PublishArgs) -> u8 {
    2
}
