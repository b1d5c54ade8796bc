//! The `monoscan` command line: parses the arguments and hands them to [`cli::execute`].
//!
//! Exit status: 0 on success, 2 for usage errors (bad arguments, including those clap rejects),
//! 1 for runtime errors (no memory, no GPU, a backend failure). Errors go to stderr as
//! `error: <message>`.

mod cli;

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => {
            // `--help` and `--version` arrive here too, with exit code 0 and output on stdout.
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    match cli::execute(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
