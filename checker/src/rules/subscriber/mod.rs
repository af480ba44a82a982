//! `subscriber.*`: rules judged on the actions subscribers run.

pub mod unguarded_create;
