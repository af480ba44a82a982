//! The `jadpo` command line: installs the crash report, parses arguments,
//! runs one command (`jadpo::commands`) and exits with its status (0
//! clean, 1 errors, 2 cannot check, 101 bug).

use clap::Parser;
use jadpo::cli::{Cli, Command};
use std::process::ExitCode;

// The checker allocates many small nodes and frees them in bulk; mimalloc
// does both faster than the system allocator (about a tenth of a large check).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    jadpo::crash::install();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Help and version are successful answers; a usage mistake is 2.
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    // The commands that analyse again and again.
    if matches!(
        cli.command,
        Command::Lsp | Command::Watch(_) | Command::Fmt(_)
    ) {
        jadpo::memory::keep_freed_pages();
    }
    ExitCode::from(jadpo::commands::run(cli.command))
}
