//! `route.*`: rules judged on a route against its settings.

pub mod calls_past_deadline;
