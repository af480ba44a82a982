//! `jadpo test`: an app's or a package's tests, each run clean and then
//! crashed at every step boundary.

use super::locate_for_document;
use crate::cli::{DiffFormat, TestArgs};
use crate::locate::Project;
use jadpo_compiler::load::FsLoader;

pub fn test(args: &TestArgs) -> u8 {
    crate::crash::set_input(&args.path);
    let dir = match locate_for_document(&args.path, args.format == DiffFormat::Json) {
        Ok(Project::App(dir) | Project::Package(dir) | Project::Neither(dir)) => dir,
        Err(status) => return status,
    };
    crate::crash::debug_triggers();
    use std::io::IsTerminal;
    let json = args.format == DiffFormat::Json;
    let options = crate::testing::TestArgs {
        filter: args.filter.as_deref(),
        no_crash: args.no_crash,
        json,
        color: args.color.color.enabled(),
        time_limit: Some(std::time::Duration::from_secs_f64(args.time_limit)),
        progress: !json && std::io::stdout().is_terminal(),
    };
    let mut stdout = std::io::stdout().lock();
    crate::testing::run(&FsLoader, &dir, options, &mut stdout)
}
