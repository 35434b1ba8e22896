//! Printing that never panics and never stops a command's real work.
//!
//! `println!` panics when standard output is a closed pipe (`irn sweep … | head -1`) or a full
//! device (`>/dev/full`), and `eprintln!` likewise for standard error. Every line irn prints goes
//! through [`out`] and [`err`] instead, which never fail: what they cannot print is dropped, and
//! the command goes on to write its results files, which are the work. A closed pipe is the
//! reader's choice and ends printing quietly; any other failure to print (a full disk) is
//! remembered, and [`finish`] reports it once at the end and makes the exit status a failure, so
//! a script learns that its log is incomplete. The crate denies `print_stdout` and `print_stderr`
//! elsewhere, so no direct `println!` can come back.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicU8, Ordering};

/// What became of standard output: printing, closed by its reader, or failed otherwise.
static STDOUT: AtomicU8 = AtomicU8::new(OPEN);
const OPEN: u8 = 0;
const CLOSED: u8 = 1;
const FAILED: u8 = 2;

/// The first failure other than a closed pipe, reported by [`finish`].
static FAILURE: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Prints to standard output; after it has failed once, prints nothing more.
pub fn out(args: fmt::Arguments) {
    if STDOUT.load(Ordering::Relaxed) != OPEN {
        return;
    }
    let mut stdout = io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        stdout_failed(&e);
    }
}

fn stdout_failed(e: &io::Error) {
    if e.kind() == io::ErrorKind::BrokenPipe {
        STDOUT.store(CLOSED, Ordering::Relaxed);
        return;
    }
    STDOUT.store(FAILED, Ordering::Relaxed);
    let mut failure = FAILURE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    failure.get_or_insert_with(|| format!("standard output: {e}"));
}

/// Prints to standard error; a failure is dropped, since there is nowhere left to report it.
pub fn err(args: fmt::Arguments) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// At the end of a command: `Err` with the first failure to print other than a closed pipe,
/// after saying it on standard error. `wrote_results`: whether the command wrote results files,
/// which the message then says are whole (a command that writes none, or failed, says only
/// that the printed output is incomplete).
pub fn finish(wrote_results: bool) -> Result<(), String> {
    let failure = FAILURE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    let written = match wrote_results {
        true => "the results files were written, ",
        false => "",
    };
    match failure {
        Some(f) => {
            err(format_args!(
                "error: {f}; {written}the printed output is incomplete\n"
            ));
            Err(f)
        }
        None => Ok(()),
    }
}

/// `println!` that never panics: see [`out`].
macro_rules! outln {
    () => { $crate::console::out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::console::out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` that never panics: see [`out`].
macro_rules! outp {
    ($($arg:tt)*) => { $crate::console::out(format_args!($($arg)*)) };
}

/// `eprintln!` that never panics: see [`err`].
macro_rules! errln {
    ($($arg:tt)*) => { $crate::console::err(format_args!("{}\n", format_args!($($arg)*))) };
}
