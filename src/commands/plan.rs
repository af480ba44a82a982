//! `jadpo plan diff OLD NEW`: what changed between two plans, and whether
//! the change would strand a record in flight (exit status 1).

use super::say;
use crate::cli::{DiffFormat, PlanDiffArgs};
use crate::plan_diff;

pub fn diff(args: &PlanDiffArgs) -> u8 {
    crate::crash::set_input(&format!("{} {}", args.old, args.new));
    let read = |path: &str| {
        plan_diff::read_plan_file(path).and_then(|text| {
            plan_diff::read_plan(&text).map_err(|e| format!("`{path}` is not a plan: {e}"))
        })
    };
    let (old, new) = match (read(&args.old), read(&args.new)) {
        (Ok(old), Ok(new)) => (old, new),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let diffs = plan_diff::diff(&old, &new);
    say(&match args.format {
        DiffFormat::Human => plan_diff::render_human(&diffs),
        DiffFormat::Json => plan_diff::render_json(&diffs),
    });
    u8::from(plan_diff::strands(&diffs))
}
