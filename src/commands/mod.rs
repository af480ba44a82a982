//! One function per command of the `jadpo` command line, each giving the
//! process's exit status (0 clean, 1 errors, 2 cannot check or cannot
//! run). `main.rs` parses the arguments and calls [`run`].

mod build;
mod check;
mod explain;
mod plan;
mod report;
mod small;
mod test;

pub use build::write_plan;
pub use report::Report;

use crate::check::{check_app_with, Outcome};
use crate::cli::Command;
use crate::locate::Project;
use jadpo_compiler::load::FsLoader;

/// Runs `command` to its exit status.
pub fn run(command: Command) -> u8 {
    match command {
        Command::Check(args) => check::check(&args),
        Command::Build(args) => build::build(&args),
        Command::Explain(args) => explain::explain(&args),
        Command::Lsp => crate::lsp::run(),
        Command::Publish(args) => {
            crate::crash::set_input(&args.path);
            crate::publish::run(&args)
        }
        Command::Test(args) => test::test(&args),
        Command::Watch(args) => match locate_app(&args.path, "watch") {
            Ok(dir) => crate::watch::run(&dir, &args),
            Err(status) => status,
        },
        Command::Serve(args) => crate::serve::run(&args),
        Command::Privacy(args) => small::privacy(&args),
        Command::Alerts(crate::cli::AlertsCommand::Prometheus) => {
            say(jadpo_server::metrics::PROMETHEUS_RULES);
            0
        }
        Command::Deliveries(args) => crate::operate::deliveries(&args),
        Command::Db(command) => crate::db::run(&command),
        Command::Runs(args) => match &args.command {
            crate::cli::RunsCommand::Unfinished(a) => crate::operate::unfinished(a),
        },
        Command::Dev(args) => match locate_app(&args.path, "dev") {
            Ok(dir) => crate::dev::run(&dir, &args),
            Err(status) => status,
        },
        Command::Fmt(args) => crate::fmt::run(&args),
        Command::Plan(crate::cli::PlanCommand::Diff(args)) => plan::diff(&args),
        Command::New(args) => small::new(&args),
        Command::Doc(args) => small::doc(&args),
        Command::Completions(args) => small::completions(&args),
    }
}

/// Checks the app at `path`, naming it as the input of a bug report.
fn check_app(path: &str, want_plan: bool) -> Outcome {
    crate::crash::set_input(path);
    crate::crash::debug_triggers();
    check_app_with(&FsLoader, path, want_plan)
}

/// Writes to stdout. A closed pipe (`jadpo check | head`) is not an error
/// (the reader has seen what it wanted), so write errors are ignored and the
/// exit status still reports the command.
pub fn say(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// The project folder a command's path names, or the exit status of
/// having said why there is none.
fn locate(path: &str) -> Result<Project, u8> {
    crate::locate::locate(path).map_err(|e| {
        eprintln!("error: {e}");
        2
    })
}

/// [`locate`] for a command whose output is one machine document: a path
/// that cannot be read is left to the loader, which reports it in the
/// document (with exit status 2), so a reader of stdout always gets one.
fn locate_for_document(path: &str, document: bool) -> Result<Project, u8> {
    match crate::locate::locate(path) {
        Err(_) if document => Ok(Project::Neither(path.to_string())),
        other => other.map_err(|e| {
            eprintln!("error: {e}");
            2
        }),
    }
}

/// The app folder a command's path names; a package is refused with the
/// command that takes it.
fn locate_app(path: &str, command: &str) -> Result<String, u8> {
    match locate(path)? {
        Project::App(dir) | Project::Neither(dir) => Ok(dir),
        Project::Package(dir) => {
            eprintln!("{}", package_refused(&dir, command));
            Err(2)
        }
    }
}

/// What a command that takes an app says of a package folder.
fn package_refused(dir: &str, command: &str) -> String {
    format!(
        "error: `{dir}` is a package; `jadpo {command}` takes an app (check a package with \
         `jadpo check {dir}`, publish it with `jadpo publish {dir}`)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_given_to_an_app_command_names_both_commands_that_take_it() {
        assert_eq!(
            package_refused("pkgs/stripe", "dev"),
            "error: `pkgs/stripe` is a package; `jadpo dev` takes an app (check a package with \
             `jadpo check pkgs/stripe`, publish it with `jadpo publish pkgs/stripe`)"
        );
    }

    #[test]
    fn a_missing_path_is_left_to_the_loader_only_for_a_machine_document() {
        let missing = "/nonexistent/jadpo-commands-test";
        assert!(matches!(
            locate_for_document(missing, true),
            Ok(Project::Neither(dir)) if dir == missing
        ));
        assert_eq!(locate_for_document(missing, false).err(), Some(2));
    }
}
