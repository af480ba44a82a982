//! `step.*`: the rules that keep several changing calls in one action safe to resume.

pub mod context;
pub mod encryption_key_required;
pub mod large_output;
pub mod late_failure;
pub mod store_required;
pub mod too_many;
pub mod unkeyed;
