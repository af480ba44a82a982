//! The rule registry: every code the checker can report, with its severity
//! and documentation. One file per rule under `rules/<family>/<name>.rs`.
