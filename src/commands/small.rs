//! The commands that hand their work to one function elsewhere and print
//! its text: `privacy`, `new`, `doc` and `completions`.

use super::{check_app, locate_app, say};
use crate::cli::{CompletionsArgs, DocArgs, NewArgs, PrivacyArgs};

/// `jadpo privacy`: where the app's personal data goes.
pub fn privacy(args: &PrivacyArgs) -> u8 {
    let dir = match locate_app(&args.path, "privacy") {
        Ok(dir) => dir,
        Err(status) => return status,
    };
    match &check_app(&dir, false).program {
        Some(program) => {
            say(&crate::privacy::report(program));
            0
        }
        None => {
            eprintln!("error: the app at `{dir}` cannot be checked");
            2
        }
    }
}

/// `jadpo new PATH`: a new app from the scaffold.
pub fn new(args: &NewArgs) -> u8 {
    match crate::scaffold::create(&args.path) {
        Ok(name) => {
            say(&format!(
                "created app `{name}` in {path}\nnext: jadpo check {path}, then jadpo test {path}\n",
                path = args.path
            ));
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

/// `jadpo doc PACKAGE`: a package's reference.
pub fn doc(args: &DocArgs) -> u8 {
    let markdown = args.format == crate::cli::DocFormat::Markdown;
    match crate::doc::document(&args.package, &args.app, markdown) {
        Ok(text) => {
            say(&text);
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

/// `jadpo completions SHELL`: the shell's completion script.
pub fn completions(args: &CompletionsArgs) -> u8 {
    use clap::CommandFactory;
    let mut script = Vec::new();
    clap_complete::generate(
        args.shell,
        &mut crate::cli::Cli::command(),
        "jadpo",
        &mut script,
    );
    say(&String::from_utf8_lossy(&script));
    0
}
