//! What a command says: its answer on stdout, its lines on stderr, and the
//! exit code of a failure.

use std::io::Write;
use std::process::ExitCode;

/// Prints to stdout; a closed pipe (`| head`) is not an error worth a panic.
pub fn say(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
}

/// A line on stderr in one write: `eprintln!` writes each piece of its format
/// on its own (stderr is unbuffered), a dozen system calls for serve's line per
/// request, each waking whatever reads the pipe.
pub fn log_line(text: &str) {
    let _ = std::io::stderr().write_all(format!("datanotes: {text}\n").as_bytes());
}

/// A command that failed: why on stderr, exit code 1.
pub fn fail(msg: &str) -> ExitCode {
    eprintln!("datanotes: {msg}");
    ExitCode::from(1)
}
