//! The `jadpo` command line: parses arguments, runs a command, maps the
//! outcome to an exit status (0 clean, 1 errors, 2 cannot check, 101 bug).

use clap::Parser;
use jadpo::check::{check_app_with, Outcome};
use jadpo::cli::{
    BuildArgs, CheckArgs, Cli, Command, DiffFormat, ExplainArgs, Format, PlanCommand, PlanDiffArgs,
};
use jadpo::render::{self, Summary};
use jadpo_compiler::load::FsLoader;
use std::process::ExitCode;
use std::sync::OnceLock;

/// The input being processed, named in the bug-report line of a panic.
static INPUT: OnceLock<String> = OnceLock::new();

fn main() -> ExitCode {
    install_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Help and version are successful answers; a usage mistake is 2.
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match cli.command {
        Command::Check(args) => check(&args),
        Command::Build(args) => build(&args),
        Command::Explain(args) => explain(&args),
        Command::Lsp => jadpo::lsp::run(),
        Command::Publish(args) => {
            let _ = INPUT.set(args.path.clone());
            ExitCode::from(jadpo::publish::run(&args))
        }
        Command::Plan(PlanCommand::Diff(args)) => plan_diff(&args),
    }
}

/// A panic is a bug in jadpo: print one line asking for a report, exit 101.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let input = INPUT.get().map(String::as_str).unwrap_or("(no input yet)");
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "error: internal error in jadpo{place} while checking `{input}`; this is a bug, \
             please report it with the project at `{input}` attached"
        );
        std::process::exit(101);
    }));
}

fn run(path: &str, want_plan: bool) -> Outcome {
    let _ = INPUT.set(path.to_string());
    // A hidden trigger so the tests can hold the panic hook to its promise.
    if std::env::var_os("JADPO_DEBUG_PANIC").is_some() {
        panic!("JADPO_DEBUG_PANIC is set");
    }
    check_app_with(&FsLoader, path, want_plan)
}

fn check(args: &CheckArgs) -> ExitCode {
    let outcome = run(&args.path, false);
    let summary = Summary::new(
        outcome.stats.files,
        outcome.stats.packages,
        &outcome.diagnostics,
    );
    match args.format {
        Format::Json => say(&render::json::render(
            &outcome.files,
            &outcome.diagnostics,
            summary,
        )),
        Format::Sarif => say(&render::sarif::render(
            &outcome.files,
            &outcome.diagnostics,
            &args.path,
            outcome.program.is_some(),
        )),
        Format::Github => say(&render::github::render(
            &outcome.files,
            &outcome.diagnostics,
            &args.path,
        )),
        Format::Human => print_human(&outcome, summary, args.color.color.enabled()),
    }
    if outcome.program.is_none() {
        ExitCode::from(2)
    } else if outcome.has_errors() || (args.deny_warnings && outcome.has_warnings()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Writes to stdout. A closed pipe (`jadpo check | head`) is not an error
/// (the reader has seen what it wanted), so write errors are ignored and the
/// exit status still reports the check.
fn say(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

fn print_human(outcome: &Outcome, summary: Summary, color: bool) {
    say(&render::human::render_all(
        &outcome.files,
        &outcome.diagnostics,
        color,
    ));
    if outcome.program.is_some() {
        say(&format!("{}\n", summary.closing_line()));
    } else {
        say("could not check this project\n");
    }
}

fn build(args: &BuildArgs) -> ExitCode {
    let outcome = run(&args.path, true);
    let summary = Summary::new(
        outcome.stats.files,
        outcome.stats.packages,
        &outcome.diagnostics,
    );
    print_human(&outcome, summary, args.color.color.enabled());
    if outcome.program.is_none() {
        return ExitCode::from(2);
    }
    if outcome.has_errors() {
        eprintln!("error: not writing a plan: the app has errors");
        return ExitCode::from(1);
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| format!("{}/build", args.path.trim_end_matches('/')));
    match write_plan(&out, outcome.plan.as_ref()) {
        Ok(file) => {
            say(&format!("wrote {file}\n"));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot write the plan to `{out}`: {e}");
            ExitCode::from(2)
        }
    }
}

fn write_plan(out: &str, plan: Option<&serde_json::Value>) -> std::io::Result<String> {
    std::fs::create_dir_all(out)?;
    let file = format!("{}/plan.json", out.trim_end_matches('/'));
    let mut text = serde_json::to_string_pretty(&plan.unwrap_or(&serde_json::Value::Null))
        .map_err(std::io::Error::other)?;
    text.push('\n');
    std::fs::write(&file, text)?;
    Ok(file)
}

fn explain(args: &ExplainArgs) -> ExitCode {
    if let Some(rule) = jadpo::check::rule_doc(&args.code) {
        say(&format!("{}\n", rule.doc.trim_end()));
        return ExitCode::SUCCESS;
    }
    let codes = jadpo::check::rule_codes();
    match jadpo_compiler::diag::nearest(&args.code, codes.iter().copied()) {
        Some(near) => eprintln!(
            "error: `{}` is not a documented diagnostic code; did you mean `{near}`?",
            args.code
        ),
        None => eprintln!(
            "error: `{}` is not a documented diagnostic code; documented codes look like `step.unkeyed` (see spec/diagnostics/)",
            args.code
        ),
    }
    ExitCode::from(2)
}

fn plan_diff(args: &PlanDiffArgs) -> ExitCode {
    use jadpo::plan_diff;
    let _ = INPUT.set(format!("{} {}", args.old, args.new));
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read `{path}`: {e}"))
            .and_then(|text| {
                plan_diff::read_plan(&text).map_err(|e| format!("`{path}` is not a plan: {e}"))
            })
    };
    let (old, new) = match (read(&args.old), read(&args.new)) {
        (Ok(old), Ok(new)) => (old, new),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let diffs = plan_diff::diff(&old, &new);
    say(&match args.format {
        DiffFormat::Human => plan_diff::render_human(&diffs),
        DiffFormat::Json => plan_diff::render_json(&diffs),
    });
    if plan_diff::strands(&diffs) {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}
